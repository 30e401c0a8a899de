// script.ts - what the deterministic driver runs (wasm-core/src/sched/sched.h):
// a list of operations, each acting as one CPU, plus interrupts injected at a
// named preemption point of one operation.  The view's whole history is such
// a script: Step, Micro-step and Back replay it against a fresh world (the
// model is deterministic, so the same prefix always gives the same state).
//
// Objects are named by place, (slab pfn, object index), as in the driver.  A
// scenario written before anything ran names an object symbolically instead
// ("the 2nd object operation 3 allocated"); the model adapter resolves those
// to places by running the prefix (worker.ts).
//
// Tuning operations are the sysfs writes of a running cache (min_partial,
// cpu_partial, shrink) and the page allocator running short (new slabs
// fall back to the cache's lower order).  The driver does not run them: the
// model adapter runs them between its driver calls (worker.ts), so they
// replay, step and go in the URL as the others do.  They act as CPU 0 and
// have no preemption point, so no interrupt can be aimed at one.
//
// Script text, the form a hand-made script takes in the URL (`ops=`):
// operations joined by '.', interrupts after them, e.g.
//   a0.a0.f1-12-3.b0-8.F0-12-4-12-5.x1.z1.m2.s.i2-1-0-a
//   a<cpu>                 alloc           f<cpu>-<pfn>-<index>     free
//   b<cpu>-<n>             bulk alloc      F<cpu>-<pfn>-<index>...  bulk free
//   x<cpu>                 flush           i<op>-<point>-<nth>-a | i<op>-<point>-<nth>-f-<pfn>-<index>
//   m<n>                   min_partial = n c<n>                     cpu_partial = n objects
//   s                      shrink          z1 | z0                  the page allocator runs short | has its pages back
// and, for the kernels with sheaves (6.18, 7.0; slot: one of the 8 sheaves a script holds):
//   k<cpu>-<pfn>-<index>   kfree_rcu       g<cpu>                   the grace period ends for what cpu queued
//   p<cpu>-<slot>-<n>      prefill n       t<cpu>-<slot>            alloc from the sheaf (take)
//   r<cpu>-<slot>-<n>      refill to n     u<cpu>-<slot>            return the sheaf (use done)
//   B                      bootstrap_cache_sheaves (7.0 kmalloc caches created early)
// and the allocation's context and the no-lock API (kmalloc_nolock and kfree_nolock came with 6.18):
//   A<cpu>-1 | A<cpu>-2    alloc in GFP_ATOMIC | GFP_NOWAIT context (a0 is GFP_KERNEL: it may block)
//   b<cpu>-<n>-<g>, p<cpu>-<slot>-<n>-<g>, r<cpu>-<slot>-<n>-<g>   bulk alloc, prefill, refill in context g
//                          (1 GFP_ATOMIC, 2 GFP_NOWAIT; without -<g>: GFP_KERNEL)
//   n<cpu>                 kmalloc_nolock  N<cpu>-<pfn>-<index>     kfree_nolock
//   w<cpu>                 the CPU's irq_work frees what kfree_nolock deferred there (7.3: and hands
//                          what kfree_rcu_nolock deferred to kfree_rcu, its full rcu sheaves to call_rcu)
//   R<cpu>-<pfn>-<index>   kfree_rcu_nolock (7.3), interrupts on; R<cpu>-<pfn>-<index>-1 with them off
// An interrupt's handler is a, n, w, A-1 | A-2, f-<pfn>-<index>, N-<pfn>-<index> or R-<pfn>-<index>
// (interrupts off) (e.g. i3-5-0-n: a kmalloc_nolock from an NMI inside op 3's sheaf section).
// (only unreserved URL characters, so it is never percent-encoded).

import { BadRequest, checkOneOf, checkRecord, checkWhole } from '../core/requests';

/** What the driver runs (sl_sched_kind). */
export type DriverKind = 'alloc' | 'free' | 'allocBulk' | 'freeBulk' | 'flush' | SheafKind | NolockKind | HotplugKind;
/** CPU hotplug (process context, never an interrupt's handler): slub_cpu_dead, and slub_cpu_setup (7.1: the node's barn). */
export type HotplugKind = 'cpuDead' | 'cpuOnline';
/** The driver's operations on sheaves and RCU (6.18, 7.0): kfree_rcu, the grace period, the prefill API. */
export type SheafKind = 'kfreeRcu' | 'gracePeriod' | 'prefill' | 'allocFromSheaf' | 'refillSheaf' | 'returnSheaf';
/** The allocation in a non-blocking context, and the no-lock API with the irq_work that finishes its deferred frees (6.18+). */
export type NolockKind = 'allocGfp' | 'kmallocNolock' | 'kfreeNolock' | 'irqWork' | 'kfreeRcuNolock';
/** A non-blocking allocation context (GFP_KERNEL, which may block, is the plain alloc). */
export type Gfp = 'atomic' | 'nowait';
export const GFPS: readonly Gfp[] = ['atomic', 'nowait'];
/**
 * sl_slub_gfp's codes, which SL_SCHED_ALLOC_GFP carries in its count, a bulk
 * alloc in its `first`, a prefill or refill in bits 8-15 of its `first`
 * (SL_SCHED_SLOT / SL_SCHED_GFP in sched.h); GFP_KERNEL is 0.
 */
