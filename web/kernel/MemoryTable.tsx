// MemoryTable.tsx - the first screen: where the memory goes.  Every cache a
// row, its bar as long as its slabs' memory (against the largest cache)
// and split into objects in use, free objects in partial slabs, free objects
// held per CPU, objects in sheaves and the slabs' tails; sortable by memory,
// waste, fragmentation, objects and name; each row's partial slabs as a
// histogram by occupancy.  A row's name is a button that opens the cache.

import { useMemo, useState } from 'react';
import { numberText as fmt } from '../lab/describe';
import { SortHeader } from '../lab/SortHeader';
import { COLORS } from '../slub/render';
import { bytesText, HISTOGRAM_BINS, sortMemory, type CacheMemory, type SortKey } from './accounting';

/** The parts of a cache's bar, in drawing order, with their colour and words. */
export const PARTS = [
  { key: 'inUse', color: COLORS.allocated, words: 'objects in use' },
  { key: 'partialFree', color: COLORS.slabFree, words: 'free in node partial slabs' },
  { key: 'cpuFree', color: COLORS.cpuFree, words: 'free, held per CPU (CPU freelist, CPU slab, CPU partial slabs)' },
  { key: 'sheafObjects', color: COLORS.cpuSheaf, words: 'in sheaves and barns' },
  { key: 'unread', color: '#a8a29e', words: 'in partial slabs not read (past --max-slabs)' },
] as const;
const TAIL_WORDS = 'slab tails (no object fits)';

/** The rows shown before "show all". */
export const FIRST_ROWS = 40;

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The bar's parts in words, for screen readers and tests. */
export function barWords(m: CacheMemory): string {
  const parts = PARTS.map((p) => `${fmt(m[p.key])} ${p.words} (${bytesText(m[p.key] * m.size)})`);
  return `${m.name}: ${bytesText(m.slabBytes)} in ${fmt(m.slabs)} slabs: ${parts.join(', ')}, ${bytesText(m.tailBytes)} ${TAIL_WORDS}`;
}

/** The histogram in words. */
export function histogramWords(m: CacheMemory): string {
  const total = m.histogram.reduce((a, b) => a + b, 0);
  if (!total) return `${m.name}: no partial slabs read`;
  const bins = m.histogram.map((n, k) => (n ? `${k * 10}–${k === HISTOGRAM_BINS - 1 ? 100 : k * 10 + 10}% used: ${fmt(n)}` : '')).filter(Boolean);
  return `${m.name}: ${fmt(total)} partial slabs by occupancy: ${bins.join(', ')}`;
}

export function MemoryBar({ m, scale }: { m: CacheMemory; scale: number }) {
  const width = scale > 0 ? Math.max(0.5, (100 * m.slabBytes) / scale) : 0;
  const whole = Math.max(1, m.slabBytes);
  return (
    <div className="kernel-bar" role="img" aria-label={barWords(m)} style={{ width: `${width}%` }}>
      {PARTS.map((p) => (
        <span key={p.key} style={{ width: `${(100 * m[p.key] * m.size) / whole}%`, background: p.color }} />
      ))}
      <span className="kernel-bar-tail" style={{ width: `${(100 * m.tailBytes) / whole}%` }} />
    </div>
  );
}

export function Histogram({ m, big = false }: { m: CacheMemory; big?: boolean }) {
  const max = Math.max(1, ...m.histogram);
  return (
    <div className={big ? 'kernel-hist kernel-hist-big' : 'kernel-hist'} role="img" aria-label={histogramWords(m)} data-testid={big ? 'kernel-histogram' : undefined}>
      {m.histogram.map((n, k) => (
        <span key={k} style={{ height: `${n ? Math.max(8, (100 * n) / max) : 0}%` }} title={big ? undefined : `${k * 10}–${k * 10 + 10}%: ${n}`} />
      ))}
    </div>
  );
}

export function Legend() {
  return (
    <ul className="lab-legend" aria-label="What the bars show">
      {PARTS.map((p) => (
        <li key={p.key}>
          <span className="swatch" style={{ background: p.color }} /> {p.words}
        </li>
      ))}
      <li>
        <span className="swatch kernel-bar-tail" /> {TAIL_WORDS}
      </li>
    </ul>
  );
}

const COLUMNS: { key: SortKey; title: string }[] = [
  { key: 'memory', title: 'memory' },
  { key: 'waste', title: 'waste' },
  { key: 'fragmentation', title: 'fragmentation' },
  { key: 'objects', title: 'objects' },
];

export function MemoryTable({ rows, sort, onSort, picked, onPick }: { rows: readonly CacheMemory[]; sort: { key: SortKey; flip: boolean }; onSort: (key: SortKey) => void; picked: string; onPick: (name: string) => void }) {
  const [all, setAll] = useState(false);
  const sorted = useMemo(() => sortMemory(rows, sort.key, sort.flip), [rows, sort.key, sort.flip]);
  const scale = useMemo(() => Math.max(0, ...rows.map((r) => r.slabBytes)), [rows]);
  const shown = all ? sorted : sorted.slice(0, FIRST_ROWS);
  const dir = (key: SortKey) => (sort.key !== key ? 'none' : (key === 'name') !== sort.flip ? 'ascending' : 'descending');
  return (
    <div className="kernel-table-scroll">
      <table className="lab-cache-table kernel-caches" data-testid="kernel-caches">
        <caption className="visually-hidden">Slab caches by memory: where each one's memory goes</caption>
        <thead>
          <tr>
            <SortHeader title="cache" dir={dir('name')} onSort={() => onSort('name')} />
            <th scope="col" className="kernel-bar-col">
              where it goes
            </th>
            {COLUMNS.map((c) => (
              <SortHeader key={c.key} title={c.title} dir={dir(c.key)} onSort={() => onSort(c.key)} />
            ))}
            <th scope="col">partial slabs by occupancy</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((m) => (
            <tr key={m.name} aria-current={m.name === picked ? 'true' : undefined}>
              <th scope="row">
                <button type="button" className="kernel-cache-name" onClick={() => onPick(m.name)} data-testid="kernel-cache-button">
                  {m.name}
                </button>
              </th>
              <td className="kernel-bar-col">
                <MemoryBar m={m} scale={scale} />
              </td>
              <td>{bytesText(m.slabBytes)}</td>
              <td>{bytesText(m.wasteBytes)}</td>
              <td>{pct(m.fragmentation)}</td>
              <td>{fmt(m.objects)}</td>
              <td>
                <Histogram m={m} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {sorted.length > FIRST_ROWS && (
        <button type="button" onClick={() => setAll(!all)} data-testid="kernel-show-all">
          {all ? `Show the first ${FIRST_ROWS}` : `Show all ${sorted.length} caches`}
        </button>
      )}
    </div>
  );
}
