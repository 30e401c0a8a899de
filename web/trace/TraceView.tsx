// TraceView.tsx - the trace mode (`?mode=trace`): a real kernel's kmem and
// percpu trace (ftrace text, gzip, or a .slabcap) replayed through the
// models in the bridge worker, a chunk of the file per request (the worker
// reads the File itself: trace-file.ts), with progress and Cancel; then the
// overview over time, the caches table, the parse accounting, the percpu
// chunk map, one cache's model scrubbed event by event with the SLUB view's
// drawing, and the exports.  A file that is refused, or a cancelled replay,
// leaves the previous result on screen.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { getBridge } from '../core/bridge';
import { numberText as fmt } from '../lab/describe';
import { downloadText } from '../lab/download';
import { feedFile } from '../lab/file-feed';
import { SortHeader } from '../lab/SortHeader';
import { usePageDrop } from '../lab/page-drop';
import { oneOf, text } from '../lab/params';
import { useParams } from '../lab/url-store';
import { errorText } from '../lab/use-step-lab';
import type { ViewProps } from '../lab/view';
import { parseKernelVersion } from '../slub/slub-api';
import { type ChunkMap } from './chunk-map';
import { CacheScrub, ChunkMapCanvas, OverviewChart } from './TraceParts';
import { COLUMNS, sortCaches } from './describe';
import type { ReplayCache } from './replay-api';
import type { TraceProgress, TraceReport } from './trace-file';
import '../lab/lab.css';
import './trace.css';

/** The kernel value meaning "the one the capture names" (the replay's default). */
const AS_CAPTURED = 'capture';

export const TRACE_PARAMS = {
  /** `sample=1`: load the bundled sample when the page opens. */
  sample: oneOf(['0', '1'], '0'),
  /** The kernel whose SLUB rules the models follow: `capture` (the capture's own), or X.Y from 4.3 to 7.x. */
  kernel: text((raw) => {
    if (raw === AS_CAPTURED) return null;
    try {
      parseKernelVersion(raw);
      return null;
    } catch {
      return `${AS_CAPTURED} (the kernel the trace was recorded on) or a version X.Y from 4.3 to 7.x`;
    }
  }, AS_CAPTURED),
};

/** The selector's choices: one kernel per SLUB era (docs/slub.md), beside the capture's own. */
const KERNEL_CHOICES = [
  [AS_CAPTURED, 'as captured'],
  ['4.4', '4.4 (frozen CPU partial slabs)'],
  ['6.17', '6.17 (per-CPU slab)'],
  ['6.18', '6.18 (opt-in sheaves)'],
  ['7.0', '7.0 (sheaves, no per-CPU slab)'],
] as const;

/** The bundled sample: the .slabcap recorded on this project's build machine (docs/replay.md). */
export const SAMPLE_URL = `${import.meta.env.BASE_URL}samples/capture-6.18.slabcap.gz`;
const SAMPLE_NAME = 'capture-6.18.slabcap.gz (the sample)';

interface Loaded {
  name: string;
  /** The file, kept to replay it again under another kernel. */
  file: Blob;
  session: number;
  report: TraceReport;
  chunks: ChunkMap | null;
  /** Wall time from opening to the report, on the page. */
  wallS: number;
}

interface Job {
  name: string;
  progress: TraceProgress | null;
  t0: number;
}

class Cancelled extends Error {}

const mb = (b: number) => `${(b / 1048576).toFixed(b < 10485760 ? 2 : 0)} MB`;
const rate = (n: number) => `${fmt(Math.round(n))} events/s`;

const dispose = (session: number) => void getBridge().request('dispose', { session }).catch(() => undefined);

