// script.ts - what the SLAB view's worlds run: a list of operations, each one
// step of the story (the bindings record each as one operation,
// sl_api_slab_script_op), so Step, Back and the URL's `step` count them.  An
// operation may be a batch ("kmalloc(256) x 60 on CPU 0"): seed 002's test is
// two steps of 10,000 calls each.
//
// Objects are named by what allocated them ("objects 1..60 of step 3"), which
// the model adapter turns into pointers as the world runs (every world runs a
// script from its start, so the names always resolve the same way), or by
// place (cache id, slab pfn, index), as a click on the canvas names them.
//
// Script text, the form a hand-made script takes in the URL (`ops=`):
// operations joined by '.', e.g.
//   m0-256-60.f0-1_1_60.d0.r1-2000.s
//   m<cpu>-<size>[-<count>]        kmalloc(size), count times (default 1)
//   a<cpu>-<cache>[-<count>]       kmem_cache_alloc from the world's cache number <cache> (0-based)
//   f<cpu>-<ref>[-<ref>...]        free them (kfree, or kmem_cache_free for a created cache's objects)
//       <ref> = <step>_<first>[_<count>]   objects first..first+count-1 (1-based) that step <step> (1-based) allocated
//             | p<cache id>_<pfn>_<index>  the object at that place
//   d<cpu>                         drain_cpu: the CPU's arrays back to the slabs
//   r<cpu>-<ms>                    one cache_reap run on the CPU at simulated time <ms>
//   s                              kmem_cache_shrink of every cache (as CPU 0)
// (only unreserved URL characters, so it is never percent-encoded).

import { BadRequest, checkOneOf, checkRecord, checkWhole } from '../core/requests';

/** Objects `first .. first+count-1` (0-based) of those step `op` (0-based) allocated. */
export interface AllocRef {
  op: number;
  first: number;
  count: number;
}
/** The object at this place. */
export interface PlaceRef {
  cache: number;
  pfn: number;
  index: number;
}
export type Ref = AllocRef | PlaceRef;

export const isPlace = (r: Ref): r is PlaceRef => 'pfn' in r;

export type ScriptOp =
  | { kind: 'kmalloc'; cpu: number; size: number; count: number }
  | { kind: 'alloc'; cpu: number; cache: number; count: number }
  | { kind: 'free'; cpu: number; refs: Ref[] }
  | { kind: 'drain'; cpu: number }
  | { kind: 'reap'; cpu: number; ms: number }
  | { kind: 'shrink'; cpu: 0 };

export interface Script {
  ops: ScriptOp[];
}

/** Calls one batch may make: seed 002's test is 10,000. */
export const MAX_COUNT = 10_000;
/** Operations a script may hold. */
export const MAX_OPS = 4096;
/** The largest kmalloc (KMALLOC_MAX_SIZE). */
export const MAX_KMALLOC = 4 << 20;
/** Reap times up to a day of simulated time. */
export const MAX_MS = 86_400_000;
/** Caches a world may create (created cache ids run from 20 up to the model's 64). */
export const MAX_WORLD_CACHES = 8;
/** Objects one free names at most (refs times their counts). */
const MAX_FREE_OBJECTS = MAX_COUNT;

const OP_KINDS = ['kmalloc', 'alloc', 'free', 'drain', 'reap', 'shrink'] as const;

/** The objects op `i` allocates, as far as the script says (a refused or short batch allocates fewer). */
export function allocCount(op: ScriptOp | undefined): number {
  return op && (op.kind === 'kmalloc' || op.kind === 'alloc') ? op.count : 0;
}

/** What is wrong with a script for a world of `cpus` CPUs and `caches` created caches, or null. */
export function scriptProblem(s: Script, cpus: number, caches: number): string | null {
  if (s.ops.length > MAX_OPS) return `${s.ops.length} operations, at most ${MAX_OPS}`;
  for (const [i, o] of s.ops.entries()) {
    const at = `step ${i + 1}`;
    if (o.cpu >= cpus) return `${at} acts as CPU ${o.cpu}, the world has CPUs 0 to ${cpus - 1}`;
    if (o.kind === 'alloc' && o.cache >= caches) return `${at} allocates from cache ${o.cache}, the world creates ${caches === 0 ? 'no cache' : `caches 0 to ${caches - 1}`}`;
    if (o.kind !== 'free') continue;
    let objects = 0;
    for (const r of o.refs) {
      if (isPlace(r)) {
        objects++;
        continue;
      }
      objects += r.count;
      if (r.op >= i) return `${at} frees objects of step ${r.op + 1}, which does not come before it`;
      const made = allocCount(s.ops[r.op]);
      if (r.first + r.count > made) return `${at} frees objects ${r.first + 1} to ${r.first + r.count} of step ${r.op + 1}, which allocates ${made === 0 ? 'none' : `${made}`}`;
    }
    if (objects > MAX_FREE_OBJECTS) return `${at} frees ${objects} objects, at most ${MAX_FREE_OBJECTS}`;
  }
  return null;
}

