// layout.ts - where each CPU lane, list section and slab strip goes on the
// canvas, computed once per snapshot and width (render.ts draws it, the click
// and keyboard handlers hit-test it).  Two densities: "detailed" (a
// scenario's few slabs: labels, 16-px slots, freelist arrows) and "compact"
// (hundreds of slabs in free-running mode: small slots, no labels, arrows only
// for the selected slab), chosen from the number of slabs and the width.

import type { CanvasItem, CanvasLayout } from '../lab/LabCanvas';
import { cpuPartialSlabs, NONE32, slabIndexOf, SlabList, type SlubSnapshot } from './snapshot';

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
}

export interface Layout extends CanvasLayout {
  width: number;
  height: number;
  compact: boolean;
  labelW: number;
  boxes: SlabBox[];
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
  const sections: Section[] = [];
  const boxOf = new Int32Array(s.nslabs).fill(-1);
  let y = 4;

  const place = (slabs: number[], role: SlabBox['role'], title: string, lines: string[], cpu: number, minRows = 1) => {
    const rows = Math.max(minRows, Math.ceil(slabs.length / perRow));
    const textH = 16 + 14 * lines.length;
    const h = Math.max(textH, rows * boxH) + (compact ? 6 : 10);
    slabs.forEach((slab, i) => {
      const bx = labelW + (i % perRow) * boxW;
      const by = y + Math.floor(i / perRow) * boxH;
      boxOf[slab] = boxes.length;
      boxes.push({ slab, x: bx, y: by, slotW, stripY: compact ? by + 2 : by + 28, stripH, role: i === 0 && role === 'cpu-slab' ? 'cpu-slab' : role === 'cpu-slab' ? 'cpu-partial' : role });
    });
    sections.push({ title, lines, y, h, cpu });
    y += h;
  };

  for (const c of s.cpus) {
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
    place(own < 0 ? partial : [own, ...partial], own < 0 ? 'cpu-partial' : 'cpu-slab', `CPU ${c.cpu}`, lines, c.cpu);
  }
  place(s.nodePartial, 'node-partial', 'Node partial', [`${s.node.nrPartial} slab${s.node.nrPartial === 1 ? '' : 's'}`, `min_partial ${s.geometry.minPartial}`], -1);
  const full: number[] = [];
  for (let i = 0; i < s.nslabs; i++) if (s.slab.list[i] === SlabList.NONE) full.push(i);
  if (o.showFull) place(full, 'full', 'Full (no list)', [`${full.length} slab${full.length === 1 ? '' : 's'}`], -1, 0);
  else sections.push({ title: 'Full (no list)', lines: [`${full.length} hidden`], y, h: 36, cpu: -1 }), (y += 36);

  // Slabs keep their pfn from stop to stop: a slab that changed lists glides to its new place (LabCanvas's motion).
  const items: CanvasItem[] = compact ? [] : boxes.map((b) => ({ key: `slab ${s.slab.pfn[b.slab]}`, x: b.x - 4, y: b.y, w: (s.slab.objects[b.slab] ?? objects) * slotW + 10, h: boxH - 2 }));
  return { width: o.width, height: y + 4, compact, labelW, boxes, sections, boxOf, hiddenFull: o.showFull ? 0 : full.length, items };
}

export interface Hit {
  slab: number;
  /** Object index, or -1 for the slab itself (its label). */
  index: number;
}

/** What is under (x, y), if anything. */
export function hitTest(l: Layout, s: SlubSnapshot, x: number, y: number): Hit | null {
  for (const b of l.boxes) {
    const w = (s.slab.objects[b.slab] ?? 0) * b.slotW;
    if (x < b.x || x >= b.x + w + (l.compact ? 0 : 10)) continue;
    if (y >= b.stripY && y < b.stripY + b.stripH && x < b.x + w) return { slab: b.slab, index: Math.floor((x - b.x) / b.slotW) };
    if (!l.compact && y >= b.y && y < b.y + 62) return { slab: b.slab, index: -1 };
  }
  return null;
}
