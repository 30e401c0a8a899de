// layout.ts - where the slot lists and each chunk's rows go on the canvas,
// for a snapshot, a width and a zoom (render.ts draws it, the click and
// keyboard handlers hit-test it).
//
// Every chunk row shares one horizontal axis: bytes of the unit, the window
// [zoom.from, zoom.from + zoom.span) spread over the strip's width, so the
// same offset lines up in every chunk and every pane; zooming in goes from a
// whole unit down to single 4-byte bits.  Two densities: detailed (a few
// chunks: block lanes, labels) and compact (many chunks: a thin strip each).

import { alignedLayout, rowHeight } from '../lab/align';
import type { CanvasLayout } from '../lab/LabCanvas';
import { BIT_BYTES } from './areas';
import { mapEntryOffset, type PercpuChunk, type PercpuSnapshot } from './snapshot';

/** The bytes of the unit shown: [from, from + span). */
export interface Zoom {
  from: number;
  span: number;
}

/** The deepest zoom shows this many bytes (16 bits) across a strip. */
export const MIN_SPAN = 64;

export interface Chip {
  id: number;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface SlotCell {
  slot: number;
  x: number;
  w: number;
  chips: Chip[];
  /** Chunks on the list not drawn (the column is full). */
  more: number;
}

export interface ChunkRow {
  /** Index into the snapshot's chunks, and its id. */
  index: number;
  id: number;
  y: number;
  h: number;
  labelY: number;
  popY: number;
  popH: number;
  stripY: number;
  stripH: number;
  /** The chunk's hints (contig, scan, first free), under the strip. */
  hintY: number;
  hintH: number;
  /** Bitmaps: the metadata blocks' lanes (0 high when not drawn). */
  blockY: number;
  blockH: number;
  /** Area map: the map's entries (0 high for the bitmaps). */
  mapY: number;
  mapH: number;
  /** Area map: the entries shown, [first, end), and each one's width. */
  entryFirst: number;
  entryEnd: number;
  entryW: number;
}

export interface PercpuLayout extends CanvasLayout {
  /** Many chunks: each row a thin strip with its label beside it (labelW wide), no block lanes. */
  compact: boolean;
  labelW: number;
  /** The strips' left edge and width, and the bytes they show. */
  x0: number;
  w: number;
  zoom: Zoom;
  slotsY: number;
  slotsH: number;
  slotCells: SlotCell[];
  /** The reserved chunk's chip (on no list), if there is one. */
  reservedChip: Chip | null;
  rows: ChunkRow[];
}

/** A zoom that shows `span` bytes around `center`, kept inside the unit, between a whole unit and MIN_SPAN bytes, on 4-byte bits. */
export function clampZoom(unitSize: number, center: number, span: number): Zoom {
  const sp = Math.max(MIN_SPAN, Math.min(unitSize, Math.round(span / BIT_BYTES) * BIT_BYTES));
  const from = Math.max(0, Math.min(unitSize - sp, Math.round((center - sp / 2) / BIT_BYTES) * BIT_BYTES));
  return { from, span: sp };
}

/** Byte offset -> x on the strips. */
export const xOf = (l: PercpuLayout, byte: number) => l.x0 + ((byte - l.zoom.from) * l.w) / l.zoom.span;
/** x -> byte offset (may lie outside the window). */
export const byteAt = (l: PercpuLayout, x: number) => l.zoom.from + ((x - l.x0) * l.zoom.span) / l.w;

/** Area map entries whose areas meet the window [from, to): [first, end) of the entry indices (the sentinel included). */
function entriesIn(c: PercpuChunk, z: Zoom, whole: boolean): { first: number; end: number; cells: number } {
  const map = c.map;
  if (!map) return { first: 0, end: 0, cells: 1 };
  if (whole) return { first: 0, end: map.length, cells: Math.max(map.length, c.mapAlloc + 1) };
  let first = 0;
  while (first + 1 < map.length && mapEntryOffset(map[first + 1] ?? 0) <= z.from) first++;
  let end = first;
  while (end < map.length && mapEntryOffset(map[end] ?? 0) < z.from + z.span) end++;
  end = Math.max(end, first + 1);
  return { first, end, cells: end - first };
}

/** Compact rows' label column. */
const COMPACT_LABEL_W = 104;

/** The layout for a width and zoom; with the states of the panes beside it (`alignWith`), the slot lists and each chunk as tall as the tallest beside it, so the panes line up row by row. */
export function layoutSnapshot(s: PercpuSnapshot, width: number, zoom: Zoom, alignWith: readonly PercpuSnapshot[] = []): PercpuLayout {
  return alignedLayout(s, alignWith, (x, minH) => layoutAt(x, width, zoom, minH), (l) => l.alignedRows ?? []);
}

function layoutAt(s: PercpuSnapshot, width: number, zoom: Zoom, minH?: ReadonlyMap<string, number>): PercpuLayout {
  const compact = s.chunks.length > 10;
  const full = Math.max(120, width - 16);
  const labelW = compact ? Math.min(COMPACT_LABEL_W, Math.floor(full / 3)) : 0;
  const x0 = 8 + labelW;
  const w = full - labelW;
  const whole = zoom.from === 0 && zoom.span >= s.unitSize;
  let y = 4;

  // Slot lists: one column per slot across the whole width, its chunks stacked head first.
  const slotsY = y;
  const cellW = full / Math.max(1, s.nrSlots);
  const chipH = compact ? 11 : 15;
  const maxChips = compact ? 8 : 6;
  const title = 16;
  const slotCells: SlotCell[] = s.slots.map((ids, slot) => {
    const x = 8 + slot * cellW;
    const shown = ids.slice(0, maxChips);
    return {
      slot,
      x,
      w: cellW,
      chips: shown.map((id, i) => ({ id, x: x + 1, y: slotsY + title + 14 + i * (chipH + 2), w: Math.max(4, cellW - 2), h: chipH })),
      more: ids.length - shown.length,
    };
  });
  const deepest = Math.max(1, ...slotCells.map((c) => c.chips.length + (c.more ? 1 : 0)));
  const reserved = s.chunks.find((c) => c.reserved);
  const reservedChip = reserved ? { id: reserved.id, x: 8 + full - 40, y: slotsY + 1, w: 40, h: chipH } : null;
  const slotsH = rowHeight(minH, 'slot lists', title + 14 + deepest * (chipH + 2) + 6);
  y += slotsH + 4;

  const rows: ChunkRow[] = s.chunks.map((c, index) => {
    // Compact rows carry their label in the column to the left, on the strip's line.
    const labelH = compact ? 0 : 16;
    const popH = compact ? 2 : 4;
    const stripH = compact ? 8 : 20;
    const hintH = compact ? 3 : 8;
    const blockH = !compact && c.blocks ? 14 : 0;
    const mapH = c.map ? (compact ? 5 : 12) : 0;
    const e = entriesIn(c, zoom, whole);
    const row: ChunkRow = {
      index,
      id: c.id,
      y,
      h: 0,
      labelY: y,
      popY: y + labelH,
      popH,
      stripY: y + labelH + popH + 1,
      stripH,
      hintY: 0,
      hintH,
      blockY: 0,
      blockH,
      mapY: 0,
      mapH,
      entryFirst: e.first,
      entryEnd: e.end,
      entryW: w / Math.max(1, e.cells),
    };
    row.hintY = row.stripY + stripH + 1;
    row.blockY = row.hintY + hintH + (blockH ? 2 : 0);
    row.mapY = row.blockY + blockH + (mapH ? 3 : 0);
    row.h = rowHeight(minH, `chunk ${c.id}`, row.mapY + mapH + (compact ? 3 : 10) - y);
    if (compact) row.labelY = row.stripY - 2;
    y += row.h;
    return row;
  });

  const alignedRows = [{ key: 'slot lists', y: slotsY, h: slotsH }, ...rows.map((r) => ({ key: `chunk ${r.id}`, y: r.y, h: r.h }))];
  return { width, height: y + 4, compact, labelW, x0, w, zoom, slotsY, slotsH, slotCells, reservedChip, rows, alignedRows, figure: { chunks: rows.length } };
}

export type PercpuHit =
  /** A byte of a chunk's unit: the 4-byte bit (bitmaps) or 2-byte granule (area map) under the pointer. */
  | { kind: 'byte'; chunk: number; offset: number }
  /** A metadata block of a bitmap chunk (its lanes). */
  | { kind: 'block'; chunk: number; block: number }
  /** An area map entry. */
  | { kind: 'entry'; chunk: number; entry: number }
  /** A chunk as a whole (its label, or its chip on a slot list). */
  | { kind: 'chunk'; chunk: number };

const inside = (c: Chip, x: number, y: number) => x >= c.x && x < c.x + c.w && y >= c.y && y < c.y + c.h;

/** What is under (x, y), if anything. */
export function hitTest(l: PercpuLayout, s: PercpuSnapshot, x: number, y: number): PercpuHit | null {
  if (l.reservedChip && inside(l.reservedChip, x, y)) return { kind: 'chunk', chunk: l.reservedChip.id };
  for (const cell of l.slotCells) for (const chip of cell.chips) if (inside(chip, x, y)) return { kind: 'chunk', chunk: chip.id };
  const row = l.rows.find((r) => y >= r.y && y < r.y + r.h);
  const c = row ? s.chunks[row.index] : undefined;
  if (!row || !c) return null;
  if (y < row.popY || (l.compact && x < l.x0)) return { kind: 'chunk', chunk: c.id };
  if (x < l.x0 || x >= l.x0 + l.w) return null;
  if (row.mapH && y >= row.mapY - 1) {
    const entry = row.entryFirst + Math.floor((x - l.x0) / row.entryW);
    return c.map && entry < c.map.length ? { kind: 'entry', chunk: c.id, entry } : null;
  }
  const byte = Math.floor(byteAt(l, x));
  if (row.blockH && y >= row.blockY - 1 && y < row.blockY + row.blockH) return { kind: 'block', chunk: c.id, block: Math.floor(byte / (s.blockBits * BIT_BYTES)) };
  const grain = c.map ? 2 : BIT_BYTES;
  return { kind: 'byte', chunk: c.id, offset: Math.floor(byte / grain) * grain };
}