const num = (t: string) => (/^\d{1,10}$/.test(t) ? Number(t) : NaN);

function parseRef(t: string): Ref | null {
  const place = /^p(\d{1,3})_(\d{1,10})_(\d{1,3})$/.exec(t);
  if (place) return { cache: Number(place[1]), pfn: Number(place[2]), index: Number(place[3]) };
  const made = /^(\d{1,5})_(\d{1,5})(?:_(\d{1,5}))?$/.exec(t);
  if (!made) return null;
  const [op, first, count] = [Number(made[1]), Number(made[2]), made[3] === undefined ? 1 : Number(made[3])];
  return op >= 1 && first >= 1 && count >= 1 ? { op: op - 1, first: first - 1, count } : null;
}

const inRange = (v: number, min: number, max: number) => Number.isInteger(v) && v >= min && v <= max;

function parseOp(t: string): ScriptOp | string {
  if (t === 's') return { kind: 'shrink', cpu: 0 };
  const m = /^([madfr])(\d{1,2})(?:-(.*))?$/.exec(t);
  if (!m) return `"${t}" is not an operation`;
  const cpu = Number(m[2]);
  const args = m[3] === undefined ? [] : m[3].split('-');
  const n = args.map(num);
  switch (m[1]) {
    case 'm':
    case 'a': {
      const [what, count = 1] = n;
      if (args.length < 1 || args.length > 2) return `"${t}" needs ${m[1] === 'm' ? 'a size' : 'a cache'} and may give a count`;
      if (!inRange(count, 1, MAX_COUNT)) return `"${t}": the count must be 1 to ${MAX_COUNT}`;
      if (m[1] === 'm') return inRange(what ?? NaN, 1, MAX_KMALLOC) ? { kind: 'kmalloc', cpu, size: what ?? 0, count } : `"${t}": the size must be 1 to ${MAX_KMALLOC}`;
      return inRange(what ?? NaN, 0, MAX_WORLD_CACHES - 1) ? { kind: 'alloc', cpu, cache: what ?? 0, count } : `"${t}": the cache must be 0 to ${MAX_WORLD_CACHES - 1}`;
    }
    case 'f': {
      if (!args.length) return `"${t}" names no object to free`;
      const refs = args.map(parseRef);
      const bad = refs.findIndex((r) => r === null);
      if (bad >= 0) return `"${t}": "${args[bad]}" is not an object (step_first[_count], or p<cache>_<pfn>_<index>)`;
      return { kind: 'free', cpu, refs: refs as Ref[] };
    }
    case 'd':
      return args.length ? `"${t}": drain takes only a CPU` : { kind: 'drain', cpu };
    default:
      return args.length === 1 && inRange(n[0] ?? NaN, 0, MAX_MS) ? { kind: 'reap', cpu, ms: n[0] ?? 0 } : `"${t}": reap takes a time in ms, 0 to ${MAX_MS}`;
  }
}

/** Reads a script's text for a world of `cpus` CPUs that creates `caches` caches. */
export function parseScript(text: string, cpus: number, caches: number): { ok: true; script: Script } | { ok: false; error: string } {
  const ops: ScriptOp[] = [];
  if (text !== '')
    for (const t of text.split('.')) {
      const op = parseOp(t);
      if (typeof op === 'string') return { ok: false, error: op };
      ops.push(op);
    }
  const script = { ops };
  const problem = scriptProblem(script, cpus, caches);
  return problem ? { ok: false, error: problem } : { ok: true, script };
}

function refText(r: Ref): string {
  if (isPlace(r)) return `p${r.cache}_${r.pfn}_${r.index}`;
  return `${r.op + 1}_${r.first + 1}${r.count === 1 ? '' : `_${r.count}`}`;
}

function opText(o: ScriptOp): string {
  const times = (count: number) => (count === 1 ? '' : `-${count}`);
  switch (o.kind) {
    case 'kmalloc':
      return `m${o.cpu}-${o.size}${times(o.count)}`;
    case 'alloc':
      return `a${o.cpu}-${o.cache}${times(o.count)}`;
    case 'free':
      return `f${o.cpu}-${o.refs.map(refText).join('-')}`;
    case 'drain':
      return `d${o.cpu}`;
    case 'reap':
      return `r${o.cpu}-${o.ms}`;
    case 'shrink':
      return 's';
  }
}

