// worker.ts - the SLAB model's adapter for the lab engine, in the bridge
// worker only (web/models.ts): worlds of wasm-core/bindings/api_slab.c that
// run the view's scripts one recorded operation per step
// (sl_api_slab_script_op), worldInfo's facts about a configuration's caches
// under both rule sets, the caches panel's slab-types query, and the
// Benchmarks page's kmalloc rows (seed 002's slab_test).  Everything a
// request carries is checked here before it reaches C.

import { BadRequest, checkOneOf, checkRecord, checkWhole } from '../core/requests';
import { CoreWorld, type ModelAdapter, type SessionModel } from '../lab/model';
import { replaySessions } from '../lab/session';
import { KMALLOC_PHASES, KMALLOC_RULES, KMALLOC_SIZE_MAX, parseKmallocVariant } from './bench';
import { CACHE_NAME, type CacheFacts, type CacheSpec, type SlabWorldInfo, type TypesQuery, type WorldConfig } from './protocol';
import { ARENA_MIN_MB } from './scenarios';
import { checkScript, isPlace, MAX_COUNT, MAX_WORLD_CACHES, type Script, type ScriptOp } from './script';
import { CACHE_FLAGS_ALL, kernelCode, KERNEL_FIRST, KERNEL_LAST, SlabApi, SlabError, type SlabModule } from './slab-api';
import { decodeSlabSnapshot, type Rules, type SlabCacheState } from './snapshot';

const MAX_CPUS = 8;
/** Events each CPU's ring holds: a recorded step (a batch of at most RECORD_MAX calls) fits. */
const RING_EVENTS = 1 << 15;
/** Batches of more calls record only their own bracket (their events would fill the rings and the timeline). */
export const RECORD_MAX = 256;
/** kmalloc's caller and kfree's: sl_api_slab_script_op's free with this "cache" is kfree. */
const KFREE = 0xffff;
/** sl_api_slab_script_op's kinds. */
const SCRIPT_KIND = { kmalloc: 0, alloc: 1, free: 2, drain: 3, reap: 4, shrink: 5 } as const;
/** Arena sizes a world may ask for (the browser core has 256 MB for everything). */
const ARENA_MB_MAX = 96;

function checkKernel(v: unknown): string {
  if (typeof v !== 'string' || kernelCode(v) === null) throw new BadRequest(`kernel must be a version from ${KERNEL_FIRST} to ${KERNEL_LAST}, got ${String(v)}`);
  return v;
}

function checkCache(raw: unknown, what: string): CacheSpec {
  const c = checkRecord(what, raw);
  if (typeof c.name !== 'string' || !CACHE_NAME.test(c.name)) throw new BadRequest(`${what}'s name must be 1 to 63 letters, digits or _:.@-, got ${String(c.name)}`);
  const align = checkWhole(`${what}'s align`, c.align, 0, 4 << 20);
  if (align & (align - 1)) throw new BadRequest(`${what}'s align must be 0 or a power of two, got ${align}`);
  return { name: c.name, objectSize: checkWhole(`${what}'s objectSize`, c.objectSize, 1, 4 << 20), align, flags: checkWhole(`${what}'s flags`, c.flags, 0, CACHE_FLAGS_ALL) };
}

export function checkWorld(raw: unknown): WorldConfig {
  const c = checkRecord('world', raw);
  if (!Array.isArray(c.caches) || c.caches.length > MAX_WORLD_CACHES) throw new BadRequest(`world.caches must be a list of at most ${MAX_WORLD_CACHES} caches`);
  return {
    cpus: checkWhole('cpus', c.cpus, 1, MAX_CPUS),
    rules: checkOneOf<Rules>('rules', c.rules, ['before', 'after']),
    kernel: checkKernel(c.kernel),
    arenaMb: checkWhole('arenaMb', c.arenaMb, ARENA_MIN_MB, ARENA_MB_MAX),
    caches: c.caches.map((x, i) => checkCache(x, `cache ${i + 1}`)),
  };
}