export function TraceView({ core, store }: ViewProps) {
  const { values, update } = useParams(TRACE_PARAMS, store);
  const kernelOptions = useMemo(() => (values.kernel === AS_CAPTURED ? null : { kernel: values.kernel }), [values.kernel]);
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [job, setJob] = useState<Job | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [exporting, setExporting] = useState(false);
  const [cache, setCache] = useState<number | null>(null);
  const [seek, setSeek] = useState<{ t: number; n: number } | null>(null);
  const [scrubTime, setScrubTime] = useState<number | null>(null);
  const cancel = useRef(false);
  const running = useRef(false);
  const kept = useRef<Loaded | null>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  const ready = core.status === 'ready';

  // Leaving the view: a replay under way stops at its next chunk, the kept one is freed.
  useEffect(
    () => () => {
      cancel.current = true;
      if (kept.current) dispose(kept.current.session);
      kept.current = null;
    },
    [],
  );

  const open = useCallback(async (file: Blob, name: string, options: { kernel: string } | null) => {
    if (running.current) return;
    running.current = true;
    cancel.current = false;
    setProblem(null);
    const bridge = getBridge();
    const t0 = performance.now();
    setJob({ name, progress: null, t0 });
    let session = 0;
    try {
      session = (await bridge.request('fileOpen', { model: 'trace', file, options })).session;
      const p = await feedFile<TraceProgress>(bridge, session, file, (progress) => setJob({ name, progress, t0 }), () => cancel.current);
      if (!p) throw new Cancelled();
      if (p.error) throw new Error(p.error);
      const report = (await bridge.request('fileAsk', { session, question: { type: 'result' } })) as TraceReport;
      const maps = (await bridge.request('fileAsk', { session, question: { type: 'chunks' } })) as { unitSize: number; maps: (ArrayBuffer | null)[] };
      const chunks: ChunkMap | null = maps.unitSize
        ? {
            unitSize: maps.unitSize,
            chunks: maps.maps.flatMap((b, i) => {
              const c = report.result.percpu.chunks[i];
              return b && c ? [{ label: `chunk ${c.base} (${c.seen === 'created' ? 'created in the trace' : 'from before the trace'}${c.destroyed ? ', destroyed' : ''}) · ${fmt(c.live)} live areas`, granules: new Uint8Array(b) }] : [];
            }),
          }
        : null;
      if (kept.current) dispose(kept.current.session);
      kept.current = { name, file, session, report, chunks, wallS: (performance.now() - t0) / 1000 };
      setLoaded(kept.current);
      setCache(null);
      setScrubTime(null);
    } catch (e) {
      if (session) dispose(session);
      const keptNote = kept.current ? ` The previous trace (${kept.current.name}) is still shown.` : '';
      setProblem(e instanceof Cancelled ? `Cancelled the replay of ${name}.${keptNote}` : `Could not replay ${name}: ${errorText(e)}${keptNote}`);
    } finally {
      running.current = false;
      setJob(null);
    }
  }, []);

  const loadSample = useCallback(() => {
    fetch(SAMPLE_URL)
      .then((r) => {
        if (!r.ok) throw new Error(`the sample could not be fetched (HTTP ${r.status})`);
        return r.blob();
      })
      .then((b) => open(b, SAMPLE_NAME, kernelOptions))
      .catch((e: unknown) => setProblem(`Could not load the sample: ${errorText(e)}`));
  }, [open, kernelOptions]);

  // The whole page takes a dropped trace (web/lab/page-drop.ts); one dropped while another replays, or before the core is up, is refused in words.
  const dragging = usePageDrop((f) => {
    if (!ready) setProblem(`Could not replay ${f.name}: the core is still loading; drop it again in a moment.`);
    else if (running.current) setProblem(`${f.name} was not opened: a replay is under way (cancel it first).`);
    else void open(f, f.name, kernelOptions);
  });

  const autoSampled = useRef(false);
  useEffect(() => {
    if (!ready || values.sample !== '1' || autoSampled.current) return;
    autoSampled.current = true;
    loadSample();
  }, [ready, values.sample, loadSample]);

  const exportPerfetto = useCallback(async () => {
    if (!loaded) return;
    setExporting(true);
    try {
      const text = (await getBridge().request('fileAsk', { session: loaded.session, question: { type: 'perfetto' } })) as string;
      downloadText(`${loaded.name.replace(/ .*$/, '')}.perfetto.json`, text, 'application/json');
    } catch (e) {
      setProblem(`Could not export ${loaded.name}: ${errorText(e)}`);
    } finally {
      setExporting(false);
    }
  }, [loaded]);

  const p = job?.progress;
  const wall = job && p ? p.events / Math.max(1e-3, (performance.now() - job.t0) / 1000) : 0;
  const r = loaded?.report.result;
  const picked = r?.caches.find((c) => c.index === cache) ?? null;

  return (
    <section className="trace-view" aria-labelledby="trace-title" data-testid="trace-view">
      {dragging && (
        <div className="trace-drop-overlay" data-testid="trace-drop-overlay" aria-hidden="true">
          <p>Drop the trace anywhere to replay it</p>
        </div>
      )}
      <h2 id="trace-title">Kernel trace replay</h2>
      <p className="lede">
        Open a kmem/percpu trace recorded on a real kernel (ftrace text from <code>trace</code>, <code>trace_pipe</code> or{' '}
        <code>trace-cmd report</code>, plain or <code>.gz</code>, or a <code>.slabcap</code> from <code>slablab capture</code>), or drop
        one anywhere on this page. It is replayed through the SLUB and percpu models in the worker, a chunk at a time.
      </p>
      <div className="trace-open" role="group" aria-label="Open a trace">
        <button type="button" onClick={() => fileInput.current?.click()} disabled={!ready || !!job} data-testid="trace-open">
          Open a trace file…
        </button>
        <input
          ref={fileInput}
          type="file"
          accept=".txt,.gz,.slabcap,.dat,text/plain,application/gzip"
          className="visually-hidden"
          tabIndex={-1}
          aria-hidden="true"
          data-testid="trace-file-input"
          onChange={(e) => {
            const f = e.target.files?.[0];
            e.target.value = '';
            if (f) void open(f, f.name, kernelOptions);
          }}
        />
        <button type="button" onClick={loadSample} disabled={!ready || !!job} data-testid="trace-sample">
          Load the sample trace
        </button>
        <label>
          SLUB rules of Linux{' '}
          <select
            value={values.kernel}
            disabled={!ready || !!job}
            data-testid="trace-kernel"
            onChange={(e) => {
              const kernel = e.target.value;
              update({ kernel });
              // The trace on screen is replayed again under the kernel picked.
              if (loaded) void open(loaded.file, loaded.name, kernel === AS_CAPTURED ? null : { kernel });
            }}
          >
            {KERNEL_CHOICES.some(([v]) => v === values.kernel) ? null : <option value={values.kernel}>{values.kernel}</option>}
            {KERNEL_CHOICES.map(([v, label]) => (
              <option key={v} value={v}>
                {label}
              </option>
            ))}
          </select>
        </label>
        {job && (
          <button type="button" onClick={() => (cancel.current = true)} data-testid="trace-cancel">
            Cancel
          </button>
        )}
      </div>
      {job && (
        <div className="trace-progress" data-testid="trace-progress">
          <label>
            Replaying {job.name}{' '}
            <progress max={p?.size || 1} value={p?.bytesIn ?? 0} />
          </label>
          <p aria-live="polite">
            {p ? `${mb(p.bytesIn)} of ${mb(p.size)} · ${fmt(p.events)} events · ${rate(p.eventsPerS)} in the replay · ${rate(wall)} end to end` : 'starting…'}
          </p>
        </div>
      )}
      {problem && (
        <div className="alert alert-error" role="alert" data-testid="trace-error">
          {problem}
        </div>
      )}
      {!loaded && !job && <p className="trace-empty">No trace yet: open one, drop one here, or load the sample.</p>}
      {loaded && r && (
        <>
          <section
            aria-labelledby="trace-summary-title"
            className="trace-summary"
            data-testid="trace-summary"
            data-events={r.events.parsed}
            data-events-per-s={r.events_per_s}
            data-wall-s={loaded.wallS}
          >
            <h3 id="trace-summary-title">{loaded.name}</h3>
            <p>
              Kernel {r.capture?.kernel_release ?? 'unknown'} · modelled with the SLUB rules of <span data-testid="trace-model-kernel">{r.model.slub_kernel}</span>
              {r.model.sheaves.caches > 0 &&
                ` (sheaves in ${fmt(r.model.sheaves.caches)} caches: ${fmt(r.model.sheaves.alloc_cpu_sheaf + r.model.sheaves.free_cpu_sheaf)} allocs and frees at a CPU sheaf, ${fmt(r.model.sheaves.sheaf_refill)} refills, ${fmt(r.model.sheaves.sheaf_flush)} flushes)`}{' '}
              · {r.model.cpus} CPUs · {fmt(r.events.parsed)} events over{' '}
              {r.events.duration_s.toFixed(3)} s of trace · replayed at <strong data-testid="trace-rate">{rate(r.events_per_s)}</strong> ({rate(r.events.parsed / loaded.wallS)} end
              to end on this page) · model errors: {fmt(r.model.errors)}
            </p>
            <div className="trace-exports" role="group" aria-label="Export">
              <button type="button" data-testid="trace-export-json" onClick={() => downloadText(`${loaded.name.replace(/ .*$/, '')}.replay.json`, JSON.stringify(r, null, 2), 'application/json')}>
                Export the report (JSON)
              </button>
              <button type="button" data-testid="trace-export-perfetto" onClick={() => void exportPerfetto()} disabled={exporting}>
                {exporting ? 'Exporting…' : 'Export to Perfetto'}
              </button>
            </div>
            {r.model.error_list.length > 0 && (
              <ul className="trace-model-errors">
                {r.model.error_list.map((e, i) => (
                  <li key={i}>
                    line {e.line}: {e.message}
                  </li>
                ))}
              </ul>
            )}
          </section>
          <OverviewChart overview={loaded.report.overview} time={scrubTime} onPick={(t) => setSeek((s) => ({ t, n: (s?.n ?? 0) + 1 }))} />
          <CachesTable caches={r.caches} picked={cache} onPick={setCache} />
          {picked && <CacheScrub key={`${loaded.session}:${picked.index}`} session={loaded.session} cache={picked} t0S={loaded.report.overview.t0S} seek={seek} onTime={setScrubTime} />}
          <ParseAccounting report={loaded.report} />
          {loaded.chunks && loaded.chunks.chunks.length > 0 && <ChunkMapCanvas map={loaded.chunks} />}
        </>
      )}
    </section>
  );
}

