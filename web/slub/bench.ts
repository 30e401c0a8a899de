// bench.ts - the Benchmarks page's runs of the `fastpath` and `bulk`
// experiments in the WebAssembly build, and the reading of a native result
// (`slablab ... --format json`, schema docs/bench-schema.json) to plot beside
// them.  The method follows docs/bench.md as far as a browser allows: each
// (row, variant) is calibrated so one timed call lasts `targetMs` (the page's
// clock resolution is 5 µs isolated, 100 µs not), variants are interleaved
// per repetition (A B C, C B A, ...), and the median of the repetitions is
// reported.  Each timed call is one bridge request, so Cancel takes effect
// within one call.

import type { BenchRowParams, BenchRowReply } from '../core/bridge-protocol';
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

export const FULL_PLAN: BenchPlan = { experiments: ['fastpath', 'bulk'], reps: 5, targetMs: 25, bulkSizes: BULK_SIZES };
export const SHORT_PLAN: BenchPlan = { experiments: ['fastpath', 'bulk'], reps: 1, targetMs: 4, bulkSizes: [1, 16, 158] };

export interface BenchPoint {
  experiment: 'fastpath' | 'bulk';
  row: number;
  variant: string;
  /** Median nanoseconds per object (alloc+free pair) over the repetitions, and the extremes. */
  ns: number;
  min: number;
  max: number;
  reps: number;
  loops: number;
}

export type RowRunner = (p: BenchRowParams) => Promise<BenchRowReply>;

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (!n) return NaN;
  return n % 2 ? (s[(n - 1) / 2] ?? NaN) : ((s[n / 2 - 1] ?? 0) + (s[n / 2] ?? 0)) / 2;
}

/** Runs a plan; `onPoint` gets each finished point, `progress` (done, total) each call; stops when `cancelled()`. */
export async function runPlan(
  plan: BenchPlan,
  run: RowRunner,
  onPoint: (p: BenchPoint) => void,
  progress: (done: number, total: number) => void,
  cancelled: () => boolean,
): Promise<boolean> {
  const rows: { experiment: 'fastpath' | 'bulk'; row: number; variants: readonly string[] }[] = [];
  if (plan.experiments.includes('fastpath')) rows.push({ experiment: 'fastpath', row: 1, variants: FASTPATH_VARIANTS });
  if (plan.experiments.includes('bulk')) for (const b of plan.bulkSizes) rows.push({ experiment: 'bulk', row: b, variants: BULK_VARIANTS });
  const total = rows.reduce((n, r) => n + r.variants.length * (plan.reps + 1), 0);
  let done = 0;
  for (const r of rows) {
    // Calibrate each variant: a short call, then scale loops to the target time.
    const loops = new Map<string, number>();
    for (const v of r.variants) {
      if (cancelled()) return false;
      const probe = Math.max(1, Math.round(2000 / r.row));
      const t = await run({ model: 'slub', experiment: r.experiment, variant: v, row: r.row, loops: probe });
      const perLoopMs = Math.max(1e-6, (t.nsPerOp * r.row) / 1e6);
      loops.set(v, Math.max(1, Math.min(50_000_000, Math.round(plan.targetMs / perLoopMs))));
      progress(++done, total);
    }
    const samples = new Map<string, number[]>(r.variants.map((v) => [v, []]));
    for (let rep = 0; rep < plan.reps; rep++) {
      const order = rep % 2 ? [...r.variants].reverse() : r.variants;
      for (const v of order) {
        if (cancelled()) return false;
        const t = await run({ model: 'slub', experiment: r.experiment, variant: v, row: r.row, loops: loops.get(v) ?? 1 });
        samples.get(v)?.push(t.nsPerOp);
        progress(++done, total);
      }
    }
    for (const v of r.variants) {
      const xs = samples.get(v) ?? [];
      onPoint({ experiment: r.experiment, row: r.row, variant: v, ns: median(xs), min: Math.min(...xs), max: Math.max(...xs), reps: xs.length, loops: loops.get(v) ?? 0 });
    }
  }
  return true;
}

export interface NativePoint {
  experiment: 'fastpath' | 'bulk';
  row: number;
  variant: string;
  ns: number;
}
export interface NativeResult {
  machine: string;
  points: NativePoint[];
}

/** Reads a native JSON result; throws an Error that says what is wrong with it. */
export function parseNative(text: string): NativeResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON: ${e instanceof Error ? e.message : String(e)}`);
  }
  const d = doc as { schema?: unknown; machine?: { cpu_model?: unknown; bench_build?: unknown }; experiments?: unknown };
  if (typeof doc !== 'object' || doc === null || d.schema !== 'slablab-bench/1')
    throw new Error('not a slablab benchmark result (its "schema" is not "slablab-bench/1"; make one with `slablab bulk --format json`)');
  if (!Array.isArray(d.experiments)) throw new Error('it has no "experiments" array');
  const points: NativePoint[] = [];
  for (const e of d.experiments as { name?: unknown; measurements?: unknown }[]) {
    if ((e.name !== 'fastpath' && e.name !== 'bulk') || !Array.isArray(e.measurements)) continue;
    for (const m of e.measurements as { group?: unknown; row?: unknown; variant?: unknown; available?: unknown; ns?: { median?: unknown } }[]) {
      if (m.available !== true || typeof m.ns?.median !== 'number' || typeof m.variant !== 'string') continue;
      if (e.name === 'fastpath' && m.group === 'slub alloc+free') points.push({ experiment: 'fastpath', row: 1, variant: m.variant, ns: m.ns.median });
      if (e.name === 'bulk' && m.group === 'bulk') points.push({ experiment: 'bulk', row: Number(m.row), variant: OLD_BULK_NAMES[m.variant] ?? m.variant, ns: m.ns.median });
    }
  }
  if (!points.length) throw new Error('it has no fastpath or bulk measurements (run `slablab fastpath` or `slablab bulk` with --format json)');
  const cpu = typeof d.machine?.cpu_model === 'string' ? d.machine.cpu_model : 'unknown CPU';
  return { machine: `${cpu}${d.machine?.bench_build === false ? ' (NOT a benchmark build)' : ''}`, points };
}
