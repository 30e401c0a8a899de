// BenchmarksPage.tsx - the `fastpath`, `bulk` (SLUB), `kmalloc` (SLAB) and
// `percpu` experiments of the native CLI run in the WebAssembly build (on a
// CPU worker in the threads build), with progress and cancel, charted with
// uPlot; a native JSON result can be loaded to plot native and WebAssembly
// side by side, with WebAssembly over native per row.  The page times the
// benchmark flavour of the core (SLABLAB_BENCH, -O3: the C the native CLI
// times), loaded by a worker of its own (web/bench.worker.ts); the lab pages
// keep the traced build.  One runner, web/lab/bench.ts, runs every row
// (calibrated and interleaved for SLUB's and SLAB's, fixed for seed 003's,
// each timed by the workload itself); the models' rows: web/slub/bench.ts,
// web/slab/bench.ts, web/percpu/bench.ts.

import { useEffect, useMemo, useRef, useState } from 'react';
import uPlot from 'uplot';
import '../lab/lab.css';
import { getBridge } from '../core/bridge';
import { useCore, type CoreState } from '../core/use-core';
import { Chart } from '../lab/BenchChart';
import { ratioText, readNative, runRows, type BenchPoint, type BenchRow, type NativeResult } from '../lab/bench';
import { FULL_PLAN as PERCPU_FULL_PLAN, parsePercpuNative, percpuBench, SHORT_PLAN as PERCPU_SHORT_PLAN, type NativePercpu, type PercpuRow } from '../percpu/bench';
import { PercpuBenchResults } from '../percpu/BenchSection';
import { kmallocRows, KMALLOC_VARIANTS, parseKmallocNative } from '../slab/bench';
import { BULK_VARIANTS, FASTPATH_VARIANTS, FULL_PLAN, parseNative, SHORT_PLAN, slubRows } from '../slub/bench';

const SERIES_COLORS: Record<string, string> = { generic: '#d9480f', detached: '#1c7ed6', irqoff: '#7048e8', 'slab-before': '#d9480f', 'slab-after': '#1c7ed6', slub: '#2f9e44' };

/** Every experiment the page runs, in the order Run takes them (percpu's rows last: the engine's calibrated rows are quicker). */
const EXPERIMENTS = ['fastpath', 'bulk', 'kmalloc', 'percpu'] as const;
type Experiment = (typeof EXPERIMENTS)[number];
const EXPERIMENT_TEXT: Record<Experiment, string> = {
  fastpath: 'fastpath (SLUB, seed 001)',
  bulk: 'bulk (SLUB, seeds 000 and 004)',
  kmalloc: 'kmalloc (SLAB, seed 002)',
  percpu: 'percpu (area map, bitmap, scan hints; seed 003)',
};

/** The rows of the chosen experiments, full or short. */
function planRows(chosen: ReadonlySet<Experiment>, short: boolean): BenchRow[] {
  const plan = short ? SHORT_PLAN : FULL_PLAN;
  return [...slubRows({ ...plan, experiments: plan.experiments.filter((e) => chosen.has(e)) }), ...(chosen.has('kmalloc') ? kmallocRows(short) : [])];
}

/** What a file parser makes of a text, or null when the text holds none of its experiment. */
const orNull = <T,>(parse: (text: string) => T, text: string): T | null => {
  try {
    return parse(text);
  } catch {
    return null;
  }
};

/**
 * A native result's rows for every experiment the page runs (percpu's on
 * their own: `slablab percpu --format json` writes its runs, not a
 * slablab-bench/1 document); throws what is wrong with a file that has none.
 */
function parseAllNative(text: string): { calibrated: NativeResult | null; percpu: NativePercpu | null } {
  const percpu = orNull(parsePercpuNative, text);
  let calibrated: NativeResult | null = null;
  try {
    const { machine } = readNative(text);
    const points = [parseNative, parseKmallocNative].flatMap((parse) => orNull(parse, text)?.points ?? []);
    if (points.length) calibrated = { machine, points };
  } catch (e) {
    if (!percpu) throw e;
  }
  if (!calibrated && !percpu) throw new Error('it has no fastpath, bulk, kmalloc or percpu measurements (run `slablab all --format json`)');
  return { calibrated, percpu };
}

