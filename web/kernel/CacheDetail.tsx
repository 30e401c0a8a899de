// CacheDetail.tsx - one cache of the snapshot as it is: its figures, its
// partial slabs by occupancy, and its real slabs drawn by the SLUB view's
// layout and render (web/slub) from the adapter's SlubSnapshot (to-slub.ts):
// CPU lanes, CPU slab and partial slabs or sheaves, the barn, the node
// partial list, full slabs as a count.  A click or the arrow keys (canvas
// focused) select a slab, an object or a sheaf slot; the inspector names it
// by its real address and says which list holds it.  With a second snapshot
// open, the cache's slabs that filled or emptied are listed by address.

import { useCallback, useMemo, useState } from 'react';
import { numberText as fmt } from '../lab/describe';
import { LabCanvas } from '../lab/LabCanvas';
import type { CanvasTheme } from '../lab/theme';
import { hitTest, keyOrder, layoutSnapshot, SHEAF_ROLES, sheafObject, type Hit, type Layout } from '../slub/layout';
import { drawSnapshot, STATE_COLORS, STATE_NAMES, type Overlay } from '../slub/render';
import { ObjState } from '../slub/snapshot';
import type { CoreState } from '../core/use-core';
import { bytesText, cacheMemory } from './accounting';
import { anomalies } from './anomalies';
import { diffSlabs, slabChangeText } from './diff';
import { Histogram, histogramWords } from './MemoryTable';
import { SeededModel } from './SeededModel';
import { seedCache, type CacheSeed } from './seed';
import type { KCache, KernelSnapshot } from './snapshot-file';
import { toSlub, type KernelSlub } from './to-slub';

interface Selection {
  slab: number;
  index: number;
  sheaf: number | null;
  slot: number;
}

const NONE: Selection = { slab: -1, index: -1, sheaf: null, slot: -1 };
/** Slab changes listed at most. */
const CHANGES_SHOWN = 60;

/** The selection in words, with real addresses. */
export function selectionWords(ks: KernelSlub, sel: Selection): string {
  const s = ks.snap;
  const parts: string[] = [];
  if (sel.sheaf !== null) {
    const sh = s.sheaves.sheaf;
    const place = SHEAF_ROLES[sh.place[sel.sheaf] ?? 0] ?? 'sheaf';
    const cpu = sh.cpu[sel.sheaf] ?? 0xff;
    parts.push(`${cpu === 0xff ? 'The barn' : `CPU ${cpu}`}'s ${place} sheaf: ${sh.size[sel.sheaf]} of ${sh.capacity[sel.sheaf]} objects${sel.slot >= 0 ? `, slot ${sel.slot}` : ''}.`);
    if (sel.slot >= (sh.size[sel.sheaf] ?? 0)) parts.push('The slot is empty.');
  }
  if (sel.slab >= 0) {
    const where = ks.slabs[sel.slab];
    const objects = s.slab.objects[sel.slab] ?? 0;
    const inuse = s.slab.inuse[sel.slab] ?? 0;
    const base = where && where.base >= 0n ? `0x${where.base.toString(16)}` : 'unknown';
    const slabText = where?.address ? `slab ${where.address} (memory at ${base})` : `the slab at ${base}`;
    if (sel.index >= 0) {
      const state = s.obj.state[(s.slab.firstObj[sel.slab] ?? 0) + sel.index] ?? ObjState.ALLOCATED;
      parts.push(`Object ${ks.objectAddress(sel.slab, sel.index)}: index ${sel.index} of ${slabText}, ${STATE_NAMES[state] ?? 'unknown'}${state === ObjState.ALLOCATED ? ' (or in a list this snapshot did not read)' : ''}.`);
    }
    parts.push(`${sel.index >= 0 ? 'Its slab' : `Slab ${where?.address ?? '?'}`} is on ${where?.list ?? '?'}: ${inuse} of ${objects} objects in use, ${s.slab.slabFreeCount[sel.slab] ?? 0} on its own freelist${s.slab.cpuFreeCount[sel.slab] ? `, ${s.slab.cpuFreeCount[sel.slab]} on the CPU freelist` : ''}${s.slab.frozen[sel.slab] ? ', frozen' : ''}.`);
  }
  return parts.join(' ') || 'Nothing selected: click a slab, an object or a sheaf, or focus the drawing and use the arrow keys.';
}