/** A world of `config`, its caches created, recording events (or not, for worldInfo). */
function makeWorld(api: SlabApi, config: WorldConfig, ringEvents: number): { w: number; cacheIds: number[] } {
  const w = api.createWorld({ cpus: config.cpus, arenaMb: config.arenaMb, rules: config.rules, kernel: config.kernel, initOnFree: false, ringEvents });
  try {
    const cacheIds = config.caches.map((c) => api.cacheCreate(w, c.name, c.objectSize, c.align, c.flags));
    // The creations are part of the world, not of step 1: their events go.
    api.drain(w, config.cpus);
    return { w, cacheIds };
  } catch (e) {
    api.destroyWorld(w);
    throw e;
  }
}

class SlabWorld extends CoreWorld<Script> {
  private readonly cacheIds: number[];
  /** The pointers each step allocated, by step (only the steps run on this world). */
  private readonly made = new Map<number, Uint32Array>();
  /** A buffer of MAX_COUNT pointers in the core's memory. */
  private readonly scratch: number;

  constructor(
    private readonly api: SlabApi,
    config: WorldConfig,
  ) {
    const { w, cacheIds } = makeWorld(api, config, RING_EVENTS);
    super(api, w, config.cpus);
    this.cacheIds = cacheIds;
    this.scratch = api.m._malloc(4 * MAX_COUNT);
  }

  /** The pointers a free names (0 for a name that matches nothing), and the cache id of a kmem_cache_free, or KFREE. */
  private pointers(o: Extract<ScriptOp, { kind: 'free' }>, ops: readonly ScriptOp[]): { ptrs: number[]; cache: number } {
    const ptrs: number[] = [];
    const caches = new Set<number>();
    for (const r of o.refs) {
      if (isPlace(r)) {
        ptrs.push(this.api.objectAt(this.w, r.cache, r));
        caches.add(r.cache);
        continue;
      }
      const from = ops[r.op];
      caches.add(from?.kind === 'alloc' ? (this.cacheIds[from.cache] ?? KFREE) : KFREE);
      const got = this.made.get(r.op);
      for (let k = r.first; k < r.first + r.count; k++) ptrs.push(got?.[k] ?? 0);
    }
    // kmem_cache_free when every object is one created cache's (ids from 20), else kfree.
    const only = caches.size === 1 ? [...caches][0] ?? KFREE : KFREE;
    return { ptrs, cache: only >= 20 && only !== KFREE ? only : KFREE };
  }

  private step(ops: readonly ScriptOp[], i: number): number {
    const o = ops[i];
    if (!o) throw new BadRequest(`step ${i + 1} is past the script's end`);
    const m = this.api.m;
    const call = (kind: number, arg: number, count: number) => m._sl_api_slab_script_op(this.w, kind, o.cpu, arg, count, this.scratch, count <= RECORD_MAX ? 1 : 0);
    switch (o.kind) {
      case 'kmalloc':
      case 'alloc': {
        const rc = o.kind === 'kmalloc' ? call(SCRIPT_KIND.kmalloc, o.size, o.count) : call(SCRIPT_KIND.alloc, this.cacheIds[o.cache] ?? KFREE, o.count);
        if (rc > 0) this.made.set(i, m.HEAPU32.slice(this.scratch >> 2, (this.scratch >> 2) + rc));
        return rc;
      }
      case 'free': {
        const { ptrs, cache } = this.pointers(o, ops);
        m.HEAPU32.set(ptrs, this.scratch >> 2);
        return call(SCRIPT_KIND.free, cache, ptrs.length);
      }
      case 'drain':
        return call(SCRIPT_KIND.drain, 0, 1);
      case 'reap':
        return call(SCRIPT_KIND.reap, o.ms, 1);
      case 'shrink':
        return call(SCRIPT_KIND.shrink, 0, 1);
    }
  }

  run(script: Script, from: number, to: number) {
    const results: number[] = [];
    for (let i = from; i < to; i++) results.push(this.step(script.ops, i));
    // SLAB's operations have no preemption points: every stop is an operation's end.
    return { results, stopSnapshot: null };
  }
  override destroy() {
    this.api.m._free(this.scratch);
    super.destroy();
  }
}

