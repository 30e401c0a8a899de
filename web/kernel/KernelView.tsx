// KernelView.tsx - "Your kernel" (`?mode=kernel`): a real kernel's slab
// state, from a snapshot `slablab snapshot` wrote (docs/kernel-view.md).
// Open one (the button, or drop a file anywhere on the page), or the bundled
// sample (`sample=1`); a second one (`compare=1` for the sample's second)
// turns on the diff.  First: where the memory goes, every cache a row
// (MemoryTable); a cache picked (`cache=NAME`) is drawn as it is
// (CacheDetail).  A file that is refused leaves everything on screen as it
// was and says what is wrong with it.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { numberText as fmt } from '../lab/describe';
import { oneOf, text } from '../lab/params';
import { useParams } from '../lab/url-store';
import type { ViewProps } from '../lab/view';
import { bytesText, snapshotMemory, SORT_KEYS, totals, type SortKey } from './accounting';
import { CacheDetail } from './CacheDetail';
import { DiffPanel } from './DiffPanel';
import { Legend, MemoryTable } from './MemoryTable';
import { looksLikeSlabcap, slabcapSnapshots, SNAPSHOT_MEMBERS } from './slabcap';
import { decodeKernelSnapshot, type KernelSnapshot } from './snapshot-file';
import '../lab/lab.css';
import './kernel.css';

export const KERNEL_PARAMS = {
  /** `sample=1`: open the bundled snapshot when the page opens. */
  sample: oneOf(['0', '1'], '0'),
  /** `compare=1` (with sample=1): also open the sample's second snapshot, for the diff. */
  compare: oneOf(['0', '1'], '0'),
  /** The cache drawn ('' for none). */
  cache: text((raw) => (raw.length <= 64 && !/[\s<>]/.test(raw) ? null : 'a cache name (up to 64 characters, no spaces)'), ''),
  /** The memory table's order. */
  sort: oneOf(SORT_KEYS, 'memory'),
};

/** The bundled samples: two snapshots of this project's build machine, before and after a workload (docs/kernel-view.md). */
export const SAMPLE_URLS = [`${import.meta.env.BASE_URL}samples/snapshot-6.18.json`, `${import.meta.env.BASE_URL}samples/snapshot-6.18-b.json`] as const;
const SAMPLE_NAMES = ['snapshot-6.18.json (the sample)', 'snapshot-6.18-b.json (the sample, after a workload)'] as const;

interface Opened {
  name: string;
  doc: KernelSnapshot;
}

type Which = 'main' | 'compare';

/** The snapshots in a file: one for a snapshot's JSON, the start and (if there) end snapshots of a .slabcap. */
async function readSnapshots(file: Blob, name: string): Promise<Opened[]> {
  if (!looksLikeSlabcap(new Uint8Array(await file.slice(0, 512).arrayBuffer()))) return [{ name, doc: decodeKernelSnapshot(await file.arrayBuffer()) }];
  const members = await slabcapSnapshots(file);
  return SNAPSHOT_MEMBERS.flatMap((member) => {
    const bytes = members.get(member);
    if (!bytes) return [];
    try {
      return [{ name: `${name}: ${member}`, doc: decodeKernelSnapshot(bytes) }];
    } catch (e) {
      throw new Error(`${member}: ${errorWords(e)}`, { cause: e });
    }
  });
}

const errorWords = (e: unknown) => (e instanceof Error ? e.message : String(e));

