// render.ts - paints a percpu snapshot into a 2D canvas from a layout
// (layout.ts): the slot lists with each chunk's chip (chunks that moved in
// the step on screen outlined, with the slot they came from), and per chunk
// its unit as a strip (areas in use, free, hidden; unpopulated pages
// dimmed), the bound_map ticks (stale ones, left behind by frees, in
// orange), the chunk's hints, each metadata block's hints, and for the area
// map the map itself as a row of entries, its last memmove of the step
// sliding into place; the areas the step took (solid) and gave back (dashed)
// outlined in sky blue, as the SLUB drawing outlines what a step changed.  Sub-pixel detail is summed per pixel column, so a
// 64-chunk world costs a few milliseconds whatever the zoom.

import { BIT_BYTES, boundTicks, chunkRuns, region, RunState } from './areas';
import type { StepFigures } from './figures';
import { xOf, type ChunkRow, type PercpuHit, type PercpuLayout, type Zoom } from './layout';
import { mapEntryInUse, mapEntryOffset, testBit, type PercpuChunk, type PercpuSnapshot } from './snapshot';
import { numberText as fmt } from '../lab/describe';
import type { CanvasTheme, Theme } from '../lab/theme';

/** A drawing's colours, one palette per theme (the canvas's theme picks it: palette()). */
export type Palette = Readonly<Record<keyof typeof DARK, string>>;

const DARK = {
  background: '#0f1420',
  text: '#d7deea',
  dim: '#8190a8',
  free: '#1c2638',
  used: '#6f84ad',
  mixed: '#46587c',
  hidden: '#3a3f4b',
  unpopulated: 'rgba(5, 8, 14, 0.55)',
  populated: '#94a3b8',
  notPopulated: '#334155',
  tick: '#e2e8f0',
  stale: '#f59e0b',
  contig: '#22c55e',
  scan: '#c084fc',
  sideFree: '#38bdf8',
  firstFree: '#f472b6',
  block: 'rgba(148, 163, 184, 0.45)',
  sentinel: '#e2e8f0',
  capacity: '#151c2a',
  memmove: '#f59e0b',
  selected: '#fde047',
  relegated: '#ef4444',
  chip: '#2d3a55',
  slot: '#151c2b',
  slotAlt: '#131928',
  hatchBack: '#262b36',
  hatchLine: '#59606f',
};

/** The same meanings on the light theme's surfaces. */
const LIGHT: Palette = {
  background: '#f3f5f9',
  text: '#1d2330',
  dim: '#5d6677',
  free: '#d9e1ee',
  used: '#5f76a3',
  mixed: '#9aabc9',
  hidden: '#c3c8d1',
  unpopulated: 'rgba(255, 255, 255, 0.6)',
  populated: '#64748b',
  notPopulated: '#cbd5e1',
  tick: '#1e293b',
  stale: '#c2410c',
  contig: '#15803d',
  scan: '#9333ea',
  sideFree: '#0369a1',
  firstFree: '#be185d',
  block: 'rgba(71, 85, 105, 0.45)',
  sentinel: '#1e293b',
  capacity: '#e6ebf3',
  memmove: '#c2410c',
  selected: '#b45309',
  relegated: '#dc2626',
  chip: '#c3cddd',
  slot: '#e6eaf1',
  slotAlt: '#dde2ea',
  hatchBack: '#d5d9e0',
  hatchLine: '#8a92a3',
};

/** The palette for a theme. */
export const palette = (scheme: Theme): Palette => (scheme === 'dark' ? DARK : LIGHT);

const hatchPatterns = new Map<Palette, CanvasPattern | string>();
/** Diagonal stripes for hidden bytes (a plain colour where no pattern can be made). */
function hatch(ctx: CanvasRenderingContext2D, C: Palette): CanvasPattern | string {
  const made = hatchPatterns.get(C);
  if (made) return made;
  const tile = typeof document === 'undefined' ? null : document.createElement('canvas');
  const t = tile?.getContext('2d');
  if (!tile || !t) return C.hidden;
  tile.width = tile.height = 6;
  t.fillStyle = C.hatchBack;
  t.fillRect(0, 0, 6, 6);
  t.strokeStyle = C.hatchLine;
  t.lineWidth = 1.5;
  t.beginPath();
  t.moveTo(-1, 7);
  t.lineTo(7, -1);
  t.stroke();
  const pattern = ctx.createPattern(tile, 'repeat') ?? C.hidden;
  hatchPatterns.set(C, pattern);
  return pattern;
}

