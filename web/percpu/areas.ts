// areas.ts - a chunk's unit as runs of bytes (in use, free, hidden), read
// from what the allocator keeps: the area map's entries (an area spans
// [map[i] & ~1, map[i + 1] & ~1), in use when bit 0 is set) or the bitmaps'
// alloc_map (one bit per 4-byte granule) and bound_map (a set bit where an
// area starts, and one past its end).  The drawing and the inspector both
// read these, computed once per decoded chunk.

import { mapEntryInUse, mapEntryOffset, testBit, type PercpuChunk, type PercpuSnapshot } from './snapshot';

/** Bytes per alloc_map bit (PCPU_MIN_ALLOC_SIZE). */
export const BIT_BYTES = 4;

export const RunState = { FREE: 0, USED: 1, HIDDEN: 2 } as const;
export type RunState = (typeof RunState)[keyof typeof RunState];

/** Runs as flat triples: start byte, end byte, state; in order, covering the unit. */
export type Runs = Int32Array;

/** An area boundary the allocator records: a set bound_map bit (bitmaps) or a map entry (area map), and whether it still delimits an area in use (stale: a bound_map bit a free left behind). */
export interface Tick {
  byte: number;
  live: boolean;
}

const runCache = new WeakMap<PercpuChunk, Runs>();
const tickCache = new WeakMap<PercpuChunk, Tick[]>();

/** The bytes of the unit the chunk serves: [start, end). */
export function region(s: PercpuSnapshot, c: PercpuChunk): { start: number; end: number } {
  return { start: c.startOffset, end: s.unitSize - c.endOffset };
}

/** The chunk's unit as runs: hidden outside its region, else in use or free. */
export function chunkRuns(s: PercpuSnapshot, c: PercpuChunk): Runs {
  const cached = runCache.get(c);
  if (cached) return cached;
  const out: number[] = [];
  const { start, end } = region(s, c);
  const push = (a: number, b: number, st: RunState) => {
    const lo = Math.max(a, start);
    const hi = Math.min(b, end);
    if (lo >= hi) return;
    const n = out.length;
    if (n && out[n - 1] === st && out[n - 2] === lo) out[n - 2] = hi;
    else out.push(lo, hi, st);
  };
  if (c.map) {
    for (let i = 0; i + 1 < c.map.length; i++) {
      const e = c.map[i] ?? 0;
      push(mapEntryOffset(e), mapEntryOffset(c.map[i + 1] ?? 0), mapEntryInUse(e) ? RunState.USED : RunState.FREE);
    }
  } else if (c.allocMap) {
    const map = c.allocMap;
    let runStart = 0;
    let runUsed = testBit(map, 0);
    for (let i = 1; i <= c.nrBits; i++) {
      // Whole bytes of one value are skipped a byte at a time.
      if (i < c.nrBits && (i & 7) === 0 && i + 8 <= c.nrBits && (map[i >> 3] ?? 0) === (runUsed ? 0xff : 0)) {
        i += 7;
        continue;
      }
      const used = i < c.nrBits && testBit(map, i);
      if (i === c.nrBits || used !== runUsed) {
        push(runStart * BIT_BYTES, i * BIT_BYTES, runUsed ? RunState.USED : RunState.FREE);
        runStart = i;
        runUsed = used;
      }
    }
  }
  const runs: number[] = [];
  // The hidden bytes before and after the region frame the runs.
  if (start > 0) runs.push(0, start, RunState.HIDDEN);
  runs.push(...out);
  if (end < s.unitSize) runs.push(end, s.unitSize, RunState.HIDDEN);
  const result = Int32Array.from(runs);
  runCache.set(c, result);
  return result;
}

/** The run holding byte `offset`: [start, end) and its state. */
export function runAt(s: PercpuSnapshot, c: PercpuChunk, offset: number): { start: number; end: number; state: RunState } | null {
  const runs = chunkRuns(s, c);
  let lo = 0;
  let hi = runs.length / 3;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((runs[3 * mid + 1] ?? 0) <= offset) lo = mid + 1;
    else hi = mid;
  }
  if (lo >= runs.length / 3 || (runs[3 * lo] ?? 0) > offset) return null;
  return { start: runs[3 * lo] ?? 0, end: runs[3 * lo + 1] ?? 0, state: (runs[3 * lo + 2] ?? 0) as RunState };
}

/**
 * The area in use that holds byte `offset`, [start, end): one area of a run
 * of neighbouring ones (the area map has an entry per area; the bitmaps
 * mark each start in bound_map, and a free leaves its start bit behind, so
 * only bits inside a run of set alloc_map bits count).
 */
export function areaAt(s: PercpuSnapshot, c: PercpuChunk, offset: number): { start: number; end: number } | null {
  const run = runAt(s, c, offset);
  if (!run || run.state !== RunState.USED) return null;
  if (c.map) {
    for (let i = 0; i + 1 < c.map.length; i++) {
      const a = mapEntryOffset(c.map[i] ?? 0);
      const b = mapEntryOffset(c.map[i + 1] ?? 0);
      if (a <= offset && offset < b) return { start: a, end: b };
    }
    return null;
  }
  const bound = c.boundMap;
  if (!bound) return null;
  const bit = Math.floor(offset / BIT_BYTES);
  let start = bit;
  while (start * BIT_BYTES > run.start && !testBit(bound, start)) start--;
  let end = bit + 1;
  while (end * BIT_BYTES < run.end && !testBit(bound, end)) end++;
  return { start: start * BIT_BYTES, end: end * BIT_BYTES };
}

/**
 * The area boundaries the chunk records, in order: every set bound_map bit,
 * live when it starts or ends an area in use (or is an edge of the region);
 * for the area map every entry's offset, all live (a merge removes entries,
 * so the map keeps no stale ones).
 */
export function boundTicks(s: PercpuSnapshot, c: PercpuChunk): Tick[] {
  const cached = tickCache.get(c);
  if (cached) return cached;
  const out: Tick[] = [];
  const { start, end } = region(s, c);
  if (c.map) {
    for (const e of c.map) if (mapEntryOffset(e) >= start && mapEntryOffset(e) <= end) out.push({ byte: mapEntryOffset(e), live: true });
  } else if (c.boundMap && c.allocMap) {
    const { boundMap, allocMap } = c;
    const used = (i: number) => i >= 0 && i < c.nrBits && testBit(allocMap, i) && i * BIT_BYTES >= start && i * BIT_BYTES < end;
    for (let byte = 0; byte < boundMap.length; byte++) {
      if (!boundMap[byte]) continue;
      for (let k = 0; k < 8; k++) {
        const bit = byte * 8 + k;
        if (bit > c.nrBits || !testBit(boundMap, bit)) continue;
        const edge = bit * BIT_BYTES === start || bit * BIT_BYTES === end;
        out.push({ byte: bit * BIT_BYTES, live: edge || used(bit) || used(bit - 1) });
      }
    }
  }
  tickCache.set(c, out);
  return out;
}