function SlabsCanvas({ ks, showFull, sel, onSel, label }: { ks: KernelSlub; showFull: boolean; sel: Selection; onSel: (s: Selection) => void; label: string }) {
  const snap = ks.snap;
  const overlay = useMemo<Overlay>(
    () => ({ selected: sel.slab >= 0 ? { slab: sel.slab, index: sel.index } : null, selectedSheaf: sel.sheaf, selectedSlot: sel.slot, marked: new Set(), detached: null, arrows: snap.nslabs > 48 ? 'selected' : 'all', showFull }),
    [sel, showFull, snap.nslabs],
  );
  const layout = useCallback((width: number) => layoutSnapshot(snap, { width, showFull }), [snap, showFull]);
  const draw = useCallback((ctx: CanvasRenderingContext2D, l: Layout, colors: CanvasTheme) => drawSnapshot(ctx, snap, l, overlay, colors), [snap, overlay]);
  const hit = useCallback((l: Layout, x: number, y: number) => hitTest(l, snap, x, y), [snap]);
  const pick = useCallback((h: Hit | null) => onSel(h ? { slab: h.slab, index: h.index, sheaf: h.sheaf ?? null, slot: h.slot ?? -1 } : NONE), [onSel]);
  const move = useCallback(
    (dx: number, dy: number, l: Layout) => {
      const order = keyOrder(snap, l);
      if (!order.length) return;
      const at = order.findIndex((k) => (k.sheaf !== undefined ? k.sheaf === sel.sheaf : sel.sheaf === null && k.slab === sel.slab));
      const next = at < 0 ? (dy < 0 ? order.length - 1 : 0) : (at + dy + order.length) % order.length;
      const stop = order[next];
      if (!stop) return;
      const here = sel.sheaf !== null ? sel.slot : sel.index;
      const index = dy || at < 0 ? (dx ? 0 : -1) : here + dx;
      if (stop.sheaf !== undefined) {
        const sh = snap.sheaves.sheaf;
        const slot = Math.max(-1, Math.min((sh.capacity[stop.sheaf] ?? 0) - 1, index));
        const obj = sheafObject(snap, stop.sheaf, slot);
        onSel({ slab: obj?.slab ?? -1, index: obj?.index ?? -1, sheaf: stop.sheaf, slot });
      } else onSel({ slab: stop.slab, index: Math.max(-1, Math.min((snap.slab.objects[stop.slab] ?? 0) - 1, index)), sheaf: null, slot: -1 });
    },
    [snap, sel, onSel],
  );
  return <LabCanvas layout={layout} draw={draw} hit={hit} onPick={pick} onMove={move} label={label} testId="kernel-slabs" />;
}