function kmallocChart(points: BenchPoint[], native: NativeResult | null): { opts: uPlot.Options; data: uPlot.AlignedData } {
  const mine = (ps: readonly { experiment: string; row: number }[]) => ps.filter((p) => p.experiment === 'kmalloc').map((p) => p.row);
  const sizes = [...new Set([...mine(points), ...mine(native?.points ?? [])])].sort((a, b) => a - b);
  const series: uPlot.Series[] = [{ label: 'size' }];
  const data: (number | null)[][] = [sizes];
  const line = (label: string, variant: string, dash: boolean, ps: readonly { experiment: string; row: number; variant: string; ns: number }[]) => {
    const [rules = '', phase = ''] = variant.split(':');
    series.push({ label, stroke: SERIES_COLORS[rules] ?? '#333', width: phase === 'alloc' ? 2 : 1, ...(dash ? { dash: [6, 4] } : {}), spanGaps: true, points: { show: true } });
    data.push(sizes.map((b) => ps.find((p) => p.experiment === 'kmalloc' && p.row === b && p.variant === variant)?.ns ?? null));
  };
  for (const v of KMALLOC_VARIANTS) line(`wasm ${v}`, v, false, points);
  if (native)
    for (const v of [...KMALLOC_VARIANTS, 'slub:alloc', 'slub:free']) if (native.points.some((p) => p.experiment === 'kmalloc' && p.variant === v)) line(`native ${v}`, v, true, native.points);
  return {
    opts: {
      width: 800,
      height: 320,
      title: 'kmalloc: nanoseconds per kmalloc (thick) and per kfree (thin) against size, SLAB before and after OBJFREELIST',
      scales: { x: { time: false, distr: 3 }, y: { range: (_u, _min, max) => [0, max * 1.1] } },
      axes: [{ label: 'size in bytes (log)' }, { label: 'ns per call' }],
      series,
    },
    data: data as uPlot.AlignedData,
  };
}

function rowText(p: BenchPoint): string {
  return p.experiment === 'bulk' ? `bulk ${p.row}` : p.experiment === 'kmalloc' ? `${p.row} B` : 'alloc+free';
}

function bulkChart(points: BenchPoint[], native: NativeResult | null): { opts: uPlot.Options; data: uPlot.AlignedData } {
  const sizes = [...new Set([...points.filter((p) => p.experiment === 'bulk').map((p) => p.row), ...(native?.points.filter((p) => p.experiment === 'bulk').map((p) => p.row) ?? [])])].sort((a, b) => a - b);
  const series: uPlot.Series[] = [{ label: 'bulk size' }];
  const data: (number | null)[][] = [sizes];
  for (const v of BULK_VARIANTS) {
    series.push({ label: `wasm ${v}`, stroke: SERIES_COLORS[v] ?? '#333', width: 2, spanGaps: true, points: { show: true } });
    data.push(sizes.map((b) => points.find((p) => p.experiment === 'bulk' && p.row === b && p.variant === v)?.ns ?? null));
  }
  if (native)
    for (const v of [...BULK_VARIANTS, 'irqoff']) {
      if (!native.points.some((p) => p.experiment === 'bulk' && p.variant === v)) continue;
      series.push({ label: `native ${v}`, stroke: SERIES_COLORS[v] ?? '#333', width: 2, dash: [6, 4], spanGaps: true, points: { show: true } });
      data.push(sizes.map((b) => native.points.find((p) => p.experiment === 'bulk' && p.row === b && p.variant === v)?.ns ?? null));
    }
  return {
    opts: {
      width: 800,
      height: 320,
      title: 'bulk: nanoseconds per object (alloc+free pair) against bulk size',
      scales: { x: { time: false, distr: 3 }, y: { range: (_u, _min, max) => [0, max * 1.1] } },
      axes: [{ label: 'bulk size (log)' }, { label: 'ns per object' }],
      series,
    },
    data: data as uPlot.AlignedData,
  };
}

