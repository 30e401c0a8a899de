// FreeRunView.tsx - free-running mode: the CPUs run a workload on their own
// (one CPU worker thread each in the threads build; interleaved on the bridge
// worker in the single build).  Once per animation frame the view drains the
// per-CPU event rings through the bridge and applies the events to its
// mirror of the state (live-mirror.ts); a full snapshot crosses the bridge
// only at the start and when the mirror must re-anchor (the rings dropped
// events, or events contradicted the mirror), at most twice a second.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useShortcuts, type Shortcut } from '../app/shortcuts';
import type { UrlState } from '../app/url-state';
import { BridgeError, getBridge } from '../core/bridge';
import { EVENT_SIZE } from '../core/events.generated';
import { describeBridgeError, type CoreState } from '../core/use-core';
import { describeSlab } from './describe';
import type { Hit, Layout } from './layout';
import { LiveMirror } from './live-mirror';
import type { FreerunCpu, FreerunDrain } from './protocol';
import { SlabCanvas } from './SlabCanvas';
import { decodeSnapshot, slabIndexOf, type SlubSnapshot } from './snapshot';
import type { Overlay } from './render';
import './slub.css';

const NO_MARKS: ReadonlySet<string> = new Set();

/** Re-anchor on a snapshot at most this often, however often the mirror loses track. */
const ANCHOR_INTERVAL_MS = 500;
/** The rate choices offered (operations per second per CPU; 0: no cap). */
const RATES = [1_000, 10_000, 100_000, 0];

interface Live {
  mode: FreerunDrain['mode'];
  snapshot: SlubSnapshot;
  cpus: FreerunCpu[];
  rates: number[];
  elapsedMs: number;
  /** Frames drawn from drained events. */
  samples: number;
  /** Events drained from the rings, in all. */
  events: number;
  eventsPerSec: number;
  dropped: number;
  /** Snapshots taken to re-anchor the mirror (the first one not counted). */
  anchors: number;
  /** Times the mirror lost track (a ring dropped events, or an event contradicted it). */
  lost: number;
  /** Why it last did. */
  lostWhy: string;
}

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
  /** What the inspector says of the selected slab ('' for none). */
  inspector: string;
  slabs: number;
  objects: number;
}
declare global {
  interface Window {
    __slablabFreeRun?: FreeRunHook;
    /** Set by scripts/frame-bench.mjs before the page loads: record paint and event-apply times as performance measures. */
    __slablabPerfMarks?: boolean;
  }
}

