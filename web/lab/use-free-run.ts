// use-free-run.ts - the free-running mode seen from the page, for any view
// with a mirror: once per animation frame the page drains the CPUs' event
// rings through the bridge (freerun-host.ts in the worker) and applies the
// events to its mirror of the state; a full snapshot crosses the bridge only
// at the start and when the mirror must re-anchor (the rings dropped events,
// or an event contradicted the mirror), at most every ANCHOR_INTERVAL_MS.
// A run can be recorded as it goes, saved as a .slabrec file
// (recording.ts), and a file replayed frame by frame (useRecordingReplay).

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { getBridge } from '../core/bridge';
import type { FreerunCpu, FreerunMode } from '../core/bridge-protocol';
import { EVENT_SIZE } from '../core/events.generated';
import type { CoreState } from '../core/use-core';
import { decodeRecording, encodeRecording, recordingFrames, replayTo, type AnchorCheck, type Recording } from './recording';
import { errorText } from './use-step-lab';
import type { Mirror, StepView } from './view';

/** What the free-running mode needs of a view: its model, its decoder and its mirror. */
export type FreeRunnable<Snap> = Pick<StepView<never, unknown, unknown, Snap, never, unknown, unknown, unknown>, 'model' | 'decode' | 'mirror'>;

function mirrorOf<Snap>(view: FreeRunnable<Snap>): (anchor: Snap) => Mirror<Snap> {
  const m = view.mirror;
  if (!m) throw new Error(`the ${view.model} view has no mirror: it cannot run free or replay a recording`);
  return m;
}

/** Re-anchor on a snapshot at most this often, however often the mirror loses track. */
export const ANCHOR_INTERVAL_MS = 500;
/** A recording stops growing at this size (it lives in the page's memory until saved). */
export const RECORDING_CAP_BYTES = 256 << 20;

