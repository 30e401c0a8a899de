// LiveView.tsx - the live mode (`?mode=live`): connected to the
// `slablab serve` that served the page (the token in the URL), it shows
// allocations and frees per second per cache over the last minutes
// (stacked, the trace view's chart), live objects, slabs and waste per cache
// (/proc/slabinfo), remote frees, the busiest call sites; Pause freezes the
// picture and the slider (or a click on the chart) scrubs the last minutes.
// Picking a cache shows its last real snapshot (the kernel view's drawing)
// and how far the events explain the next one (pick.ts, check-api.ts).  The stream is
// read and counted in live.worker.ts; this thread only draws summaries.

import { useEffect, useMemo, useRef, useState } from 'react';
import { decodeKernelSnapshot, type KernelSnapshot } from '../kernel/snapshot-file';
import { CacheDetail } from '../kernel/CacheDetail';
import { numberText as fmt } from '../lab/describe';
import { text } from '../lab/params';
import { useParams } from '../lab/url-store';
import type { CoreState } from '../core/use-core';
import type { ViewProps } from '../lab/view';
import { OverviewChart } from '../trace/TraceParts';
import type { Overview } from '../trace/trace-file';
import { CAUSES, CAUSE_WORDS, PATHS, agreementWords } from './check-api';
import type { LiveSummary } from './live-state';
import type { AgreementPoint } from './pick';
import type { Connection, FromWorker, ToWorker } from './protocol';
import { liveHook, PAINTS } from './test-hook';
import type { Hello, Status } from './wire';
import './live.css';

const NAME = /^[A-Za-z0-9_.:()-]{1,31}$/;

export const LIVE_PARAMS = {
  /** The token `slablab serve` printed in its URL (hex). */
  token: text((raw) => (/^[0-9a-f]{16,64}$/.test(raw) ? null : 'the hex token slablab serve printed in its URL'), ''),
  /** The picked cache. */
  cache: text((raw) => (raw === '' || NAME.test(raw) ? null : 'a cache name (letters, digits, _ . : ( ) -)'), ''),
};

/** Seconds averaged for the table's rates, ending at the scrubbed second. */
const RATE_S = 5;

interface PickedView {
  cache: string;
  doc: KernelSnapshot | null;
  prev: KernelSnapshot | null;
  point: AgreementPoint | null;
  history: AgreementPoint[];
  logged: number;
  dropped: number;
  error: string | null;
}

const sum = (a: number[], from: number, to: number) => {
  let s = 0;
  for (let i = Math.max(0, from); i < Math.min(a.length, to); i++) s += a[i] ?? 0;
  return s;
};

const bytesText = (b: number) => (b >= 1 << 30 ? `${(b / (1 << 30)).toFixed(2)} GiB` : b >= 1 << 20 ? `${(b / (1 << 20)).toFixed(1)} MiB` : `${(b / 1024).toFixed(0)} KiB`);