export const GFP_CODE: Record<Gfp, number> = { atomic: 1, nowait: 2 };
export const GFP_NAME: Record<Gfp, string> = { atomic: 'GFP_ATOMIC', nowait: 'GFP_NOWAIT' };
/** What the model adapter runs between driver calls: sysfs writes, the page allocator running short, bootstrap_cache_sheaves. */
export type TuneKind = 'minPartial' | 'cpuPartial' | 'shrink' | 'zoneShort' | 'bootstrap';
export type OpKind = DriverKind | TuneKind;
/** sl_sched_kind, which is also the code OP_BEGIN/OP_END carry. */
export const KIND_CODE: Record<DriverKind, number> = {
  alloc: 1, free: 2, allocBulk: 3, freeBulk: 4, flush: 5,
  kfreeRcu: 6, gracePeriod: 7, prefill: 8, allocFromSheaf: 9, refillSheaf: 10, returnSheaf: 11,
  irqWork: 17, allocGfp: 18, kmallocNolock: 19, kfreeNolock: 20, cpuDead: 21, cpuOnline: 22, kfreeRcuNolock: 23,
};
/** An operation in a word or two, as the kernel names it (the interrupt's overlay: "its handler runs a kmalloc_nolock"). */
export const KIND_WORD: Record<OpKind, string> = {
  alloc: 'alloc', free: 'free', allocBulk: 'bulk alloc', freeBulk: 'bulk free', flush: 'flush',
  kfreeRcu: 'kfree_rcu', gracePeriod: 'grace period', prefill: 'prefill', allocFromSheaf: 'alloc from a sheaf',
  refillSheaf: 'sheaf refill', returnSheaf: 'sheaf return', irqWork: 'irq_work', allocGfp: 'atomic alloc',
  kmallocNolock: 'kmalloc_nolock', kfreeNolock: 'kfree_nolock', cpuDead: 'CPU offline', cpuOnline: 'CPU online',
  kfreeRcuNolock: 'kfree_rcu_nolock',
  minPartial: 'min_partial write', cpuPartial: 'cpu_partial write', shrink: 'shrink', zoneShort: 'page shortage',
  bootstrap: 'bootstrap',
};
/** The operations on a prefilled sheaf slot. */
const SLOT_KINDS: readonly OpKind[] = ['prefill', 'allocFromSheaf', 'refillSheaf', 'returnSheaf'];
/** Sheaf slots a script holds at once (SL_SCHED_SHEAF_SLOTS). */
export const SHEAF_SLOTS = 8;
/**
 * The operation codes a tuning operation's OP_BEGIN/OP_END carry (the model
 * adapter writes those brackets around its events: worker.ts): the driver's
 * for shrink and bootstrap (SL_SCHED_SHRINK, SL_SCHED_BOOTSTRAP), the sysfs
 * writes and the page allocator after them.
 */
export const TUNE_OPCODE: Record<TuneKind, number> = { shrink: 12, bootstrap: 13, minPartial: 14, cpuPartial: 15, zoneShort: 16 };
const TUNE_KINDS = Object.keys(TUNE_OPCODE) as TuneKind[];
/** The largest min_partial or cpu_partial a script writes. */
export const TUNE_MAX = 65535;

export function isTune(kind: OpKind): kind is TuneKind {
  return kind in TUNE_OPCODE;
}

export interface ObjRef {
  pfn: number;
  index: number;
}
/** An object by what made it: the `nth` (by place) object still allocated that op `allocOf` allocated. */
export interface SymRef {
  allocOf: number;
  nth: number;
}
export type AnyRef = ObjRef | SymRef;

export function isSym(r: AnyRef): r is SymRef {
  return 'allocOf' in r;
}

