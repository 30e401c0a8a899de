// bench.ts - seed 003's percpu experiment (`slablab percpu`) in the
// WebAssembly build, for the Benchmarks page: the rows web/lab/bench.ts's
// runner runs (one bridge call per row: one allocator, free order and object
// size on a fresh instance, timed by the workload itself, after untimed
// warm-up rows), so progress moves and Cancel takes effect row by row.  Each
// row's counts (entries memmoved, blocks scanned: sl_pcpu_work) are the same
// on every run; its times are the medians of the runs.  The seed reports, per
// allocator and object size, the worst alloc and free times over the three
// free orders (worstOverOrders).

import type { BenchRowParams, BenchRowReply } from '../core/bridge-protocol';
import { median, type BenchPoint, type FixedBenchRow } from '../lab/bench';
import { BadRequest, checkOneOf, checkRecord, checkWhole } from '../core/requests';
import { BENCH_STATUS, FREE_ORDERS, WORK_COUNTS, type FreeOrder, type PercpuBenchParams, type PercpuBenchResult, type PercpuWork } from './percpu-api';
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
  /** Runs of each row; its alloc and free figures are the medians (as `node scripts/wasm-bench.mjs` takes them), its counts the runs' one value. */
  reps: number;
}

export const FULL_PLAN: PercpuPlan = {
  allocators: ALLOCATORS, orders: FREE_ORDERS, sizes: PERCPU_SIZES, objects: 32768, align: 4, prefill: false, units: 2,
  budgetMs: 30_000, reps: 5,
};
/** Fewer rows and objects; still three runs a row, so that a time shown is a median. */
export const SHORT_PLAN: PercpuPlan = { ...FULL_PLAN, sizes: [4, 1024], objects: 4096, budgetMs: 5_000, reps: 3 };

export interface PercpuRow {
  params: PercpuBenchParams;
  /** The median times of the runs, their counts (or the first run that did not finish). */
  result: PercpuBenchResult;
  /** Every finished run counted the same work (the counts are deterministic: false would be a bug). */
  countsAgree: boolean;
}

/** The engine's benchRow request for one row (web/lab/worker-host.ts): the model adapter (worker.ts) reads it back with checkBenchRow. */
export const PERCPU_EXPERIMENT = 'percpu';

export function rowRequest(p: PercpuBenchParams): BenchRowParams {
  return {
    model: 'percpu',
    experiment: PERCPU_EXPERIMENT,
    variant: `${p.allocator}/${p.order}`,
    row: p.size,
    loops: p.objects,
    options: { align: p.align, prefill: p.prefill, units: p.units, unitSize: p.unitSize, budgetMs: p.budgetMs },
  };
}

/** A benchRow request's row, checked (BadRequest naming what is wrong). */
export function checkBenchRow(p: Omit<BenchRowParams, 'model'>): PercpuBenchParams {
  if (p.experiment !== PERCPU_EXPERIMENT) throw new BadRequest(`experiment must be ${PERCPU_EXPERIMENT}, got ${String(p.experiment)}`);
  const [allocator, order] = String(p.variant).split('/');
  const o = checkRecord('options', p.options);
  return {
    allocator: checkOneOf('variant\'s allocator', allocator, ALLOCATORS),
    order: checkOneOf('variant\'s free order', order, FREE_ORDERS),
    size: checkWhole('row (object size)', p.row, 1, 32 * 1024),
    objects: checkWhole('loops (objects)', p.loops, 1, 1 << 26),
    align: checkWhole('align', o.align, 1, 4096),
    prefill: o.prefill === true,
    units: checkWhole('units', o.units, 1, 64),
    unitSize: checkWhole('unitSize', o.unitSize, 0, 64 << 20),
    budgetMs: checkWhole('budgetMs', o.budgetMs, 0, 3_600_000),
  };
}


/** A row's result as the reply's figures, and back. */
export function benchFigures(r: PercpuBenchResult): Record<string, number> {
  const work = Object.fromEntries(WORK_COUNTS.map((k) => [`work.${k}`, r.work[k]]));
  return { allocMs: r.allocMs, freeMs: r.freeMs, allocated: r.allocated, freed: r.freed, status: BENCH_STATUS.indexOf(r.status), chunks: r.chunks, ...work };
}
export function resultOfReply(reply: BenchRowReply): PercpuBenchResult {
  const f = reply.figures ?? {};
  const n = (k: string) => f[k] ?? 0;
  const work = Object.fromEntries(WORK_COUNTS.map((k) => [k, n(`work.${k}`)])) as unknown as PercpuWork;
  return { allocMs: n('allocMs'), freeMs: n('freeMs'), allocated: n('allocated'), freed: n('freed'), status: BENCH_STATUS[n('status')] ?? 'alloc_failed', chunks: n('chunks'), work };
}

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
 * The untimed rows run before a plan's first: each allocator and free order
 * once at the plan's first size, so that every row is timed in the engine's
 * optimising tier (a first run in the baseline tier took 1.5-5 times as long).
 */
export function warmupRows(plan: PercpuPlan): PercpuBenchParams[] {
  return planRows({ ...plan, sizes: plan.sizes.slice(0, 1) });
}