export function scriptToText(s: Script): string {
  return s.ops.map(opText).join('.');
}

function refWords(r: Ref): string {
  if (isPlace(r)) return `object ${r.index} of slab ${r.pfn}`;
  const which = r.count === 1 ? `object ${r.first + 1}` : `objects ${r.first + 1}–${r.first + r.count}`;
  return `${which} of step ${r.op + 1}`;
}

/** One operation in words, the cache names given by `cacheName` (the world's created caches by number). */
export function describeOp(o: ScriptOp, cacheName: (i: number) => string): string {
  const times = (count: number) => (count === 1 ? '' : ` × ${count.toLocaleString('en')}`);
  switch (o.kind) {
    case 'kmalloc':
      return `kmalloc(${o.size})${times(o.count)} on CPU ${o.cpu}`;
    case 'alloc':
      return `kmem_cache_alloc(${cacheName(o.cache)})${times(o.count)} on CPU ${o.cpu}`;
    case 'free': {
      const n = o.refs.reduce((k, r) => k + (isPlace(r) ? 1 : r.count), 0);
      return n > 3 ? `free ${n.toLocaleString('en')} objects (${o.refs.map(refWords).join(', ')}) on CPU ${o.cpu}` : `free ${o.refs.map(refWords).join(', ')} on CPU ${o.cpu}`;
    }
    case 'drain':
      return `drain CPU ${o.cpu}'s arrays`;
    case 'reap':
      return `cache_reap on CPU ${o.cpu} at ${o.ms} ms`;
    case 'shrink':
      return 'shrink every cache';
  }
}

function checkRef(raw: unknown, what: string): Ref {
  const r = checkRecord(what, raw);
  if ('pfn' in r) return { cache: checkWhole(`${what}'s cache`, r.cache, 0, 63), pfn: checkWhole(`${what}'s pfn`, r.pfn, 0, 0xffffff), index: checkWhole(`${what}'s index`, r.index, 0, 254) };
  return { op: checkWhole(`${what}'s op`, r.op, 0, MAX_OPS - 1), first: checkWhole(`${what}'s first`, r.first, 0, MAX_COUNT - 1), count: checkWhole(`${what}'s count`, r.count, 1, MAX_COUNT) };
}

function checkOp(raw: unknown, what: string, cpus: number): ScriptOp {
  const o = checkRecord(what, raw);
  const kind = checkOneOf(`${what}'s kind`, o.kind, OP_KINDS);
  if (kind === 'shrink') return { kind, cpu: 0 };
  const cpu = checkWhole(`${what}'s cpu`, o.cpu, 0, cpus - 1);
  switch (kind) {
    case 'kmalloc':
      return { kind, cpu, size: checkWhole(`${what}'s size`, o.size, 1, MAX_KMALLOC), count: checkWhole(`${what}'s count`, o.count, 1, MAX_COUNT) };
    case 'alloc':
      return { kind, cpu, cache: checkWhole(`${what}'s cache`, o.cache, 0, MAX_WORLD_CACHES - 1), count: checkWhole(`${what}'s count`, o.count, 1, MAX_COUNT) };
    case 'free':
      if (!Array.isArray(o.refs) || o.refs.length < 1 || o.refs.length > MAX_FREE_OBJECTS) throw new BadRequest(`${what} must name 1 to ${MAX_FREE_OBJECTS} objects in refs`);
      return { kind, cpu, refs: o.refs.map((r, k) => checkRef(r, `${what}'s object ${k + 1}`)) };
    case 'drain':
      return { kind, cpu };
    case 'reap':
      return { kind, cpu, ms: checkWhole(`${what}'s ms`, o.ms, 0, MAX_MS) };
  }
}

/** A script from a request, checked against a world of `cpus` CPUs that creates `caches` caches. */
export function checkScript(raw: unknown, cpus: number, caches: number): Script {
  const s = checkRecord('script', raw);
  if (!Array.isArray(s.ops)) throw new BadRequest('script must hold an ops array');
  if (s.ops.length > MAX_OPS) throw new BadRequest(`script has ${s.ops.length} operations, at most ${MAX_OPS}`);
  const script = { ops: s.ops.map((o, i) => checkOp(o, `op ${i + 1}`, cpus)) };
  const problem = scriptProblem(script, cpus, caches);
  if (problem) throw new BadRequest(`script: ${problem}`);
  return script;
}