export interface ScriptOp<R extends AnyRef = ObjRef> {
  kind: OpKind;
  cpu: number;
  /** allocBulk: objects to take; prefill, refillSheaf: the sheaf's size asked for; kfreeRcuNolock: 1 with interrupts off. */
  count?: number;
  /** prefill, allocFromSheaf, refillSheaf, returnSheaf: the sheaf slot (0 .. SHEAF_SLOTS - 1). */
  slot?: number;
  /** minPartial, cpuPartial: the value written; zoneShort: 1 runs the page allocator short, 0 gives its pages back. */
  value?: number;
  /** allocGfp: the context it allocates in; allocBulk, prefill, refillSheaf: the same, absent for GFP_KERNEL. */
  gfp?: Gfp;
  /** free, kfreeRcu, kfreeNolock, kfreeRcuNolock: one object; freeBulk: the array p[] in order. */
  refs?: R[];
}

/** Preemption point ids (SL_SLUB_PP_* in slub.h). */
export const PreemptPoint = { ALLOC_BEFORE_CAS: 1, FREE_BEFORE_CAS: 2, SLAB_FREE: 3, BULK_GROUP: 4, SHEAF_ALLOC: 5, SHEAF_FREE: 6, SHEAF_REFILL: 7 } as const;
export const POINT_TEXT: Record<number, string> = {
  1: 'slab_alloc_node: tid, freelist and the next object are read; the cmpxchg comes next (rt: local_lock, then ___slab_alloc)',
  2: 'do_slab_free: tid and freelist are read, the free pointer is set; the cmpxchg comes next (rt: nothing written yet; local_lock, then the CPU slab is checked again)',
  3: '__slab_free: about to read the slab freelist and counters',
  4: 'kmem_cache_free_bulk: a detached freelist is built; its one free comes next',
  5: 'alloc_from_pcs: the local trylock is held; the main sheaf\'s top object is popped next',
  6: 'free_to_pcs: the local trylock is held; the object is pushed on the main sheaf next',
  7: '__pcs_replace_empty_main: the lock is dropped to refill an empty sheaf from slabs',
};

export interface ScriptIrq<R extends AnyRef = ObjRef> {
  /** Index of the interrupted op in `ops`. */
  atOp: number;
  point: number;
  /** At the nth arrival (0 = first) of that op at that point. */
  nth: number;
  /** The handler runs on the interrupted op's CPU. */
  handler: Omit<ScriptOp<R>, 'cpu'>;
}

export interface Script<R extends AnyRef = ObjRef> {
  ops: ScriptOp<R>[];
  irqs: ScriptIrq<R>[];
}

export const MAX_IRQS = 8;
export const MAX_BULK = 1024;
/** Operations a script may hold. */
export const MAX_OPS = 1 << 20;
const OP_KINDS = [...(Object.keys(KIND_CODE) as DriverKind[]), ...TUNE_KINDS];

function checkRef(raw: unknown, what: string): AnyRef {
  const r = checkRecord(what, raw);
  if ('allocOf' in r) return { allocOf: checkWhole(`${what}'s allocOf`, r.allocOf, 0, MAX_OPS), nth: checkWhole(`${what}'s nth`, r.nth, 0, MAX_BULK) };
  return { pfn: checkWhole(`${what}'s pfn`, r.pfn, 0, 0xffffffff), index: checkWhole(`${what}'s index`, r.index, 0, 0xffff) };
}

