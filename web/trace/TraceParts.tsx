// TraceParts.tsx - the trace view's pieces after a replay: the overview over
// time (uPlot, stacked per cache, a click sets the time to scrub to), the
// percpu chunk map, and one cache scrubbed event by event: its model's
// slabs drawn by the SLUB view's own layout and render (web/slub), play,
// step, a slider, a time box, and the event in words.
//
// Scrubbing asks the worker for the cache's model after event N
// (trace-file.ts `at`): the worker's scrub session runs on from where it is
// for a later N, and replays from the start, only this cache modelled, for
// an earlier one (docs/replay.md gives the times).

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type uPlot from 'uplot';
import { getBridge } from '../core/bridge';
import { Chart } from '../lab/BenchChart';
import { numberText as fmt } from '../lab/describe';
import { LabCanvas } from '../lab/LabCanvas';
import type { CanvasTheme } from '../lab/theme';
import { errorText } from '../lab/use-step-lab';
import { layoutSnapshot, type Layout } from '../slub/layout';
import { drawSnapshot, type Overlay } from '../slub/render';
import { decodeSnapshot, NONE32, slabIndexOf, type SlubSnapshot } from '../slub/snapshot';
import { drawChunkMap, layoutChunkMap, type ChunkMap, type ChunkMapLayout } from './chunk-map';
import { eventWords } from './describe';
import { decodeOps, type ReplayCache, type ReplayOp } from './replay-api';
import type { AtReply, CacheOps, Overview } from './trace-file';

const SERIES_COLORS = ['#3b82f6', '#f59e0b', '#10b981', '#ef4444', '#a855f7', '#14b8a6', '#f97316', '#ec4899', '#94a3b8'];

/** Allocations (or frees) per second per cache, stacked; a click picks a time, the scrubbed one is marked. */
export function OverviewChart({ overview, time, onPick }: { overview: Overview; time: number | null; onPick: (tS: number) => void }) {
  const [what, setWhat] = useState<'allocs' | 'frees'>('allocs');
  const pick = useRef(onPick);
  pick.current = onPick;
  const data = useMemo<uPlot.AlignedData>(() => {
    const xs = Array.from({ length: overview.bins }, (_, i) => i * overview.binS);
    const acc = new Array<number>(overview.bins).fill(0);
    // Stacked: each series is the sum of itself and those drawn under it.
    const stacked = overview.series.map((s) => s[what].map((v, i) => (acc[i] = (acc[i] ?? 0) + (v ?? 0))));
    return [xs, ...stacked.reverse()];
  }, [overview, what]);
  const opts = useMemo<uPlot.Options>(() => {
    const drawn = [...overview.series].reverse();
    const names = drawn.map((s) => s.name);
    const marker = time === null ? null : time - overview.t0S;
    return {
      width: 800,
      height: 240,
      scales: { x: { time: false } },
      axes: [{ label: 'seconds into the trace' }, { label: `${what === 'allocs' ? 'allocations' : 'frees'} per second`, size: 70 }],
      series: [
        { label: 'seconds', value: (_u: uPlot, v: number | null) => (v === null ? '--' : v.toFixed(3)) },
        ...names.map((name, i) => {
          const color = SERIES_COLORS[(names.length - 1 - i) % SERIES_COLORS.length] ?? '#888';
          // The legend gives the cache's own rate, not the stacked height drawn.
          const own = drawn[i]?.[what];
          const value = (_u: uPlot, _v: number | null, _series: number, bin: number | null) => (bin === null || !own ? '--' : Math.round(own[bin] ?? 0).toLocaleString('en-US'));
          return { label: name, stroke: color, fill: `${color}aa`, width: 1, value };
        }),
      ],
      hooks: {
        ready: [
          (u: uPlot) =>
            u.over.addEventListener('click', () => {
              const left = u.cursor.left ?? -1;
              if (left >= 0) pick.current(overview.t0S + u.posToVal(left, 'x'));
            }),
        ],
        draw: [
          (u: uPlot) => {
            if (marker === null) return;
            const x = u.valToPos(marker, 'x', true);
            const ctx = u.ctx;
            ctx.save();
            ctx.strokeStyle = '#ef4444';
            ctx.lineWidth = 2 * devicePixelRatio;
            ctx.beginPath();
            ctx.moveTo(x, u.bbox.top);
            ctx.lineTo(x, u.bbox.top + u.bbox.height);
            ctx.stroke();
            ctx.restore();
          },
        ],
      },
    };
  }, [overview, what, time]);
  return (
    <section aria-labelledby="trace-overview-title" className="trace-overview">
      <h3 id="trace-overview-title">Over time</h3>
      <p className="lab-figures">
        The {overview.series.length > 8 ? '8 busiest caches and the rest as "other"' : 'caches'}, stacked, in bins of {(overview.binS * 1000).toPrecision(3)} ms. Click the
        chart to scrub the picked cache to that time.{' '}
        <label>
          Show{' '}
          <select value={what} onChange={(e) => setWhat(e.target.value === 'frees' ? 'frees' : 'allocs')} data-testid="trace-overview-what">
            <option value="allocs">allocations</option>
            <option value="frees">frees</option>
          </select>
        </label>
      </p>
      <Chart opts={opts} data={data} label={`${what === 'allocs' ? 'Allocations' : 'Frees'} per second per cache over the trace, stacked: ${overview.series.map((s) => s.name).join(', ')}`} />
    </section>
  );
}

