// slab-api.ts - a typed face for the SLAB bindings (wasm-core/bindings/api_slab.c) of one
// core instance.  It runs where the module runs: in the bridge worker, and under Node in
// the vitest tests (the slablab-node build).  Objects cross as wasm32 pointers; the
// snapshot names them as (pfn, index), and objectAt / objectRef convert.
//
// slabTypes is seed 002's table for a kernel's caches, computed by the C core from a
// /proc/slabinfo file or a --caches list: the same JSON as `slablab slab-types --format json`.

import { EVENT_SIZE } from '../core/events.generated';
import { drainRings, readSized } from '../core/heap-io';
import type { MgmtName, ObjRef, Rules } from './snapshot';

/** The exports this file calls. */
export interface SlabModule {
  HEAPU8: Uint8Array;
  HEAPU32: Uint32Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  UTF8ToString(ptr: number): string;
  _sl_api_strerror(err: number): number;
  _sl_api_slab_last_error(): number;
  _sl_api_slab_last_message(): number;
  _sl_api_slab_create(
    ncpus: number, arenaMb: number, rules: number, kernel: number, initOnFree: number, ringEvents: number,
  ): number;
  _sl_api_slab_destroy(w: number): void;
  _sl_api_slab_kmalloc(w: number, cpu: number, size: number): number;
  _sl_api_slab_kfree(w: number, cpu: number, p: number): number;
  _sl_api_slab_cache_create(w: number, name: number, objectSize: number, align: number, flags: number): number;
  _sl_api_slab_cache_alloc(w: number, id: number, cpu: number): number;
  _sl_api_slab_cache_free(w: number, id: number, cpu: number, p: number): number;
  _sl_api_slab_cache_destroy(w: number, id: number): number;
  _sl_api_slab_object_at(w: number, id: number, pfn: number, index: number): number;
  _sl_api_slab_object_ref(w: number, p: number, out: number): number;
  _sl_api_slab_drain_cpu(w: number, cpu: number): void;
  _sl_api_slab_reap(w: number, cpu: number, nowMs: number): void;
  _sl_api_slab_shrink(w: number): number;
  _sl_api_slab_validate(w: number, why: number, whylen: number): number;
  _sl_api_slab_snapshot(w: number, buf: number, cap: number): number;
  _sl_api_slab_snapshot_layout(out: number): number;
  _sl_api_slab_drain_events(w: number, cpu: number, out: number, max: number): number;
  _sl_api_slab_types(
    text: number, len: number, format: number, kernel: number, initOnFree: number, ncpus: number, rulesMask: number,
    source: number,
  ): number;
  _sl_api_slab_free_string(p: number): void;
  _sl_api_slab_script_op(w: number, kind: number, cpu: number, arg: number, count: number, ptrs: number, record: number): number;
  _sl_api_slab_events_dropped(w: number, cpu: number): number;
  _sl_api_bench_kmalloc(rules: number, kernel: number, size: number, phase: number, loops: number, onThread: number): number;
}

/** A C function returned an sl_err (or refused its input: `message` says why). */
export class SlabError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'SlabError';
  }
}

/** A cache's flags as kmem_cache_create takes them (SL_SLAB_* in slab.h: the kernel's SLAB_* of the same meaning). */
export const CACHE_FLAGS = { hwcache: 0x1, rcu: 0x2, ctor: 0x4, reclaim: 0x8, noleaktrace: 0x10 } as const;
export type CacheFlag = keyof typeof CACHE_FLAGS;
export const CACHE_FLAGS_ALL = 0x1f;

/** The kernels SLAB is modelled for. */
export const KERNEL_FIRST = '4.10';
export const KERNEL_LAST = '6.7';

/** "X.Y" (4.10 .. 6.7) as the core's number (X * 100 + Y); null for anything else. */
export function kernelCode(version: string): number | null {
  const m = /^(\d)\.(\d{1,2})$/.exec(version);
  if (!m) return null;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  const ok = (major === 4 && minor >= 10 && minor <= 20) || (major === 5 && minor <= 19) || (major === 6 && minor <= 7);
  return ok ? major * 100 + minor : null;
}

export interface SlabWorldConfig {
  cpus: number;
  arenaMb: number;
  rules: Rules;
  /** "X.Y", 4.10 .. 6.7 */
  kernel: string;
  /** init_on_free=1: 5.3 and later */
  initOnFree: boolean;
  /** Event ring size per CPU; 0 records no events. */
  ringEvents: number;
}

/** One cache's figures in the slab-types JSON (docs/slab.md). */
export interface SlabTypesGeometry {
  type: MgmtName;
  order: number;
  objs_per_slab: number;
  size: number;
  align: number;
  left: number;
  freelist_size: number;
  off_cache_size: number;
  colour_off: number;
  colour: number;
  waste: number;
}