/** An operation (or a handler, which has no CPU of its own) from a request, checked. */
function checkOp(raw: unknown, what: string, cpus: number | null): ScriptOp<AnyRef> {
  const o = checkRecord(what, raw);
  const kind = checkOneOf(`${what}'s kind`, o.kind, OP_KINDS);
  if (cpus === null && isTune(kind)) throw new BadRequest(`${what} cannot be ${kind}: an interrupt handler writes no sysfs file`);
  if (cpus === null && (kind === 'cpuDead' || kind === 'cpuOnline')) throw new BadRequest(`${what} cannot be ${kind}: CPU hotplug runs in process context`);
  const op: ScriptOp<AnyRef> = { kind, cpu: cpus === null ? 0 : checkWhole(`${what}'s cpu`, o.cpu, 0, cpus - 1) };
  if (isTune(kind) && op.cpu !== 0) throw new BadRequest(`${what} is ${kind}, which acts as CPU 0, not CPU ${op.cpu}`);
  if (kind === 'minPartial' || kind === 'cpuPartial') op.value = checkWhole(`${what}'s value`, o.value, 0, TUNE_MAX);
  if (kind === 'zoneShort') op.value = checkWhole(`${what}'s value`, o.value, 0, 1);
  if (kind === 'allocBulk') op.count = checkWhole(`${what}'s count`, o.count, 1, MAX_BULK);
  if (kind === 'prefill' || kind === 'refillSheaf') op.count = checkWhole(`${what}'s count`, o.count, 1, 0xffff);
  if (SLOT_KINDS.includes(kind)) op.slot = checkWhole(`${what}'s slot`, o.slot, 0, SHEAF_SLOTS - 1);
  if (kind === 'allocGfp') op.gfp = checkOneOf(`${what}'s gfp`, o.gfp, GFPS);
  if ((kind === 'allocBulk' || kind === 'prefill' || kind === 'refillSheaf') && o.gfp !== undefined) op.gfp = checkOneOf(`${what}'s gfp`, o.gfp, GFPS);
  if (kind === 'kfreeRcuNolock' && o.count !== undefined) op.count = checkWhole(`${what}'s count (1: interrupts off)`, o.count, 0, 1);
  if (kind === 'free' || kind === 'freeBulk' || kind === 'kfreeRcu' || kind === 'kfreeNolock' || kind === 'kfreeRcuNolock') {
    const max = kind === 'freeBulk' ? MAX_BULK : 1;
    if (!Array.isArray(o.refs) || o.refs.length < 1 || o.refs.length > max)
      throw new BadRequest(`${what} must name ${max === 1 ? 'one object' : `1 to ${MAX_BULK} objects`} in refs`);
    op.refs = o.refs.map((r, k) => checkRef(r, `${what}'s object ${k + 1}`));
  }
  return op;
}

/** A script from a request, checked: known kinds, CPUs below `cpus`, counts and objects in range. */
export function checkScript(raw: unknown, cpus: number): Script<AnyRef> {
  const s = checkRecord('script', raw);
  if (!Array.isArray(s.ops) || !Array.isArray(s.irqs)) throw new BadRequest('script must hold an ops and an irqs array');
  if (s.ops.length > MAX_OPS) throw new BadRequest(`script has ${s.ops.length} operations, at most ${MAX_OPS}`);
  if (s.irqs.length > MAX_IRQS) throw new BadRequest(`script has ${s.irqs.length} interrupts, at most ${MAX_IRQS}`);
  if (s.irqs.length && !s.ops.length) throw new BadRequest('script has interrupts but no operation to interrupt');
  const ops = s.ops.map((o, i) => checkOp(o, `op ${i + 1}`, cpus));
  const slots = walkSlots(ops).problem;
  if (slots) throw new BadRequest(slots);
  const irqs = s.irqs.map((raw, i): ScriptIrq<AnyRef> => {
    const what = `interrupt ${i + 1}`;
    const q = checkRecord(what, raw);
    const { kind, count, refs, slot, gfp } = checkOp(q.handler, `${what}'s handler`, null);
    if (slot !== undefined) throw new BadRequest(`${what}'s handler works on sheaf slot ${slot}: a handler may not use the script's prefilled sheaves`);
    const atOp = checkWhole(`${what}'s atOp`, q.atOp, 0, ops.length - 1);
    const target = ops[atOp];
    if (target && isTune(target.kind)) throw new BadRequest(`${what} interrupts op ${atOp + 1}, ${target.kind}, which has no preemption point`);
    return {
      atOp,
      point: checkWhole(`${what}'s point`, q.point, 0, 0xffff),
      nth: checkWhole(`${what}'s nth`, q.nth, 0, 0xffff),
      handler: { kind, ...(count === undefined ? {} : { count }), ...(refs === undefined ? {} : { refs }), ...(gfp === undefined ? {} : { gfp }) },
    };
  });
  return { ops, irqs };
}

/**
 * The sheaf slots of `ops`: which hold a sheaf after them, and what is wrong,
 * if anything: a prefill into a slot that holds a sheaf (the driver refuses
 * it before the operation begins), or a use of a slot no prefill has filled.
 * Slots count as filled from their prefill to their return, whether the
 * prefill succeeded or not.
 */
export function walkSlots(ops: readonly ScriptOp<AnyRef>[]): { full: ReadonlySet<number>; problem: string | null } {
  const full = new Set<number>();
  for (const [i, o] of ops.entries()) {
    if (o.slot === undefined) continue;
    if (o.kind === 'prefill') {
      if (full.has(o.slot)) return { full, problem: `op ${i + 1} prefills sheaf slot ${o.slot}, which already holds a sheaf (return it first)` };
      full.add(o.slot);
    } else if (!full.has(o.slot)) return { full, problem: `op ${i + 1} uses sheaf slot ${o.slot}, which no prefill has filled` };
    else if (o.kind === 'returnSheaf') full.delete(o.slot);
  }
  return { full, problem: null };
}