export function LiveView({ store, core }: ViewProps) {
  const { values, update } = useParams(LIVE_PARAMS, store);
  const [conn, setConn] = useState<Connection>({ state: 'connecting', attempt: 0 });
  const [summary, setSummary] = useState<{ s: LiveSummary; status: Status | null; newestEventNs: number; sentAtMs: number } | null>(null);
  const [paused, setPaused] = useState(false);
  const [agoS, setAgoS] = useState(0);
  const [picked, setPicked] = useState<PickedView | null>(null);
  const worker = useRef<Worker | null>(null);
  const pausedRef = useRef(paused);
  pausedRef.current = paused;
  const pickedName = values.cache;

  useEffect(() => {
    const w = new Worker(new URL('./live.worker.ts', import.meta.url), { type: 'module', name: 'slablab-live' });
    worker.current = w;
    const send = (m: ToWorker) => w.postMessage(m);
    w.onmessage = (e: MessageEvent<FromWorker>) => {
      const m = e.data;
      if (m.type === 'connection') setConn(m.c);
      else if (m.type === 'summary') {
        if (!pausedRef.current) setSummary({ s: m.s, status: m.status, newestEventNs: m.newestEventNs, sentAtMs: m.sentAtMs });
      } else if (m.type === 'snapshot') {
        let doc: KernelSnapshot | null = null;
        let error: string | null = null;
        try {
          doc = decodeKernelSnapshot(m.text);
        } catch (err) {
          error = (err as Error).message;
        }
        if (m.point) liveHook().agreement = { cache: m.cache, a: m.point.a, events: m.point.events, lost: m.point.lost, windowS: (m.point.atNs - m.point.sinceNs) / 1e9 };
        setPicked((p) => ({ cache: m.cache, doc, prev: p?.cache === m.cache ? p.doc : null, point: m.point, history: m.history, logged: m.logged, dropped: m.dropped, error: error ?? m.error }));
      } else if (m.type === 'picked') {
        setPicked((p) => (m.cache === null ? null : { cache: m.cache, doc: p?.cache === m.cache ? p.doc : null, prev: p?.cache === m.cache ? p.prev : null, point: p?.cache === m.cache ? p.point : null, history: p?.cache === m.cache ? p.history : [], logged: m.logged, dropped: m.dropped, error: m.error }));
      }
    };
    send({ type: 'connect', token: values.token });
    return () => {
      send({ type: 'close' });
      w.terminate();
      worker.current = null;
    };
    // The token is read once: a new token means a new page load.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    worker.current?.postMessage({ type: 'pick', cache: pickedName || null } satisfies ToWorker);
  }, [pickedName]);

  // Event-to-pixel: the frame after a summary is committed is the one that shows it.
  useEffect(() => {
    if (!summary?.newestEventNs) return;
    const eventNs = summary.newestEventNs;
    const sentWallMs = summary.sentAtMs;
    const id = requestAnimationFrame(() => {
      const paints = liveHook().paints;
      paints.push({ eventNs, sentWallMs, paintWallMs: performance.timeOrigin + performance.now() });
      if (paints.length > PAINTS) paints.splice(0, paints.length - PAINTS);
    });
    return () => cancelAnimationFrame(id);
  }, [summary]);

  const s = summary?.s ?? null;
  const status = summary?.status ?? null;
  const at = s ? s.bins - 1 - agoS : 0;
  const overview = useMemo<Overview | null>(() => {
    if (!s || s.caches.length === 0) return null;
    const top = s.caches.slice(0, 8);
    const rest = s.caches.slice(8);
    const series = top.map((c) => ({ name: c.name, allocs: c.allocs, frees: c.frees }));
    if (rest.length) {
      series.push({
        name: 'other',
        allocs: Array.from({ length: s.bins }, (_, i) => rest.reduce((x, c) => x + (c.allocs[i] ?? 0), 0)),
        frees: Array.from({ length: s.bins }, (_, i) => rest.reduce((x, c) => x + (c.frees[i] ?? 0), 0)),
      });
    }
    return { t0S: 0, binS: 1, bins: s.bins, series };
  }, [s]);
  const info = useMemo(() => new Map((s?.slabinfo ?? []).map((r) => [r.name, r])), [s]);
  const rows = useMemo(
    () =>
      (s?.caches ?? [])
        .map((c) => {
          const from = at - RATE_S + 1;
          const allocs = sum(c.allocs, from, at + 1) / RATE_S;
          const frees = sum(c.frees, from, at + 1) / RATE_S;
          const remote = sum(c.remote, from, at + 1) / RATE_S;
          const r = info.get(c.name);
          const slabBytes = r ? r.slabs * r.pagesPerSlab * 4096 : 0;
          return { name: c.name, allocs, frees, remote, r, waste: r ? slabBytes - r.active * r.objsize : 0 };
        })
        .sort((a, b) => b.allocs + b.frees - (a.allocs + a.frees)),
    [s, at, info],
  );

  const pick = (name: string) => update({ cache: name === pickedName ? '' : name });
  const live = conn.state === 'live';

  return (
    <section className="live-view" aria-labelledby="live-title" data-testid="live-view">
      <h2 id="live-title">Live kernel</h2>
      <p className="lede">
        The running kernel's slab allocations and frees, streamed by <code>slablab serve</code> from the kmem and percpu tracepoints (BPF), with real snapshots of the cache you pick
        and how far the events explain them.
      </p>
      <ConnectionBanner conn={conn} />
      {s && (
        <p className="lab-figures" data-testid="live-figures">
          {fmt(s.events)} events · {bytesText(s.bytes)} received · lost in the kernel ring {fmt(s.kernelLost)} · dropped by the server {fmt(s.serverDropped)} · dropped by the page{' '}
          {fmt(s.pageDropped + (picked?.dropped ?? 0))}
          {s.ownByContext !== null && (
            <span data-testid="live-own" title={s.ownNote}>
              {' '}
              · left out as the server's own {fmt(s.serverOwn)}
              {s.ownByContext ? ' (its process-context work)' : ` (every event while it runs, interrupt work included: ${s.ownNote})`}
            </span>
          )}
          {s.snapshotsDropped ? ` · snapshots dropped ${fmt(s.snapshotsDropped)}` : ''}
          {status?.error ? ` · server: ${status.error}` : ''}
        </p>
      )}
      <div className="live-controls" role="group" aria-label="Time">
        <button type="button" onClick={() => setPaused((p) => !p)} aria-pressed={paused} data-testid="live-pause" disabled={!s}>
          {paused ? 'Resume' : 'Pause'}
        </button>
        <label>
          Rates at{' '}
          <input
            type="range"
            min={0}
            max={(s?.bins ?? 300) - RATE_S}
            value={(s?.bins ?? 300) - RATE_S - agoS}
            onChange={(e) => setAgoS((s?.bins ?? 300) - RATE_S - Number(e.target.value))}
            aria-valuetext={agoS === 0 ? 'now' : `${agoS} s ago`}
            data-testid="live-scrub"
            disabled={!s}
          />{' '}
          <output data-testid="live-scrub-text">{agoS === 0 ? 'now' : `${agoS} s ago`}</output>
        </label>
        {agoS !== 0 && (
          <button type="button" onClick={() => setAgoS(0)}>
            Now
          </button>
        )}
      </div>
      {overview ? (
        <OverviewChart overview={overview} time={at} onPick={(t) => setAgoS(Math.max(0, Math.min(s ? s.bins - RATE_S : 0, Math.round((s?.bins ?? 0) - 1 - t))))} />
      ) : (
        live && <p>No allocation seen yet.</p>
      )}
      {rows.length > 0 && (
        <section aria-labelledby="live-caches-title" className="live-caches">
          <h3 id="live-caches-title">Caches {agoS ? `${agoS} s ago` : 'now'}</h3>
          <p className="lab-figures">
            Rates over {RATE_S} s; live objects, slabs and waste from /proc/slabinfo (latest); remote frees: freed on another CPU than the one that allocated them (among objects whose
            allocation the page saw). Pick a cache to see its real slabs and the agreement.
          </p>
          <div className="live-table-scroll" tabIndex={0} role="region" aria-label="Caches table">
            <table data-testid="live-caches">
              <thead>
                <tr>
                  <th scope="col">cache</th>
                  <th scope="col">allocs/s</th>
                  <th scope="col">frees/s</th>
                  <th scope="col">remote frees/s</th>
                  <th scope="col">live objects</th>
                  <th scope="col">slabs</th>
                  <th scope="col">waste</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((c) => (
                  <tr key={c.name} className={c.name === pickedName ? 'picked' : undefined}>
                    <th scope="row">
                      {NAME.test(c.name) ? (
                        <button type="button" aria-pressed={c.name === pickedName} onClick={() => pick(c.name)} data-testid={`live-pick-${c.name}`}>
                          {c.name}
                        </button>
                      ) : (
                        c.name
                      )}
                    </th>
                    <td>{fmt(Math.round(c.allocs))}</td>
                    <td>{fmt(Math.round(c.frees))}</td>
                    <td>{fmt(Math.round(c.remote))}</td>
                    <td>{c.r ? fmt(c.r.active) : '—'}</td>
                    <td>{c.r ? fmt(c.r.slabs) : '—'}</td>
                    <td>{c.r ? bytesText(c.waste) : '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      {s && s.sites.length > 0 && (
        <section aria-labelledby="live-sites-title" className="live-sites">
          <h3 id="live-sites-title">Busiest call sites</h3>
          <p className="lab-figures">Events over about the last 10 s (counts halve every 10 s).</p>
          <div className="live-table-scroll" tabIndex={0} role="region" aria-label="Call sites table">
            <table data-testid="live-sites">
              <thead>
                <tr>
                  <th scope="col">call site</th>
                  <th scope="col">cache</th>
                  <th scope="col">allocs</th>
                  <th scope="col">frees</th>
                </tr>
              </thead>
              <tbody>
                {s.sites.map((x) => (
                  <tr key={x.name}>
                    <th scope="row">
                      <code>{x.name}</code>
                    </th>
                    <td>{x.cache}</td>
                    <td>{fmt(Math.round(x.allocs))}</td>
                    <td>{fmt(Math.round(x.frees))}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      )}
      {picked && (
        <PickedPanel
          core={core}
          p={picked}
          interval={conn.state === 'live' ? conn.hello.snapshot_interval : 0}
          recording={conn.state === 'live' && conn.hello.source === 'recording'}
        />
      )}
    </section>
  );
}

/** What the banner says of a recording: the file, its size, how it is played. */
function recordingText(h: Hello): string {
  const r = h.recording;
  if (!r) return '';
  const pace = r.pace === 'recorded' ? 'at its recorded pace' : r.pace === 'max' ? 'as fast as the server goes' : `at ${fmt(r.pace)} events a second`;
  return `: ${r.file}, ${fmt(r.events)} events over ${r.span_s.toFixed(1)} s and ${r.snapshots} snapshot${r.snapshots === 1 ? '' : 's'}, played ${pace}${r.loop ? ' in a loop' : ''}${r.lost ? ` (${fmt(r.lost)} events were lost while recording)` : ''}`;
}

function ConnectionBanner({ conn }: { conn: Connection }) {
  if (conn.state === 'live' && conn.hello.source === 'recording')
    return (
      <p className="live-conn live-conn-up" role="status" data-testid="live-connection">
        Connected to a <strong>recording</strong> of Linux {conn.hello.release} ({conn.hello.nr_cpus} CPUs){recordingText(conn.hello)}. Not this
        machine&apos;s kernel: <code>slablab serve --from</code>.
      </p>
    );
  if (conn.state === 'live')
    return (
      <p className="live-conn live-conn-up" role="status" data-testid="live-connection">
        Connected to Linux {conn.hello.release} ({conn.hello.nr_cpus} CPUs){conn.hello.filtered ? ', a --caches filter applies' : ''}.
      </p>
    );
  if (conn.state === 'connecting')
    return (
      <p className="live-conn" role="status" data-testid="live-connection">
        Connecting to slablab serve{conn.attempt > 1 ? ` (attempt ${conn.attempt})` : ''}…
      </p>
    );
  return (
    <div className="live-conn live-conn-down" role="status" data-testid="live-connection">
      <p>
        <strong>Disconnected</strong>: {conn.why}.{conn.retryS !== null ? ` Trying again in ${conn.retryS} s.` : ''}
      </p>
      <p>
        Nothing is streaming. On the machine to watch (Linux 6.13+, root), run <code>sudo slablab serve</code> and open the URL it prints
        (<code>http://127.0.0.1:7683/?mode=live&amp;token=…</code>); this page must be the one it serves.
      </p>
    </div>
  );
}

function PickedPanel({ core, p, interval, recording }: { core: CoreState; p: PickedView; interval: number; recording: boolean }) {
  const c = p.doc?.caches.find((x) => x.name === p.cache) ?? null;
  const a = p.point?.a ?? null;
  return (
    <section className="live-picked" aria-labelledby="live-picked-title" data-testid="live-picked">
      <h3 id="live-picked-title">{p.cache}: the real state and the events</h3>
      <p className="lab-figures">
        {recording ? "The recording's snapshots, where they were taken (its start and end)" : `A real snapshot every ${interval || '—'} s`}; {fmt(p.logged)} events of {p.cache} since the last one{p.dropped ? ` (${fmt(p.dropped)} dropped: the page keeps at most 1,000,000)` : ''}.
        The SLUB model (the core's C, the rules of the kernel's version) is seeded from a snapshot, driven by each allocation and free
        in time order (its own choice of object compared with the kernel's), and compared with the next snapshot.
      </p>
      {p.error && (
        <p className="alert alert-error" role="alert">
          {p.error}
        </p>
      )}
      {!c && !p.error && <p data-testid="live-picked-waiting">Waiting for the first snapshot of {p.cache}…</p>}
      {c && !a && <p data-testid="live-agreement-waiting">The first snapshot is in; the agreement comes with the next one.</p>}
      {a && p.point && (
        <div data-testid="live-agreement">
          <p>
            <strong>Agreement</strong> (Linux {a.kernel_rules}&apos;s SLUB rules): {agreementWords(a)} ({fmt(p.point.events)} events applied in the window, {fmt(p.point.lost)} lost).
          </p>
          <p className="lab-figures" data-testid="live-agreement-detail">
            Slabs whose list matches: {fmt(a.slabs_list_agreeing)}; whose inuse matches: {fmt(a.slabs_inuse_agreeing)}; listed by the model only: {fmt(a.model_only_listed)}. Allocations predicted by path:{' '}
            {PATHS.filter((k) => a.paths[k].allocs > 0)
              .map((k) => `${k} ${fmt(a.paths[k].hits)} of ${fmt(a.paths[k].allocs)}`)
              .join(', ') || '—'}
            ; {fmt(a.corrections)} objects and {fmt(a.cpu_slab_corrections)} CPU slabs corrected after a miss.
          </p>
          {(a.objects_agreeing < a.objects_compared || a.slabs_agreeing < a.slabs_compared) && (
            <ul className="live-causes" aria-label="Where they differ">
              {CAUSES.filter((k) => a.causes[k] > 0 || a.slab_causes[k] > 0).map((k) => (
                <li key={k}>
                  {fmt(a.causes[k])} objects ({fmt(a.slab_causes[k])} slabs): {CAUSE_WORDS[k]}
                </li>
              ))}
            </ul>
          )}
          <p className="lab-figures">
            History (slabs agreeing):{' '}
            {p.history.map((h) => (h.a.slabs_compared ? `${Math.round((100 * h.a.slabs_agreeing) / h.a.slabs_compared)} %` : '—')).join(' · ')}
            {a.notes ? ` Seed notes: ${a.notes}.` : ''}
          </p>
        </div>
      )}
      {p.doc && c && <CacheDetail core={core} doc={p.doc} cache={c} compare={p.prev ? { name: 'the previous snapshot', doc: p.prev } : null} />}
    </section>
  );
}
