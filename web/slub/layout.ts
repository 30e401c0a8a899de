// layout.ts - where each CPU lane, list section and slab strip goes on the
// canvas, computed once per snapshot and width (render.ts draws it, the click
// and keyboard handlers hit-test it).  Two densities: "detailed" (a
// scenario's few slabs: labels, 16-px slots, freelist arrows) and "compact"
// (hundreds of slabs in free-running mode: small slots, no labels, arrows only
// for the selected slab), chosen from the number of slabs and the width.

//
// Kernels with sheaves (6.18's opted-in caches, 7.0): each CPU lane starts
// with one row per sheaf it holds (main, spare, rcu_free, the rcu sheaves
// handed to call_rcu, the objects waiting alone), capacity slots each; the
// barn (the node's full and empty sheaves) and the prefilled sheaves out
// with callers get sections of their own before the node partial list.  A
// 7.0 lane has no CPU slab, freelist or tid: none is drawn.

import type { CanvasItem, CanvasLayout } from '../lab/LabCanvas';
import { cpuPartialSlabs, NONE32, SheafPlace, sheavesAt, slabIndexOf, SlabList, type SheafPlaceValue, type SlubSnapshot } from './snapshot';

/** A sheaf's place in words (SheafPlace order). */
export const SHEAF_ROLES = ['main', 'spare', 'rcu_free', 'rcu (handed to call_rcu)', 'barn (full)', 'barn (empty)', 'prefilled', 'waiting alone for RCU'] as const;

export interface SheafBox {
  /** Sheaf record index in the snapshot. */
  sheaf: number;
  x: number;
  y: number;
  slotW: number;
  stripY: number;
  stripH: number;
  /** Slots drawn: the sheaf's capacity (or its size, for the objects waiting alone). */
  slots: number;
}

export interface SlabBox {
  slab: number;
  x: number;
  y: number;
  /** Slot width; the strip is the slab's own objects * slotW wide (a fallback slab's is shorter). */
  slotW: number;
  stripY: number;
  stripH: number;
  /** What the slab is in this section (for its label). */
  role: 'cpu-slab' | 'cpu-partial' | 'node-partial' | 'full';
}

export interface Section {
  title: string;
  /** Lines under the title (CPU lanes: freelist, tid, partial count). */
  lines: string[];
  y: number;
  h: number;
  cpu: number;
  /** A CPU inside its sheaf section (the local trylock held). */
  locked?: boolean;
}

export interface Layout extends CanvasLayout {
  width: number;
  height: number;
  compact: boolean;
  labelW: number;
  boxes: SlabBox[];
  sheaves: SheafBox[];
  sections: Section[];
  /** Slab record -> its box, -1 if not drawn (full slabs hidden). */
  boxOf: Int32Array;
  /** Full slabs not drawn. */
  hiddenFull: number;
}

export interface LayoutOptions {
  width: number;
  showFull: boolean;
  /** Force compact drawing (free-running mode). */
  compact?: boolean;
}

const hex = (n: number) => `0x${n.toString(16)}`;

