// layout.ts - where everything of a SLAB snapshot goes on the canvas, for a
// width (render.ts paints it, hitTest reads it, the animation asks it where
// an array slot or an object is).  One section per cache drawn (places.ts's
// shownCaches): its title and figures, each CPU's array_cache as a LIFO strip
// of `limit` slots (bottom, the oldest, at the left; the top, handed out
// next, at the right) with the batchcount marked, the shared array (wrapped
// over rows), the node's free_objects against free_limit, its three lists as
// slab thumbnails, and a few slabs drawn to scale: a bar of PAGE_SIZE << order
// bytes (colour offset, objects, left-over, a NORMAL slab's freelist array at
// the end) with the freelist array beneath it, one cell per index, and the
// `active` cursor.

import { alignedLayout, rowHeight, type Row } from '../lab/align';
import { arraySlotOf, placesOf, shownCaches } from './places';
import type { SlabCacheState, SlabSnapshot } from './snapshot';

export const PAGE_SIZE = 4096;
const PAD = 8;
const LINE = 15;
/** Left column: "CPU 0", "shared", "partial". */
const LABEL_W = 64;
/** Right of an array strip: "avail 15 / 120 · touched". */
const STRIP_TEXT_W = 150;
/** The same on a narrow drawing: "15 / 120". */
const NARROW_TEXT_W = 64;
const CELL_H = 12;
const THUMB_W = 12;
const THUMB_H = 16;
const THUMB_GAP = 3;
export const BAR_H = 24;
const ARRAY_CELL_H = 14;
/** Slabs of a cache drawn to scale (the selected one first). */
export const DETAILED_SLABS = 3;

export interface Label {
  x: number;
  y: number;
  text: string;
  style: 'title' | 'text' | 'dim' | 'small';
}

/** A CPU's array_cache (owner = the CPU) or the shared array (owner -1). */
export interface ArrayBox {
  cacheId: number;
  owner: number;
  x: number;
  y: number;
  cellW: number;
  perRow: number;
  rowH: number;
  limit: number;
}

export interface ThumbBox {
  cacheId: number;
  /** Index in cache.slabs. */
  slab: number;
  pfn: number;
  x: number;
  y: number;
}

export interface DetailBox {
  cacheId: number;
  slab: number;
  pfn: number;
  x: number;
  w: number;
  barY: number;
  /** The bar's height (BAR_H; less on a dense drawing). */
  barH: number;
  /** Pixels per byte of the slab. */
  scale: number;
  arrayY: number;
  arrayCellW: number;
}

export interface GaugeBox {
  cacheId: number;
  x: number;
  y: number;
  w: number;
}

export interface CacheBox {
  cacheId: number;
  y: number;
  h: number;
}

export interface Layout {
  width: number;
  height: number;
  /** Each cache's rows (its title, CPU strips, shared array, node, lists, slabs to scale), which side-by-side panes line up (align.ts). */
  alignedRows: Row[];
  /** Many caches on a narrow drawing: three rows a cache (layoutSnapshot). */
  dense: boolean;
  /** For the tests: the caches and slabs drawn (CanvasLayout.figure). */
  figure?: Readonly<Record<string, number>>;
  caches: CacheBox[];
  labels: Label[];
  arrays: ArrayBox[];
  thumbs: ThumbBox[];
  details: DetailBox[];
  gauges: GaugeBox[];
}

export interface Rect {
  x: number;
  y: number;
  w: number;
  h: number;
}