/** The driver's binary records for ops[0..nops) and the interrupts aimed at them. */
export function encodeScript(s: Script, nops: number): { ops: Uint8Array; refs: Uint8Array; irqs: Uint8Array } {
  const refs: number[] = [];
  const op = (o: Omit<ScriptOp, 'cpu'>, cpu: number, dv: DataView, at: number) => {
    if (isTune(o.kind)) throw new Error(`${o.kind} is not a driver operation: the model adapter runs it`);
    dv.setUint8(at, KIND_CODE[o.kind]);
    dv.setUint8(at + 1, cpu);
    dv.setUint16(at + 2, o.kind === 'freeBulk' ? (o.refs?.length ?? 0) : o.kind === 'allocGfp' ? GFP_CODE[o.gfp ?? 'atomic'] : (o.count ?? 0), true);
    const gfp = o.gfp ? GFP_CODE[o.gfp] : 0;
    dv.setUint32(at + 4, o.kind === 'allocBulk' ? gfp : o.slot !== undefined ? o.slot | (o.kind === 'allocFromSheaf' || o.kind === 'returnSheaf' ? 0 : gfp << 8) : refs.length / 2, true);
    for (const r of o.refs ?? []) refs.push(r.pfn, r.index);
  };
  const ops = new Uint8Array(8 * nops);
  const odv = new DataView(ops.buffer);
  for (let i = 0; i < nops; i++) {
    const o = s.ops[i];
    if (o) op(o, o.cpu, odv, 8 * i);
  }
  const live = s.irqs.filter((q) => q.atOp < nops).slice(0, MAX_IRQS);
  const irqs = new Uint8Array(16 * live.length);
  const idv = new DataView(irqs.buffer);
  live.forEach((q, i) => {
    idv.setUint32(16 * i, q.atOp, true);
    idv.setUint16(16 * i + 4, q.point, true);
    idv.setUint16(16 * i + 6, q.nth, true);
    op(q.handler, 0, idv, 16 * i + 8);
  });
  return { ops, refs: new Uint8Array(new Uint32Array(refs).buffer), irqs };
}

/** ", in GFP_ATOMIC context (the same path as GFP_KERNEL)" for a bulk alloc, prefill or refill given a context. */
function inContext(o: ScriptOp<AnyRef>): string {
  return o.gfp ? `, in ${GFP_NAME[o.gfp]} context (the same path as GFP_KERNEL: only the page allocator, which the model's cannot, reclaims or not)` : '';
}

/** The words a person would use for an op. */
export function describeOp(o: ScriptOp<AnyRef>): string {
  const obj = (r: AnyRef | undefined) =>
    !r ? '?' : isSym(r) ? `object ${r.nth + 1} of op ${r.allocOf + 1}` : `object ${r.pfn}:${r.index}`;
  switch (o.kind) {
    case 'alloc':
      return `alloc on CPU ${o.cpu}`;
    case 'free':
      return `free ${obj(o.refs?.[0])} on CPU ${o.cpu}`;
    case 'allocBulk':
      return `bulk alloc of ${o.count ?? 0} on CPU ${o.cpu}${inContext(o)}`;
    case 'freeBulk':
      return `bulk free of ${o.refs?.length ?? 0} on CPU ${o.cpu}`;
    case 'flush':
      return `flush CPU ${o.cpu}`;
    case 'minPartial':
      return `set min_partial to ${o.value ?? 0}`;
    case 'cpuPartial':
      return `set cpu_partial to ${o.value ?? 0} objects`;
    case 'shrink':
      return 'shrink the cache';
    case 'zoneShort':
      return o.value ? 'make the page allocator run short' : 'give the page allocator its pages back';
    case 'kfreeRcu':
      return `kfree_rcu of ${obj(o.refs?.[0])} on CPU ${o.cpu}`;
    case 'gracePeriod':
      return `an RCU grace period ends for CPU ${o.cpu}`;
    case 'prefill':
      return `prefill a sheaf of ${o.count ?? 0} into slot ${o.slot ?? 0} on CPU ${o.cpu}${inContext(o)}`;
    case 'allocFromSheaf':
      return `alloc from the sheaf in slot ${o.slot ?? 0} on CPU ${o.cpu}`;
    case 'refillSheaf':
      return `refill the sheaf in slot ${o.slot ?? 0} to ${o.count ?? 0} on CPU ${o.cpu}${inContext(o)}`;
    case 'returnSheaf':
      return `return the sheaf in slot ${o.slot ?? 0} on CPU ${o.cpu}`;
    case 'bootstrap':
      return 'bootstrap_cache_sheaves: give the cache its real sheaves';
    case 'allocGfp':
      return `alloc in ${GFP_NAME[o.gfp ?? 'atomic']} context (may not block: no sheaf refill in 6.18) on CPU ${o.cpu}`;
    case 'kmallocNolock':
      return `kmalloc_nolock on CPU ${o.cpu} (no lock waited for)`;
    case 'kfreeNolock':
      return `kfree_nolock of ${obj(o.refs?.[0])} on CPU ${o.cpu} (deferred to the irq_work if a lock would be needed)`;
    case 'irqWork':
      return `CPU ${o.cpu}'s irq_work frees what kfree_nolock deferred there (7.3: and passes on what kfree_rcu_nolock deferred)`;
    case 'cpuDead':
      return `CPU ${o.cpu} goes offline (slub_cpu_dead: its sheaves flushed)`;
    case 'cpuOnline':
      return `CPU ${o.cpu} comes online (slub_cpu_setup: in 7.1 its node gets a barn if it had none)`;
    case 'kfreeRcuNolock':
      return `kfree_rcu_nolock of ${obj(o.refs?.[0])} on CPU ${o.cpu}${o.count ? ' with interrupts off' : ''} (the rcu sheaf without waiting for a lock, else deferred to the irq_work)`;
  }
}

