// FreeRunView.tsx - SLUB's free-running mode: the CPUs run a workload on
// their own (one CPU worker thread each in the threads build; interleaved on
// the bridge worker in the single build), and the page follows them through
// the engine's frame loop (web/lab/use-free-run.ts) with SLUB's mirror
// (live-mirror.ts); the engine assembles the page (web/lab/FreeRunPage.tsx).  What is SLUB's own: the workload, the background slabs,
// the pacing, the per-CPU table (fast-path share, cmpxchg retries), and
// following one slab in the inspector.

import { useCallback, useEffect, useMemo, useState } from 'react';
import { FreeRunPage } from '../lab/FreeRunPage';
import { oneOf, whole } from '../lab/params';
import type { Shortcut } from '../lab/shortcuts';
import { ViewCanvas } from '../lab/StepLab';
import { useParams } from '../lab/url-store';
import { useFreeRun, useRecordingReplay } from '../lab/use-free-run';
import type { ViewProps } from '../lab/view';
import { describeSlab } from './describe';
import type { Layout } from './layout';
import { FREERUN_COUNTERS, WORKLOADS, type FreerunStartParams } from './protocol';
import type { Overlay } from './render';
import { slabIndexOf, type SlubSnapshot } from './snapshot';
import { KernelSelect } from './SlubControls';
import { parseKernelVersion } from './slub-api';
import { oneKernelParam, slubStepView } from './view';
import '../lab/lab.css';
import './slub.css';

/** The free-running mode's parameters. */
export const FREE_PARAMS = {
  cpus: whole(2, 8, 4),
  workload: oneOf(WORKLOADS, 'local'),
  slabs: whole(0, 2048, 64),
  /** Operations per second per CPU, 0 for no cap. */
  rate: whole(0, 1_000_000, 10_000),
  /** The Linux version the cache follows, as the step view's `kernel` (one version here). */
  kernel: oneKernelParam(),
};

const NO_MARKS: ReadonlySet<string> = new Set();
/** The rate choices offered (operations per second per CPU; 0: no cap). */
const RATES = [1_000, 10_000, 100_000, 0];
const OBJECT_SIZE = 256;

export interface FreeRunHook {
  running: boolean;
  mode: string;
  samples: number;
  events: number;
  anchors: number;
  lost: number;
  dropped: number;
  threadIds: number[];
  ops: number[];
  /** Objects in use over every slab shown (live or replayed). */
  inuse: number;
  recordedBytes: number;
  replayFrames: number;
  replayPos: number;
  /** What the inspector says of the selected slab ('' for none). */
  inspector: string;
  slabs: number;
  objects: number;
  /** The Linux version the run's cache follows, and what its sheaves hold now (none before 6.18). */
  kernel: string;
  sheaves: number;
  barnFull: number;
  barnEmpty: number;
  /** Each CPU's counters as the table shows them. */
  counters: Record<string, number>[];
}
declare global {
  interface Window {
    __slablabFreeRun?: FreeRunHook;
  }
}

const anchorCpus = (anchor: SlubSnapshot) => anchor.ncpus;