function fastpathChart(points: BenchPoint[], native: NativeResult | null): { opts: uPlot.Options; data: uPlot.AlignedData } {
  const xs = FASTPATH_VARIANTS.map((_, i) => i);
  const wasm = FASTPATH_VARIANTS.map((v) => points.find((p) => p.experiment === 'fastpath' && p.variant === v)?.ns ?? null);
  const bars = uPlot.paths.bars?.({ size: [0.35, 60], align: native ? -1 : 0 });
  const series: uPlot.Series[] = [{ label: 'variant' }, { label: 'wasm', fill: '#1c7ed6', stroke: '#1c7ed6', ...(bars ? { paths: bars } : {}), points: { show: false } }];
  const data: (number | null)[][] = [xs, wasm];
  if (native) {
    const nbars = uPlot.paths.bars?.({ size: [0.35, 60], align: 1 });
    series.push({ label: 'native', fill: '#868e96', stroke: '#868e96', ...(nbars ? { paths: nbars } : {}), points: { show: false } });
    data.push(FASTPATH_VARIANTS.map((v) => native.points.find((p) => p.experiment === 'fastpath' && p.variant === v)?.ns ?? null));
  }
  return {
    opts: {
      width: 500,
      height: 280,
      title: 'fastpath: nanoseconds per alloc+free pair, by fast-path variant',
      // Every variant the table lists has its bar (rt included).
      scales: { x: { time: false, range: [-0.5, FASTPATH_VARIANTS.length - 0.5] }, y: { range: (_u, _min, max) => [0, max * 1.15] } },
      axes: [{ values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? (FASTPATH_VARIANTS[t] ?? '') : '')), splits: () => xs }, { label: 'ns per pair' }],
      series,
    },
    data: data as uPlot.AlignedData,
  };
}

export interface BenchHook {
  running: boolean;
  done: number;
  total: number;
  points: BenchPoint[];
  /** The percpu experiment's rows (seed 003's figures per row). */
  percpu: PercpuRow[];
  /** Native measurements loaded, percpu runs included. */
  native: number;
  /** The figures on screen are a short run's (fewer rows and repetitions: indicative only). */
  short: boolean;
}
declare global {
  interface Window {
    __slablabBench?: BenchHook;
  }
}

/** What the page says about the build it times. */
function buildText(core: CoreState): string {
  if (core.status === 'loading') return 'loading the benchmark build of the core…';
  if (core.status === 'failed') return `the benchmark build could not be loaded: ${core.error.message}`;
  return core.info.build === 'bench'
    ? 'the WebAssembly benchmark build (SLABLAB_BENCH: no tracing, no preemption hooks, no asserts; -O3; threads), the C the native CLI times'
    : 'the traced single-threaded build (tracing, preemption hooks and asserts in): this page is not cross-origin isolated, and the benchmark build needs threads, so figures are not comparable with native ones';
}