function CachesTable({ caches, picked, onPick }: { caches: readonly ReplayCache[]; picked: number | null; onPick: (index: number) => void }) {
  const [sort, setSort] = useState<{ key: string; flip: boolean }>({ key: 'allocs', flip: false });
  const rows = useMemo(() => sortCaches(caches, sort.key, sort.flip), [caches, sort]);
  return (
    <section aria-labelledby="trace-caches-title" className="trace-caches">
      <h3 id="trace-caches-title">Caches</h3>
      <p className="lab-figures">Sort by a column with its header; pick a modelled cache to scrub through its slabs.</p>
      <div className="trace-table-scroll">
        <table className="lab-cache-table" data-testid="trace-caches">
          <thead>
            <tr>
              {COLUMNS.map((c) => (
                <SortHeader
                  key={c.key}
                  title={c.title}
                  dir={sort.key !== c.key ? 'none' : (c.key === 'name') !== sort.flip ? 'ascending' : 'descending'}
                  onSort={() => setSort((s) => ({ key: c.key, flip: s.key === c.key ? !s.flip : false }))}
                />
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((c) => (
              <tr key={c.index} className={c.index === picked ? 'picked' : undefined}>
                {COLUMNS.map((col, i) =>
                  i === 0 ? (
                    <th key={col.key} scope="row">
                      {c.modelled ? (
                        <button type="button" aria-pressed={c.index === picked} onClick={() => onPick(c.index)} title={`Scrub through ${c.name}'s slabs`}>
                          {c.name}
                        </button>
                      ) : (
                        <span title={`${c.type}: not modelled`}>{c.name}</span>
                      )}
                    </th>
                  ) : (
                    <td key={col.key}>{col.text(c)}</td>
                  ),
                )}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

function ParseAccounting({ report }: { report: TraceReport }) {
  const { events: e, pairs } = report.result;
  return (
    <section aria-labelledby="trace-parse-title" className="trace-parse" data-testid="trace-parse">
      <h3 id="trace-parse-title">Parse accounting</h3>
      <p>
        {fmt(e.lines)} lines: {fmt(e.parsed)} events parsed, {fmt(e.skipped)} skipped ({fmt(e.skipped_by_reason.header)} header,{' '}
        {fmt(e.skipped_by_reason.other_event)} other events, {fmt(e.skipped_by_reason.bad)} bad){e.lost ? ` · ${fmt(e.lost)} events lost by the ring buffer` : ''}.
        Pairs: {fmt(pairs.matched)} matched, {fmt(pairs.freed_unknown)} frees of objects allocated before the trace, {fmt(pairs.live_at_end)} live at the end,{' '}
        {fmt(pairs.untraced_frees)} untraced frees.
      </p>
      {report.result.alloc_contexts ? (
        <p>
          Allocation contexts (gfp_flags): {fmt(report.result.alloc_contexts.blocking)} may block, {fmt(report.result.alloc_contexts.nonblocking)} may
          not (replayed as GFP_ATOMIC, which on 7.x refills a sheaf as GFP_KERNEL does), {fmt(report.result.alloc_contexts.no_reclaim)} with no reclaim bit,{' '}
          {fmt(report.result.alloc_contexts.unknown)} unknown (replayed as GFP_KERNEL).
        </p>
      ) : null}
      <p className="lab-figures">
        By kind:{' '}
        {Object.entries(e.by_kind)
          .map(([k, n]) => `${k} ${fmt(n)}`)
          .join(' · ')}
      </p>
      {e.bad_lines.length > 0 && (
        <>
          <h4>Bad lines (the first {e.bad_lines.length})</h4>
          <ul>
            {e.bad_lines.map((b) => (
              <li key={b.line}>
                line {fmt(b.line)}: {b.reason}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
