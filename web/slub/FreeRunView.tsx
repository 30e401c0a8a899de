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
import { decodeRecording, encodeRecording, recordingFrames, replayTo, type Recording } from './recording';
import type { FreerunCpu, FreerunDrain } from './protocol';
import { SlabCanvas } from './SlabCanvas';
import { decodeSnapshot, slabIndexOf, type SlubSnapshot } from './snapshot';
import type { Overlay } from './render';
import './slub.css';

const NO_MARKS: ReadonlySet<string> = new Set();

/** Re-anchor on a snapshot at most this often, however often the mirror loses track. */
const ANCHOR_INTERVAL_MS = 500;
/** A recording stops growing at this size (it lives in the page's memory until saved). */
const RECORDING_CAP_BYTES = 256 << 20;
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
  /** Objects in use over every slab shown (live or replayed). */
  inuse: number;
  recordedBytes: number;
  replayFrames: number;
  replayPos: number;
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
  // Recording: armed before Start, filled by the drain loop (a ref: the loop outlives renders).
  const [record, setRecord] = useState(false);
  const recording = useRef<{ rec: Recording; bytes: number; full: boolean } | null>(null);
  const [recordedBytes, setRecordedBytes] = useState(0);
  // Replaying a recording opened from a file: frame positions, the one shown, the mirror there.
  const [replay, setReplay] = useState<{ rec: Recording; name: string; frames: ReturnType<typeof recordingFrames> } | null>(null);
  const [replayPos, setReplayPos] = useState(0);
  const replayCache = useRef<{ segment: number; frame: number; mirror: LiveMirror } | null>(null);

  useEffect(() => {
    if (!running) return;
    let on = true;
    const bridge = getBridge();
    const loop = async () => {
      try {
        const started = await bridge.request('freerunStart', { cpus, objectSize: 256, workload: state.workload, prefillSlabs: state.slabs, seed: 1, duty, rate: state.rate });
        let mirror = new LiveMirror(decodeSnapshot(started.anchor));
        recording.current = record ? { rec: { ncpus: cpus, workload: state.workload, segments: [{ anchor: new Uint8Array(started.anchor), frames: [] }] }, bytes: started.anchor.byteLength, full: false } : null;
        setRecordedBytes(recording.current?.bytes ?? 0);
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
          const r = recording.current;
          if (r && !r.full) {
            const grown = r.bytes + (d.snapshot?.byteLength ?? d.events.byteLength + 12);
            if (grown > RECORDING_CAP_BYTES) r.full = true;
            else {
              if (d.snapshot) r.rec.segments.push({ anchor: new Uint8Array(d.snapshot), frames: [] });
              else r.rec.segments.at(-1)?.frames.push({ t: d.elapsedMs, events: new Uint8Array(d.events) });
              r.bytes = grown;
            }
          }
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
          if (r) setRecordedBytes(r.bytes);
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
  }, [running, cpus, state.workload, state.slabs, state.rate, duty, record]);

  const saveRecording = () => {
    const r = recording.current;
    if (!r) return;
    const url = URL.createObjectURL(new Blob([encodeRecording(r.rec)], { type: 'application/octet-stream' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `slablab-${r.rec.workload}-${r.rec.ncpus}cpus.slabrec`;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };
  const openRecording = async (file: File) => {
    try {
      const rec = decodeRecording(await file.arrayBuffer());
      const frames = recordingFrames(rec);
      replayCache.current = null;
      setReplay({ rec, name: file.name, frames });
      setReplayPos(Math.max(0, frames.length - 1));
      setError(null);
    } catch (e) {
      setError(`Could not open ${file.name}: ${e instanceof Error ? e.message : String(e)}`);
    }
  };
  // The replayed state: forward within a segment from the last one shown, else from the segment's anchor.
  const replaySnap = useMemo(() => {
    if (!replay) return null;
    const at = replay.frames[replayPos];
    if (!at) return new LiveMirror(decodeSnapshot((replay.rec.segments[0] as Recording['segments'][number]).anchor)).view();
    const c = replayCache.current;
    if (c && c.segment === at.segment && c.frame <= at.frame) {
      const seg = replay.rec.segments[at.segment];
      for (let f = c.frame + 1; f <= at.frame; f++) c.mirror.apply(seg?.frames[f]?.events ?? new Uint8Array(0));
      c.frame = at.frame;
      return c.mirror.view();
    }
    const mirror = replayTo(replay.rec, at.segment, at.frame);
    replayCache.current = { segment: at.segment, frame: at.frame, mirror };
    return mirror.view();
  }, [replay, replayPos]);

  const ready = core.status === 'ready';
  // The selected slab, followed by pfn from frame to frame while it lives.
  const [selPfn, setSelPfn] = useState<number | null>(null);
  const snap = (replay && !running ? replaySnap : live?.snapshot) ?? null;
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
      slabs: snap?.nslabs ?? 0,
      objects: snap?.nobj ?? 0,
      inuse: snap ? snap.slab.inuse.reduce((a, b) => a + b, 0) : 0,
      recordedBytes,
      replayFrames: replay?.frames.length ?? 0,
      replayPos,
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
        <label title="Keep every frame's events in the page, to save as a file and replay later.">
          <input type="checkbox" checked={record} disabled={running} onChange={(e) => setRecord(e.target.checked)} /> record the run
        </label>
        <button type="button" onClick={() => setRunning((r) => !r)}>
          {running ? 'Stop' : 'Start'}
        </button>
        {recordedBytes > 0 && (
          <button type="button" onClick={saveRecording} disabled={running}>
            Save recording ({(recordedBytes / 1048576).toFixed(1)} MB{recording.current?.full ? ', full' : ''})
          </button>
        )}
        <label>
          Open a recording{' '}
          <input
            type="file"
            accept=".slabrec"
            disabled={running}
            onChange={(e) => {
              const f = e.target.files?.[0];
              if (f) void openRecording(f);
              e.target.value = '';
            }}
          />
        </label>
      </div>
      {error && (
        <div className="alert alert-error" role="alert">
          {error}
        </div>
      )}
      {replay && !running && (
        <section className="freerun-replay" aria-labelledby="replay-title" data-testid="freerun-replay">
          <h3 id="replay-title">Recording {replay.name}</h3>
          <p>
            {replay.rec.workload}, {replay.rec.ncpus} CPUs: {replay.frames.length} frames over {((replay.frames.at(-1)?.t ?? 0) / 1000).toFixed(1)} s, {replay.rec.segments.length} segment{replay.rec.segments.length === 1 ? '' : 's'} (a new one at each re-anchor)
          </p>
          <label>
            Position{' '}
            <input type="range" aria-label="Recording position" min={0} max={Math.max(0, replay.frames.length - 1)} value={replayPos} onChange={(e) => setReplayPos(Number(e.target.value))} />
          </label>{' '}
          <span data-testid="replay-caption">
            frame {replayPos + 1} of {replay.frames.length} · {((replay.frames[replayPos]?.t ?? 0) / 1000).toFixed(2)} s
          </span>{' '}
          <button type="button" onClick={() => setReplay(null)}>
            Close the recording
          </button>
        </section>
      )}
      {live && !(replay && !running) && (
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
        </>
      )}
      {snap && (
        <>
          <section className="slub-inspector" aria-labelledby="freerun-inspector-title">
            <h3 id="freerun-inspector-title">Inspector</h3>
            <p data-testid="freerun-inspector" aria-live="polite">
              {inspector || 'Click a slab (or focus the canvas and use the arrow keys) to follow it as it moves between lists.'}
            </p>
          </section>
          <SlabCanvas
            snapshot={snap}
            overlay={overlay}
            onPick={pick}
            onMove={(dx, dy, layout) => moveSel(dy || dx, layout)}
            showFull
            compact
            measure={window.__slablabPerfMarks === true}
            label={`${replay && !running ? 'Replayed' : 'Live'} SLUB state: ${snap.nslabs} slabs, ${snap.nobj} objects, ${snap.node.nrPartial} on the node partial list.`}
          />
        </>
      )}
    </section>
  );
}