/** The rows of a plan as the lab runner's (web/lab/bench.ts: fixed rows, `plan.reps` each), the warm-up rows, and a finished point back as a percpu row. */
export function percpuBench(plan: PercpuPlan): { rows: FixedBenchRow[]; warmup: FixedBenchRow[]; rowOf: (p: BenchPoint, replies: readonly BenchRowReply[]) => PercpuRow | null } {
  const fixed = (p: PercpuBenchParams): FixedBenchRow => {
    const r = rowRequest(p);
    return { model: r.model, experiment: r.experiment, row: r.row, variants: [r.variant], loops: r.loops, options: r.options, reps: plan.reps };
  };
  const rows = planRows(plan);
  return {
    rows: rows.map(fixed),
    warmup: warmupRows(plan).map(fixed),
    rowOf: (point, replies) => {
      const params = point.experiment === PERCPU_EXPERIMENT ? rows.find((p) => p.size === point.row && `${p.allocator}/${p.order}` === point.variant) : undefined;
      return params ? { params, ...medianRun(replies.map(resultOfReply)) } : null;
    },
  };
}

/** A row's runs as one result: the median alloc and free times and the runs' counts, or the first run that did not finish. */
export function medianRun(runs: readonly PercpuBenchResult[]): { result: PercpuBenchResult; countsAgree: boolean } {
  const [first] = runs;
  if (!first) throw new Error('a percpu row with no runs');
  const finished = runs.filter((r) => r.status === 'ok');
  const countsAgree = finished.every((r) => WORK_COUNTS.every((k) => r.work[k] === finished[0]?.work[k]));
  const unfinished = runs.find((r) => r.status !== 'ok');
  if (unfinished) return { result: unfinished, countsAgree };
  return { result: { ...first, allocMs: median(runs.map((r) => r.allocMs)), freeMs: median(runs.map((r) => r.freeMs)) }, countsAgree };
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

/** A native run of the experiment, per object (so runs of different sizes compare): one allocator, free order and object size. */
export interface NativePercpuPoint {
  allocator: Allocator;
  order: FreeOrder;
  prefill: boolean;
  size: number;
  allocNs: number;
  freeNs: number;
}
export interface NativePercpu {
  machine: string;
  points: NativePercpuPoint[];
}

/** Nanoseconds per object of a row: its milliseconds over the objects it got through. */
export function perObject(ms: number, objects: number): number {
  return objects > 0 ? (ms * 1e6) / objects : NaN;
}

const isAllocator = (v: unknown): v is Allocator => (ALLOCATORS as readonly unknown[]).includes(v);
const isOrder = (v: unknown): v is FreeOrder => (FREE_ORDERS as readonly unknown[]).includes(v);

/**
 * Reads a native result of the percpu experiment: `slablab percpu --format
 * json` (its "runs") or a slablab-bench/1 document (`slablab percpu|all
 * --format json`, its "percpu" experiment); throws an Error that says what
 * is wrong with it.
 */
export function parsePercpuNative(text: string): NativePercpu {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  if (typeof doc !== 'object' || doc === null) throw new Error('not a slablab result (not a JSON object)');
  const d = doc as { experiment?: unknown; runs?: unknown; schema?: unknown; machine?: { cpu_model?: unknown }; experiments?: unknown };
  const points: NativePercpuPoint[] = [];
  if (d.experiment === 'percpu' && Array.isArray(d.runs)) {
    for (const r of d.runs as Record<string, unknown>[]) {
      if (!isAllocator(r.allocator) || !isOrder(r.free_order) || typeof r.size !== 'number' || r.status !== 'ok') continue;
      points.push({
        allocator: r.allocator,
        order: r.free_order,
        prefill: r.prefill === 'second-half',
        size: r.size,
        allocNs: perObject(Number(r.alloc_ms), Number(r.allocated)),
        freeNs: perObject(Number(r.free_ms), Number(r.freed)),
      });
    }
    if (!points.length) throw new Error('its "runs" hold no finished run');
    return { machine: 'slablab percpu (native)', points };
  }
  if (d.schema !== 'slablab-bench/1' || !Array.isArray(d.experiments))
    throw new Error('not a percpu result (make one with `slablab percpu --format json`)');
  const exp = (d.experiments as { name?: unknown; measurements?: unknown }[]).find((e) => e.name === 'percpu');
  if (!exp || !Array.isArray(exp.measurements)) throw new Error('it has no percpu experiment (run `slablab percpu --format json`)');
  const byKey = new Map<string, NativePercpuPoint>();
  for (const m of exp.measurements as { group?: unknown; row?: unknown; variant?: unknown; phase?: unknown; available?: unknown; ns?: { median?: unknown } }[]) {
    const prefill = m.group === 'second-half';
    const order = prefill ? 'inorder' : m.group;
    const size = Number.parseInt(String(m.row), 10);
    if (m.available !== true || typeof m.ns?.median !== 'number' || !isAllocator(m.variant) || !isOrder(order) || !(size > 0)) continue;
    const key = `${m.variant}/${order}/${prefill}/${size}`;
    const p = byKey.get(key) ?? { allocator: m.variant, order, prefill, size, allocNs: NaN, freeNs: NaN };
    if (m.phase === 'alloc') p.allocNs = m.ns.median;
    if (m.phase === 'free') p.freeNs = m.ns.median;
    byKey.set(key, p);
  }
  points.push(...byKey.values());
  if (!points.length) throw new Error('its percpu experiment has no measurement');
  return { machine: typeof d.machine?.cpu_model === 'string' ? d.machine.cpu_model : 'unknown CPU', points };
}