export interface SlabTypesCache {
  name: string;
  object_size: number;
  align: number;
  flags: number;
  before?: SlabTypesGeometry;
  after?: SlabTypesGeometry;
  limit: number;
  batchcount: number;
  shared: number;
  /** What a SLAB kernel's /proc/slabinfo says, or null. */
  kernel: { order: number; objs_per_slab: number; limit: number; batchcount: number; shared: number } | null;
  match: boolean | null;
}

export interface SlabTypesTotals {
  total: number;
  objfreelist: number;
  normal_leftover: number;
  normal: number;
  off: number;
}

export interface SlabTypesReport {
  source: string;
  kernel: string;
  init_on_free: boolean;
  cpus: number;
  caches: SlabTypesCache[];
  totals: { before?: SlabTypesTotals; after?: SlabTypesTotals };
  compared: number;
  matched: number;
}

export interface SlabTypesOptions {
  format: 'slabinfo' | 'caches';
  kernel: string;
  initOnFree: boolean;
  cpus: number;
  rules: Rules | 'both';
  /** Shown as the report's source (a file name). */
  source: string;
}

function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

/** Checks the shape of the core's slab-types JSON (it is ours, but JSON.parse returns unknown). */
function asTypesReport(x: unknown): SlabTypesReport {
  const bad = (what: string): never => {
    throw new SlabError(-10, `slab-types JSON: ${what}`);
  };
  if (!isRecord(x) || !Array.isArray(x.caches) || !isRecord(x.totals)) return bad('not a report');
  for (const key of ['source', 'kernel'] as const) if (typeof x[key] !== 'string') bad(`${key} is not a string`);
  for (const key of ['cpus', 'compared', 'matched'] as const) if (typeof x[key] !== 'number') bad(`${key} is not a number`);
  for (const c of x.caches as unknown[]) {
    if (!isRecord(c) || typeof c.name !== 'string' || typeof c.limit !== 'number') bad('a cache entry');
    if (isRecord(c) && !isRecord(c.before) && !isRecord(c.after)) bad(`cache ${String(c.name)} has no geometry`);
  }
  return x as unknown as SlabTypesReport;
}

export class SlabApi {
  constructor(readonly m: SlabModule) {}

  strerror(err: number): string {
    return this.m.UTF8ToString(this.m._sl_api_strerror(err));
  }

  /** The core's sentence for the last failed create or slab-types call. */
  lastMessage(): string {
    return this.m.UTF8ToString(this.m._sl_api_slab_last_message());
  }

  createWorld(c: SlabWorldConfig): number {
    const kernel = kernelCode(c.kernel);
    if (kernel === null) throw new SlabError(-2, `kernel ${c.kernel}: SLAB is modelled from ${KERNEL_FIRST} to ${KERNEL_LAST}`);
    const w = this.m._sl_api_slab_create(
      c.cpus, c.arenaMb, c.rules === 'before' ? 0 : 1, kernel, c.initOnFree ? 1 : 0, c.ringEvents,
    );
    if (!w) {
      const e = this.m._sl_api_slab_last_error();
      throw new SlabError(e, `could not create a SLAB world: ${this.strerror(e)}`);
    }
    return w;
  }

  destroyWorld(w: number): void {
    this.m._sl_api_slab_destroy(w);
  }

  /** A pointer, or 0 (size 0, above 4 MiB, or the arena is full). */
  kmalloc(w: number, cpu: number, size: number): number {
    return this.m._sl_api_slab_kmalloc(w, cpu, size);
  }

  /** 0, or an sl_err (SL_EFOREIGN, SL_EMISALIGNED, SL_EDOUBLEFREE, SL_EINVAL). */
  kfree(w: number, cpu: number, p: number): number {
    return this.m._sl_api_slab_kfree(w, cpu, p);
  }

  /** kmem_cache_create; returns the cache id. */
  cacheCreate(w: number, name: string, objectSize: number, align = 0, flags = 0): number {
    const bytes = new TextEncoder().encode(name);
    const at = this.m._malloc(bytes.length + 1);
    try {
      this.m.HEAPU8.set(bytes, at);
      this.m.HEAPU8[at + bytes.length] = 0;
      const id = this.m._sl_api_slab_cache_create(w, at, objectSize, align, flags);
      if (id < 0) throw new SlabError(id, `cache ${name} (${objectSize} bytes): ${this.strerror(id)}`);
      return id;
    } finally {
      this.m._free(at);
    }
  }

  cacheAlloc(w: number, id: number, cpu: number): number {
    return this.m._sl_api_slab_cache_alloc(w, id, cpu);
  }

  cacheFree(w: number, id: number, cpu: number, p: number): number {
    return this.m._sl_api_slab_cache_free(w, id, cpu, p);
  }