/** SLAB's sessions over one core's SLAB bindings. */
export function slabSessions(api: SlabApi): SessionModel<WorldConfig, Script, Script> {
  return {
    checkWorld,
    checkScript: (raw, world) => checkScript(raw, world.cpus, world.caches.length),
    create: (config) => new SlabWorld(api, config),
    prepare: (_config, script) => script,
    opCount: (script) => script.ops.length,
    strerror: (rc) => api.strerror(rc),
  };
}

function facts(c: SlabCacheState, all: readonly SlabCacheState[]): CacheFacts {
  const slabBytes = 4096 << c.order;
  const offHost = c.freelistCache === null ? undefined : all.find((k) => k.id === c.freelistCache);
  const onSlab = c.mgmt === 'NORMAL' || c.mgmt === 'NORMAL(leftover)' ? c.freelistSize : 0;
  const left = slabBytes - c.num * c.size - onSlab;
  return {
    id: c.id,
    name: c.name,
    objectSize: c.objectSize,
    size: c.size,
    order: c.order,
    num: c.num,
    mgmt: c.mgmt,
    colour: c.colour,
    colourOff: c.colourOff,
    limit: c.limit,
    batchcount: c.batchcount,
    sharedLimit: c.sharedLimit,
    freeLimit: c.freeLimit,
    nextReap: c.nextReap,
    freelistCache: offHost?.name ?? null,
    waste: left + onSlab + (offHost?.size ?? 0),
  };
}

/** Every cache of a fresh world of `config` under each rule set. */
export function worldInfo(api: SlabApi, config: WorldConfig): SlabWorldInfo {
  const under = (rules: Rules): CacheFacts[] => {
    const { w } = makeWorld(api, { ...config, rules }, 0);
    try {
      const caches = decodeSlabSnapshot(api.snapshot(w)).caches;
      return caches.map((c) => facts(c, caches));
    } finally {
      api.destroyWorld(w);
    }
  };
  return { before: under('before'), after: under('after') };
}

function checkTypesQuery(raw: unknown): TypesQuery {
  const q = checkRecord('query', raw);
  if (q.kind !== 'types') throw new BadRequest(`query.kind must be types, got ${String(q.kind)}`);
  if (typeof q.text !== 'string' || q.text.length > 16 << 20) throw new BadRequest('query.text must be a text of at most 16 MB');
  if (typeof q.source !== 'string') throw new BadRequest('query.source must be a file name');
  return {
    kind: 'types',
    text: q.text,
    format: checkOneOf('query.format', q.format, ['slabinfo', 'caches'] as const),
    kernel: checkKernel(q.kernel),
    cpus: checkWhole('query.cpus', q.cpus, 1, 64),
    source: q.source.slice(0, 200),
  };
}

export const slabModel: ModelAdapter = {
  id: 'slab',
  bind(core) {
    const api = new SlabApi(core.module as SlabModule);
    return {
      openSession: replaySessions(slabSessions(api)),
      worldInfo: (raw) => worldInfo(api, checkWorld(raw)),
      query: (raw) => {
        const q = checkTypesQuery(raw);
        try {
          return api.slabTypes(q.text, { format: q.format, kernel: q.kernel, initOnFree: false, cpus: q.cpus, rules: 'both', source: q.source });
        } catch (e) {
          // A file the core cannot read is the request's mistake: say what the core says ("line N: ...").
          if (e instanceof SlabError) throw new BadRequest(e.message);
          throw e;
        }
      },
      benchRow: (p, onThread) => {
        if (p.experiment !== 'kmalloc') throw new BadRequest(`experiment must be kmalloc, got ${String(p.experiment)}`);
        const v = parseKmallocVariant(p.variant);
        if (!v) throw new BadRequest(`variant must be one of ${KMALLOC_RULES.flatMap((r) => KMALLOC_PHASES.map((ph) => `${r}:${ph}`)).join(', ')}, got ${String(p.variant)}`);
        const size = checkWhole('row', p.row, 1, KMALLOC_SIZE_MAX);
        const ns = api.m._sl_api_bench_kmalloc(v.rules === 'slab-before' ? 0 : 1, 0, size, v.phase === 'alloc' ? 0 : 1, p.loops, onThread ? 1 : 0);
        return { nsPerOp: ns, ops: p.loops * 10_000 };
      },
    };
  },
};