export interface DetachedGroup {
  /** The chain from head to tail, as p[] positions' objects. */
  chain: ObjRef[];
}

/**
 * build_detached_freelist (6.x) replayed on p[] to know the order of each
 * group's chain, which the snapshot cannot show (the objects are still
 * allocated while the chain is built): scanning from the end, objects of the
 * first object's slab are pushed on the chain and swapped to the tail; three
 * objects of other slabs end the look-ahead.  Mirrors free.c; checked against
 * the C side's SLUB_DETACHED_FREELIST events in session.test.ts.
 */
export function detachedGroups(input: readonly ObjRef[]): DetachedGroup[] {
  const p = input.slice();
  const groups: DetachedGroup[] = [];
  let size = p.length;
  while (size) {
    const first = p[--size];
    if (!first) break;
    const chain = [first];
    let lookahead = 3;
    let same = size;
    while (size) {
      const o = p[--size];
      if (o && o.pfn === first.pfn) {
        chain.unshift(o);
        same--;
        if (size !== same) {
          const t = p[size];
          p[size] = p[same] as ObjRef;
          p[same] = t as ObjRef;
        }
        continue;
      }
      if (!--lookahead) break;
    }
    size = same;
    groups.push({ chain });
  }
  return groups;
}

const OP_RE = /^([abfFxkgptruAnNwDOR])(\d)((?:-\d{1,9})*)$/;
const TUNE_RE = /^(?:([mcz])(\d{1,5})|s|(B))$/;
const IRQ_RE = /^i(\d{1,6})-(\d)-(\d{1,4})-(a|n|w|A-\d|[fNR]-\d{1,9}-\d{1,6})$/;
const GFP_OF_CODE: Record<string, Gfp> = { 1: 'atomic', 2: 'nowait' };
const BAD_GFP = 'must be 1 (GFP_ATOMIC) or 2 (GFP_NOWAIT); a GFP_KERNEL alloc is a<cpu>';
const BAD_CTX = 'must be 1 (GFP_ATOMIC) or 2 (GFP_NOWAIT); without it the operation is GFP_KERNEL';

/** An interrupt handler from its text (IRQ_RE's last group), or null for a bad context. */
function parseHandler(h: string): ScriptIrq['handler'] | null {
  const [k, a, b] = h.split('-');
  if (k === 'a') return { kind: 'alloc' };
  if (k === 'n') return { kind: 'kmallocNolock' };
  if (k === 'w') return { kind: 'irqWork' };
  if (k === 'A') {
    const gfp = GFP_OF_CODE[a ?? ''];
    return gfp ? { kind: 'allocGfp', gfp } : null;
  }
  return { kind: k === 'N' ? 'kfreeNolock' : k === 'R' ? 'kfreeRcuNolock' : 'free', refs: [{ pfn: Number(a), index: Number(b) }] };
}

/** The text of an interrupt handler (parseHandler reads it back). */
function handlerText(h: ScriptIrq['handler']): string {
  const r = (h.refs ?? []).map((x) => `-${x.pfn}-${x.index}`).join('');
  switch (h.kind) {
    case 'kmallocNolock':
      return 'n';
    case 'irqWork':
      return 'w';
    case 'allocGfp':
      return `A-${GFP_CODE[h.gfp ?? 'atomic']}`;
    case 'kfreeNolock':
      return `N${r}`;
    case 'kfreeRcuNolock':
      return `R${r}`;
    case 'free':
      return `f${r}`;
    default:
      return 'a';
  }
}