export function ChunkMapCanvas({ map }: { map: ChunkMap }) {
  const layout = useCallback((width: number) => layoutChunkMap(map, width), [map]);
  const draw = useCallback((ctx: CanvasRenderingContext2D, l: ChunkMapLayout, colors: CanvasTheme) => drawChunkMap(ctx, map, l, colors), [map]);
  return (
    <section aria-labelledby="trace-chunks-title" className="trace-chunks">
      <h3 id="trace-chunks-title">Percpu chunks at the end</h3>
      <p className="lab-figures">Each chunk's unit ({fmt(map.unitSize)} bytes) as the percpu model rebuilt it from the trace: areas in use dark, free light (areas from before the trace count as free).</p>
      <LabCanvas layout={layout} draw={draw} label={`percpu chunk map: ${map.chunks.map((c) => c.label).join('; ')}`} testId="trace-chunk-map" />
    </section>
  );
}

/** A cache's model drawn by the SLUB view's layout and render. */
function SlabsCanvas({ snap, overlay, label }: { snap: SlubSnapshot; overlay: Overlay; label: string }) {
  const layout = useCallback((width: number) => layoutSnapshot(snap, { width, showFull: true }), [snap]);
  const draw = useCallback((ctx: CanvasRenderingContext2D, l: Layout, colors: CanvasTheme) => drawSnapshot(ctx, snap, l, overlay, colors), [snap, overlay]);
  return <LabCanvas layout={layout} draw={draw} label={label} testId="trace-slabs" motionKey={snap} />;
}

interface Shown {
  k: number;
  snap: SlubSnapshot | null;
  line: string;
  ms: number;
}

/**
 * One cache's slabs after its k-th event (k = 0: before its first).  `seek`
 * jumps to a time (the overview's click); `onTime` reports the time on screen.
 */