export function CacheDetail({ core, doc, cache, compare }: { core: CoreState; doc: KernelSnapshot; cache: KCache; compare: { name: string; doc: KernelSnapshot } | null }) {
  const m = useMemo(() => cacheMemory(cache, doc.kernel.pageSize), [cache, doc]);
  const ks = useMemo(() => toSlub(doc, cache), [doc, cache]);
  const odd = useMemo(() => anomalies(cache, doc.kernel.pageSize), [cache, doc]);
  const [sel, setSel] = useState<Selection>(NONE);
  const [showFull, setShowFull] = useState(false);
  const [find, setFind] = useState('');
  const [findText, setFindText] = useState('');
  /** The model seeded from this cache ("Open this cache in the model"), or why it could not be. */
  const [seeded, setSeeded] = useState<CacheSeed | string | null>(null);
  const changes = useMemo(() => (compare ? diffSlabs(cache, compare.doc.caches.find((c) => c.name === cache.name)) : null), [cache, compare]);
  const t = cache.torn;
  const torn = [
    t.cpus.length ? `CPU ${t.cpus.join(', ')}` : '',
    t.slabs.length ? `${t.slabs.length} slab${t.slabs.length === 1 ? '' : 's'} (${t.slabs.slice(0, 4).join(', ')}${t.slabs.length > 4 ? ', …' : ''})` : '',
    t.nodes.length ? `node ${t.nodes.join(', ')}` : '',
    t.droppedRecords ? `${t.droppedRecords} records lost` : '',
    t.complete ? '' : 'the cache was not read to its end',
  ].filter(Boolean);
  const s = ks.snap;
  const drawn = s.nslabs;
  const label = `${cache.name}: ${fmt(s.cpus.length)} CPU lanes, ${fmt(drawn)} slabs drawn of ${fmt(m.slabs)} (${fmt(s.node.nrPartial)} on the node partial lists, ${fmt(s.fullSlabs ?? 0)} full and on no list)${ks.snap.sheaves.nsheaves ? `, ${ks.snap.sheaves.nsheaves} sheaves` : ''}. ${histogramWords(m)}`;
  return (
    <section className="kernel-detail" aria-labelledby="kernel-detail-title" data-testid="kernel-detail">
      <h3 id="kernel-detail-title">{cache.name}</h3>
      <p className="lab-figures" data-testid="kernel-detail-figures">
        {bytesText(m.slabBytes)} in {fmt(m.slabs)} slabs of order {cache.order} ({cache.objectsPerSlab} objects of {cache.size} bytes; object size {cache.objectSize}) · {fmt(m.inUse)} of {fmt(m.objects)} objects in use · {fmt(m.partialFree)} free in node
        partial slabs · {fmt(m.cpuFree)} free per CPU · {fmt(m.sheafObjects)} in sheaves · waste {bytesText(m.wasteBytes)} · min_partial {cache.minPartial}, cpu_partial {cache.cpuPartial}
        {cache.sheafCapacity ? `, sheaf capacity ${cache.sheafCapacity}` : ''} · at {cache.address}
      </p>
      <div className="kernel-detail-hist">
        <Histogram m={m} big />
        <p className="lab-figures">Partial slabs (node and CPU) by occupancy, 0 % used at the left to full at the right.</p>
      </div>
      {(odd.length > 0 || torn.length > 0 || ks.notDrawn > 0 || m.partialLeftOut > 0) && (
        <ul className="kernel-notes" data-testid="kernel-notes">
          {m.partialLeftOut > 0 && <li>{fmt(m.partialLeftOut)} node partial slabs were not read (past --max-slabs): their {fmt(m.unread)} objects are counted apart, neither in use nor free.</li>}
          {ks.notDrawn > 0 && <li>{fmt(ks.notDrawn)} node partial slabs read but not drawn (the first {fmt(s.nodePartial.length)} are).</li>}
          {torn.length > 0 && <li>Read while it changed (torn, still inconsistent after the re-reads): {torn.join('; ')}.</li>}
          {odd.slice(0, 20).map((a, i) => (
            <li key={i}>{a}</li>
          ))}
          {odd.length > 20 && <li>and {odd.length - 20} more.</li>}
        </ul>
      )}
      <ul className="lab-legend" aria-label="Colours">
        {[ObjState.ALLOCATED, ObjState.SLAB_FREE, ObjState.CPU_FREE, ...(s.kernel.hasSheaves ? [ObjState.CPU_SHEAF, ObjState.BARN, ObjState.RCU] : [])].map((st) => (
          <li key={st}>
            <span className="swatch" style={{ background: STATE_COLORS[st] ?? undefined }} /> {STATE_NAMES[st]}
          </li>
        ))}
        <li>
          <label>
            <input type="checkbox" checked={showFull} onChange={(e) => setShowFull(e.target.checked)} data-testid="kernel-show-full" /> show the full slabs known (those holding sheaf objects)
          </label>
        </li>
      </ul>
      <SlabsCanvas ks={ks} showFull={showFull} sel={sel} onSel={setSel} label={label} />
      <div className="kernel-inspector" aria-live="polite" data-testid="kernel-inspector">
        {selectionWords(ks, sel)}
      </div>
      <form
        className="kernel-find"
        onSubmit={(e) => {
          e.preventDefault();
          const p = ks.find(find);
          if (p) setSel({ slab: p.slab, index: p.index, sheaf: null, slot: -1 });
          setFindText(p ? '' : `${find.trim() || 'Nothing'} is no object of a slab drawn here (addresses are hex, 0x…).`);
        }}
      >
        <label>
          Find an address <input value={find} onChange={(e) => setFind(e.target.value)} spellCheck={false} data-testid="kernel-find" />
        </label>{' '}
        <button type="submit">Find</button> <span role="status">{findText}</span>
      </form>
      <p className="kernel-seed">
        <button
          type="button"
          data-testid="kernel-open-model"
          onClick={() => {
            try {
              setSeeded(seedCache(doc, cache));
            } catch (e) {
              setSeeded((e as Error).message);
            }
          }}
        >
          Open this cache in the model
        </button>{' '}
        {typeof seeded === 'string' && (
          <span role="alert" data-testid="kernel-seed-error">
            {seeded}
          </span>
        )}
      </p>
      {seeded && typeof seeded !== 'string' && <SeededModel core={core} name={cache.name} seed={seeded} />}
      {changes && compare && (
        <section aria-labelledby="kernel-slab-changes-title" data-testid="kernel-slab-changes">
          <h4 id="kernel-slab-changes-title">
            Slabs changed in {compare.name}: {changes.length ? `${fmt(changes.filter((c) => c.kind === 'filled').length)} filled, ${fmt(changes.filter((c) => c.kind === 'emptied').length)} emptied, ${fmt(changes.filter((c) => c.kind === 'appeared').length)} listed anew, ${fmt(changes.filter((c) => c.kind === 'left').length)} no longer listed` : 'none'}
          </h4>
          {/* The list scrolls in its box: focusable, so the keyboard scrolls it too. */}
          <ul className="kernel-changes" tabIndex={0} aria-labelledby="kernel-slab-changes-title">
            {changes.slice(0, CHANGES_SHOWN).map((c) => (
              <li key={c.address}>
                <code>{c.address}</code> {slabChangeText(c)}
              </li>
            ))}
            {changes.length > CHANGES_SHOWN && <li>and {fmt(changes.length - CHANGES_SHOWN)} more.</li>}
          </ul>
        </section>
      )}
    </section>
  );
}
