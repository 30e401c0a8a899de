// bench.ts - the one benchmark runner, for every model's experiments run in
// the WebAssembly build through the `benchRow` request (a model adapter's
// benchRow), and the reading of a native result (`slablab ... --format json`,
// schema docs/bench-schema.json) to plot beside them.  The method follows
// docs/bench.md as far as a browser allows: a calibrated row's (row, variant)
// is scaled so one timed call lasts `targetMs` (the page's clock resolution
// is 5 µs isolated, 100 µs not); a fixed row (percpu's: the workload times
// itself, a fixed number of objects) runs as it is, after the untimed
// warm-up rows; variants are interleaved per repetition (A B C, C B A, ...),
// and the median of the repetitions is reported, with every reply kept for
// the model's own figures.  Each call is one bridge request, so Cancel takes
// effect within one call.  A model's own file (web/slub/bench.ts,
// web/slab/bench.ts, web/percpu/bench.ts) says which rows and variants its
// experiments have and which native measurements match them.

import type { BenchRowParams, BenchRowReply } from '../core/bridge-protocol';

interface BenchRowBase {
  /** The model adapter that runs it (web/models.ts). */
  model: string;
  experiment: string;
  row: number;
  variants: readonly string[];
  /** Repetitions of this row (the run's otherwise). */
  reps?: number;
  /** What else the model's experiment takes (BenchRowParams.options). */
  options?: unknown;
}

/** A row whose loops are calibrated: a probe call, then loops scaled so one call lasts the run's target time. */
export interface CalibratedBenchRow extends BenchRowBase {
  /** Operations one loop does (nsPerOp is per operation): calibration scales loops by it. */
  opsPerLoop: number;
  /** Loops of the calibration call. */
  probeLoops: number;
}

/** A row run as it is: `loops` is the model's (percpu: objects), the workload times itself. */
export interface FixedBenchRow extends BenchRowBase {
  loops: number;
}

/** One row of an experiment's table, measured for each variant. */
export type BenchRow = CalibratedBenchRow | FixedBenchRow;

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

/** A finished point and the replies of its timed calls, in order (the model's figures are in them). */
export type PointDone = (p: BenchPoint, replies: readonly BenchRowReply[]) => void;

export type RowRunner = (p: BenchRowParams) => Promise<BenchRowReply>;

/** How a run goes: repetitions, a calibrated call's target time, and the rows run once, untimed, first. */
export interface RunPlan {
  reps: number;
  targetMs: number;
  warmup?: readonly BenchRow[];
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const n = s.length;
  if (!n) return NaN;
  return n % 2 ? (s[(n - 1) / 2] ?? NaN) : ((s[n / 2 - 1] ?? 0) + (s[n / 2] ?? 0)) / 2;
}

const isCalibrated = (r: BenchRow): r is CalibratedBenchRow => 'probeLoops' in r;

/** The calls runRows makes for `rows` under `plan`: warm-ups, calibrations, then the repetitions. */
export function runCalls(rows: readonly BenchRow[], plan: RunPlan): number {
  const calls = (r: BenchRow, reps: number) => r.variants.length * (reps + (isCalibrated(r) ? 1 : 0));
  return (plan.warmup ?? []).reduce((n, r) => n + calls(r, 1), 0) + rows.reduce((n, r) => n + calls(r, r.reps ?? plan.reps), 0);
}

/**
 * Runs `rows` under `plan`: the warm-up rows once each (untimed), then per
 * row each variant's calibration (calibrated rows) and its repetitions,
 * interleaved; `onPoint` gets each finished point with its replies,
 * `progress` (done, total) each call.  Stops before the next call once
 * `cancelled()` and resolves false; true when every row ran.
 */
export async function runRows(rows: readonly BenchRow[], plan: RunPlan, run: RowRunner, onPoint: PointDone, progress: (done: number, total: number) => void, cancelled: () => boolean): Promise<boolean> {
  const total = runCalls(rows, plan);
  let done = 0;
  const call = async (r: BenchRow, variant: string, loops: number) => {
    const reply = await run({ model: r.model, experiment: r.experiment, variant, row: r.row, loops, ...(r.options === undefined ? {} : { options: r.options }) });
    progress(++done, total);
    return reply;
  };
  for (const r of plan.warmup ?? [])
    for (const v of r.variants) {
      if (cancelled()) return false;
      await call(r, v, isCalibrated(r) ? r.probeLoops : r.loops);
    }
  for (const r of rows) {
    // Calibrate each variant: a short call, then scale loops to the target time.
    const loops = new Map<string, number>();
    for (const v of r.variants) {
      if (!isCalibrated(r)) {
        loops.set(v, r.loops);
        continue;
      }
      if (cancelled()) return false;
      const t = await call(r, v, r.probeLoops);
      const perLoopMs = Math.max(1e-6, (t.nsPerOp * r.opsPerLoop) / 1e6);
      loops.set(v, Math.max(1, Math.min(50_000_000, Math.round(plan.targetMs / perLoopMs))));
    }
    const replies = new Map<string, BenchRowReply[]>(r.variants.map((v) => [v, []]));
    for (let rep = 0; rep < (r.reps ?? plan.reps); rep++) {
      const order = rep % 2 ? [...r.variants].reverse() : r.variants;
      for (const v of order) {
        if (cancelled()) return false;
        replies.get(v)?.push(await call(r, v, loops.get(v) ?? 1));
      }
    }
    for (const v of r.variants) {
      const got = replies.get(v) ?? [];
      const xs = got.map((t) => t.nsPerOp);
      onPoint({ experiment: r.experiment, row: r.row, variant: v, ns: median(xs), min: Math.min(...xs), max: Math.max(...xs), reps: xs.length, loops: loops.get(v) ?? 0 }, got);
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