/** What the view draws over the state. */
export interface Overlay {
  zoom: Zoom;
  selected: PercpuHit | null;
  /** The figures of the step on screen (its memmoves and slot moves), null at the start or inside none. */
  step: StepFigures | null;
  /** Progress of the step's animation, 0 to 1 (1: settled). */
  anim: number;
  /** The states of the panes beside this one (the drawings line up row by row). */
  alignWith?: readonly PercpuSnapshot[];
}

/** Legend entries: colour and meaning, in the order the legend lists them. */
export const legend = (C: Palette): readonly (readonly [string, string])[] => [
  [C.used, 'in use'],
  [C.free, 'free'],
  [C.hidden, 'hidden (not the chunk\'s to give out)'],
  [C.populated, 'populated page (the bar above a strip)'],
  [C.tick, 'bound_map tick'],
  [C.stale, 'stale bound_map tick / memmove'],
  [C.contig, 'contig hint'],
  [C.scan, 'scan hint'],
  [C.sideFree, 'left / right free'],
  [C.firstFree, 'first free'],
];


/**
 * Per pixel column of the strip, the share of its bytes that the spans
 * `spans` emits cover: spans narrower than a pixel add up instead of
 * vanishing.
 */
export function coverage(l: Pick<PercpuLayout, 'w' | 'zoom'>, spans: (emit: (start: number, end: number) => void) => void): Float32Array {
  const cols = Math.ceil(l.w);
  const cov = new Float32Array(cols);
  const px = l.zoom.span / l.w;
  spans((start, end) => {
    const a = Math.max(0, (start - l.zoom.from) / px);
    const b = Math.min(cols, (end - l.zoom.from) / px);
    if (b <= a) return;
    const ia = Math.floor(a);
    const ib = Math.min(cols - 1, Math.floor(b - 1e-9));
    if (ia === ib) {
      cov[ia] = (cov[ia] ?? 0) + (b - a);
      return;
    }
    cov[ia] = (cov[ia] ?? 0) + (ia + 1 - a);
    for (let i = ia + 1; i < ib; i++) cov[i] = 1;
    cov[ib] = (cov[ib] ?? 0) + (b - ib);
  });
  return cov;
}

/** Fills runs of columns whose coverage `pick` maps to the same colour (null: leave). */
export function fillColumns(ctx: CanvasRenderingContext2D, x0: number, y: number, h: number, cov: Float32Array, pick: (c: number) => string | CanvasPattern | null): void {
  let i = 0;
  while (i < cov.length) {
    const color = pick(cov[i] ?? 0);
    let j = i + 1;
    while (j < cov.length && pick(cov[j] ?? 0) === color) j++;
    if (color) {
      ctx.fillStyle = color;
      ctx.fillRect(x0 + i, y, j - i, h);
    }
    i = j;
  }
}