export function BenchmarksPage() {
  const core = useCore('bench');
  const [points, setPoints] = useState<BenchPoint[]>([]);
  const [progress, setProgress] = useState<[number, number]>([0, 0]);
  const [running, setRunning] = useState(false);
  const [status, setStatus] = useState('');
  const [percpuRows, setPercpuRows] = useState<PercpuRow[]>([]);
  const [native, setNative] = useState<NativeResult | null>(null);
  const [percpuNative, setPercpuNative] = useState<NativePercpu | null>(null);
  const [nativeError, setNativeError] = useState('');
  const [chosen, setChosen] = useState<ReadonlySet<Experiment>>(() => new Set(EXPERIMENTS));
  /** The figures on screen came from a short run. */
  const [short, setShort] = useState(false);
  const cancel = useRef(false);
  const nativeCount = (native?.points.length ?? 0) + (percpuNative?.points.length ?? 0);

  useEffect(() => {
    window.__slablabBench = { running, done: progress[0], total: progress[1], points, percpu: percpuRows, native: nativeCount, short };
  });

  const start = async (quick: boolean) => {
    cancel.current = false;
    setPoints([]);
    setPercpuRows([]);
    setRunning(true);
    setShort(quick);
    setStatus('');
    const bridge = getBridge('bench');
    try {
      const plan = quick ? SHORT_PLAN : FULL_PLAN;
      // percpu's rows last (the calibrated rows are quicker), its warm-up rows first; one progress bar.
      const percpu = percpuBench(quick ? PERCPU_SHORT_PLAN : PERCPU_FULL_PLAN);
      const withPercpu = chosen.has('percpu');
      const finished = await runRows(
        [...planRows(chosen, quick), ...(withPercpu ? percpu.rows : [])],
        { reps: plan.reps, targetMs: plan.targetMs, warmup: withPercpu ? percpu.warmup : [] },
        (p) => bridge.request('benchRow', p),
        (p, replies) => {
          const row = percpu.rowOf(p, replies);
          if (row) setPercpuRows((rs) => [...rs, row]);
          else setPoints((ps) => [...ps, p]);
        },
        (d, t) => setProgress([d, t]),
        () => cancel.current,
      );
      setStatus(`${finished ? 'Finished' : 'Cancelled'}${quick ? ': a short run (fewer rows and repetitions), indicative only' : ''}.`);
    } catch (e) {
      setStatus(`The run failed: ${e instanceof Error ? e.message : String(e)}`);
    } finally {
      setRunning(false);
    }
  };

  const loadFile = async (file: File | undefined) => {
    if (!file) return;
    try {
      const n = parseAllNative(await file.text());
      setNative(n.calibrated);
      setPercpuNative(n.percpu);
      setNativeError('');
    } catch (e) {
      setNative(null);
      setPercpuNative(null);
      setNativeError(`${file.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };

  const bulk = useMemo(() => bulkChart(points, native), [points, native]);
  const fast = useMemo(() => fastpathChart(points, native), [points, native]);
  const kmalloc = useMemo(() => kmallocChart(points, native), [points, native]);
  const nativeMachine = native?.machine ?? percpuNative?.machine ?? '';
  const threads = core.status === 'ready' && core.info.mode === 'threads';

  return (
    <section className="panel" aria-labelledby="bench-title">
      <h2 id="bench-title">Benchmarks</h2>
      <p>
        The SLUB model's <code>fastpath</code> (seed 001: one alloc+free pair of a 256-byte object per fast-path variant) and <code>bulk</code> (seed 000:
        kmem_cache_alloc_bulk + kmem_cache_free_bulk, slab_common.c's generic per-object loop (the seeds' "fallback") against the detached freelist)
        experiments, and the SLAB model's <code>kmalloc</code> (seed 002's slab_test: rounds of 10,000 kmalloc(size) then 10,000 kfree on one CPU,
        before and after OBJFREELIST_SLAB, each phase timed on its own, ns per call), and the percpu model's <code>percpu</code> (seed 003, below
        its own table), run here in WebAssembly{' '}
        {threads ? 'on a CPU worker thread' : 'on the bridge worker (single-threaded build)'}. Each point is calibrated to about{' '}
        {FULL_PLAN.targetMs} ms per timed call, variants interleaved, median of {FULL_PLAN.reps} (a short run: 1 repetition, 3 bulk sizes). The
        browser's clock is coarse (5 µs isolated, 100 µs not) and WebAssembly has no CMPXCHG16B: the double-word compare-and-swap is a 64-bit one on
        wasm32, so the variants differ less than natively. Native numbers: <code>npm run bench -- all --out bench.json</code>, then load the file below;
        each row then shows WebAssembly over native (<code>node scripts/wasm-bench.mjs</code> prints the same ratios under Node).
      </p>
      <p data-testid="bench-build">Timed build: {buildText(core)}.</p>
      <fieldset className="bench-experiments" disabled={running}>
        <legend>Experiments</legend>
        {EXPERIMENTS.map((e) => (
          <label key={e}>
            <input
              type="checkbox"
              checked={chosen.has(e)}
              onChange={(ev) =>
                setChosen((c) => {
                  const n = new Set(c);
                  if (ev.target.checked) n.add(e);
                  else n.delete(e);
                  return n;
                })
              }
            />{' '}
            {EXPERIMENT_TEXT[e]}
          </label>
        ))}
      </fieldset>
      <div className="lab-controls">
        <button type="button" disabled={running || core.status !== 'ready' || chosen.size === 0} onClick={() => void start(false)}>
          Run
        </button>
        <button type="button" disabled={running || core.status !== 'ready' || chosen.size === 0} onClick={() => void start(true)}>
          Short run
        </button>
        <button type="button" disabled={!running} onClick={() => (cancel.current = true)}>
          Cancel
        </button>
        <progress max={progress[1] || 1} value={progress[0]} aria-label="Benchmark progress" />
        <span data-testid="bench-status" aria-live="polite">
          {running ? `${progress[0]} of ${progress[1]} timed calls` : status}
        </span>
      </div>
      <div
        className="bench-drop"
        onDragOver={(e) => e.preventDefault()}
        onDrop={(e) => {
          e.preventDefault();
          void loadFile(e.dataTransfer.files[0]);
        }}
      >
        <label>
          Native result (<code>slablab ... --format json</code>): <input type="file" accept=".json,application/json" onChange={(e) => void loadFile(e.target.files?.[0])} />
        </label>{' '}
        or drop it here.
        {nativeCount > 0 && (
          <span data-testid="bench-native">
            {' '}
            Loaded: {nativeCount} native points from {nativeMachine}.
          </span>
        )}
        {nativeError && (
          <span role="alert" className="fail">
            {' '}
            {nativeError}
          </span>
        )}
      </div>
      <div className="bench-charts">
        <Chart opts={fast.opts} data={fast.data} label="Fast-path variants: nanoseconds per alloc+free pair (the table below has the figures)" />
        <Chart opts={bulk.opts} data={bulk.data} label="Bulk: nanoseconds per object against bulk size (the table below has the figures)" />
        <Chart opts={kmalloc.opts} data={kmalloc.data} label="kmalloc: nanoseconds per kmalloc and per kfree against size, SLAB before and after OBJFREELIST (the table below has the figures)" />
      </div>
      {points.length > 0 && short && (
        <p className="bench-indicative" role="note" data-testid="bench-indicative">
          A short run: each figure is one repetition over fewer rows, indicative only. Run the full benchmark for medians of {FULL_PLAN.reps}.
        </p>
      )}
      {points.length > 0 && (
        <div className="bench-table-scroll" tabIndex={0} role="region" aria-label="WebAssembly results table">
        <table className="per-cpu" data-testid="bench-table">
          <caption>
            WebAssembly results (ns per object, or per call for kmalloc; {short ? 'one repetition: a short run, indicative' : `median of ${FULL_PLAN.reps}`} [min..max])
          </caption>
          <thead>
            <tr>
              <th scope="col">experiment</th>
              <th scope="col">row</th>
              <th scope="col">variant</th>
              <th scope="col">ns</th>
              <th scope="col">native ns</th>
              <th scope="col">wasm/native</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p) => {
              const n = native?.points.find((x) => x.experiment === p.experiment && x.row === p.row && x.variant === p.variant)?.ns;
              return (
                <tr key={`${p.experiment}-${p.row}-${p.variant}`}>
                  <td>{p.experiment}</td>
                  <td>{rowText(p)}</td>
                  <td>{p.variant}</td>
                  <td>
                    {p.ns.toFixed(2)} [{p.min.toFixed(2)}..{p.max.toFixed(2)}]
                  </td>
                  <td>{n?.toFixed(2) ?? '–'}</td>
                  <td data-testid="bench-ratio">{ratioText(p.ns, n)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
        </div>
      )}
      <PercpuBenchResults rows={percpuRows} native={percpuNative} short={short} />
    </section>
  );
}
