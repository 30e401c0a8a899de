// path.ts - the path a SLUB operation took, read from the events it emitted,
// for the end of the caption ("Path: slow path, refilled from the CPU
// partial list."): which of the fast path, the CPU sheaf, the barn, the slow
// path and its refill source (the CPU slab's freelist, the CPU partial list,
// the node partial list, a new slab) it went through, in the order it did;
// for a non-blocking context and the no-lock API, the refill not made, the
// trylock that failed, the free deferred to the irq_work and its run.

import { EventKind as K } from '../core/events.generated';
import { eventPath } from '../lab/path';

/** The words of each event kind that tells the path, in the order an operation meets them. */
const PATH_WORDS: ReadonlyMap<number, string> = new Map([
  [K.SLUB_SHEAF_ALLOC, 'from the CPU sheaf'],
  [K.SLUB_SHEAF_FREE, 'to the CPU sheaf'],
  [K.SLUB_SHEAF_SWAP, 'main and spare sheaves swapped'],
  [K.SLUB_BARN_GET, 'a full sheaf from the barn'],
  [K.SLUB_BARN_GET_FAIL, 'the barn had no full sheaf'],
  [K.SLUB_BARN_PUT, 'a full sheaf to the barn'],
  [K.SLUB_BARN_PUT_FAIL, 'the barn took no sheaf'],
  [K.SLUB_SHEAF_REFILL, 'the sheaf refilled from slabs'],
  [K.SLUB_SHEAF_TRYLOCK_FAIL, 'the sheaves were locked: the slab path'],
  [K.SLUB_ALLOC_FASTPATH, 'fast path'],
  [K.SLUB_FREE_FASTPATH, 'fast path'],
  [K.SLUB_CPU_CAS_FAIL, 'the CPU cmpxchg retried'],
  [K.SLUB_ALLOC_SLOWPATH, 'slow path'],
  [K.SLUB_REFILL_FREELIST, "refilled from the CPU slab's freelist"],
  [K.SLUB_REFILL_CPU_PARTIAL, 'refilled from the CPU partial list'],
  [K.SLUB_REFILL_NODE_PARTIAL, 'refilled from the node partial list'],
  [K.SLUB_NEW_SLAB, 'refilled from a new slab'],
  [K.SLUB_ORDER_FALLBACK, 'the new slab fell back to a lower order'],
  [K.SLUB_FREE_SLOWPATH, 'slow path (__slab_free)'],
  [K.SLUB_FREE_FROZEN, 'to a frozen slab'],
  [K.SLUB_CPU_PARTIAL_ADD, 'the slab onto the CPU partial list'],
  [K.SLUB_NODE_PARTIAL_ADD, 'the slab onto the node partial list'],
  [K.SLUB_DISCARD_SLAB, 'an empty slab discarded'],
  [K.SLUB_DETACHED_FREELIST, 'a detached freelist per slab'],
  [K.SLUB_RCU_SHEAF_ADD, 'batched in the rcu_free sheaf'],
  [K.SLUB_SHEAF_NO_REFILL, 'no sheaf refill in this context: the slab path'],
  [K.SLUB_TRYLOCK_BUSY, 'a trylock found its lock taken: backed off'],
  [K.SLUB_DEFER_FREE, "deferred to the CPU's irq_work"],
  [K.SLUB_IRQ_WORK, 'the deferred objects freed (__slab_free)'],
]);

/** The path of one SLUB operation from its events (web/lab/path.ts). */
export const slubPath = eventPath(PATH_WORDS);
