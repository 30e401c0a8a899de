// Layout, hit-testing and the words for what is hit, over real snapshots
// (the Node build of the core): a booted world with areas in use, a freed
// one whose bound_map bit is left stale, a second chunk, and the zoom.
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents } from '../core/events.generated';
import { replaySessions } from '../lab/session';
import { loadNodeCore } from '../test/node-core';
import { areaAt, boundTicks, chunkRuns, runAt, RunState } from './areas';
import { describeHit } from './describe';
import { makerOf, runFigures } from './figures';
import { byteAt, clampZoom, hitTest, layoutSnapshot, MIN_SPAN, xOf, type PercpuLayout } from './layout';
import { PercpuApi, type PercpuModule } from './percpu-api';
import { LAB_BOOT, labWorld } from './scenarios';
import { parseScript } from './script';
import { ALLOCATORS, chunkById, decodePercpuSnapshot, type Allocator, type PercpuSnapshot } from './snapshot';
import { percpuSessions } from './worker';

const START = LAB_BOOT.staticSize + LAB_BOOT.reservedSize; // 6144: the first chunk's dynamic region
const WIDTH = 900;

/** Per allocator: the state after allocating 4 x 8 B and 1 KiB, freeing the middle two 8 B areas, then a chunk's worth, and the run's figures. */
const runs = new Map<Allocator, { snap: PercpuSnapshot; figures: ReturnType<typeof runFigures>; events: number }>();

beforeAll(async () => {
  const api = new PercpuApi(await loadNodeCore<PercpuModule>());
  const open = replaySessions(percpuSessions(api));
  const p = parseScript('a0-8-8-4.a1-1024.f0-0-1-2.a0-4096-4-4', 2);
  if (!p.ok) throw new Error(p.error);
  for (const a of ALLOCATORS) {
    const s = open(labWorld(a, 2), p.script);
    const r = s.load();
    runs.set(a, { snap: decodePercpuSnapshot(s.at(r.stops.length - 1).snapshot), figures: runFigures(decodeEvents(r.events)), events: r.events.byteLength / 36 });
    s.dispose();
  }
});

const get = (a: Allocator) => {
  const r = runs.get(a);
  if (!r) throw new Error(`no run for ${a}`);
  return r;
};

