// bench.ts - the Benchmarks page's engine, for any model's experiments run in
// the WebAssembly build through the `benchRow` request (a model adapter's
// benchRow), and the reading of a native result (`slablab ... --format json`,
// schema docs/bench-schema.json) to plot beside them.  The method follows
// docs/bench.md as far as a browser allows: each (row, variant) is calibrated
// so one timed call lasts `targetMs` (the page's clock resolution is 5 µs
// isolated, 100 µs not), variants are interleaved per repetition (A B C,
// C B A, ...), and the median of the repetitions is reported.  Each timed
// call is one bridge request, so Cancel takes effect within one call.  A
// model's own file (web/slub/bench.ts, web/slab/bench.ts) says which rows and
// variants its experiments have and which native measurements match them.

import type { BenchRowParams, BenchRowReply } from '../core/bridge-protocol';

/** One row of an experiment's table, measured for each variant. */
export interface BenchRow {
  /** The model adapter that runs it (web/models.ts). */
  model: string;
  experiment: string;
  row: number;
  variants: readonly string[];
  /** Operations one loop does (nsPerOp is per operation): calibration scales loops by it. */
  opsPerLoop: number;
  /** Loops of the calibration call. */
  probeLoops: number;
}

export interface BenchPoint {
  experiment: string;
  row: number;
  variant: string;
  /** Median nanoseconds per operation over the repetitions, and the extremes. */
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

/** Runs `rows`; `onPoint` gets each finished point, `progress` (done, total) each call; stops when `cancelled()` (returns false). */
export async function runRows(
  rows: readonly BenchRow[],
  reps: number,
  targetMs: number,
  run: RowRunner,
  onPoint: (p: BenchPoint) => void,
  progress: (done: number, total: number) => void,
  cancelled: () => boolean,
): Promise<boolean> {
  const total = rows.reduce((n, r) => n + r.variants.length * (reps + 1), 0);
  let done = 0;
  for (const r of rows) {
    const call = (variant: string, loops: number) => run({ model: r.model, experiment: r.experiment, variant, row: r.row, loops });
    // Calibrate each variant: a short call, then scale loops to the target time.
    const loops = new Map<string, number>();
    for (const v of r.variants) {
      if (cancelled()) return false;
      const t = await call(v, r.probeLoops);
      const perLoopMs = Math.max(1e-6, (t.nsPerOp * r.opsPerLoop) / 1e6);
      loops.set(v, Math.max(1, Math.min(50_000_000, Math.round(targetMs / perLoopMs))));
      progress(++done, total);
    }
    const samples = new Map<string, number[]>(r.variants.map((v) => [v, []]));
    for (let rep = 0; rep < reps; rep++) {
      const order = rep % 2 ? [...r.variants].reverse() : r.variants;
      for (const v of order) {
        if (cancelled()) return false;
        const t = await call(v, loops.get(v) ?? 1);
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

/**
 * WebAssembly over native for one row, as the page prints it ("1.32x"), or
 * "–" when there is no native figure to divide by (no such row in the
 * loaded result, or a zero or non-finite one).
 */
export function ratioText(wasmNs: number, nativeNs: number | undefined): string {
  if (nativeNs === undefined || !(nativeNs > 0) || !Number.isFinite(nativeNs) || !Number.isFinite(wasmNs)) return '–';
  return `${(wasmNs / nativeNs).toFixed(2)}x`;
}

/** One available measurement of a native result: its experiment and the fields that place it in a table. */
export interface NativeMeasurement {
  experiment: string;
  group: string;
  row: string;
  variant: string;
  phase: string;
  /** Median nanoseconds per operation. */
  ns: number;
}

/** A native measurement placed as a wasm point is: experiment, row, variant. */
export interface NativePoint {
  experiment: string;
  row: number;
  variant: string;
  ns: number;
}

export interface NativeResult {
  machine: string;
  points: NativePoint[];
}

/**
 * Reads a native JSON result (schema slablab-bench/1) into its available
 * measurements; throws an Error that says what is wrong with a file that is
 * not one.
 */
export function readNative(text: string): { machine: string; measurements: NativeMeasurement[] } {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
  const d = doc as { schema?: unknown; machine?: { cpu_model?: unknown; bench_build?: unknown }; experiments?: unknown };
  if (typeof doc !== 'object' || doc === null || d.schema !== 'slablab-bench/1')
    throw new Error('not a slablab benchmark result (its "schema" is not "slablab-bench/1"; make one with `slablab bulk --format json`)');
  if (!Array.isArray(d.experiments)) throw new Error('it has no "experiments" array');
  const measurements: NativeMeasurement[] = [];
  for (const e of d.experiments as { name?: unknown; measurements?: unknown }[]) {
    if (typeof e.name !== 'string' || !Array.isArray(e.measurements)) continue;
    for (const m of e.measurements as { group?: unknown; row?: unknown; variant?: unknown; phase?: unknown; available?: unknown; ns?: { median?: unknown } }[]) {
      if (m.available !== true || typeof m.ns?.median !== 'number' || typeof m.variant !== 'string') continue;
      measurements.push({ experiment: e.name, group: String(m.group ?? ''), row: String(m.row ?? ''), variant: m.variant, phase: String(m.phase ?? ''), ns: m.ns.median });
    }
  }
  const cpu = typeof d.machine?.cpu_model === 'string' ? d.machine.cpu_model : 'unknown CPU';
  return { machine: `${cpu}${d.machine?.bench_build === false ? ' (NOT a benchmark build)' : ''}`, measurements };
}