function drawSlots(ctx: CanvasRenderingContext2D, C: Palette, s: PercpuSnapshot, l: PercpuLayout, o: Overlay): void {
  ctx.fillStyle = C.text;
  ctx.font = 'bold 12px system-ui, sans-serif';
  ctx.fillText(fitText(ctx, ['slot lists (pcpu_slot[]), head first', 'slot lists, head first', 'slot lists'], l.w - (l.reservedChip ? 150 : 0)), l.x0, l.slotsY + 2);
  const moved = new Map((o.step?.slotMoves ?? []).map((m) => [m.chunk, m]));
  const selectedChunk = o.selected?.chunk;
  const chip = (c: { id: number; x: number; y: number; w: number; h: number }) => {
    const ch = s.chunks.find((k) => k.id === c.id);
    ctx.fillStyle = c.id === selectedChunk ? C.selected : ch?.relegated ? C.relegated : C.chip;
    ctx.fillRect(c.x, c.y, c.w, c.h);
    const m = moved.get(c.id);
    if (m) {
      ctx.strokeStyle = C.stale;
      ctx.lineWidth = 2;
      ctx.strokeRect(c.x + 1, c.y + 1, c.w - 2, c.h - 2);
    }
    ctx.fillStyle = c.id === selectedChunk ? C.background : C.text;
    ctx.font = '12px system-ui, sans-serif';
    const from = m ? (m.from === null ? ' new' : m.relegated ? ' ↓0' : ` ←${m.from}`) : '';
    const text = c.w >= 34 ? `${c.id}${from}` : `${c.id}`;
    ctx.fillText(text, c.x + 2, c.y + (l.compact ? 1 : 2));
  };
  ctx.font = '12px system-ui, sans-serif';
  for (const cell of l.slotCells) {
    ctx.fillStyle = cell.slot % 2 ? C.slot : C.slotAlt;
    ctx.fillRect(cell.x, l.slotsY + 16, cell.w, l.slotsH - 16);
    ctx.fillStyle = C.dim;
    ctx.font = '12px system-ui, sans-serif';
    const name = cell.slot === s.nrSlots - 1 && cell.w > 30 ? `${cell.slot} empty` : String(cell.slot);
    ctx.fillText(name, cell.x + 2, l.slotsY + 18);
    cell.chips.forEach(chip);
    if (cell.more) {
      const last = cell.chips.at(-1);
      ctx.fillStyle = C.dim;
      ctx.fillText(`+${cell.more}`, cell.x + 2, (last?.y ?? l.slotsY) + (last?.h ?? 0) + 2);
    }
  }
  if (l.reservedChip) {
    ctx.fillStyle = C.dim;
    ctx.font = '12px system-ui, sans-serif';
    ctx.textAlign = 'right';
    ctx.fillText('reserved (no list)', l.reservedChip.x - 4, l.reservedChip.y + 2);
    ctx.textAlign = 'left';
    chip(l.reservedChip);
  }
}