export function FreeRunView({ core, store }: ViewProps) {
  const { values, update } = useParams(FREE_PARAMS, store);
  const { cpus } = values;
  const [running, setRunning] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const hostCpus = core.status === 'ready' ? core.info.hostCpus : 2;
  const [paced, setPaced] = useState(true);
  // Paced: all CPU workers together use at most the host's cores but one, left for the page.
  const duty = paced && cpus >= hostCpus ? Math.max(5, Math.floor((100 * Math.max(1, hostCpus - 1)) / cpus)) : 100;
  const [record, setRecord] = useState(false);
  const params: FreerunStartParams = {
    cpus, objectSize: OBJECT_SIZE, workload: values.workload, prefillSlabs: values.slabs, seed: 1, duty, rate: values.rate, version: parseKernelVersion(values.kernel),
  };
  const run = useFreeRun({
    core,
    view: slubStepView,
    params: { ...params },
    running,
    onFailed: (m) => {
      setError(m);
      setRunning(false);
    },
    record,
    ncpus: cpus,
    workload: values.workload,
    ...(window.__slablabPerfMarks ? { measure: 'slub-mirror' } : {}),
  });
  const replay = useRecordingReplay(slubStepView, anchorCpus);
  const live = run.live;

  // The selected slab, followed by pfn from frame to frame while it lives.
  const [selPfn, setSelPfn] = useState<number | null>(null);
  const replaying = replay.replay !== null && !running;
  const snap = (replaying ? replay.snap : live?.snapshot) ?? null;
  const selSlab = snap && selPfn !== null ? slabIndexOf(snap, selPfn) : -1;
  const overlay = useMemo<Overlay>(
    () => ({ selected: selSlab >= 0 ? { slab: selSlab, index: -1 } : null, marked: NO_MARKS, detached: null, arrows: 'selected', showFull: true, compact: true }),
    [selSlab],
  );
  const inspector = snap && selSlab >= 0 ? describeSlab(snap, selSlab) : selPfn !== null ? `Slab pfn ${selPfn} is gone: it was discarded and its pages went back to the page allocator.` : '';
  const moveSel = useCallback(
    (dy: number, layout?: Layout) => {
      if (!snap || !snap.nslabs) return;
      const order = layout ? layout.boxes.map((b) => b.slab) : Array.from({ length: snap.nslabs }, (_, i) => i);
      if (!order.length) return;
      const at = order.indexOf(selSlab);
      const next = order[at < 0 ? (dy > 0 ? 0 : order.length - 1) : (at + dy + order.length) % order.length] ?? 0;
      setSelPfn(snap.slab.pfn[next] ?? null);
    },
    [snap, selSlab],
  );
  const ready = core.status === 'ready';
  const shortcuts = useMemo<Shortcut[]>(
    () => [
      { key: ' ', description: 'Space: start or stop the CPUs', run: () => ready && setRunning((r) => !r) },
      { key: '}', description: 'Select the next slab (arrows do this when the canvas has focus)', run: () => moveSel(1) },
      { key: '{', description: 'Select the previous slab', run: () => moveSel(-1) },
      { key: 'Escape', description: 'Clear the selection', run: () => setSelPfn(null) },
    ],
    [moveSel, ready],
  );

  useEffect(() => {
    window.__slablabFreeRun = {
    running,
    mode: live?.mode ?? '',
    samples: live?.samples ?? 0,
    events: live?.events ?? 0,
    anchors: live?.anchors ?? 0,
    lost: live?.lost ?? 0,
    dropped: live?.dropped ?? 0,
    threadIds: live?.cpus.map((c) => c.threadId) ?? [],
    ops: live?.cpus.map((c) => c.ops) ?? [],
    inspector,
    slabs: snap?.nslabs ?? 0,
    objects: snap?.nobj ?? 0,
    kernel: values.kernel,
    sheaves: snap?.sheaves.nsheaves ?? 0,
    barnFull: snap?.sheaves.barnFull ?? 0,
    barnEmpty: snap?.sheaves.barnEmpty ?? 0,
    counters: live?.cpus.map((c) => c.counters) ?? [],
    inuse: snap ? snap.slab.inuse.reduce((a, b) => a + b, 0) : 0,
    recordedBytes: run.recordedBytes,
    replayFrames: replay.replay?.frames.length ?? 0,
    replayPos: replay.pos,
  };
  });

  const sheaves = snap?.kernel.hasSheaves ?? false;
  const distinct = new Set(live?.cpus.map((c) => c.threadId).filter((t) => t !== 0)).size;

  return (
    <FreeRunPage
      core={core}
      idPrefix="freerun"
      title="SLUB · free-running"
      shortcuts={shortcuts}
      pickers={
        <>
          <KernelSelect value={values.kernel} disabled={running} onChange={(kernel) => update({ kernel })} />
          <label>
            CPUs{' '}
            <select value={cpus} disabled={running} onChange={(e) => update({ cpus: Number(e.target.value) })}>
              {[2, 3, 4, 5, 6, 7, 8].map((n) => (
                <option key={n}>{n}</option>
              ))}
            </select>
          </label>
          <label>
            Workload{' '}
            <select value={values.workload} disabled={running} onChange={(e) => update({ workload: e.target.value as (typeof WORKLOADS)[number] })}>
              <option value="local">local churn</option>
              <option value="prodcons">producer/consumer (remote frees)</option>
              <option value="bursts">bursts</option>
            </select>
          </label>
          <label>
            Background slabs{' '}
            <input type="number" min={0} max={2048} value={values.slabs} disabled={running} onChange={(e) => update({ slabs: Math.max(0, Math.min(2048, Number(e.target.value) || 0)) })} />
          </label>
          <label>
            Rate per CPU{' '}
            <select value={values.rate} disabled={running} onChange={(e) => update({ rate: Number(e.target.value) })}>
              {(RATES.includes(values.rate) ? RATES : [...RATES, values.rate]).map((r) => (
                <option key={r} value={r}>
                  {r ? `${r.toLocaleString('en')} ops/s` : 'no cap (events drop; the view re-anchors)'}
                </option>
              ))}
            </select>
          </label>
          <label title="Eight busy CPU workers on a host with fewer cores would starve the page's main thread; paced, each sleeps between rounds so that together they leave one core free.">
            <input type="checkbox" checked={paced} disabled={running} onChange={(e) => setPaced(e.target.checked)} /> pace the workers to leave the page a core
          </label>
        </>
      }
      record={{
        running,
        onStartStop: () => setRunning((r) => !r),
        record,
        setRecord,
        recordedBytes: run.recordedBytes,
        recordingFull: run.recordingFull,
        onSave: () => run.save(`slablab-${values.workload}-${cpus}cpus.slabrec`),
        onOpen: (f) => void replay.open(f).then(setError),
      }}
      error={error}
      replay={replay}
      replaying={replaying}
      live={live}
      table={
        live && (
          <table className="freerun-table" data-testid="freerun-table">
            <caption>
              {live.mode === 'threads' ? `threads: ${distinct} CPU workers${duty < 100 ? `, each busy ${duty}% of the time` : ', full speed'}` : 'interleaved on the bridge worker'} ·{' '}
              {(live.elapsedMs / 1000).toFixed(1)} s · {live.samples} frames
            </caption>
            <thead>
              <tr>
                <th scope="col">CPU</th>
                <th scope="col">ops/s</th>
                <th scope="col">{sheaves ? 'served by a sheaf' : 'fast-path share'}</th>
                {sheaves && <th scope="col">barn get / put</th>}
                {sheaves && <th scope="col">objects refilled / flushed</th>}
                <th scope="col">cmpxchg retries</th>
                <th scope="col">worker</th>
              </tr>
            </thead>
            <tbody>
              {live.cpus.map((c, k) => {
                const n = (name: (typeof FREERUN_COUNTERS)[number]) => c.counters[name] ?? 0;
                const all = n('ALLOC_FASTPATH') + n('ALLOC_SLOWPATH') + n('FREE_FASTPATH') + n('FREE_SLOWPATH');
                // With sheaves, the share of the CPU's operations alloc_from_pcs or free_to_pcs served (a thread
                // publishes its operation count once a round, its counters at once: capped at all of them).
                const share = sheaves ? (c.ops ? Math.min(1, (n('ALLOC_CPU_SHEAF') + n('FREE_CPU_SHEAF')) / c.ops) : null) : all ? (n('ALLOC_FASTPATH') + n('FREE_FASTPATH')) / all : null;
                return (
                  <tr key={k}>
                    <th scope="row">{k}</th>
                    <td>{Math.round(live.rates[k] ?? 0).toLocaleString('en')}</td>
                    <td>{share === null ? '–' : `${(share * 100).toFixed(1)}%`}</td>
                    {sheaves && <td>{`${n('BARN_GET').toLocaleString('en')} / ${n('BARN_PUT').toLocaleString('en')}`}</td>}
                    {sheaves && <td>{`${n('SHEAF_REFILL').toLocaleString('en')} / ${n('SHEAF_FLUSH').toLocaleString('en')}`}</td>}
                    <td>{(n('CMPXCHG_DOUBLE_CPU_FAIL') + n('CMPXCHG_DOUBLE_FAIL')).toLocaleString('en')}</td>
                    <td>{c.threadId ? `thread ${c.threadId}` : 'bridge worker'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )
      }
      inspector={inspector}
      inspectHint="Click a slab (or focus the canvas and use the arrow keys) to follow it as it moves between lists."
      canvas={
        snap && (
          <ViewCanvas
            view={slubStepView}
            snap={snap}
            overlay={overlay}
            testId="slub-canvas"
            motion={false}
            {...(window.__slablabPerfMarks ? { measure: 'slub-draw' } : {})}
            onPick={(h) => setSelPfn(h ? (snap.slab.pfn[h.slab] ?? null) : null)}
            onMove={(dx, dy, lay) => moveSel(dy || dx, lay)}
            label={`${replaying ? 'Replayed' : 'Live'} SLUB state: ${snap.nslabs} slabs, ${snap.nobj} objects, ${snap.node.nrPartial} on the node partial list.`}
          />
        )
      }
    />
  );
}
