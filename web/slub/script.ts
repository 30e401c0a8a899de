// script.ts - what the deterministic driver runs (wasm-core/src/sched/sched.h):
// a list of operations, each acting as one CPU, plus interrupts injected at a
// named preemption point of one operation.  The view's whole history is such
// a script: Step, Micro-step and Back replay it against a fresh world (the
// model is deterministic, so the same prefix always gives the same state).
//
// Objects are named by place, (slab pfn, object index), as in the driver.  A
// scenario written before anything ran names an object symbolically instead
// ("the 2nd object operation 3 allocated"); the session resolves those to
// places by running the prefix (session.ts).

export type OpKind = 'alloc' | 'free' | 'allocBulk' | 'freeBulk' | 'flush';
const KIND_CODE: Record<OpKind, number> = { alloc: 1, free: 2, allocBulk: 3, freeBulk: 4, flush: 5 };

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
  /** allocBulk: objects to take. */
  count?: number;
  /** free: one object; freeBulk: the array p[] in order. */
  refs?: R[];
}

/** Preemption point ids (SL_SLUB_PP_* in slub.h). */
export const PreemptPoint = { ALLOC_BEFORE_CAS: 1, FREE_BEFORE_CAS: 2, SLAB_FREE: 3, BULK_GROUP: 4 } as const;
export const POINT_TEXT: Record<number, string> = {
  1: 'slab_alloc_node: tid, freelist and the next object are read; the cmpxchg comes next',
  2: 'do_slab_free: tid and freelist are read, the free pointer is set; the cmpxchg comes next',
  3: '__slab_free: about to read the slab freelist and counters',
  4: 'kmem_cache_free_bulk: a detached freelist is built; its one free comes next',
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

/** The driver's binary records for ops[0..nops) and the interrupts aimed at them. */
export function encodeScript(s: Script, nops: number): { ops: Uint8Array; refs: Uint8Array; irqs: Uint8Array } {
  const refs: number[] = [];
  const op = (o: Omit<ScriptOp, 'cpu'>, cpu: number, dv: DataView, at: number) => {
    dv.setUint8(at, KIND_CODE[o.kind]);
    dv.setUint8(at + 1, cpu);
    dv.setUint16(at + 2, o.kind === 'allocBulk' ? (o.count ?? 0) : o.kind === 'freeBulk' ? (o.refs?.length ?? 0) : 0, true);
    dv.setUint32(at + 4, refs.length / 2, true);
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
      return `bulk alloc of ${o.count ?? 0} on CPU ${o.cpu}`;
    case 'freeBulk':
      return `bulk free of ${o.refs?.length ?? 0} on CPU ${o.cpu}`;
    case 'flush':
      return `flush CPU ${o.cpu}`;
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