export interface FreeRunLive<Snap> {
  mode: FreerunMode;
  snapshot: Snap;
  cpus: FreerunCpu[];
  /** Operations per second per CPU, over the last half second or so. */
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

export interface FreeRunOptions<Snap> {
  core: CoreState;
  view: FreeRunnable<Snap>;
  /** The start parameters of the view's model (JSON-able: they key the run). */
  params: Readonly<Record<string, unknown>>;
  /** Running: the effect starts the CPUs, and stops them when this turns false or the view goes away. */
  running: boolean;
  onFailed: (message: string) => void;
  /** Keep every frame for a recording (armed before the start). */
  record: boolean;
  /** The recording's header: the CPUs and what ran. */
  ncpus: number;
  workload: string;
  /** Time each frame's mirror update as a performance measure of this name (scripts/frame-bench.mjs). */
  measure?: string;
}

export function useFreeRun<Snap>(o: FreeRunOptions<Snap>) {
  const [live, setLive] = useState<FreeRunLive<Snap> | null>(null);
  const recording = useRef<{ rec: Recording; bytes: number; full: boolean } | null>(null);
  const [recordedBytes, setRecordedBytes] = useState(0);
  const prev = useRef<{ t: number; ops: number[]; events: number } | null>(null);
  const key = JSON.stringify([o.view.model, o.params, o.record]);
  // The options `key` stands for, as they were when the run started (a new options object each render does not restart it).
  const options = useRef(o);
  options.current = o;
  const { running } = o;
  const coreStatus = o.core.status;

  useEffect(() => {
    const o = options.current;
    if (!running || coreStatus !== 'ready') return;
    let on = true;
    let session = 0;
    const bridge = getBridge();
    const model = o.view.model;
    const decode = o.view.decode;
    const loop = async () => {
      try {
        const mirrorFor = mirrorOf(o.view);
        const started = await bridge.request('freerunStart', { model, params: o.params });
        session = started.session;
        let mirror = mirrorFor(decode(started.anchor));
        recording.current = o.record
          ? { rec: { view: model, ncpus: o.ncpus, workload: o.workload, segments: [{ anchor: new Uint8Array(started.anchor), frames: [] }] }, bytes: started.anchor.byteLength, full: false }
          : null;
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
          const d = await bridge.request('freerunDrain', { session, snapshot: wantAnchor && performance.now() - anchoredAt >= ANCHOR_INTERVAL_MS });
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
            mirror = mirrorFor(decode(d.snapshot));
            anchoredAt = performance.now();
            wantAnchor = false;
            anchors++;
          } else if ((mirror.apply(new Uint8Array(d.events)) > 0 || d.dropped > 0) && !wantAnchor) {
            wantAnchor = true;
            lost++;
            lostWhy = d.dropped > 0 ? `the rings dropped ${d.dropped.toLocaleString('en')} events` : mirror.firstMismatch;
          }
          const snapshot = mirror.view();
          if (o.measure) performance.measure(o.measure, { start: t0 });
          dropped += d.dropped;
          events += d.events.byteLength / EVENT_SIZE;
          const now = d.elapsedMs;
          const ops = d.cpus.map((c) => c.ops);
          const p = prev.current;
          const rates = p && now > p.t ? ops.map((x, k) => ((x - (p.ops[k] ?? 0)) * 1000) / (now - p.t)) : ops.map(() => 0);
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
          await new Promise((res) => requestAnimationFrame(res));
        }
      } catch (e) {
        o.onFailed(errorText(e));
      } finally {
        if (session) await bridge.request('dispose', { session }).catch(() => undefined);
      }
    };
    void loop();
    return () => {
      on = false;
    };
    // `key` stands for the model, its parameters and whether to record.
  }, [running, coreStatus, key]);

  /** Offers the recording as a download named `fileName`. */
  const save = (fileName: string) => {
    const r = recording.current;
    if (!r) return;
    const url = URL.createObjectURL(new Blob([encodeRecording(r.rec)], { type: 'application/octet-stream' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = fileName;
    a.click();
    setTimeout(() => URL.revokeObjectURL(url), 10_000);
  };

  return { live, recordedBytes, recordingFull: recording.current?.full ?? false, save };
}

/** A recording opened from a file, replayed at a chosen frame; `ncpus` reads an anchor's CPU count. */
export function useRecordingReplay<Snap>(view: FreeRunnable<Snap>, ncpus: (anchor: Snap) => number) {
  const [replay, setReplay] = useState<{ rec: Recording; name: string; frames: ReturnType<typeof recordingFrames> } | null>(null);
  const [pos, setPos] = useState(0);
  const cache = useRef<{ segment: number; frame: number; mirror: Mirror<Snap> } | null>(null);

  const anchorMirror = useCallback((anchor: Uint8Array) => mirrorOf(view)(view.decode(anchor.slice().buffer)), [view]);

  /** Opens a file; resolves to null, or to what is wrong with it (what was open stays open). */
  const open = async (file: File): Promise<string | null> => {
    const checkAnchor: AnchorCheck = (anchor) => ({ ncpus: ncpus(view.decode(anchor.slice().buffer)) });
    try {
      const rec = decodeRecording(await file.arrayBuffer(), view.model, checkAnchor);
      const frames = recordingFrames(rec);
      cache.current = null;
      setReplay({ rec, name: file.name, frames });
      setPos(Math.max(0, frames.length - 1));
      return null;
    } catch (e) {
      return `Could not open ${file.name}: ${e instanceof Error ? e.message : String(e)}`;
    }
  };

  // The state at the chosen frame: forward within a segment from the frame shown last, else from the segment's anchor.
  const snap = useMemo(() => {
    if (!replay) return null;
    const at = replay.frames[pos];
    if (!at) return anchorMirror((replay.rec.segments[0] as Recording['segments'][number]).anchor).view();
    const c = cache.current;
    if (c && c.segment === at.segment && c.frame <= at.frame) {
      const seg = replay.rec.segments[at.segment];
      for (let f = c.frame + 1; f <= at.frame; f++) c.mirror.apply(seg?.frames[f]?.events ?? new Uint8Array(0));
      c.frame = at.frame;
      return c.mirror.view();
    }
    const mirror = replayTo(replay.rec, at.segment, at.frame, anchorMirror);
    cache.current = { segment: at.segment, frame: at.frame, mirror };
    return mirror.view();
  }, [replay, pos, anchorMirror]);

  return { replay, pos, setPos, snap, open, close: () => setReplay(null) };
}