/** Parses script text (the URL's `ops=`); every CPU must be below `cpus`. */
export function parseScript(text: string, cpus: number): { ok: true; script: Script } | { ok: false; error: string } {
  const script: Script = { ops: [], irqs: [] };
  if (text === '') return { ok: true, script };
  if (text.length > 20_000) return { ok: false, error: 'too long' };
  for (const part of text.split('.')) {
    const irq = IRQ_RE.exec(part);
    if (irq) {
      const [, at, point, nth, h] = irq;
      const handler = parseHandler(h ?? '');
      if (!handler) return { ok: false, error: `interrupt "${part}": its handler's context ${BAD_GFP}` };
      if (Number(at) >= script.ops.length) return { ok: false, error: `interrupt "${part}" names op ${at}, which does not exist yet` };
      if (isTune(script.ops[Number(at)]?.kind ?? 'alloc')) return { ok: false, error: `interrupt "${part}" names op ${at}, a tuning operation, which has no preemption point` };
      if (script.irqs.length >= MAX_IRQS) return { ok: false, error: `at most ${MAX_IRQS} interrupts` };
      script.irqs.push({ atOp: Number(at), point: Number(point), nth: Number(nth), handler });
      continue;
    }
    const tune = TUNE_RE.exec(part);
    if (tune) {
      const [, k, v, boot] = tune;
      const value = Number(v);
      if (boot) script.ops.push({ kind: 'bootstrap', cpu: 0 });
      else if (k === undefined) script.ops.push({ kind: 'shrink', cpu: 0 });
      else if (k === 'z' && value > 1) return { ok: false, error: `"${part}" must be z1 (the page allocator runs short) or z0 (its pages back)` };
      else if (value > TUNE_MAX) return { ok: false, error: `"${part}" writes more than ${TUNE_MAX}` };
      else script.ops.push({ kind: k === 'm' ? 'minPartial' : k === 'c' ? 'cpuPartial' : 'zoneShort', cpu: 0, value });
      continue;
    }
    const m = OP_RE.exec(part);
    if (!m) return { ok: false, error: `"${part}" is not an operation` };
    const [, k, c, rest] = m;
    const cpu = Number(c);
    if (cpu >= cpus) return { ok: false, error: `"${part}" names CPU ${cpu}, there are ${cpus}` };
    const nums = (rest ?? '').split('-').slice(1).map(Number);
    const refs = (): ObjRef[] => {
      const out: ObjRef[] = [];
      for (let i = 0; i + 1 < nums.length; i += 2) out.push({ pfn: nums[i] ?? 0, index: nums[i + 1] ?? 0 });
      return out;
    };
    let op: ScriptOp | null = null;
    if (k === 'a' && nums.length === 0) op = { kind: 'alloc', cpu };
    else if (k === 'x' && nums.length === 0) op = { kind: 'flush', cpu };
    else if (k === 'b' && (nums.length === 1 || nums.length === 2) && (nums[0] ?? 0) >= 1 && (nums[0] ?? 0) <= MAX_BULK) {
      const gfp = nums.length === 2 ? GFP_OF_CODE[String(nums[1])] : undefined;
      if (nums.length === 2 && !gfp) return { ok: false, error: `"${part}": the context ${BAD_CTX}` };
      op = { kind: 'allocBulk', cpu, count: nums[0] ?? 1, ...(gfp ? { gfp } : {}) };
    }
    else if (k === 'f' && nums.length === 2) op = { kind: 'free', cpu, refs: refs() };
    else if (k === 'F' && nums.length >= 2 && nums.length % 2 === 0 && nums.length / 2 <= MAX_BULK) op = { kind: 'freeBulk', cpu, refs: refs() };
    else if (k === 'k' && nums.length === 2) op = { kind: 'kfreeRcu', cpu, refs: refs() };
    else if (k === 'g' && nums.length === 0) op = { kind: 'gracePeriod', cpu };
    else if (k === 'n' && nums.length === 0) op = { kind: 'kmallocNolock', cpu };
    else if (k === 'N' && nums.length === 2) op = { kind: 'kfreeNolock', cpu, refs: refs() };
    else if (k === 'w' && nums.length === 0) op = { kind: 'irqWork', cpu };
    else if (k === 'D' && nums.length === 0) op = { kind: 'cpuDead', cpu };
    else if (k === 'O' && nums.length === 0) op = { kind: 'cpuOnline', cpu };
    else if (k === 'R' && (nums.length === 2 || (nums.length === 3 && nums[2] === 1)))
      op = { kind: 'kfreeRcuNolock', cpu, refs: refs(), ...(nums.length === 3 ? { count: 1 } : {}) };
    else if (k === 'A' && nums.length === 1) {
      const gfp = GFP_OF_CODE[String(nums[0])];
      if (!gfp) return { ok: false, error: `"${part}": the context ${BAD_GFP}` };
      op = { kind: 'allocGfp', cpu, gfp };
    }
    else if (k === 't' || k === 'u' || k === 'p' || k === 'r') {
      const [slot = 0, n = 0, g] = nums;
      const sized = k === 'p' || k === 'r';
      if (slot >= SHEAF_SLOTS) return { ok: false, error: `"${part}" names sheaf slot ${slot}, there are ${SHEAF_SLOTS} (0 to ${SHEAF_SLOTS - 1})` };
      const gfp = sized && nums.length === 3 ? GFP_OF_CODE[String(g)] : undefined;
      if (sized && nums.length === 3 && !gfp) return { ok: false, error: `"${part}": the context ${BAD_CTX}` };
      if ((sized ? nums.length === 2 || nums.length === 3 : nums.length === 1) && (!sized || (n >= 1 && n <= 0xffff)))
        op = sized ? { kind: k === 'p' ? 'prefill' : 'refillSheaf', cpu, slot, count: n, ...(gfp ? { gfp } : {}) } : { kind: k === 't' ? 'allocFromSheaf' : 'returnSheaf', cpu, slot };
    }
    if (!op) return { ok: false, error: `"${part}" has the wrong numbers for its kind` };
    script.ops.push(op);
  }
  const slots = walkSlots(script.ops).problem;
  if (slots) return { ok: false, error: slots };
  return { ok: true, script };
}

