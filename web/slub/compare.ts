// compare.ts - the row each pane shows when kernels are compared side by
// side: what the per-CPU layer (the tid fast path before 7.0, the sheaves
// after) served at once, what went to the slow path, the cmpxchg retries,
// the node's list_lock and the barn lock's acquisitions and the objects
// moved between sheaves and slabs, read from the kernel's own counters
// (CONFIG_SLUB_STATS) but for list_lock, which the model counts itself.

import { stat, type SlubSnapshot } from './snapshot';

export interface Comparison {
  /** Allocations and frees the per-CPU layer served without its slow path. */
  hits: number;
  /** Entries into the slow path (alloc_slowpath + free_slowpath). */
  slow: number;
  /** hits / (hits + slow), 0..1; 0 before any. */
  share: number;
  /** Failed this_cpu_cmpxchg_double and slab cmpxchg_double (retries). */
  casRetries: number;
  /** The node's list_lock taken by operations (the model's counter: the kernel has none). */
  listLocks: number;
  /** The barn's spinlock taken: barn_get, barn_put and their failures. */
  barnLocks: number;
  /** Objects into sheaves from slabs (sheaf_refill) and back (sheaf_flush). */
  refilled: number;
  flushed: number;
}

/**
 * The comparison figures of a snapshot.  Per-CPU hits are the tid fast path's
 * (alloc_fastpath, free_fastpath) in a cache without sheaves, the sheaves'
 * (alloc_cpu_sheaf, free_cpu_sheaf) in one with them: 6.18 counts its
 * sheaves' own refills through the per-CPU slab as fast-path allocations
 * too, which are not the caller's.
 */
export function compare(s: SlubSnapshot): Comparison {
  const hits = s.kernel.hasSheaves ? stat(s, 'ALLOC_CPU_SHEAF') + stat(s, 'FREE_CPU_SHEAF') : stat(s, 'ALLOC_FASTPATH') + stat(s, 'FREE_FASTPATH');
  const slow = stat(s, 'ALLOC_SLOWPATH') + stat(s, 'FREE_SLOWPATH');
  return {
    hits,
    slow,
    share: hits + slow ? hits / (hits + slow) : 0,
    casRetries: stat(s, 'CMPXCHG_DOUBLE_CPU_FAIL') + stat(s, 'CMPXCHG_DOUBLE_FAIL'),
    listLocks: stat(s, 'MODEL_LIST_LOCK'),
    barnLocks: stat(s, 'BARN_GET') + stat(s, 'BARN_GET_FAIL') + stat(s, 'BARN_PUT') + stat(s, 'BARN_PUT_FAIL'),
    refilled: stat(s, 'SHEAF_REFILL'),
    flushed: stat(s, 'SHEAF_FLUSH'),
  };
}

/** The comparison in words, one line. */
export function comparisonText(s: SlubSnapshot): string {
  const c = compare(s);
  const layer = s.kernel.hasSheaves ? 'sheaves' : 'tid fast path';
  const sheaves = s.kernel.hasSheaves ? `; barn lock taken ${c.barnLocks}×; ${c.refilled} objects refilled from slabs, ${c.flushed} flushed to slabs` : '';
  return `Per-CPU layer (${layer}): ${c.hits} served at once, ${c.slow} slow path (${Math.round(100 * c.share)}% fast); cmpxchg retries ${c.casRetries}; list_lock taken ${c.listLocks}×${sheaves}.`;
}