export function FreeRunView({ core, state, update }: { core: CoreState; state: UrlState; update: (p: Partial<UrlState>) => void }) {
  const cpus = Math.max(2, state.cpus);
  const [running, setRunning] = useState(false);
  const [live, setLive] = useState<Live | null>(null);
  const [error, setError] = useState<string | null>(null);
  const hostCpus = core.status === 'ready' ? core.info.hostCpus : 2;
  const [paced, setPaced] = useState(true);
  // Paced: all CPU workers together use at most the host's cores but one, left for the page.
  const duty = paced && cpus >= hostCpus ? Math.max(5, Math.floor((100 * Math.max(1, hostCpus - 1)) / cpus)) : 100;
  const prev = useRef<{ t: number; ops: number[]; events: number } | null>(null);

  useEffect(() => {
    if (!running) return;
    let on = true;
    const bridge = getBridge();
    const loop = async () => {
      try {
        const started = await bridge.request('freerunStart', { cpus, objectSize: 256, workload: state.workload, prefillSlabs: state.slabs, seed: 1, duty, rate: state.rate });
        let mirror = new LiveMirror(decodeSnapshot(started.anchor));
        let anchoredAt = 0;
        let wantAnchor = false;
        let samples = 0;
        let events = 0;
        let dropped = 0;
        let anchors = 0;
        let lost = 0;
        let lostWhy = '';
        prev.current = null;
        while (on) {
          const d = await bridge.request('freerunDrain', { snapshot: wantAnchor && performance.now() - anchoredAt >= ANCHOR_INTERVAL_MS });
          const t0 = performance.now();
          if (d.snapshot) {
            // The snapshot already holds this drain's events.
            mirror = new LiveMirror(decodeSnapshot(d.snapshot));
            anchoredAt = performance.now();
            wantAnchor = false;
            anchors++;
          } else if ((mirror.apply(new Uint8Array(d.events)) > 0 || d.dropped > 0) && !wantAnchor) {
            wantAnchor = true;
            lost++;
            lostWhy = d.dropped > 0 ? `the rings dropped ${d.dropped.toLocaleString('en')} events` : mirror.firstMismatch;
          }
          const snapshot = mirror.view();
          if (window.__slablabPerfMarks) performance.measure('slub-mirror', { start: t0 });
          dropped += d.dropped;
          events += d.events.byteLength / EVENT_SIZE;
          const now = d.elapsedMs;
          const ops = d.cpus.map((c) => c.ops);
          const p = prev.current;
          const rates = p && now > p.t ? ops.map((o, k) => ((o - (p.ops[k] ?? 0)) * 1000) / (now - p.t)) : ops.map(() => 0);
          const eventsPerSec = p && now > p.t ? ((events - p.events) * 1000) / (now - p.t) : 0;
          if (!p || now - p.t > 500) prev.current = { t: now, ops, events };
          samples++;
          if (!on) break;
          const total = { lost, lostWhy, anchors, dropped, events, samples };
          setLive((old) => ({
            ...total,
            mode: d.mode,
            snapshot,
            cpus: d.cpus,
            rates: p ? rates : (old?.rates ?? rates),
            eventsPerSec: p ? eventsPerSec : (old?.eventsPerSec ?? 0),
            elapsedMs: now,
          }));
          await new Promise((r) => requestAnimationFrame(r));
        }
      } catch (e) {
        setError(e instanceof BridgeError ? describeBridgeError(e) : String(e));
        setRunning(false);
      } finally {
        await bridge.request('freerunStop', {}).catch(() => undefined);
      }
    };
    void loop();
    return () => {
      on = false;
    };
  }, [running, cpus, state.workload, state.slabs, state.rate, duty]);

  const ready = core.status === 'ready';
  // The selected slab, followed by pfn from frame to frame while it lives.
  const [selPfn, setSelPfn] = useState<number | null>(null);
  const snap = live?.snapshot ?? null;
  const selSlab = snap && selPfn !== null ? slabIndexOf(snap, selPfn) : -1;
  const overlay = useMemo<Overlay>(
    () => ({ selected: selSlab >= 0 ? { slab: selSlab, index: -1 } : null, marked: NO_MARKS, detached: null, arrows: 'selected' }),
    [selSlab],
  );
  const inspector = snap && selSlab >= 0 ? describeSlab(snap, selSlab) : selPfn !== null ? `Slab pfn ${selPfn} is gone: it was discarded and its pages went back to the page allocator.` : '';
  const pick = useCallback((hit: Hit | null) => setSelPfn(hit && snap ? (snap.slab.pfn[hit.slab] ?? null) : null), [snap]);
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
  const shortcuts = useMemo<Shortcut[]>(
    () => [
      { key: ' ', description: 'Space: start or stop the CPUs', run: () => ready && setRunning((r) => !r) },
      { key: '}', description: 'Select the next slab (arrows do this when the canvas has focus)', run: () => moveSel(1) },
      { key: '{', description: 'Select the previous slab', run: () => moveSel(-1) },
      { key: 'Escape', description: 'Clear the selection', run: () => setSelPfn(null) },
    ],
    [moveSel, ready],
  );
  useShortcuts(shortcuts);

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
      slabs: live?.snapshot.nslabs ?? 0,
      objects: live?.snapshot.nobj ?? 0,
    };
  });

  if (core.status !== 'ready') return null;
  const threads = core.info.mode === 'threads';
  const distinct = new Set(live?.cpus.map((c) => c.threadId).filter((t) => t !== 0)).size;

  return (
    <section className="slub-view" aria-labelledby="free-title" data-testid="freerun-view">
      <h2 id="free-title">SLUB · free-running</h2>
      <p>
        {threads
          ? 'Each simulated CPU runs the workload on its own CPU worker (a pthread sharing the core\'s memory). Every frame the view drains the CPUs\' event rings and replays the events on its own copy of the state; operations on different CPUs overlap, so now and then an event contradicts that copy, and the view re-anchors it on a snapshot.'
          : 'This page is not cross-origin isolated, so there are no CPU threads: the CPUs run interleaved on the one bridge worker between frames, and the view replays their events exactly. Serve the lab with COOP/COEP (npm start) for real threads.'}
      </p>
      <div className="slub-pickers">
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
          <select value={state.workload} disabled={running} onChange={(e) => update({ workload: e.target.value as UrlState['workload'] })}>
            <option value="local">local churn</option>
            <option value="prodcons">producer/consumer (remote frees)</option>
            <option value="bursts">bursts</option>
          </select>
        </label>
        <label>
          Background slabs{' '}
          <input type="number" min={0} max={2048} value={state.slabs} disabled={running} onChange={(e) => update({ slabs: Math.max(0, Math.min(2048, Number(e.target.value) || 0)) })} />
        </label>
        <label>
          Rate per CPU{' '}
          <select value={state.rate} disabled={running} onChange={(e) => update({ rate: Number(e.target.value) })}>
            {(RATES.includes(state.rate) ? RATES : [...RATES, state.rate]).map((r) => (
              <option key={r} value={r}>
                {r ? `${r.toLocaleString('en')} ops/s` : 'no cap (events drop; the view re-anchors)'}
              </option>
            ))}
          </select>
        </label>
        <label title="Eight busy CPU workers on a host with fewer cores would starve the page's main thread; paced, each sleeps between rounds so that together they leave one core free.">
          <input type="checkbox" checked={paced} disabled={running} onChange={(e) => setPaced(e.target.checked)} /> pace the workers to leave the page a core
        </label>
        <button type="button" onClick={() => setRunning((r) => !r)}>
          {running ? 'Stop' : 'Start'}
        </button>
      </div>
      {error && (
        <div className="alert alert-error" role="alert">
          {error}
        </div>
      )}
      {live && (
        <>
          <table className="freerun-table" data-testid="freerun-table">
            <caption>
              {live.mode === 'threads' ? `threads: ${distinct} CPU workers${duty < 100 ? `, each busy ${duty}% of the time` : ', full speed'}` : 'interleaved on the bridge worker'} · {(live.elapsedMs / 1000).toFixed(1)} s · {live.samples} frames
            </caption>
            <thead>
              <tr>
                <th scope="col">CPU</th>
                <th scope="col">ops/s</th>
                <th scope="col">fast-path share</th>
                <th scope="col">cmpxchg retries</th>
                <th scope="col">worker</th>
              </tr>
            </thead>
            <tbody>
              {live.cpus.map((c, k) => {
                const all = c.allocFast + c.allocSlow + c.freeFast + c.freeSlow;
                return (
                  <tr key={k}>
                    <th scope="row">{k}</th>
                    <td>{Math.round(live.rates[k] ?? 0).toLocaleString('en')}</td>
                    <td>{all ? `${(((c.allocFast + c.freeFast) / all) * 100).toFixed(1)}%` : '–'}</td>
                    <td>{(c.cpuCasFail + c.slabCasFail).toLocaleString('en')}</td>
                    <td>{c.threadId ? `thread ${c.threadId}` : 'bridge worker'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <p className="hint" data-testid="freerun-events">
            {Math.round(live.eventsPerSec).toLocaleString('en')} events/s drained · {live.events.toLocaleString('en')} in all · {live.dropped.toLocaleString('en')} dropped by full rings · lost track {live.lost} time{live.lost === 1 ? '' : 's'}{live.lostWhy ? ` (last: ${live.lostWhy})` : ''} · re-anchored on a snapshot {live.anchors} time{live.anchors === 1 ? '' : 's'}
          </p>
          <section className="slub-inspector" aria-labelledby="freerun-inspector-title">
            <h3 id="freerun-inspector-title">Inspector</h3>
            <p data-testid="freerun-inspector" aria-live="polite">
              {inspector || 'Click a slab (or focus the canvas and use the arrow keys) to follow it as it moves between lists.'}
            </p>
          </section>
          <SlabCanvas
            snapshot={live.snapshot}
            overlay={overlay}
            onPick={pick}
            onMove={(dx, dy, layout) => moveSel(dy || dx, layout)}
            showFull
            compact
            measure={window.__slablabPerfMarks === true}
            label={`Live SLUB state: ${live.snapshot.nslabs} slabs, ${live.snapshot.nobj} objects, ${live.snapshot.node.nrPartial} on the node partial list.`}
          />
        </>
      )}
    </section>
  );
}
