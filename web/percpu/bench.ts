// bench.ts - seed 003's percpu experiment (`slablab percpu`) in the
// WebAssembly build, for the Benchmarks page: one bridge call per row (one
// allocator, free order and object size on a fresh instance, timed by the
// workload itself), so progress moves and Cancel takes effect row by row.
// The seed reports, per allocator and object size, the worst alloc and free
// times over the three free orders (worstOverOrders).

import { FREE_ORDERS, type FreeOrder, type PercpuBenchParams, type PercpuBenchResult } from './percpu-api';
import { ALLOCATORS, type Allocator } from './snapshot';

export const PERCPU_SIZES = [4, 16, 64, 256, 1024] as const;

export interface PercpuPlan {
  allocators: readonly Allocator[];
  orders: readonly FreeOrder[];
  sizes: readonly number[];
  /** Objects per row (the seed used 2^20; 32768 objects of 1 KiB in 2 units take 64 MiB of the browser build's fixed 256 MiB). */
  objects: number;
  align: number;
  prefill: boolean;
  units: number;
  /** Per row; a row over budget says how far it got. */
  budgetMs: number;
}

export const FULL_PLAN: PercpuPlan = {
  allocators: ALLOCATORS, orders: FREE_ORDERS, sizes: PERCPU_SIZES, objects: 32768, align: 4, prefill: false, units: 2,
  budgetMs: 30_000,
};
export const SHORT_PLAN: PercpuPlan = { ...FULL_PLAN, sizes: [4, 1024], objects: 4096, budgetMs: 5_000 };

export interface PercpuRow {
  params: PercpuBenchParams;
  result: PercpuBenchResult;
}

export type PercpuRowRunner = (p: PercpuBenchParams) => Promise<PercpuBenchResult>;

/** The rows of a plan, allocator by allocator, order by order, size by size (the seed's table order). */
export function planRows(plan: PercpuPlan): PercpuBenchParams[] {
  const rows: PercpuBenchParams[] = [];
  for (const allocator of plan.allocators)
    for (const order of plan.orders)
      for (const size of plan.sizes)
        rows.push({ allocator, size, order, align: plan.align, objects: plan.objects, prefill: plan.prefill,
          units: plan.units, unitSize: 0, budgetMs: plan.budgetMs });
  return rows;
}

/**
 * Runs a plan: `onRow` gets each finished row, `progress` (done, total)
 * after each; stops before the next row once `cancelled()`.  Resolves true
 * when every row ran.
 */
export async function runPercpuPlan(
  plan: PercpuPlan,
  run: PercpuRowRunner,
  onRow: (r: PercpuRow) => void,
  progress: (done: number, total: number) => void,
  cancelled: () => boolean,
): Promise<boolean> {
  const rows = planRows(plan);
  for (let i = 0; i < rows.length; i++) {
    const params = rows[i];
    if (!params || cancelled()) return false;
    onRow({ params, result: await run(params) });
    progress(i + 1, rows.length);
  }
  return true;
}

export interface WorstCase {
  allocator: Allocator;
  size: number;
  allocMs: number;
  freeMs: number;
  /** Some order's row did not finish (over budget or out of memory): the figures are lower bounds. */
  incomplete: boolean;
}

/** The seed's table: per allocator and size, the worst alloc and free times over the free orders run. */
export function worstOverOrders(rows: readonly PercpuRow[]): WorstCase[] {
  const out = new Map<string, WorstCase>();
  for (const { params: p, result: r } of rows) {
    const key = `${p.allocator}/${p.size}`;
    const w = out.get(key) ?? { allocator: p.allocator, size: p.size, allocMs: 0, freeMs: 0, incomplete: false };
    w.allocMs = Math.max(w.allocMs, r.allocMs);
    w.freeMs = Math.max(w.freeMs, r.freeMs);
    w.incomplete ||= r.status !== 'ok';
    out.set(key, w);
  }
  return [...out.values()];
}
