// DiffPanel.tsx - two snapshots compared: the caches that grew or shrank
// most (slabs, bytes, objects in use, waste), each a button that opens the
// cache (whose slabs that filled or emptied CacheDetail lists).

import { useMemo, useState } from 'react';
import { numberText as fmt } from '../lab/describe';
import { bytesText } from './accounting';
import { diffCaches } from './diff';
import type { KernelSnapshot } from './snapshot-file';

const signed = (n: number, text: (n: number) => string = fmt) => (n > 0 ? `+${text(n)}` : n < 0 ? `−${text(-n)}` : '0');
const FIRST = 25;

export function DiffPanel({ a, b, onPick }: { a: { name: string; doc: KernelSnapshot }; b: { name: string; doc: KernelSnapshot }; onPick: (name: string) => void }) {
  const deltas = useMemo(() => diffCaches(a.doc, b.doc), [a.doc, b.doc]);
  const [all, setAll] = useState(false);
  const changed = deltas.filter((d) => d.slabs || d.bytes || d.inUse || d.waste || !d.before || !d.after);
  const shown = all ? changed : changed.slice(0, FIRST);
  const total = (f: (d: (typeof deltas)[number]) => number) => deltas.reduce((s, d) => s + f(d), 0);
  return (
    <section className="kernel-diff" aria-labelledby="kernel-diff-title" data-testid="kernel-diff">
      <h3 id="kernel-diff-title">
        {a.name} → {b.name}
      </h3>
      <p className="lab-figures">
        {a.doc.kernel.release === b.doc.kernel.release ? `Both from Linux ${a.doc.kernel.release}` : `Different kernels: ${a.doc.kernel.release} and ${b.doc.kernel.release}`}, taken {a.doc.takenAt} and {b.doc.takenAt}. Slab memory{' '}
        {signed(total((d) => d.bytes), bytesText)}, {signed(total((d) => d.slabs))} slabs, {signed(total((d) => d.inUse))} objects in use; {fmt(changed.length)} of {fmt(deltas.length)} caches changed.
      </p>
      {changed.length > 0 && (
        <div className="kernel-table-scroll">
          <table className="lab-cache-table kernel-caches" data-testid="kernel-diff-table">
            <caption className="visually-hidden">Caches that changed between the two snapshots, largest change first</caption>
            <thead>
              <tr>
                <th scope="col">cache</th>
                <th scope="col">slabs</th>
                <th scope="col">memory</th>
                <th scope="col">in use</th>
                <th scope="col">waste</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((d) => (
                <tr key={d.name}>
                  <th scope="row">
                    <button type="button" className="kernel-cache-name" onClick={() => onPick(d.name)}>
                      {d.name}
                    </button>
                    {!d.before ? ' (new)' : !d.after ? ' (gone)' : ''}
                  </th>
                  <td className={d.slabs > 0 ? 'kernel-grew' : d.slabs < 0 ? 'kernel-shrank' : ''}>{signed(d.slabs)}</td>
                  <td>{signed(d.bytes, bytesText)}</td>
                  <td>{signed(d.inUse)}</td>
                  <td>{signed(d.waste, bytesText)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {changed.length > FIRST && (
            <button type="button" onClick={() => setAll(!all)}>
              {all ? `Show the first ${FIRST}` : `Show all ${changed.length}`}
            </button>
          )}
        </div>
      )}
    </section>
  );
}