/** A chunk's label, from the longest form to the shortest (the first that fits is drawn). */
function chunkLabels(c: PercpuChunk): string[] {
  const where = c.slot === null ? 'on no slot list' : `slot ${c.slot}${c.position === 0 ? ' (head)' : ` (#${(c.position ?? 0) + 1})`}${c.relegated ? ', relegated' : ''}`;
  const kind = c.first ? 'first chunk' : c.reserved ? 'reserved chunk' : 'chunk';
  const free = `${fmt(c.freeBytes)} B free`;
  // The metadata the chunk keeps, by the name the captions give it.
  const meta = c.map ? ` · area map (${fmt(c.map.length)} entries)` : c.blocks ? ' · bitmap' : '';
  const shortMeta = c.map ? ' · area map' : '';
  return [
    `${kind} ${c.id}${meta} · ${where} · ${free} · ${fmt(c.nrAlloc)} areas · pages ${c.nrPopulated}/${c.nrPages} populated, ${c.nrEmptyPopPages} empty`,
    `${kind} ${c.id}${meta} · ${where} · ${free} · ${fmt(c.nrAlloc)} areas`,
    `${kind} ${c.id}${shortMeta} · ${where} · ${free}`,
    `${c.id} · ${c.slot === null ? 'no list' : `slot ${c.slot}`} · ${free}`,
    `${c.id} · ${c.slot === null ? '-' : `s${c.slot}`} · ${fmt(c.freeBytes)}`,
    `${c.id}`,
  ];
}

/** Text widths by font and text: labels repeat from step to step, and measuring is slow in software. */
const widths = new Map<string, number>();
function textWidth(ctx: CanvasRenderingContext2D, text: string): number {
  const key = `${ctx.font}|${text}`;
  let w = widths.get(key);
  if (w === undefined) {
    if (widths.size > 4000) widths.clear();
    widths.set(key, (w = ctx.measureText(text).width));
  }
  return w;
}

/** The first of `texts` (longest first) that fits `width`, else the last. */
function fitText(ctx: CanvasRenderingContext2D, texts: readonly string[], width: number): string {
  return texts.find((t) => textWidth(ctx, t) <= width) ?? texts[texts.length - 1] ?? '';
}

/** The unit's bytes of every page of a chunk that is not populated. */
function unpopulated(s: PercpuSnapshot, c: PercpuChunk, emit: (start: number, end: number) => void): void {
  const page = s.blockBits * BIT_BYTES;
  for (let p = 0; p < c.nrPages; p++) if (!testBit(c.populated, p)) emit(p * page, (p + 1) * page);
}

function drawStrip(ctx: CanvasRenderingContext2D, C: Palette, s: PercpuSnapshot, c: PercpuChunk, row: ChunkRow, l: PercpuLayout): void {
  const runs = chunkRuns(s, c);
  const each = (state: number) => (emit: (a: number, b: number) => void) => {
    for (let i = 0; i < runs.length; i += 3) if (runs[i + 2] === state) emit(runs[i] ?? 0, runs[i + 1] ?? 0);
  };
  ctx.fillStyle = C.free;
  ctx.fillRect(l.x0, row.stripY, l.w, row.stripH);
  fillColumns(ctx, l.x0, row.stripY, row.stripH, coverage(l, each(RunState.USED)), (v) => (v >= 0.99 ? C.used : v > 0.01 ? C.mixed : null));
  if (c.startOffset || c.endOffset) fillColumns(ctx, l.x0, row.stripY, row.stripH, coverage(l, each(RunState.HIDDEN)), (v) => (v >= 0.5 ? hatch(ctx, C) : null));
  // Populated pages: the bar above the strip; unpopulated ones also dim the strip.
  ctx.fillStyle = C.populated;
  ctx.fillRect(l.x0, row.popY, l.w, row.popH);
  if (c.nrPopulated < c.nrPages) {
    const unpop = coverage(l, (emit) => unpopulated(s, c, emit));
    fillColumns(ctx, l.x0, row.popY, row.popH, unpop, (v) => (v >= 0.5 ? C.notPopulated : null));
    fillColumns(ctx, l.x0, row.stripY, row.stripH, unpop, (v) => (v >= 0.5 ? C.unpopulated : null));
  }
  // Block (page) boundaries.
  const page = s.blockBits * BIT_BYTES;
  ctx.fillStyle = C.block;
  for (let b = Math.ceil(l.zoom.from / page) * page; b <= l.zoom.from + l.zoom.span; b += page) {
    const x = Math.round(xOf(l, b));
    if (x > l.x0 && x < l.x0 + l.w) ctx.fillRect(x, row.popY, 1, row.blockY + row.blockH - row.popY);
  }
}

/**
 * Area boundaries (bound_map bits, area map entries): every one when a
 * 4-byte bit is at least two pixels wide; below that only the stale ones, as
 * a mark above the strip per pixel column that holds one (live ones coincide
 * with the edges of the areas drawn).
 */
function drawTicks(ctx: CanvasRenderingContext2D, C: Palette, s: PercpuSnapshot, c: PercpuChunk, row: ChunkRow, l: PercpuLayout): void {
  const ticks = boundTicks(s, c);
  if (!ticks.length) return;
  const wide = (l.w * BIT_BYTES) / l.zoom.span >= 2;
  let lastStale = -1;
  for (const t of ticks) {
    if (t.byte < l.zoom.from || t.byte > l.zoom.from + l.zoom.span) continue;
    const x = Math.min(l.x0 + l.w - 1, Math.round(xOf(l, t.byte)));
    if (wide && t.live) {
      ctx.fillStyle = C.tick;
      ctx.fillRect(x, row.stripY, 1, row.stripH);
    } else if (!t.live && x !== lastStale) {
      lastStale = x;
      ctx.fillStyle = C.stale;
      ctx.fillRect(x, row.stripY - 2, 1, wide ? Math.ceil(row.stripH * 0.5) + 2 : 4);
    }
  }
}

/** A span of bits [start, start + len) of a lane as a bar (clipped to the window). */
function bar(ctx: CanvasRenderingContext2D, l: PercpuLayout, startBit: number, len: number, y: number, h: number, color: string): void {
  if (len <= 0) return;
  const x0 = Math.max(l.x0, xOf(l, startBit * BIT_BYTES));
  const x1 = Math.min(l.x0 + l.w, xOf(l, (startBit + len) * BIT_BYTES));
  if (x1 <= x0 - 0.5) return;
  ctx.fillStyle = color;
  ctx.fillRect(x0, y, Math.max(1, x1 - x0), h);
}

function marker(ctx: CanvasRenderingContext2D, C: Palette, l: PercpuLayout, byte: number, y: number, h: number): void {
  const x = xOf(l, byte);
  if (x < l.x0 - 0.5 || x > l.x0 + l.w) return;
  ctx.fillStyle = C.firstFree;
  ctx.beginPath();
  ctx.moveTo(x, y);
  ctx.lineTo(x - 3, y + h);
  ctx.lineTo(x + 3, y + h);
  ctx.closePath();
  ctx.fill();
}

function drawHints(ctx: CanvasRenderingContext2D, C: Palette, c: PercpuChunk, row: ChunkRow, l: PercpuLayout): void {
  const half = Math.max(1, Math.floor(row.hintH / 2));
  if (c.map) {
    // The area map keeps first_free as a map index and no start for its contig hint.
    const e = c.map[Math.min(c.firstFree, c.map.length - 1)] ?? 0;
    marker(ctx, C, l, mapEntryOffset(e), row.hintY, row.hintH);
    return;
  }
  if (c.contigHintStart !== null) bar(ctx, l, c.contigHintStart, c.contigHint, row.hintY, half, C.contig);
  bar(ctx, l, c.scanHintStart, c.scanHint, row.hintY + half, row.hintH - half, C.scan);
  marker(ctx, C, l, c.firstFree * BIT_BYTES, row.hintY, row.hintH);
}

function drawBlocks(ctx: CanvasRenderingContext2D, C: Palette, s: PercpuSnapshot, c: PercpuChunk, row: ChunkRow, l: PercpuLayout): void {
  const b = c.blocks;
  if (!b || !row.blockH) return;
  const lane = Math.floor((row.blockH - 2) / 3);
  const bits = s.blockBits;
  for (let k = 0; k < c.nrPages; k++) {
    const base = k * bits;
    if ((base + bits) * BIT_BYTES <= l.zoom.from || base * BIT_BYTES >= l.zoom.from + l.zoom.span) continue;
    bar(ctx, l, base + (b.contigHintStart[k] ?? 0), b.contigHint[k] ?? 0, row.blockY, lane, C.contig);
    bar(ctx, l, base + (b.scanHintStart[k] ?? 0), b.scanHint[k] ?? 0, row.blockY + lane + 1, lane, C.scan);
    bar(ctx, l, base, b.leftFree[k] ?? 0, row.blockY + 2 * lane + 2, lane, C.sideFree);
    const right = b.rightFree[k] ?? 0;
    bar(ctx, l, base + bits - right, right, row.blockY + 2 * lane + 2, lane, C.sideFree);
    const ff = b.firstFree[k] ?? bits;
    if (ff < bits) {
      const x = xOf(l, (base + ff) * BIT_BYTES);
      if (x >= l.x0 && x <= l.x0 + l.w) {
        ctx.fillStyle = C.firstFree;
        ctx.fillRect(Math.round(x), row.blockY, 1, row.blockH);
      }
    }
  }
}

/** The area map's entries [entryFirst, entryEnd) as cells; the step's last memmove of this chunk slides in. */
function drawMap(ctx: CanvasRenderingContext2D, C: Palette, c: PercpuChunk, row: ChunkRow, l: PercpuLayout, o: Overlay): void {
  const map = c.map;
  if (!map || !row.mapH) return;
  const cells = Math.ceil(l.w / row.entryW);
  ctx.fillStyle = C.capacity;
  ctx.fillRect(l.x0, row.mapY, l.w, row.mapH);
  const cellX = (i: number) => l.x0 + (i - row.entryFirst) * row.entryW;
  if (row.entryW >= 2) {
    const gap = row.entryW >= 5 ? 1 : 0;
    for (let i = row.entryFirst; i < Math.min(row.entryEnd, row.entryFirst + cells); i++) {
      const e = map[i] ?? 0;
      ctx.fillStyle = i === map.length - 1 ? C.sentinel : mapEntryInUse(e) ? C.used : C.free;
      ctx.fillRect(cellX(i), row.mapY, row.entryW - gap, row.mapH);
      if (row.entryW >= 8) {
        // Where the entry's area starts on the strip above.
        ctx.fillStyle = 'rgba(226, 232, 240, 0.25)';
        const x = xOf(l, mapEntryOffset(e));
        if (x >= l.x0 && x <= l.x0 + l.w) ctx.fillRect(Math.round(x), row.stripY + row.stripH, 1, 2);
      }
    }
  } else {
    // Many entries per pixel: the share in use per column.
    const cov = new Float32Array(Math.ceil(l.w));
    const per = 1 / row.entryW;
    for (let i = row.entryFirst; i < row.entryEnd; i++) {
      const col = Math.floor((i - row.entryFirst) * row.entryW);
      if (col < cov.length && mapEntryInUse(map[i] ?? 0)) cov[col] = (cov[col] ?? 0) + 1 / per;
    }
    const used = Math.min(cov.length, Math.ceil((row.entryEnd - row.entryFirst) * row.entryW));
    ctx.fillStyle = C.free;
    ctx.fillRect(l.x0, row.mapY, used, row.mapH);
    fillColumns(ctx, l.x0, row.mapY, row.mapH, cov, (v) => (v >= 0.99 ? C.used : v > 0.01 ? C.mixed : null));
  }
  const mm = o.step?.lastMemmove.find((m) => m.chunk === c.id);
  if (!mm || mm.entries === 0) return;
  // The moved tail now sits at [first + shift, first + shift + entries); it slides there from where it was.
  const a = Math.max(row.entryFirst, mm.first + mm.shift);
  const b = Math.min(row.entryEnd, mm.first + mm.shift + mm.entries);
  if (b <= a) return;
  const slide = Math.sign(mm.shift) * Math.max(Math.abs(mm.shift) * row.entryW, 8) * (1 - o.anim);
  const x = cellX(a) - slide;
  ctx.fillStyle = 'rgba(245, 158, 11, 0.55)';
  ctx.fillRect(x, row.mapY - 2, Math.max(2, (b - a) * row.entryW), row.mapH + 4);
  ctx.fillStyle = C.memmove;
  const ax = mm.shift > 0 ? x - 2 : x + 2;
  ctx.beginPath();
  ctx.moveTo(ax + (mm.shift > 0 ? 6 : -6), row.mapY + row.mapH / 2);
  ctx.lineTo(ax, row.mapY);
  ctx.lineTo(ax, row.mapY + row.mapH);
  ctx.closePath();
  ctx.fill();
}

function drawSelection(ctx: CanvasRenderingContext2D, C: Palette, s: PercpuSnapshot, c: PercpuChunk, row: ChunkRow, l: PercpuLayout, sel: PercpuHit): void {
  ctx.strokeStyle = C.selected;
  ctx.lineWidth = 2;
  if (sel.kind === 'chunk') {
    ctx.strokeRect(l.x0 - 2, row.stripY - 2, l.w + 4, row.stripH + 4);
    return;
  }
  if (sel.kind === 'entry') {
    const x = l.x0 + (sel.entry - row.entryFirst) * row.entryW;
    if (row.mapH) ctx.strokeRect(x - 1, row.mapY - 1, Math.max(3, row.entryW + 2), row.mapH + 2);
    return;
  }
  const page = s.blockBits * BIT_BYTES;
  const [lo, hi] = sel.kind === 'block' ? [sel.block * page, (sel.block + 1) * page] : [sel.offset, sel.offset + (c.map ? 2 : BIT_BYTES)];
  const x0 = Math.max(l.x0, xOf(l, lo));
  const x1 = Math.min(l.x0 + l.w, xOf(l, hi));
  if (x1 < l.x0 || x0 > l.x0 + l.w) return;
  const top = sel.kind === 'block' ? row.blockY : row.stripY;
  const h = sel.kind === 'block' ? row.blockH : row.stripH;
  ctx.strokeRect(x0 - 1, top - 1, Math.max(3, x1 - x0 + 2), h + 2);
}

/** What the last whole paint of each canvas showed: a frame that only moves the animation repaints just the sliding map rows. */
const painted = new WeakMap<CanvasRenderingContext2D, { s: PercpuSnapshot; width: number; height: number; zoom: Zoom; selected: PercpuHit | null; step: StepFigures | null }>();

function repaintsOnlyTheAnimation(ctx: CanvasRenderingContext2D, s: PercpuSnapshot, l: PercpuLayout, o: Overlay): boolean {
  const last = painted.get(ctx);
  return !!last && last.s === s && last.width === l.width && last.height === l.height && last.zoom.from === l.zoom.from && last.zoom.span === l.zoom.span && last.selected === o.selected && last.step === o.step;
}

export function drawSnapshot(ctx: CanvasRenderingContext2D, s: PercpuSnapshot, l: PercpuLayout, o: Overlay, colors: CanvasTheme): void {
  const C = palette(colors.scheme);
  ctx.textBaseline = 'top';
  ctx.textAlign = 'left';
  if (repaintsOnlyTheAnimation(ctx, s, l, o)) {
    for (const m of o.step?.lastMemmove ?? []) {
      const row = l.rows.find((r) => r.id === m.chunk);
      const c = row ? s.chunks[row.index] : undefined;
      if (!row || !c || !row.mapH) continue;
      ctx.fillStyle = C.background;
      ctx.fillRect(0, row.mapY - 3, l.width, row.mapH + 6);
      drawMap(ctx, C, c, row, l, o);
      if (o.selected?.kind === 'entry' && o.selected.chunk === c.id) drawSelection(ctx, C, s, c, row, l, o.selected);
    }
    return;
  }
  painted.set(ctx, { s, width: l.width, height: l.height, zoom: l.zoom, selected: o.selected, step: o.step });
  ctx.fillStyle = C.background;
  ctx.fillRect(0, 0, l.width, l.height);
  drawSlots(ctx, C, s, l, o);
  const moved = new Map((o.step?.lastMemmove ?? []).map((m) => [m.chunk, m]));
  for (const row of l.rows) {
    const c = s.chunks[row.index];
    if (!c) continue;
    ctx.font = '12px system-ui, sans-serif';
    const mm = moved.get(c.id);
    const note = mm && !l.compact ? `memmove ${fmt(mm.entries)} ${mm.shift > 0 ? `→${mm.shift}` : `←${-mm.shift}`}` : '';
    const noteW = note ? textWidth(ctx, note) + 12 : 0;
    ctx.fillStyle = o.selected?.chunk === c.id ? C.selected : C.text;
    if (l.compact) ctx.fillText(fitText(ctx, chunkLabels(c), l.labelW - 6), 8, row.labelY);
    else ctx.fillText(fitText(ctx, chunkLabels(c), l.w - noteW), l.x0, row.labelY + 1);
    if (note) {
      ctx.fillStyle = C.memmove;
      ctx.textAlign = 'right';
      ctx.fillText(note, l.x0 + l.w, row.labelY + 1);
      ctx.textAlign = 'left';
    }
    drawStrip(ctx, C, s, c, row, l);
    drawTicks(ctx, C, s, c, row, l);
    drawHints(ctx, C, c, row, l);
    drawBlocks(ctx, C, s, c, row, l);
    drawMap(ctx, C, c, row, l, o);
    drawChanged(ctx, c, row, l, o);
    if (o.selected && o.selected.chunk === c.id) drawSelection(ctx, C, s, c, row, l, o.selected);
  }
}

/** The colour of what the step changed (the SLUB drawing's too). */
const CHANGED = '#0ea5e9';

/** The areas the step on screen took (solid outline) or gave back (dashed) in this chunk. */
function drawChanged(ctx: CanvasRenderingContext2D, c: PercpuChunk, row: ChunkRow, l: PercpuLayout, o: Overlay): void {
  const areas = o.step?.areas.filter((a) => a.chunk === c.id) ?? [];
  if (!areas.length) return;
  ctx.save();
  ctx.strokeStyle = CHANGED;
  ctx.lineWidth = 2;
  for (const a of areas) {
    const x0 = Math.max(l.x0, xOf(l, a.offset));
    const x1 = Math.min(l.x0 + l.w, xOf(l, a.offset + a.size));
    if (x1 < l.x0 || x0 > l.x0 + l.w) continue;
    ctx.setLineDash(a.freed ? [4, 3] : []);
    ctx.strokeRect(x0 - 1, row.stripY - 3, Math.max(3, x1 - x0) + 2, row.stripH + 6);
  }
  ctx.restore();
}

/** The region of the unit a chunk serves, for words. */
export function regionText(s: PercpuSnapshot, c: PercpuChunk): string {
  const { start, end } = region(s, c);
  return `bytes ${fmt(start)} to ${fmt(end)} of its ${fmt(s.unitSize)}-byte unit`;
}