export function layoutSnapshot(s: SlubSnapshot, o: LayoutOptions): Layout {
  const objects = Math.max(1, s.geometry.objects);
  const compact = o.compact ?? s.nslabs > 48;
  const labelW = compact ? 120 : 190;
  const avail = Math.max(200, o.width - labelW - 12);
  const slotW = compact ? Math.max(2, Math.min(6, Math.floor(avail / (objects * 8)))) : Math.max(6, Math.min(18, Math.floor(avail / (objects * 2.3))));
  const stripH = compact ? 8 : 22;
  const boxW = objects * slotW + (compact ? 4 : 14);
  const boxH = compact ? stripH + 4 : 66;
  const perRow = Math.max(1, Math.floor(avail / boxW));
  const boxes: SlabBox[] = [];
  const sheafBoxes: SheafBox[] = [];
  const sections: Section[] = [];
  const boxOf = new Int32Array(s.nslabs).fill(-1);
  let y = 4;

  // Sheaves: one slot width for all, so equal capacities line up.
  const sh = s.sheaves;
  const drawSheaves = s.kernel.hasSheaves && sh.taken;
  let widest = 1;
  for (let i = 0; i < sh.nsheaves; i++) widest = Math.max(widest, sh.sheaf.capacity[i] ?? 0, sh.sheaf.size[i] ?? 0);
  const sheafSlotW = compact ? Math.max(2, Math.min(4, Math.floor(avail / widest))) : Math.max(4, Math.min(14, Math.floor(avail / widest)));
  const sheafStripH = compact ? 6 : 14;
  const sheafRowH = compact ? sheafStripH + 4 : sheafStripH + 16;
  /** Places sheaf records in rows from the top of the section at `top`, several to a row when they fit; returns the height taken. */
  const placeSheaves = (records: number[], top: number): number => {
    let x = labelW;
    let row = 0;
    for (const rec of records) {
      const slots = Math.max(1, sh.sheaf.place[rec] === SheafPlace.RCU_WAIT ? (sh.sheaf.size[rec] ?? 0) : (sh.sheaf.capacity[rec] ?? 0));
      const w = slots * sheafSlotW + (compact ? 4 : 12);
      if (x > labelW && x + w > labelW + avail) {
        x = labelW;
        row++;
      }
      const by = top + row * sheafRowH;
      sheafBoxes.push({ sheaf: rec, x, y: by, slotW: sheafSlotW, stripY: compact ? by + 2 : by + 13, stripH: sheafStripH, slots });
      x += w;
    }
    return records.length ? (row + 1) * sheafRowH : 0;
  };
  const cpuSheaves = (cpu: number) =>
    drawSheaves ? ([SheafPlace.MAIN, SheafPlace.SPARE, SheafPlace.RCU_FREE, SheafPlace.RCU_PENDING, SheafPlace.RCU_WAIT] as SheafPlaceValue[]).flatMap((p) => sheavesAt(s, p, cpu)) : [];

  const place = (slabs: number[], role: SlabBox['role'], title: string, lines: string[], cpu: number, minRows = 1, sheafRecs: number[] = [], locked = false) => {
    // Each CPU's sheaves one to a row (a stack per CPU), the barn's packed.
    const sheafH = cpu >= 0 ? sheafRecs.reduce((h, rec) => h + placeSheaves([rec], y + h), 0) : placeSheaves(sheafRecs, y);
    const rows = slabs.length ? Math.max(minRows, Math.ceil(slabs.length / perRow)) : sheafRecs.length ? 0 : minRows;
    const textH = 16 + 14 * lines.length;
    const h = Math.max(textH, sheafH + rows * boxH) + (compact ? 6 : 10);
    slabs.forEach((slab, i) => {
      const bx = labelW + (i % perRow) * boxW;
      const by = y + sheafH + Math.floor(i / perRow) * boxH;
      boxOf[slab] = boxes.length;
      boxes.push({ slab, x: bx, y: by, slotW, stripY: compact ? by + 2 : by + 28, stripH, role: i === 0 && role === 'cpu-slab' ? 'cpu-slab' : role === 'cpu-slab' ? 'cpu-partial' : role });
    });
    sections.push({ title, lines, y, h, cpu, ...(locked ? { locked } : {}) });
    y += h;
  };

  const sheafLine = (rec: number | undefined, name: string) =>
    rec === undefined || rec < 0 ? `${name}: none` : `${name}: ${sh.sheaf.size[rec]}/${sh.sheaf.capacity[rec]}`;
  for (const c of s.cpus) {
    const pcs = sh.pcs[c.cpu];
    const recs = cpuSheaves(c.cpu);
    const sheafLines = drawSheaves && pcs
      ? [pcs.main < 0 ? 'main: the bootstrap sheaf (capacity 0)' : sheafLine(pcs.main, 'main'), sheafLine(pcs.spare, 'spare'), ...(pcs.locked ? ['in its sheaf section (trylock held)'] : [])]
      : [];
    if (!s.kernel.cpuSlab) {
      // 7.0: no kmem_cache_cpu; the lane is the CPU's sheaves.
      place([], 'cpu-partial', `CPU ${c.cpu}`, compact ? sheafLines.slice(0, 2) : [...sheafLines, sheafLine(pcs?.rcuFree, 'rcu_free')], c.cpu, 1, recs, pcs?.locked ?? false);
      continue;
    }
    const own = c.slabPfn === NONE32 ? -1 : slabIndexOf(s, c.slabPfn);
    const partial = cpuPartialSlabs(s, c.cpu);
    const fl =
      c.freelistPfn === NONE32
        ? c.freelistIndex === NONE32
          ? 'freelist: empty'
          : 'freelist: CORRUPT'
        : `freelist → ${c.freelistPfn}:${c.freelistIndex} (${c.freelistLength} free)`;
    const lines = compact
      ? [`tid ${hex(c.tid)}`, `${c.freelistLength} free · ${c.partialCount} partial`]
      : [fl, `tid ${c.tid} (${hex(c.tid)})`, `slab: ${own < 0 ? 'none' : c.slabPfn}`, `partial: ${c.partialCount} slab${c.partialCount === 1 ? '' : 's'}`];
    place(own < 0 ? partial : [own, ...partial], own < 0 ? 'cpu-partial' : 'cpu-slab', `CPU ${c.cpu}`, compact ? lines : [...lines, ...sheafLines], c.cpu, 1, recs, pcs?.locked ?? false);
  }
  if (drawSheaves) {
    const full = sheavesAt(s, SheafPlace.BARN_FULL);
    const empty = sheavesAt(s, SheafPlace.BARN_EMPTY);
    place([], 'node-partial', 'Barn', [`${sh.barnFull} full, ${sh.barnEmpty} empty`, `sheaf capacity ${sh.capacity}`], -1, 1, [...full, ...empty]);
    const prefilled = sheavesAt(s, SheafPlace.PREFILLED);
    if (prefilled.length) place([], 'node-partial', 'Prefilled sheaves', [`${prefilled.length} out with callers`], -1, 1, prefilled);
  }
  place(s.nodePartial, 'node-partial', 'Node partial', [`${s.node.nrPartial} slab${s.node.nrPartial === 1 ? '' : 's'}`, `min_partial ${s.geometry.minPartial}`], -1);
  const full: number[] = [];
  for (let i = 0; i < s.nslabs; i++) if (s.slab.list[i] === SlabList.NONE) full.push(i);
  if (o.showFull) place(full, 'full', 'Full (no list)', [`${full.length} slab${full.length === 1 ? '' : 's'}`], -1, 0);
  else {
    sections.push({ title: 'Full (no list)', lines: [`${full.length} hidden`], y, h: 36, cpu: -1 });
    y += 36;
  }

  // Slabs keep their pfn from stop to stop: a slab that changed lists glides to its new place (LabCanvas's motion).
  const items: CanvasItem[] = compact ? [] : boxes.map((b) => ({ key: `slab ${s.slab.pfn[b.slab]}`, x: b.x - 4, y: b.y, w: (s.slab.objects[b.slab] ?? objects) * slotW + 10, h: boxH - 2 }));
  // Sheaves keep their id from stop to stop: a sheaf moving between a CPU and the barn glides there.
  if (!compact) for (const b of sheafBoxes) items.push({ key: `sheaf ${sh.sheaf.id[b.sheaf]}`, x: b.x - 2, y: b.y, w: b.slots * b.slotW + 4, h: b.stripY + b.stripH - b.y + 2 });
  return { width: o.width, height: y + 4, compact, labelW, boxes, sheaves: sheafBoxes, sections, boxOf, hiddenFull: o.showFull ? 0 : full.length, items };
}

