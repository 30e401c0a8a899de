// bench.ts - the SLUB model's experiments on the Benchmarks page: `fastpath`
// (seed 001: one alloc+free pair of a 256-byte object per fast-path variant)
// and `bulk` (seed 000: alloc_bulk + free_bulk per bulk size, the generic
// per-object loop vs the detached freelist), as rows for the engine's
// web/lab/bench.ts, and the native measurements that match them.

import { readNative, type BenchRow, type NativeResult } from '../lab/bench';
import { FASTPATHS } from './snapshot';

export const BULK_SIZES = [1, 2, 3, 4, 8, 16, 30, 32, 34, 48, 64, 128, 158, 250] as const;
/** Every fast-path variant, rt (PREEMPT_RT) included, as `slablab fastpath` measures them. */
export const FASTPATH_VARIANTS = FASTPATHS;
/** slab_common.c's generic per-object loop (named "fallback" by the seeds and by the CLI before issue 11) and the detached freelist. */
export const BULK_VARIANTS = ['generic', 'detached'] as const;
/** The bulk variant's name in native results written before issue 11's rename. */
const OLD_BULK_NAMES: Readonly<Record<string, string>> = { fallback: 'generic' };

export interface BenchPlan {
  experiments: ('fastpath' | 'bulk')[];
  reps: number;
  targetMs: number;
  /** Bulk sizes to run (a short run takes a few). */
  bulkSizes: readonly number[];
}

/**
 * Many short timed calls, as the native harness (docs/bench.md, "Repetitions"): on a shared machine
 * the median then comes from calls no other task interrupted (5 calls of 25 ms were all interrupted).
 */
export const FULL_PLAN: BenchPlan = { experiments: ['fastpath', 'bulk'], reps: 15, targetMs: 4, bulkSizes: BULK_SIZES };
export const SHORT_PLAN: BenchPlan = { experiments: ['fastpath', 'bulk'], reps: 1, targetMs: 4, bulkSizes: [1, 16, 158] };

/** The rows of a plan's experiments; a bulk row's operation is one object (an alloc+free pair). */
export function slubRows(plan: BenchPlan): BenchRow[] {
  const rows: BenchRow[] = [];
  const row = (experiment: string, n: number, variants: readonly string[]): BenchRow => ({ model: 'slub', experiment, row: n, variants, opsPerLoop: n, probeLoops: Math.max(1, Math.round(2000 / n)) });
  if (plan.experiments.includes('fastpath')) rows.push(row('fastpath', 1, FASTPATH_VARIANTS));
  if (plan.experiments.includes('bulk')) for (const b of plan.bulkSizes) rows.push(row('bulk', b, BULK_VARIANTS));
  return rows;
}

/** The fastpath and bulk rows of a native result; throws an Error that says what is wrong with it. */
export function parseNative(text: string): NativeResult {
  const { machine, measurements } = readNative(text);
  const points = measurements.flatMap((m) =>
    m.experiment === 'fastpath' && m.group === 'slub alloc+free'
      ? [{ experiment: 'fastpath', row: 1, variant: m.variant, ns: m.ns }]
      : m.experiment === 'bulk' && m.group === 'bulk'
        ? [{ experiment: 'bulk', row: Number(m.row), variant: OLD_BULK_NAMES[m.variant] ?? m.variant, ns: m.ns }]
        : [],
  );
  if (!points.length) throw new Error('it has no fastpath or bulk measurements (run `slablab fastpath` or `slablab bulk` with --format json)');
  return { machine, points };
}