/** "-<g>" for a bulk alloc, prefill or refill given a context, "" for GFP_KERNEL. */
function ctxText(o: ScriptOp): string {
  return o.gfp ? `-${GFP_CODE[o.gfp]}` : '';
}

/** The text form of a script (parseScript reads it back). */
export function scriptToText(s: Script): string {
  const r = (refs: ObjRef[] | undefined) => (refs ?? []).map((x) => `-${x.pfn}-${x.index}`).join('');
  const ops = s.ops.map((o) => {
    switch (o.kind) {
      case 'alloc':
        return `a${o.cpu}`;
      case 'flush':
        return `x${o.cpu}`;
      case 'allocBulk':
        return `b${o.cpu}-${o.count ?? 1}${ctxText(o)}`;
      case 'free':
        return `f${o.cpu}${r(o.refs)}`;
      case 'freeBulk':
        return `F${o.cpu}${r(o.refs)}`;
      case 'minPartial':
        return `m${o.value ?? 0}`;
      case 'cpuPartial':
        return `c${o.value ?? 0}`;
      case 'shrink':
        return 's';
      case 'zoneShort':
        return `z${o.value ? 1 : 0}`;
      case 'kfreeRcu':
        return `k${o.cpu}${r(o.refs)}`;
      case 'gracePeriod':
        return `g${o.cpu}`;
      case 'prefill':
        return `p${o.cpu}-${o.slot ?? 0}-${o.count ?? 1}${ctxText(o)}`;
      case 'allocFromSheaf':
        return `t${o.cpu}-${o.slot ?? 0}`;
      case 'refillSheaf':
        return `r${o.cpu}-${o.slot ?? 0}-${o.count ?? 1}${ctxText(o)}`;
      case 'returnSheaf':
        return `u${o.cpu}-${o.slot ?? 0}`;
      case 'bootstrap':
        return 'B';
      case 'allocGfp':
        return `A${o.cpu}-${GFP_CODE[o.gfp ?? 'atomic']}`;
      case 'kmallocNolock':
        return `n${o.cpu}`;
      case 'kfreeNolock':
        return `N${o.cpu}${r(o.refs)}`;
      case 'irqWork':
        return `w${o.cpu}`;
      case 'cpuDead':
        return `D${o.cpu}`;
      case 'cpuOnline':
        return `O${o.cpu}`;
      case 'kfreeRcuNolock':
        return `R${o.cpu}${r(o.refs)}${o.count ? '-1' : ''}`;
    }
  });
  const irqs = s.irqs.map((q) => `i${q.atOp}-${q.point}-${q.nth}-${handlerText(q.handler)}`);
  return [...ops, ...irqs].join('.');
}