/** One stop of the arrow keys: a sheaf (its record) or a slab (its record). */
export type KeyStop = { sheaf: number; slab?: undefined } | { slab: number; sheaf?: undefined };

/**
 * The order Up and Down step through what is drawn: sheaves and slabs top to bottom, left to
 * right (a CPU lane's sheaves come before its slabs, the barn's before the node's list).  Without
 * a layout (the [ ] { } keys away from the canvas): every sheaf record, then every slab.
 */
export function keyOrder(s: SlubSnapshot, l?: Layout): KeyStop[] {
  if (!l) return [...Array.from({ length: s.sheaves.nsheaves }, (_, sheaf) => ({ sheaf })), ...Array.from({ length: s.nslabs }, (_, slab) => ({ slab }))];
  const at = [...l.sheaves.map((b) => ({ b, stop: { sheaf: b.sheaf } as KeyStop })), ...l.boxes.map((b) => ({ b, stop: { slab: b.slab } as KeyStop }))];
  return at.sort((p, q) => p.b.y - q.b.y || p.b.x - q.b.x).map((x) => x.stop);
}

export interface Hit {
  /** Slab record of the object (or of the slab itself), -1 for none (an empty sheaf slot, a sheaf's label). */
  slab: number;
  /** Object index, or -1 for the slab itself (its label). */
  index: number;
  /** The sheaf record clicked (its slot or its label), if a sheaf was. */
  sheaf?: number;
  /** The sheaf's slot (object position), -1 for its label. */
  slot?: number;
}

/** What is under (x, y), if anything. */
export function hitTest(l: Layout, s: SlubSnapshot, x: number, y: number): Hit | null {
  for (const b of l.sheaves) {
    if (x < b.x || x >= b.x + b.slots * b.slotW || y < b.y || y >= b.stripY + b.stripH) continue;
    if (y < b.stripY) return { slab: -1, index: -1, sheaf: b.sheaf, slot: -1 };
    const slot = Math.floor((x - b.x) / b.slotW);
    const obj = sheafObject(s, b.sheaf, slot);
    return { slab: obj?.slab ?? -1, index: obj?.index ?? -1, sheaf: b.sheaf, slot };
  }
  for (const b of l.boxes) {
    const w = (s.slab.objects[b.slab] ?? 0) * b.slotW;
    if (x < b.x || x >= b.x + w + (l.compact ? 0 : 10)) continue;
    if (y >= b.stripY && y < b.stripY + b.stripH && x < b.x + w) return { slab: b.slab, index: Math.floor((x - b.x) / b.slotW) };
    if (!l.compact && y >= b.y && y < b.y + 62) return { slab: b.slab, index: -1 };
  }
  return null;
}

/** The object in slot `slot` of sheaf record `sheaf`, as (slab record, object index), or null for an empty slot or a pointer that is no object. */
export function sheafObject(s: SlubSnapshot, sheaf: number, slot: number): { slab: number; index: number } | null {
  const sh = s.sheaves;
  if (slot < 0 || slot >= (sh.sheaf.size[sheaf] ?? 0)) return null;
  const at = (sh.sheaf.first[sheaf] ?? 0) + slot;
  const slab = slabIndexOf(s, sh.entryPfn[at] ?? NONE32);
  const index = sh.entryIndex[at] ?? NONE32;
  return slab >= 0 && index < (s.slab.objects[slab] ?? 0) ? { slab, index } : null;
}