export function KernelView({ store, core }: ViewProps) {
  const { values, update } = useParams(KERNEL_PARAMS, store);
  const [main, setMain] = useState<Opened | null>(null);
  const [other, setOther] = useState<Opened | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [flip, setFlip] = useState(false);
  const mainInput = useRef<HTMLInputElement>(null);
  const otherInput = useRef<HTMLInputElement>(null);
  const mainRef = useRef<Opened | null>(null);
  mainRef.current = main;

  const open = useCallback(async (file: Blob, name: string, which: Which) => {
    setBusy(true);
    try {
      const [first, second] = await readSnapshots(file, name);
      if (!first) throw new Error('no snapshot in it');
      setProblem(null);
      // A .slabcap's two snapshots are compared with each other; as the second file, its last one is taken.
      if (which === 'main') {
        setMain(first);
        setOther(second ?? null);
      } else setOther(second ?? first);
    } catch (e) {
      const kept = which === 'main' ? mainRef.current : null;
      setProblem(`Could not open ${name}: ${errorWords(e)}.${kept ? ` Still showing ${kept.name}.` : ''}`);
    } finally {
      setBusy(false);
    }
  }, []);

  const loadSample = useCallback(
    (k: 0 | 1) =>
      fetch(SAMPLE_URLS[k])
        .then((r) => {
          if (!r.ok) throw new Error(`the sample could not be fetched (HTTP ${r.status})`);
          return r.blob();
        })
        .then((b) => open(b, SAMPLE_NAMES[k], k === 0 ? 'main' : 'compare'))
        .catch((e: unknown) => setProblem(`Could not load the sample: ${errorWords(e)}`)),
    [open],
  );

  const autoSampled = useRef(false);
  useEffect(() => {
    if (autoSampled.current) return;
    autoSampled.current = true;
    if (values.sample === '1') void loadSample(0).then(() => (values.compare === '1' ? loadSample(1) : undefined));
  }, [values.sample, values.compare, loadSample]);

  // A file dropped anywhere on the page: the first snapshot, or the second once one is open (Shift: always the first).
  useEffect(() => {
    const over = (e: DragEvent) => {
      if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
    };
    const drop = (e: DragEvent) => {
      const f = e.dataTransfer?.files[0];
      if (!f) return;
      e.preventDefault();
      void open(f, f.name, mainRef.current && !e.shiftKey ? 'compare' : 'main');
    };
    window.addEventListener('dragover', over);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragover', over);
      window.removeEventListener('drop', drop);
    };
  }, [open]);

  const rows = useMemo(() => (main ? snapshotMemory(main.doc) : []), [main]);
  const sum = useMemo(() => totals(rows), [rows]);
  const picked = main?.doc.caches.find((c) => c.name === values.cache) ?? null;
  const pick = useCallback((name: string) => update({ cache: name }), [update]);
  const sortBy = useCallback(
    (key: SortKey) => {
      if (key === values.sort) setFlip(!flip);
      else {
        setFlip(false);
        update({ sort: key });
      }
    },
    [values.sort, flip, update],
  );

  const fileInput = (ref: React.RefObject<HTMLInputElement | null>, which: Which, testId: string) => (
    <input
      ref={ref}
      type="file"
      accept=".json,.slabcap,.gz,application/json,application/gzip"
      className="visually-hidden"
      tabIndex={-1}
      aria-hidden="true"
      data-testid={testId}
      onChange={(e) => {
        const f = e.target.files?.[0];
        e.target.value = '';
        if (f) void open(f, f.name, which);
      }}
    />
  );

  const k = main?.doc.kernel;
  return (
    <section className="kernel-view" aria-labelledby="kernel-title" data-testid="kernel-view">
      <h2 id="kernel-title">Your kernel, now</h2>
      <p className="lede">
        A running kernel's real slabs, read by <code>sudo slablab snapshot -o snap.json</code> (BPF; Linux 6.13 or later, root). Open the file or drop it anywhere on this
        page; a second one is compared with the first. A <code>.slabcap</code> from <code>slablab capture</code> opens its two snapshots, before and after its trace.
      </p>
      <div className="kernel-open" role="group" aria-label="Open snapshots">
        <button type="button" onClick={() => mainInput.current?.click()} disabled={busy} data-testid="kernel-open">
          Open a snapshot…
        </button>
        {fileInput(mainInput, 'main', 'kernel-file-input')}
        <button type="button" onClick={() => void loadSample(0)} disabled={busy} data-testid="kernel-sample">
          Load the sample
        </button>
        {main && (
          <>
            <button type="button" onClick={() => otherInput.current?.click()} disabled={busy} data-testid="kernel-compare-open">
              Compare with a second snapshot…
            </button>
            {fileInput(otherInput, 'compare', 'kernel-compare-input')}
            <button type="button" onClick={() => void loadSample(1)} disabled={busy} data-testid="kernel-compare-sample">
              Compare with the sample's second snapshot
            </button>
          </>
        )}
        {other && (
          <button type="button" onClick={() => setOther(null)} data-testid="kernel-compare-close">
            Close the comparison
          </button>
        )}
      </div>
      {problem && (
        <div className="alert alert-error" role="alert" data-testid="kernel-error">
          {problem}
        </div>
      )}
      {!main && <p className="kernel-empty">No snapshot yet: open one, drop one here, or load the sample.</p>}
      {main && k && (
        <>
          <section aria-labelledby="kernel-summary-title" className="kernel-summary" data-testid="kernel-summary">
            <h3 id="kernel-summary-title">{main.name}</h3>
            <p>
              Linux {k.release} · {k.nrCpus} CPUs · {k.nrNodes} node{k.nrNodes === 1 ? '' : 's'} · {k.features.cpuSlab ? 'per-CPU slabs' : 'no per-CPU slab'}
              {k.features.sheaves ? ', sheaves' : ''} · taken {main.doc.takenAt} in {(main.doc.durationNs / 1e6).toFixed(1)} ms ·{' '}
              <strong data-testid="kernel-total">
                {fmt(rows.length)} caches, {bytesText(sum.slabBytes)} in {fmt(sum.slabs)} slabs
              </strong>{' '}
              · {fmt(sum.inUse)} of {fmt(sum.objects)} objects in use · {bytesText(sum.wasteBytes)} free in partial slabs
            </p>
          </section>
          {other && <DiffPanel a={main} b={other} onPick={pick} />}
          <section aria-labelledby="kernel-memory-title" className="kernel-memory">
            <h3 id="kernel-memory-title">Where the memory goes</h3>
            <Legend />
            <MemoryTable rows={rows} sort={{ key: values.sort, flip }} onSort={sortBy} picked={values.cache} onPick={pick} />
          </section>
          {values.cache && !picked && (
            <p className="kernel-empty" role="status">
              This snapshot has no cache named {values.cache}.
            </p>
          )}
          {picked && <CacheDetail key={`${main.name}/${picked.name}`} core={core} doc={main.doc} cache={picked} compare={other} />}
        </>
      )}
    </section>
  );
}
