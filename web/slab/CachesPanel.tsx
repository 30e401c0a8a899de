// CachesPanel.tsx - "Your kernel's caches": seed 002's table for a real
// kernel.  It takes a /proc/slabinfo file or a tar of /sys/kernel/slab
// (picked or dropped), or one of the bundled files (this project's machine's
// sysfs, a Linux 5.4.54 SLAB kernel's slabinfo), has the core compute each
// cache's management type, order, objects per slab and waste under both rule
// sets (the slab-types query: the same code as `slablab slab-types`), and
// lists every cache, sortable, with the seed's totals line.  A click on a
// cache opens its slab layout in the view above.  A bad file gets a message
// naming the line (or the tar member), and the table before it stays.

import { useMemo, useState } from 'react';
import { BridgeError, getBridge } from '../core/bridge';
import { SortHeader } from '../lab/SortHeader';
import { errorText } from '../lab/use-step-lab';
import type { TypesQuery } from './protocol';
import { CACHE_FLAGS, type CacheFlag, type SlabTypesCache, type SlabTypesReport, type SlabTypesTotals } from './slab-api';
import { readTar, sysfsCacheList } from './tar';

/** Files served with the site (vite.config.ts's slab fixtures). */
export const BUNDLED = [
  { file: 'fixtures/slab/sysfs-6.18.tar', label: "This project's machine (Linux 6.18, SLUB): its /sys/kernel/slab" },
  { file: 'fixtures/slab/slabinfo-5.4.54-slab.txt', label: 'A SLAB kernel (Linux 5.4.54): its /proc/slabinfo' },
] as const;

export interface OpenCache {
  name: string;
  size: number;
  align: number;
  flags: CacheFlag[];
}

type SortKey = 'name' | 'size' | 'before' | 'after' | 'order' | 'num' | 'wasteBefore' | 'wasteAfter' | 'match';
const COLUMNS: { key: SortKey; title: string }[] = [
  { key: 'name', title: 'cache' },
  { key: 'size', title: 'object size' },
  { key: 'before', title: 'before OBJFREELIST' },
  { key: 'after', title: 'after OBJFREELIST' },
  { key: 'order', title: 'order' },
  { key: 'num', title: 'objects per slab' },
  { key: 'wasteBefore', title: 'bytes wasted per slab before' },
  { key: 'wasteAfter', title: 'bytes wasted per slab after' },
];

function sortValue(c: SlabTypesCache, k: SortKey): string | number {
  switch (k) {
    case 'name':
      return c.name;
    case 'size':
      return c.object_size;
    case 'before':
      return c.before?.type ?? '';
    case 'after':
      return c.after?.type ?? '';
    case 'order':
      return c.after?.order ?? 0;
    case 'num':
      return c.after?.objs_per_slab ?? 0;
    case 'wasteBefore':
      return c.before?.waste ?? 0;
    case 'wasteAfter':
      return c.after?.waste ?? 0;
    case 'match':
      return c.match === null ? -1 : c.match ? 1 : 0;
  }
}

const totalsLine = (t: SlabTypesTotals | undefined) => (t ? `${t.total} = ${t.objfreelist} + ${t.normal_leftover} + ${t.normal} + ${t.off}` : '–');
const flagNames = (bits: number) => (Object.keys(CACHE_FLAGS) as CacheFlag[]).filter((f) => bits & CACHE_FLAGS[f]);

/** A file's text for the core: a slabinfo as it is, a tar turned into the cache list. */
async function queryOf(name: string, bytes: Uint8Array, kernel: string, cpus: number): Promise<TypesQuery> {
  const isTar = name.endsWith('.tar') || new TextDecoder('latin1').decode(bytes.subarray(257, 262)) === 'ustar';
  if (!isTar) return { kind: 'types', text: new TextDecoder().decode(bytes), format: 'slabinfo', kernel, cpus, source: name };
  return { kind: 'types', text: sysfsCacheList(readTar(bytes)).text, format: 'caches', kernel, cpus, source: name };
}

