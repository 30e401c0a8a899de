// moves.ts - what one step did to objects, read from its events
// (wasm-core/src/slab/events.def): pops from a CPU's array (ALLOC_HIT),
// pushes onto it (FREE_HIT), a refill's batch from slabs (GET_OBJ) or from the
// shared array (ARRAY_MOVE), a flush's batch to the shared array (ARRAY_MOVE)
// or back to slabs (PUT_OBJ), a drain's.  Each move names its object and
// where it went from and to, as places the canvas has (an array slot, an
// object in its slab), so the view can animate them and mark where they
// landed.  Array slots are positions in the arrays: a flush or a drain takes
// the bottom (slots 0, 1, ...), a refill from the shared array its top.  The
// object a refill hands out has no event of its own: it is the top of what
// the refill brought, taken when its operation ends (or, for an off-slab
// freelist array, when the slab it is for grows).

import { EventKind, NONE32, type SlEvent } from '../core/events.generated';

/** The shared array's owner in events (ARRAY_MOVE's from/to) and here. */
export const SHARED_OWNER = 0xffff;

export type MovePlace =
  | { kind: 'slot'; cacheId: number; owner: number; slot: number } // owner: a CPU, or -1 for the shared array
  | { kind: 'object'; cacheId: number; pfn: number; index: number };

export interface Move {
  cacheId: number;
  pfn: number;
  index: number;
  what: 'pop' | 'push' | 'refill' | 'flush' | 'return';
  from: MovePlace;
  to: MovePlace;
}

const ownerOf = (o: number) => (o === SHARED_OWNER ? -1 : o);

/** The moves the events of one step describe, in order. */
export function movesOf(events: readonly SlEvent[]): Move[] {
  const out: Move[] = [];
  /** The batch being named object by object: where its objects come from (their k-th slot counts up from `base`). */
  let batch: { cacheId: number; owner: number; base: number; k: number } | null = null;
  /** Per cache and CPU: the slot a refill's next object from a slab goes to. */
  const refillSlot = new Map<string, number>();
  /** Per cache and CPU: the top of what the last refill brought, which it hands out. */
  const refillTop = new Map<string, { cacheId: number; cpu: number; slot: number; pfn: number; index: number }>();
  const handOut = (key: string) => {
    const t = refillTop.get(key);
    if (!t) return;
    refillTop.delete(key);
    out.push({ cacheId: t.cacheId, pfn: t.pfn, index: t.index, what: 'pop', from: { kind: 'slot', cacheId: t.cacheId, owner: t.cpu, slot: t.slot }, to: { kind: 'object', cacheId: t.cacheId, pfn: t.pfn, index: t.index } });
  };
  for (const e of events) {
    const obj = (): MovePlace => ({ kind: 'object', cacheId: e.cache, pfn: e.slab, index: e.obj });
    const slot = (owner: number, s: number): MovePlace => ({ kind: 'slot', cacheId: e.cache, owner, slot: s });
    const move = (what: Move['what'], from: MovePlace, to: MovePlace) => out.push({ cacheId: e.cache, pfn: e.slab, index: e.obj, what, from, to });
    const refillKey = `${e.cache}:${e.cpu}`;
    switch (e.kind) {
      case EventKind.SLAB_ALLOC_HIT:
        move('pop', slot(e.cpu, e.arg0), obj());
        break;
      case EventKind.SLAB_FREE_HIT:
        move('push', obj(), slot(e.cpu, e.arg0 - 1));
        break;
      case EventKind.SLAB_REFILL:
        refillSlot.set(refillKey, 0); // a refill starts from an empty array
        refillTop.delete(refillKey);
        batch = null;
        break;
      case EventKind.SLAB_REFILL_SHARED:
        batch = { cacheId: e.cache, owner: -1, base: e.arg1, k: 0 }; // the newest: slots above what stays
        break;
      case EventKind.SLAB_FLUSH:
        batch = { cacheId: e.cache, owner: e.cpu, base: 0, k: 0 };
        break;
      case EventKind.SLAB_DRAIN:
        batch = { cacheId: e.cache, owner: e.arg1 ? -1 : e.cpu, base: 0, k: 0 };
        break;
      case EventKind.SLAB_ARRAY_MOVE: {
        const from = batch && batch.cacheId === e.cache ? slot(batch.owner, batch.base + batch.k++) : slot(ownerOf(e.arg0), 0);
        const to = slot(ownerOf(e.arg1), e.arg2);
        if (e.arg1 !== SHARED_OWNER) {
          refillSlot.set(`${e.cache}:${e.arg1}`, e.arg2 + 1);
          refillTop.set(`${e.cache}:${e.arg1}`, { cacheId: e.cache, cpu: e.arg1, slot: e.arg2, pfn: e.slab, index: e.obj });
        }
        move(e.arg1 === SHARED_OWNER ? 'flush' : 'refill', from, to);
        break;
      }
      case EventKind.SLAB_GET_OBJ: {
        const s = refillSlot.get(refillKey) ?? 0;
        refillSlot.set(refillKey, s + 1);
        refillTop.set(refillKey, { cacheId: e.cache, cpu: e.cpu, slot: s, pfn: e.slab, index: e.obj });
        move('refill', obj(), slot(e.cpu, s));
        break;
      }
      case EventKind.SLAB_GROW: {
        // An off-slab slab's array: the freelist cache's refill handed it out for this slab.
        if (e.arg2 === NONE32) break;
        for (const [key, t] of refillTop) if (t.cpu === e.cpu && t.pfn === e.arg2 >>> 8 && t.index === (e.arg2 & 0xff)) handOut(key);
        break;
      }
      case EventKind.OP_END:
        for (const [key, t] of refillTop) if (t.cpu === e.cpu) handOut(key);
        break;
      case EventKind.SLAB_PUT_OBJ:
        if (batch && batch.cacheId === e.cache) move('return', slot(batch.owner, batch.base + batch.k++), obj());
        break;
      default:
        break;
    }
  }
  return out;
}