describe.each(ALLOCATORS)('%s', (allocator) => {
  it('reads areas, free runs and hidden bytes from what the allocator keeps', () => {
    const { snap } = get(allocator);
    const first = chunkById(snap, 0);
    if (!first) throw new Error('no first chunk');
    expect(runAt(snap, first, 0)).toMatchObject({ start: 0, end: START, state: RunState.HIDDEN });
    expect(areaAt(snap, first, START + 3)).toEqual({ start: START, end: START + 8 });
    expect(areaAt(snap, first, START + 8)).toBeNull();
    expect(runAt(snap, first, START + 9)).toMatchObject({ start: START + 8, end: START + 24, state: RunState.FREE });
    expect(areaAt(snap, first, START + 24)).toEqual({ start: START + 24, end: START + 32 });
    expect(areaAt(snap, first, START + 32 + 1000)).toEqual({ start: START + 32, end: START + 32 + 1024 });
    const dynEnd = START + LAB_BOOT.dynSize;
    expect(runAt(snap, first, dynEnd)).toMatchObject({ state: RunState.HIDDEN, end: LAB_BOOT.unitSize });
    // The runs cover the unit in order.
    const r = chunkRuns(snap, first);
    expect(r[0]).toBe(0);
    expect(r[r.length - 2]).toBe(LAB_BOOT.unitSize);
    for (let i = 3; i < r.length; i += 3) expect(r[i]).toBe(r[i - 2]);
  });

  it('marks the freed area\'s bound_map bit stale (bitmaps) and keeps no stale entry (area map)', () => {
    const { snap } = get(allocator);
    const first = chunkById(snap, 0);
    if (!first) throw new Error('no first chunk');
    const ticks = new Map(boundTicks(snap, first).map((t) => [t.byte, t.live]));
    // The first area's end and the fourth's start still delimit areas in use.
    expect(ticks.get(START)).toBe(true);
    expect(ticks.get(START + 8)).toBe(true);
    expect(ticks.get(START + 24)).toBe(true);
    // The third area's start lies inside the free run now: the bitmaps keep its bit (stale); the area map merged its entry away.
    if (allocator === 'areamap') {
      expect(ticks.has(START + 16)).toBe(false);
      expect([...ticks.values()].every(Boolean)).toBe(true);
    } else expect(ticks.get(START + 16)).toBe(false);
  });

  it('lays out the slot lists and a row per chunk, and finds what is under the pointer', () => {
    const { snap } = get(allocator);
    const l = layoutSnapshot(snap, WIDTH, { from: 0, span: snap.unitSize });
    expect(l.rows.map((r) => r.id)).toEqual(snap.chunks.map((c) => c.id));
    expect(l.compact).toBe(false);
    // Every chunk on a list has its chip in its slot's column.
    for (const c of snap.chunks) {
      if (c.slot === null) expect(l.reservedChip?.id).toBe(c.id);
      else expect(l.slotCells[c.slot]?.chips.map((k) => k.id)).toContain(c.id);
    }
    const chip = l.slotCells.flatMap((cell) => cell.chips)[0];
    if (!chip) throw new Error('no chip');
    expect(hitTest(l, snap, chip.x + 2, chip.y + 2)).toEqual({ kind: 'chunk', chunk: chip.id });
    const row = l.rows[0];
    if (!row) throw new Error('no row');
    // A byte of the strip, a block's lanes, the map's entries.
    const x = xOf(l, START + 20) + 0.5;
    const grain = allocator === 'areamap' ? 2 : 4;
    expect(hitTest(l, snap, x, row.stripY + 2)).toEqual({ kind: 'byte', chunk: 0, offset: Math.floor(byteAt(l, x) / grain) * grain });
    if (allocator === 'areamap') {
      expect(row.blockH).toBe(0);
      expect(hitTest(l, snap, l.x0 + 1, row.mapY + 1)).toEqual({ kind: 'entry', chunk: 0, entry: 0 });
    } else {
      expect(row.mapH).toBe(0);
      expect(hitTest(l, snap, x, row.blockY + 1)).toEqual({ kind: 'block', chunk: 0, block: 1 });
    }
    expect(hitTest(l, snap, 2, l.height - 1)).toBeNull();
  });

  it('zooms from a whole unit down to 16 bits, and hits the same byte there', () => {
    const { snap } = get(allocator);
    expect(clampZoom(snap.unitSize, 5000, Infinity)).toEqual({ from: 0, span: snap.unitSize });
    const z = clampZoom(snap.unitSize, START + 9, 1);
    expect(z.span).toBe(MIN_SPAN);
    expect(z.from % 4).toBe(0);
    expect(clampZoom(snap.unitSize, snap.unitSize, 100).from + 100).toBeLessThanOrEqual(snap.unitSize + 4);
    const l: PercpuLayout = layoutSnapshot(snap, WIDTH, z);
    const row = l.rows[0];
    if (!row) throw new Error('no row');
    // At this zoom a 4-byte bit is tens of pixels wide: its middle hits it.
    const x = xOf(l, START + 8 + 2);
    expect(hitTest(l, snap, x, row.stripY + 1)).toMatchObject({ kind: 'byte', chunk: 0, offset: START + 8 + (allocator === 'areamap' ? 2 : 0) });
  });

  it('says which step allocated the area under the pointer, and what is free or hidden', () => {
    const { snap, figures, events } = get(allocator);
    const name = (k: number) => `step ${k + 1}`;
    const maker = makerOf(figures, 0, START + 24, events);
    expect(maker).toMatchObject({ step: 0, nth: 3, size: 8, align: 8 });
    const used = describeHit(snap, { kind: 'byte', chunk: 0, offset: START + 28 }, maker, name);
    expect(used).toContain(`belongs to the 8-byte area at offset ${(START + 24).toLocaleString('en')}`);
    expect(used).toContain('allocated by step 1, the 4th area of that step');
    expect(describeHit(snap, { kind: 'byte', chunk: 0, offset: START + 8 }, null, name)).toContain('is free, in a free run of 16 bytes');
    expect(describeHit(snap, { kind: 'byte', chunk: 0, offset: 100 }, null, name)).toContain('is hidden');
    expect(describeHit(snap, { kind: 'chunk', chunk: 0 }, null, name)).toMatch(/^The first chunk \(0\) is on slot list \d+/);
    expect(describeHit(snap, { kind: 'chunk', chunk: 99 }, null, name)).toBe('Chunk 99 does not exist at this moment.');
    // An area allocated only after the moment asked about has no maker yet.
    expect(makerOf(figures, 0, START + 24, 1)).toBeNull();
    if (allocator !== 'areamap') {
      const block = describeHit(snap, { kind: 'block', chunk: 0, block: 1 }, null, name);
      expect(block).toMatch(/^Block 1 covers bits 1,024 to 2,047 \(page 1, populated\)\. contig_hint \d+ bits at \d+;/);
      if (allocator === 'scanhint') expect(block).toContain('scan_hint');
    } else {
      expect(describeHit(snap, { kind: 'entry', chunk: 0, entry: 0 }, null, name)).toContain('the static and reserved regions hidden as one area in use');
    }
  });
});

it('draws a compact row for each of many chunks', () => {
  const { snap } = get('bitmap');
  const many: PercpuSnapshot = { ...snap, chunks: Array.from({ length: 64 }, (_, i) => ({ ...(snap.chunks[0] as PercpuSnapshot['chunks'][number]), id: i })) };
  const l = layoutSnapshot(many, WIDTH, { from: 0, span: snap.unitSize });
  expect(l.compact).toBe(true);
  expect(l.rows).toHaveLength(64);
  expect(l.rows.every((r, i) => i === 0 || r.y >= (l.rows[i - 1]?.y ?? 0) + (l.rows[i - 1]?.h ?? 0))).toBe(true);
  expect(l.rows[0]?.blockH).toBe(0);
});