/** The slab the viewer looks at, drawn to scale before any other of its cache. */
export interface Focus {
  cacheId: number;
  pfn: number;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** Average glyph widths of the label fonts (render.ts's FONTS), for wrapping without a canvas. */
const CHAR_W: Record<Label['style'], number> = { title: 7.6, text: 6.6, dim: 6.6, small: 6.1 };

/** `text` broken at spaces into lines of at most `width` pixels (a word longer than a line gets one of its own). */
export function wrap(text: string, width: number, style: Label['style']): string[] {
  const max = Math.max(8, Math.floor(width / CHAR_W[style]));
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > max) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** The freelist's home in words. */
export function freelistWords(s: SlabSnapshot, c: SlabCacheState, slab: number): string {
  const f = c.slabs[slab]?.freelist;
  switch (f?.kind) {
    case 'in-page':
      return `freelist array: the last ${c.num} bytes of the slab (offset ${f.offset})`;
    case 'in-object':
      return `freelist array: inside free object ${f.index} (OBJFREELIST)`;
    case 'off-slab': {
      const host = s.caches.find((k) => k.id === f.cacheId);
      return `freelist array: object ${f.index} of ${host?.name ?? `cache ${f.cacheId}`} slab ${f.pfn} (OFF_SLAB)`;
    }
    case 'none':
      return 'no freelist array: the slab is full, its array went out with the last object (OBJFREELIST)';
    default:
      return 'freelist array: CORRUPT (it points at no object of its cache)';
  }
}

/** The figures line of a cache. */
export function cacheFigures(c: SlabCacheState): string {
  const slabBytes = PAGE_SIZE << c.order;
  return `${c.objectSize} B objects in ${c.size} B buffers · ${c.mgmt} · order ${c.order} (${slabBytes / 1024} KiB), ${c.num} per slab · colour ${c.colour} × ${c.colourOff} B · limit ${c.limit}, batchcount ${c.batchcount}${c.sharedLimit ? `, shared ${c.sharedLimit}` : ', no shared array'}`;
}

/** The caches a narrow drawing shows in full; past them it is dense (see layoutSnapshot). */
const FULL_CACHES_NARROW = 2;

/**
 * The layout for a width; with the states of the panes beside it (`alignWith`), each row as tall as
 * the tallest of its key, so the panes line up.  A narrow drawing (a phone, or panes side by side
 * in a documentation column) of more caches than FULL_CACHES_NARROW is dense, so that a figure of
 * four caches fits a page: each cache is its name and a line or two of words (management type,
 * objects per slab, each CPU's array's count, the slab drawn, where its freelist array lives),
 * then that slab to scale with its freelist array; no strips, node gauge or list thumbnails.
 */
export function layoutSnapshot(s: SlabSnapshot, width: number, focus: Focus | null, alignWith: readonly SlabSnapshot[] = []): Layout {
  const dense = width < 640 && Math.max(shownCaches(s).length, ...alignWith.map((x) => shownCaches(x).length)) > FULL_CACHES_NARROW;
  return alignedLayout(s, alignWith, (x, minH) => layoutAt(x, width, focus, dense, minH), (l) => l.alignedRows);
}

/** Where a slab's freelist array lives, in a few words (a dense drawing's). */
function shortFreelistWords(s: SlabSnapshot, c: SlabCacheState, slab: number): string {
  const f = c.slabs[slab]?.freelist;
  switch (f?.kind) {
    case 'in-page':
      return 'array at the page end';
    case 'in-object':
      return `array in free object ${f.index}`;
    case 'off-slab':
      return `array in ${s.caches.find((k) => k.id === f.cacheId)?.name ?? `cache ${f.cacheId}`} #${f.index}`;
    case 'none':
      return 'no array (left with the last object)';
    default:
      return 'freelist array: CORRUPT';
  }
}

function layoutAt(s: SlabSnapshot, width: number, focus: Focus | null, dense: boolean, minH?: ReadonlyMap<string, number>): Layout {
  const l: Layout = { width, height: 0, dense, alignedRows: [], caches: [], labels: [], arrays: [], thumbs: [], details: [], gauges: [] };
  /** Ends the row `key` that started at `top`: it is at least as tall as the same row beside it. */
  const endRow = (key: string, top: number) => {
    y = top + rowHeight(minH, key, y - top);
    l.alignedRows.push({ key, y: top, h: y - top });
  };
  const label = (x: number, y: number, text: string, style: Label['style'] = 'text') => l.labels.push({ x, y, text, style });
  /** A label wrapped to the canvas' right edge; returns the height it takes. */
  const para = (x: number, y: number, text: string, style: Label['style']) => {
    const lines = wrap(text, width - x - PAD, style);
    lines.forEach((t, i) => label(x, y + i * (LINE - 1), t, style));
    return lines.length * (LINE - 1) + 1;
  };
  const x0 = PAD + LABEL_W;
  // Narrow (a phone, or panes side by side on a small screen): the strips take the width, their figures go under them.
  // Narrow (a phone, or panes side by side in a column): the figures beside each strip are only its counts.
  const narrow = width < 640;
  const textW = narrow ? NARROW_TEXT_W : STRIP_TEXT_W;
  const stripW = width - x0 - PAD - textW;
  /** A strip's figures to its right (narrow: only the first, its avail / limit); takes no height. */
  const stripText = (right: number, y: number, text: string) => {
    label(right + 6, y, narrow ? (text.split(' · ')[0] ?? text).replace(/^avail /, '') : text, 'small');
    return 0;
  };
  let y = PAD;
  const places = placesOf(s);
  const caches = shownCaches(s);
  if (!caches.length) y += para(PAD, y, 'No cache has a slab yet: step forward.', 'dim');

  for (const c of dense ? caches : []) {
    // Dense: its name and type, each CPU's array in figures; its slab to scale; where its array lives.
    const top = y;
    let rowTop = y;
    const focused = focus && focus.cacheId === c.id ? (places.byCache.get(c.id)?.slabByPfn.get(focus.pfn) ?? -1) : -1;
    const i = focused >= 0 ? focused : 0;
    const sl = c.slabs[i];
    // The words flow from beside the name onto the full width below it.
    label(PAD, y + 2, c.name, 'title');
    const nameW = Math.ceil(c.name.length * CHAR_W.title) + 8;
    const words = [c.mgmt, `${c.num}/slab`, ...c.cpus.map((a, cpu) => `CPU ${cpu}: ${a.avail}`), sl ? `slab ${sl.pfn} ${sl.list} ${sl.active}/${c.num}` : 'no slab yet', ...(sl ? [shortFreelistWords(s, c, i)] : [])].join(' · ');
    const first = wrap(words, width - 2 * PAD - nameW, 'small')[0] ?? '';
    const rest = wrap(words.slice(first.length).trim(), width - 2 * PAD, 'small');
    label(PAD + nameW, y + 3, first, 'small');
    rest.forEach((t, k) => label(PAD, y + 3 + (k + 1) * (LINE - 1), t, 'small'));
    y += (rest.length + 1) * (LINE - 1) + 4;
    endRow(c.name, rowTop);
    rowTop = y;
    if (sl) {
      const w = width - 2 * PAD;
      const barH = 16;
      l.details.push({ cacheId: c.id, slab: i, pfn: sl.pfn, x: PAD, w, barY: y, barH, scale: w / (PAGE_SIZE << c.order), arrayY: y + barH + 4, arrayCellW: Math.max(2, Math.min(18, Math.floor(w / c.num))) });
      y += barH + 4 + ARRAY_CELL_H + 9;
    }
    endRow(`${c.name} slab 0`, rowTop);
    l.caches.push({ cacheId: c.id, y: top - 4, h: y - top });
  }

  for (const c of dense ? [] : caches) {
    const top = y;
    let rowTop = y;
    label(PAD, y + 2, `${c.name}`, 'title');
    if (narrow) {
      // The cache's figures in short, on the title's line.
      const x = PAD + Math.ceil(c.name.length * CHAR_W.title) + 10;
      y += Math.max(LINE + 4, para(x, y + 3, `${c.objectSize} B · ${c.mgmt} · ${c.num} per slab · limit ${c.limit}`, 'small') + 4);
    } else {
      y += LINE + 4;
      y += para(PAD, y, cacheFigures(c), 'small');
    }
    endRow(c.name, rowTop);

    // Arrays: one strip per CPU, then the shared array.
    const cellW = Math.max(2, Math.min(12, Math.floor(stripW / Math.max(1, c.limit))));
    for (const [cpu, a] of c.cpus.entries()) {
      rowTop = y;
      label(PAD, y, `CPU ${cpu}`);
      l.arrays.push({ cacheId: c.id, owner: cpu, x: x0, y, cellW, perRow: Math.max(1, c.limit), rowH: CELL_H + 4, limit: c.limit });
      const rowY = y;
      y += CELL_H + 4;
      y += stripText(x0 + c.limit * cellW, rowY, `avail ${a.avail} / ${a.limit}${a.touched ? ' · touched' : ''}`);
      endRow(`${c.name} CPU ${cpu}`, rowTop);
    }
    if (c.shared) {
      // The shared array on as few rows as it takes at 1 px an entry or more (it holds hundreds).
      const sharedW = Math.max(1, Math.min(cellW, Math.floor(stripW / Math.max(1, c.sharedLimit))));
      const perRow = Math.max(1, Math.floor(stripW / sharedW));
      const rows = Math.ceil(c.sharedLimit / perRow);
      rowTop = y;
      label(PAD, y, 'shared');
      l.arrays.push({ cacheId: c.id, owner: -1, x: x0, y, cellW: sharedW, perRow, rowH: CELL_H + 2, limit: c.sharedLimit });
      const top = y;
      y += rows * (CELL_H + 2) + 2;
      y += stripText(x0 + Math.min(perRow, c.sharedLimit) * sharedW, top, `avail ${c.shared.avail} / ${c.sharedLimit}${c.shared.touched ? ' · touched' : ''}`);
      endRow(`${c.name} shared`, rowTop);
    }

    // The node: free_objects against free_limit, then its lists.
    rowTop = y;
    label(PAD, y, 'node');
    const gaugeW = Math.min(narrow ? 90 : 200, stripW - 8);
    l.gauges.push({ cacheId: c.id, x: x0, y: y + 2, w: gaugeW });
    // Narrow: its figures beside the gauge.
    if (!narrow) y += LINE;
    y += para(narrow ? x0 + gaugeW + 8 : x0, y, narrow ? `free ${c.freeObjects} / ${c.freeLimit} · ${plural(c.totalSlabs, 'slab')}` : `free_objects ${c.freeObjects} / free_limit ${c.freeLimit} · ${plural(c.totalSlabs, 'slab')} · colour_next ${c.colourNext} · next reap at ${c.nextReap} ms${c.freeTouched ? ' · free_touched' : ''}`, 'small') + 2;
    endRow(`${c.name} node`, rowTop);
    rowTop = y;
    const perRow = Math.max(1, Math.floor((width - x0 - PAD) / (THUMB_W + THUMB_GAP)));
    // Each list with slabs on a row of thumbnails; the empty ones named together on one line.
    const empty: string[] = [];
    for (const list of ['partial', 'full', 'free'] as const) {
      const members = c.slabs.map((sl, i) => ({ sl, i })).filter(({ sl }) => sl.list === list);
      if (!members.length) {
        empty.push(list);
        continue;
      }
      label(PAD, y + 1, `${list} (${members.length})`, 'small');
      members.forEach(({ sl, i }, k) => l.thumbs.push({ cacheId: c.id, slab: i, pfn: sl.pfn, x: x0 + (k % perRow) * (THUMB_W + THUMB_GAP), y: y + Math.floor(k / perRow) * (THUMB_H + THUMB_GAP) }));
      y += Math.max(1, Math.ceil(members.length / perRow)) * (THUMB_H + THUMB_GAP) + 2;
    }
    if (empty.length) {
      label(PAD, y + 1, `${empty.join(', ')}: no slabs`, 'small');
      y += LINE + 2;
    }
    endRow(`${c.name} lists`, rowTop);

    // Slabs to scale: the focused one first, then in list order.
    const order = c.slabs.map((_, i) => i);
    const focused = focus && focus.cacheId === c.id ? (places.byCache.get(c.id)?.slabByPfn.get(focus.pfn) ?? -1) : -1;
    const chosen = (focused >= 0 ? [focused, ...order.filter((i) => i !== focused)] : order).slice(0, narrow ? 1 : DETAILED_SLABS);
    const slabBytes = PAGE_SIZE << c.order;
    const w = width - 2 * PAD;
    for (const [k, i] of chosen.entries()) {
      const sl = c.slabs[i];
      if (!sl) continue;
      rowTop = y;
      y += 4;
      y += para(PAD, y, `slab ${sl.pfn} · ${sl.list} · active ${sl.active} / ${c.num} · colour ${sl.colour} (s_mem at ${sl.sMemOffset} B)`, 'text');
      y += para(PAD, y, freelistWords(s, c, i), 'small');
      const arrayCellW = Math.max(2, Math.min(18, Math.floor(w / c.num)));
      l.details.push({ cacheId: c.id, slab: i, pfn: sl.pfn, x: PAD, w, barY: y, barH: BAR_H, scale: w / slabBytes, arrayY: y + BAR_H + 14, arrayCellW });
      y += BAR_H + 14 + ARRAY_CELL_H + 18;
      endRow(`${c.name} slab ${k}`, rowTop);
    }
    rowTop = y;
    if (c.slabs.length > chosen.length) y += para(PAD, y, `${plural(c.slabs.length - chosen.length, 'other slab')} as thumbnails above: click one to draw it to scale.`, 'dim');
    y += PAD;
    endRow(`${c.name} end`, rowTop);
    l.caches.push({ cacheId: c.id, y: top - 4, h: y - top });
  }
  const largeTop = y;
  if (s.large.length) y += para(PAD, y, `kmalloc_large: ${s.large.map((b) => `pfn ${b.pfn} (order ${b.order})`).join(', ')}`, 'small');
  endRow('kmalloc_large', largeTop);
  l.height = y + PAD;
  l.figure = { caches: l.caches.length, slabs: l.details.length + l.thumbs.length };
  return l;
}

/** An array slot's rect (slots past the limit have none). */
export function slotRect(l: Layout, cacheId: number, owner: number, slot: number): Rect | null {
  const a = l.arrays.find((b) => b.cacheId === cacheId && b.owner === owner);
  if (!a || slot < 0 || slot >= a.limit) return null;
  return { x: a.x + (slot % a.perRow) * a.cellW, y: a.y + Math.floor(slot / a.perRow) * a.rowH, w: a.cellW, h: CELL_H };
}

/** An object's rect in its slab drawn to scale, else its slab's thumbnail. */
export function objectRect(l: Layout, s: SlabSnapshot, cacheId: number, pfn: number, index: number): Rect | null {
  const c = s.caches.find((k) => k.id === cacheId);
  const d = l.details.find((b) => b.cacheId === cacheId && b.pfn === pfn);
  const sl = c?.slabs[d?.slab ?? -1];
  if (c && d && sl) return { x: d.x + (sl.sMemOffset + index * c.size) * d.scale, y: d.barY, w: Math.max(1, c.objectSize * d.scale), h: d.barH };
  const t = l.thumbs.find((b) => b.cacheId === cacheId && b.pfn === pfn);
  return t ? { x: t.x, y: t.y, w: THUMB_W, h: THUMB_H } : null;
}

/** A freelist array cell's rect (position `pos` of a slab drawn to scale). */
export function positionRect(d: DetailBox, pos: number): Rect {
  return { x: d.x + pos * d.arrayCellW, y: d.arrayY, w: d.arrayCellW, h: ARRAY_CELL_H };
}

/** Where a NORMAL slab's on-page array sits on its bar. */
export function inPageRect(d: DetailBox, c: SlabCacheState, offset: number): Rect {
  return { x: d.x + offset * d.scale, y: d.barY, w: Math.max(2, c.num * d.scale), h: d.barH };
}

export function thumbRect(t: ThumbBox): Rect {
  return { x: t.x, y: t.y, w: THUMB_W, h: THUMB_H };
}

export const GAUGE_H = 10;

export type Hit =
  | { kind: 'cache'; cacheId: number }
  | { kind: 'entry'; cacheId: number; owner: number; slot: number }
  | { kind: 'slab'; cacheId: number; pfn: number }
  | { kind: 'object'; cacheId: number; pfn: number; index: number }
  | { kind: 'position'; cacheId: number; pfn: number; pos: number };

const inside = (r: Rect, x: number, y: number) => x >= r.x && x < r.x + r.w && y >= r.y && y < r.y + r.h;

/** What is under (x, y), if anything. */
export function hitTest(l: Layout, s: SlabSnapshot, x: number, y: number): Hit | null {
  for (const a of l.arrays) {
    const col = Math.floor((x - a.x) / a.cellW);
    const row = Math.floor((y - a.y) / a.rowH);
    const slot = row * a.perRow + col;
    if (col >= 0 && col < a.perRow && row >= 0 && y - a.y - row * a.rowH < CELL_H && slot < a.limit) return { kind: 'entry', cacheId: a.cacheId, owner: a.owner, slot };
  }
  for (const t of l.thumbs) if (inside(thumbRect(t), x, y)) return { kind: 'slab', cacheId: t.cacheId, pfn: t.pfn };
  for (const d of l.details) {
    const c = s.caches.find((k) => k.id === d.cacheId);
    const sl = c?.slabs[d.slab];
    if (!c || !sl) continue;
    if (y >= d.arrayY && y < d.arrayY + ARRAY_CELL_H && x >= d.x) {
      const pos = Math.floor((x - d.x) / d.arrayCellW);
      if (pos < c.num) return { kind: 'position', cacheId: c.id, pfn: sl.pfn, pos };
    }
    if (y >= d.barY && y < d.barY + d.barH && x >= d.x && x < d.x + d.w) {
      const byte = (x - d.x) / d.scale - sl.sMemOffset;
      const index = Math.floor(byte / c.size);
      if (byte >= 0 && index < c.num) return { kind: 'object', cacheId: c.id, pfn: sl.pfn, index };
      return { kind: 'slab', cacheId: c.id, pfn: sl.pfn };
    }
  }
  for (const b of l.caches) if (y >= b.y && y < b.y + LINE + 8) return { kind: 'cache', cacheId: b.cacheId };
  return null;
}

/** The object a hit names, if it names one (an array entry names the object in that slot). */
export function hitObject(s: SlabSnapshot, h: Hit): { cacheId: number; pfn: number; index: number } | null {
  const c = s.caches.find((k) => k.id === h.cacheId);
  if (!c) return null;
  switch (h.kind) {
    case 'object':
      return h;
    case 'entry': {
      const e = (h.owner < 0 ? c.shared : c.cpus[h.owner])?.entries[h.slot];
      return e ? { cacheId: c.id, pfn: e.pfn, index: e.index } : null;
    }
    case 'position': {
      const sl = c.slabs.find((k) => k.pfn === h.pfn);
      const idx = sl?.freelistArray[h.pos];
      return sl && idx !== undefined && idx < c.num ? { cacheId: c.id, pfn: sl.pfn, index: idx } : null;
    }
    default:
      return null;
  }
}

/** The slab a hit is about (what the view draws to scale first). */
export function hitFocus(s: SlabSnapshot, h: Hit): Focus | null {
  if (h.kind === 'slab' || h.kind === 'object' || h.kind === 'position') return { cacheId: h.cacheId, pfn: h.pfn };
  const o = hitObject(s, h);
  return o ? { cacheId: o.cacheId, pfn: o.pfn } : null;
}

/** The array slot holding an object, for the inspector and the highlight. */
export function entryOf(s: SlabSnapshot, cacheId: number, pfn: number, index: number): { owner: number; slot: number } | null {
  const c = s.caches.find((k) => k.id === cacheId);
  return c ? arraySlotOf(c, pfn, index) : null;
}