  cacheDestroy(w: number, id: number): number {
    return this.m._sl_api_slab_cache_destroy(w, id);
  }

  /** The object at (pfn, index) of cache id, or 0. */
  objectAt(w: number, id: number, ref: ObjRef): number {
    return this.m._sl_api_slab_object_at(w, id, ref.pfn, ref.index);
  }

  /** (pfn, index) of the object at p, or null when p is no object start of a slab. */
  objectRef(w: number, p: number): ObjRef | null {
    const out = this.m._malloc(8);
    try {
      if (this.m._sl_api_slab_object_ref(w, p, out) !== 0) return null;
      return { pfn: this.m.HEAPU32[out >> 2] ?? 0, index: this.m.HEAPU32[(out >> 2) + 1] ?? 0 };
    } finally {
      this.m._free(out);
    }
  }

  drainCpu(w: number, cpu: number): void {
    this.m._sl_api_slab_drain_cpu(w, cpu);
  }

  /** One cache_reap run on `cpu` at simulated time nowMs (the node part runs once its 4 s timer expired). */
  reap(w: number, cpu: number, nowMs: number): void {
    this.m._sl_api_slab_reap(w, cpu, nowMs);
  }

  /** Returns the slabs destroyed. */
  shrink(w: number): number {
    return this.m._sl_api_slab_shrink(w);
  }

  validate(w: number): { rc: number; message: string } {
    const why = this.m._malloc(256);
    try {
      const rc = this.m._sl_api_slab_validate(w, why, 256);
      return { rc, message: rc === 0 ? '' : this.m.UTF8ToString(why) };
    } finally {
      this.m._free(why);
    }
  }

  /** The whole state as snapshot bytes (decode with decodeSlabSnapshot). */
  snapshot(w: number): Uint8Array {
    const snapshot = (buf: number, cap: number) => this.m._sl_api_slab_snapshot(w, buf, cap);
    return readSized(this.m, -snapshot(0, 0), snapshot, (what) => new SlabError(-1, `no snapshot: ${what}`));
  }

  /** The C side's snapshot layout words (compare with SLAB_SNAPSHOT_LAYOUT). */
  snapshotLayout(): number[] {
    const out = this.m._malloc(64);
    try {
      const n = this.m._sl_api_slab_snapshot_layout(out);
      return Array.from(this.m.HEAPU32.subarray(out >> 2, (out >> 2) + n));
    } finally {
      this.m._free(out);
    }
  }

  /** The events waiting in each CPU's ring (decode with decodeEvents). */
  drain(w: number, ncpus: number): Uint8Array[] {
    return drainRings(this.m, ncpus, EVENT_SIZE, (cpu, out, max) => this.m._sl_api_slab_drain_events(w, cpu, out, max));
  }

  /** Events CPU cpu's ring had no room for. */
  eventsDropped(w: number, cpu: number): number {
    return this.m._sl_api_slab_events_dropped(w, cpu);
  }

  /**
   * Seed 002's table for a kernel's caches: each cache's management type before and after
   * OBJFREELIST, order, objects per slab, waste and tunables, the totals, and (a SLAB
   * kernel's slabinfo) the kernel's own figures with a match.  Throws SlabError with the
   * core's message ("line N: ...") for a malformed file.
   */
  slabTypes(text: string, o: SlabTypesOptions): SlabTypesReport {
    const kernel = kernelCode(o.kernel);
    if (kernel === null) throw new SlabError(-2, `kernel ${o.kernel}: SLAB is modelled from ${KERNEL_FIRST} to ${KERNEL_LAST}`);
    const enc = new TextEncoder();
    const body = enc.encode(text);
    const source = enc.encode(o.source);
    const at = this.m._malloc(body.length + source.length + 2);
    if (!at) throw new SlabError(-1, `no memory for a ${body.length}-byte file`);
    try {
      this.m.HEAPU8.set(body, at);
      this.m.HEAPU8.set(source, at + body.length + 1);
      this.m.HEAPU8[at + body.length] = 0;
      this.m.HEAPU8[at + body.length + 1 + source.length] = 0;
      const rules = o.rules === 'before' ? 1 : o.rules === 'after' ? 2 : 3;
      const json = this.m._sl_api_slab_types(
        at, body.length, o.format === 'slabinfo' ? 0 : 1, kernel, o.initOnFree ? 1 : 0, o.cpus, rules,
        at + body.length + 1,
      );
      if (!json) throw new SlabError(this.m._sl_api_slab_last_error(), this.lastMessage());
      try {
        return asTypesReport(JSON.parse(this.m.UTF8ToString(json)));
      } finally {
        this.m._sl_api_slab_free_string(json);
      }
    } finally {
      this.m._free(at);
    }
  }
}