export function CacheScrub({ session, cache, t0S, seek, onTime }: { session: number; cache: ReplayCache; t0S: number; seek: { t: number; n: number } | null; onTime: (tS: number | null) => void }) {
  const [ops, setOps] = useState<ReplayOp[] | null>(null);
  const [truncated, setTruncated] = useState(false);
  const [k, setK] = useState(0);
  const [shown, setShown] = useState<Shown | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [playing, setPlaying] = useState(false);
  const [timeText, setTimeText] = useState('');

  useEffect(() => {
    let live = true;
    getBridge()
      .request('fileAsk', { session, question: { type: 'cacheOps', cache: cache.index } })
      .then((r) => {
        const c = r as CacheOps;
        if (!live) return;
        setOps(decodeOps(c.ops, c.layout));
        setTruncated(c.truncated);
        setK(1);
      })
      .catch((e: unknown) => live && setError(errorText(e)));
    return () => {
      live = false;
    };
  }, [session, cache.index]);

  const n = ops?.length ?? 0;
  const op = k > 0 ? ops?.[k - 1] : undefined;

  useEffect(() => {
    if (!ops) return;
    let live = true;
    const t = performance.now();
    getBridge()
      .request('fileAsk', { session, question: { type: 'at', cache: cache.index, event: op?.event ?? 0 } })
      .then((r) => {
        const a = r as AtReply;
        if (live) setShown({ k, snap: a.snapshot ? decodeSnapshot(a.snapshot) : null, line: a.line, ms: performance.now() - t });
      })
      .catch((e: unknown) => live && setError(errorText(e)));
    return () => {
      live = false;
    };
  }, [ops, k, op, session, cache.index]);

  useEffect(() => onTime(op ? Number(op.tsNs) / 1e9 : null), [op, onTime]);

  const jumpTo = useCallback(
    (tS: number) => {
      if (!ops) return;
      let lo = 0;
      let hi = ops.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (Number(ops[mid]!.tsNs) / 1e9 <= tS) lo = mid + 1;
        else hi = mid;
      }
      setPlaying(false);
      setK(Math.max(ops.length ? 1 : 0, lo));
    },
    [ops],
  );
  useEffect(() => {
    if (seek) jumpTo(seek.t);
  }, [seek, jumpTo]);

  // Play: the next event once the one on screen has arrived.
  useEffect(() => {
    if (!playing) return;
    if (k >= n) return setPlaying(false);
    if (shown?.k !== k) return;
    const t = setTimeout(() => setK((x) => Math.min(n, x + 1)), 250);
    return () => clearTimeout(t);
  }, [playing, k, n, shown]);

  const snap = shown?.snap ?? null;
  const overlay = useMemo<Overlay>(() => {
    const o = shown && shown.k > 0 ? ops?.[shown.k - 1] : undefined;
    const slab = snap && o && o.objPfn !== NONE32 ? slabIndexOf(snap, o.objPfn) : -1;
    return { selected: slab >= 0 && o ? { slab, index: o.objIndex } : null, marked: new Set(), detached: null, arrows: 'selected', showFull: true };
  }, [snap, shown, ops]);
  const words = shown && shown.k > 0 && ops?.[shown.k - 1] ? eventWords(ops[shown.k - 1]!, shown.line, cache.name) : `Before ${cache.name}'s first event in the trace.`;
  const figures = snap ? `${fmt(snap.nslabs)} slabs · ${fmt(snap.node.nrPartial)} on the node partial list · ${fmt(snap.geometry.objects)} objects per slab` : 'no slabs yet';

  return (
    <section aria-labelledby="trace-scrub-title" className="trace-scrub" data-testid="trace-scrub">
      <h3 id="trace-scrub-title">{cache.name}, event by event</h3>
      {error && (
        <div className="alert alert-error" role="alert">
          {error}
        </div>
      )}
      {!ops && !error && <p>Finding {cache.name}'s events…</p>}
      {ops && (
        <>
          <div className="lab-controls" role="toolbar" aria-label={`Scrub ${cache.name}`}>
            <button type="button" onClick={() => setK(Math.max(0, k - 1))} disabled={k === 0}>
              Back
            </button>
            <button type="button" onClick={() => setPlaying((x) => !x)} disabled={k >= n && !playing}>
              {playing ? 'Pause' : 'Play'}
            </button>
            <button type="button" onClick={() => setK(Math.min(n, k + 1))} disabled={k >= n} data-testid="trace-step">
              Step
            </button>
            <label className="trace-slider">
              Event{' '}
              <input type="range" min={0} max={n} value={k} onChange={(e) => (setPlaying(false), setK(Number(e.target.value)))} aria-valuetext={`${k} of ${n}`} data-testid="trace-slider" />
            </label>
            <span className="lab-position" data-testid="trace-position">
              {fmt(k)} of {fmt(n)} events{truncated ? ' (the first only)' : ''}
            </span>
            <form
              onSubmit={(e) => {
                e.preventDefault();
                const t = Number(timeText);
                if (Number.isFinite(t)) jumpTo(t0S + t);
              }}
            >
              <label>
                Time (s into the trace){' '}
                <input type="text" inputMode="decimal" size={8} value={timeText} onChange={(e) => setTimeText(e.target.value)} data-testid="trace-time" />
              </label>{' '}
              <button type="submit">Go</button>
            </form>
          </div>
          <p className="lab-caption" aria-live="polite" data-testid="trace-event">
            {words}
          </p>
          <p className="lab-figures" data-testid="trace-scrub-figures">
            {figures}
            {shown ? ` · fetched in ${shown.ms.toFixed(0)} ms` : ''}
          </p>
          {snap && <SlabsCanvas snap={snap} overlay={overlay} label={`${cache.name}'s model: ${figures}. ${words}`} />}
        </>
      )}
    </section>
  );
}