export function CachesPanel({ kernel, cpus: viewCpus, onOpen }: { kernel: string; cpus: number; onOpen: (c: OpenCache) => void }) {
  const [report, setReport] = useState<SlabTypesReport | null>(null);
  const [problem, setProblem] = useState('');
  const [busy, setBusy] = useState(false);
  const [cpus, setCpus] = useState(viewCpus);
  const [sort, setSort] = useState<{ key: SortKey; up: boolean }>({ key: 'name', up: true });

  const load = async (name: string, bytes: () => Promise<Uint8Array>) => {
    setBusy(true);
    try {
      const query = await queryOf(name, await bytes(), kernel, cpus);
      const r = (await getBridge().request('query', { model: 'slab', query })) as SlabTypesReport;
      setReport(r);
      setProblem('');
    } catch (e) {
      // A file the core refuses is the request's fault: its message names the line.
      setProblem(`${name}: ${e instanceof BridgeError && e.code === 'bad-request' ? e.message : errorText(e)}`);
    } finally {
      setBusy(false);
    }
  };
  const loadFile = (f: File | undefined) => f && void load(f.name, async () => new Uint8Array(await f.arrayBuffer()));
  const loadBundled = (file: string) =>
    void load(file.slice(file.lastIndexOf('/') + 1), async () => {
      const r = await fetch(file);
      if (!r.ok) throw new Error(`could not fetch it (HTTP ${r.status})`);
      return new Uint8Array(await r.arrayBuffer());
    });

  const rows = useMemo(() => {
    const cs = [...(report?.caches ?? [])];
    const dir = sort.up ? 1 : -1;
    return cs.sort((a, b) => {
      const x = sortValue(a, sort.key);
      const y = sortValue(b, sort.key);
      return (x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : 1) * dir;
    });
  }, [report, sort]);
  const compared = (report?.compared ?? 0) > 0;
  const columns = compared ? [...COLUMNS, { key: 'match' as const, title: 'the kernel says' }] : COLUMNS;

  return (
    <section className="panel slab-caches" aria-labelledby="slab-caches-title" data-testid="slab-caches">
      <h2 id="slab-caches-title">Your kernel's caches</h2>
      <p>
        Seed 002's table for a real kernel: every cache's management type before and after OBJFREELIST_SLAB, as SLAB {kernel} would lay it out. Give it your{' '}
        <code>/proc/slabinfo</code> (<code>sudo cat /proc/slabinfo &gt; slabinfo.txt</code>) or a tar of <code>/sys/kernel/slab</code> (
        <code>sudo tar -C /sys/kernel -cf slab.tar slab</code>, the better input: it has each cache's object size and flags; slabinfo has only the buffer
        size). Nothing leaves the page.
      </p>
      <div
        className="bench-drop"
        data-testid="slab-caches-drop"
        onDragOver={(e) => e.preventDefault()}
        onDrop={(e) => {
          e.preventDefault();
          loadFile(e.dataTransfer.files[0]);
        }}
      >
        <label>
          A slabinfo or a sysfs tar: <input
            type="file"
            accept=".txt,.tar,text/plain,application/x-tar"
            onChange={(e) => {
              loadFile(e.target.files?.[0]);
              e.target.value = ''; // the same file picked again (edited since) is read again
            }}
          />
        </label>{' '}
        or drop it here, or take{' '}
        {BUNDLED.map((b) => (
          <button key={b.file} type="button" disabled={busy} onClick={() => loadBundled(b.file)}>
            {b.label}
          </button>
        ))}
        <label className="nowrap">
          {' '}
          CPUs <input type="number" min={1} max={64} value={cpus} aria-label="CPUs of that machine" onChange={(e) => setCpus(Math.max(1, Math.min(64, Math.floor(Number(e.target.value)) || 1)))} />
        </label>
      </div>
      {problem && (
        <p role="alert" className="fail" data-testid="slab-caches-problem">
          {problem}
        </p>
      )}
      {report && (
        <>
          <p data-testid="slab-caches-source">
            {report.source}: {report.caches.length} caches, SLAB {report.kernel}, {report.cpus} CPU{report.cpus === 1 ? '' : 's'}
            {compared ? `; the file is a SLAB kernel's: ${report.matched} of ${report.compared} caches match its order, objects per slab, limit, batchcount and sharedfactor` : ''}.
          </p>
          <table className="slab-totals" data-testid="slab-totals" aria-label="The seed's totals">
            <thead>
              <tr>
                <th scope="col" />
                <th scope="col">TOTAL = OBJFREELIST + NORMAL(leftover) + NORMAL + OFF</th>
              </tr>
            </thead>
            <tbody>
              <tr>
                <th scope="row">/Before/</th>
                <td>{totalsLine(report.totals.before)}</td>
              </tr>
              <tr>
                <th scope="row">/After/</th>
                <td>{totalsLine(report.totals.after)}</td>
              </tr>
            </tbody>
          </table>
          <div className="slab-caches-scroll">
            <table className="per-cpu" data-testid="slab-caches-table">
              <caption>Click a cache to see its slab layout above, before and after side by side.</caption>
              <thead>
                <tr>
                  {columns.map((c) => (
                    <SortHeader
                      key={c.key}
                      title={c.title}
                      dir={sort.key === c.key ? (sort.up ? 'ascending' : 'descending') : 'none'}
                      onSort={() => setSort((s) => ({ key: c.key, up: s.key === c.key ? !s.up : true }))}
                    />
                  ))}
                </tr>
              </thead>
              <tbody>
                {rows.map((c) => (
                  <tr key={c.name}>
                    <td>
                      <button type="button" className="link" onClick={() => onOpen({ name: c.name, size: c.object_size, align: c.align, flags: flagNames(c.flags) })}>
                        {c.name}
                      </button>
                    </td>
                    <td>{c.object_size}</td>
                    <td>{c.before?.type}</td>
                    <td>{c.after?.type}</td>
                    <td>{c.before && c.after && c.before.order !== c.after.order ? `${c.before.order} → ${c.after.order}` : c.after?.order}</td>
                    <td>{c.before && c.after && c.before.objs_per_slab !== c.after.objs_per_slab ? `${c.before.objs_per_slab} → ${c.after.objs_per_slab}` : c.after?.objs_per_slab}</td>
                    <td>{c.before?.waste}</td>
                    <td>{c.after?.waste}</td>
                    {compared && <td>{c.kernel ? `${c.match ? 'match' : 'differs'}: order ${c.kernel.order}, ${c.kernel.objs_per_slab} per slab, limit ${c.kernel.limit}` : '–'}</td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      )}
    </section>
  );
}
