// The percpu snapshot decoder against the C layout and the real core (the
// slablab-node build of the same C sources), for each allocator: a booted
// world, areas and their maps, replays, relegation, and buffers that are
// not snapshots.
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind } from '../core/events.generated';
import { loadNodeCore } from '../test/node-core';
import { KERNEL_BOOT, PercpuApi, PercpuError, type PercpuConfig, type PercpuModule, type PercpuRef } from './percpu-api';
import {
  ALLOCATORS,
  BLOCK_RECORD_SIZE,
  CHUNK_RECORD_SIZE,
  chunkById,
  decodePercpuSnapshot,
  HEADER_SIZE,
  mapEntryInUse,
  mapEntryOffset,
  NONE32,
  PCPU_SNAP_MAGIC,
  PCPU_SNAP_VERSION,
  PercpuSnapshotError,
  testBit,
  type Allocator,
  type PercpuChunk,
} from './snapshot';

let api: PercpuApi;

beforeAll(async () => {
  api = new PercpuApi(await loadNodeCore<PercpuModule>());
});

const boot = (allocator: Allocator): PercpuConfig => ({ allocator, cpus: 2, ...KERNEL_BOOT });
const START = KERNEL_BOOT.staticSize + KERNEL_BOOT.reservedSize; // 191488
const END = START + KERNEL_BOOT.dynSize; // 220160

/** Runs `fn` on a fresh world and destroys it. */
function withWorld<T>(c: PercpuConfig, traceRing: number, fn: (w: number) => T): T {
  const w = api.create(c, traceRing);
  try {
    return fn(w);
  } finally {
    api.destroyWorld(w);
  }
}

function alloc(w: number, size: number, align: number, reserved = false): PercpuRef {
  const { rc, ref } = api.alloc(w, 0, size, align, reserved);
  if (rc !== 0 || !ref) throw new Error(`alloc ${size}/${align} failed: ${api.strerror(rc)}`);
  return ref;
}

/** The area [off, off + size) as the chunk's maps record it. */
function expectArea(c: PercpuChunk, off: number, size: number): void {
  if (c.map) {
    const i = Array.from(c.map).findIndex((e) => mapEntryOffset(e) === off);
    expect(mapEntryInUse(c.map[i] ?? 0)).toBe(true);
    expect(mapEntryOffset(c.map[i + 1] ?? 0)).toBeGreaterThanOrEqual(off + size);
  } else if (c.allocMap && c.boundMap) {
    for (let b = off / 4; b < (off + size) / 4; b++) expect(testBit(c.allocMap, b)).toBe(true);
    expect(testBit(c.boundMap, off / 4)).toBe(true);
    expect(testBit(c.boundMap, (off + size) / 4)).toBe(true);
  }
}

it('reports the layout the decoder assumes', () => {
  expect(api.snapshotLayout()).toEqual([HEADER_SIZE, CHUNK_RECORD_SIZE, BLOCK_RECORD_SIZE, PCPU_SNAP_MAGIC,
    PCPU_SNAP_VERSION, 1024, NONE32]);
});

describe.each(ALLOCATORS)('%s', (allocator) => {
  it('decodes a booted world: the first chunk, its hidden regions, the reserved chunk', () => {
    withWorld(boot(allocator), 0, (w) => {
      const s = decodePercpuSnapshot(api.snapshot(w));
      expect(s.allocator).toBe(allocator);
      expect([s.nrUnits, s.unitSize, s.unitPages, s.staticSize, s.reservedSize, s.dynSize])
        .toEqual([2, 262144, 64, 183296, 8192, 28672]);
      expect(s.chunks.map((c) => [c.id, c.first, c.reserved])).toEqual([[0, true, false], [1, false, true]]);
      expect([s.firstChunkId, s.reservedChunkId, s.nextChunkId]).toEqual([0, 1, 2]);
      expect(s.nrEmptyPopPages).toBe(6); // pages 47..52
      const first = chunkById(s, 0);
      const reserved = chunkById(s, 1);
      if (!first || !reserved) throw new Error('chunks missing');
      expect([first.startOffset, first.endOffset, first.freeBytes]).toEqual([START, 262144 - END, 28672]);
      expect(first.nrPopulated).toBe(64);
      expect(Array.from(first.populated.subarray(0, 8))).toEqual(Array(8).fill(255));
      expect(first.slot).not.toBeNull();
      expect(s.slots[first.slot ?? -1]).toContain(0);
      expect([reserved.slot, reserved.position, reserved.startOffset]).toEqual([null, null, 183296]);
      expect(reserved.nrEmptyPopPages).toBe(1);
      if (first.map) {
        expect(Array.from(first.map)).toEqual([1, START, END | 1]);
        expect(first.mapAlloc).toBe(128);
      } else {
        const { allocMap, boundMap, blocks } = first;
        if (!allocMap || !boundMap || !blocks) throw new Error('bitmaps missing');
        expect([testBit(allocMap, START / 4 - 1), testBit(allocMap, START / 4), testBit(allocMap, END / 4 - 1),
          testBit(allocMap, END / 4)]).toEqual([true, false, false, true]);
        for (const b of [0, START / 4, END / 4, 65536]) expect(testBit(boundMap, b)).toBe(true);
        expect(first.nrBits).toBe(65536);
        expect(Array.from(blocks.nrBits).every((n) => n === 1024)).toBe(true);
        expect(blocks.contigHint[10]).toBe(0); // static
        expect(blocks.contigHint[50]).toBe(1024); // dynamic, empty
        expect(first.contigHint).toBe(28672 / 4);
      }
    });
  });

  it('shows every live area in its chunk, in the maps, and a freed one as free', () => {
    withWorld(boot(allocator), 0, (w) => {
      const areas: [PercpuRef, number][] = [];
      for (const [size, align, reserved] of [[4, 4, false], [24, 8, false], [16, 16, true], [9000, 64, false],
        [4, 8, false], [40, 4, true], [30000, 4, false]] as const)
        areas.push([alloc(w, size, align, reserved), size]);
      const [gone] = areas.splice(1, 1);
      if (!gone) throw new Error('no area');
      expect(api.free(w, 1, gone[0])).toBe(0);
      expect(api.validate(w)).toEqual({ rc: 0, message: '' });
      const s = decodePercpuSnapshot(api.snapshot(w));
      expect([s.nrAllocs, s.nrFrees]).toEqual([7, 1]);
      expect(s.chunks.length).toBe(3); // the 30000-byte area did not fit the dynamic region
      for (const [ref, size] of areas) {
        const c = chunkById(s, ref.chunk);
        if (!c) throw new Error(`no chunk ${ref.chunk}`);
        expect(c.reserved).toBe(ref.chunk === s.reservedChunkId);
        expectArea(c, ref.offset, size);
      }
      for (const c of s.chunks) expect(c.nrAlloc).toBe(areas.filter(([r]) => r.chunk === c.id).length);
      const first = chunkById(s, 0);
      if (first?.allocMap && first.boundMap) {
        // The freed area's bits are clear; its start stays set in bound_map (stale), as the kernel leaves it.
        expect(testBit(first.allocMap, gone[0].offset / 4)).toBe(false);
        expect(testBit(first.boundMap, gone[0].offset / 4)).toBe(true);
      }
      const listed = s.slots.flat().sort((a, b) => a - b);
      expect(listed).toEqual(s.chunks.filter((c) => !c.reserved).map((c) => c.id));
      s.slots.forEach((ids, slot) => ids.forEach((id, pos) => {
        expect([chunkById(s, id)?.slot, chunkById(s, id)?.position]).toEqual([slot, pos]);
      }));
      expect(s.nrEmptyPopPages).toBe(s.chunks.filter((c) => !c.reserved).reduce((n, c) => n + c.nrEmptyPopPages, 0));
    });
  });

  it('gives the same bytes, and the same events, when the same operations replay on a fresh world', () => {
    const script = (w: number) => {
      const live: PercpuRef[] = [];
      let x = 12345;
      for (let i = 0; i < 400; i++) {
        x = (x * 1103515245 + 12345) >>> 0;
        if (live.length && x % 3 === 0) {
          const [ref] = live.splice((x >>> 8) % live.length, 1);
          if (ref) api.free(w, i % 2, ref);
        } else {
          const { ref } = api.alloc(w, i % 2, 4 + ((x >>> 4) % 2000) * 4, 4 << ((x >>> 16) % 5), x % 7 === 0);
          if (ref) live.push(ref);
        }
      }
      api.free(w, 0, { chunk: 99, offset: 0 }); // foreign: an error, and its events
      return { snap: api.snapshot(w), events: api.drain(w, 2) };
    };
    const a = withWorld(boot(allocator), 1 << 14, script);
    const b = withWorld(boot(allocator), 1 << 14, script);
    expect(Buffer.from(b.snap).equals(Buffer.from(a.snap))).toBe(true);
    expect(b.events.map((r) => Buffer.from(r).toString('hex'))).toEqual(a.events.map((r) => Buffer.from(r).toString('hex')));
    expect(decodePercpuSnapshot(a.snap).lastOp).toBe(401);
  });

  it('reports an allocation as events that name its chunk and offset', () => {
    withWorld(boot(allocator), 1024, (w) => {
      api.drain(w, 2);
      const ref = alloc(w, 12, 4);
      const ev = decodeEvents(api.drain(w, 2)[0] ?? new Uint8Array(0));
      const kinds = ev.map((e) => e.kind);
      expect(kinds[0]).toBe(EventKind.OP_BEGIN);
      expect(kinds.at(-1)).toBe(EventKind.OP_END);
      expect(kinds).toContain(EventKind.PCPU_ALLOC_SCAN);
      const a = ev.find((e) => e.kind === EventKind.PCPU_ALLOC);
      expect([a?.slab, a?.arg0, a?.arg1]).toEqual([ref.chunk, ref.offset, 12]);
      expect([ev.at(-1)?.slab, ev.at(-1)?.obj]).toEqual([ref.chunk, ref.offset]);
      expect(api.free(w, 0, ref)).toBe(0);
      expect(api.free(w, 0, ref)).not.toBe(0);
      expect(api.free(w, 7, ref)).toBe(-2); // no CPU 7: SL_EINVAL
    });
    withWorld(boot(allocator), 0, (w) => {
      alloc(w, 4, 4);
      expect(api.drain(w, 2).map((r) => r.byteLength)).toEqual([0, 0]); // no trace asked for
    });
  });
});

it('keeps a per-CPU counter by area', () => {
  withWorld({ allocator: 'bitmap', cpus: 3, unitSize: 4 * 4096, staticSize: 0, reservedSize: 0, dynSize: 0 }, 0, (w) => {
    const ref = alloc(w, 8, 8);
    for (let cpu = 0; cpu < 3; cpu++) expect(api.add(w, ref, cpu, 10 + cpu)).toBe(0);
    expect(api.sum(w, ref)).toBe(33);
    expect(api.add(w, ref, 3, 1)).toBe(-2);
    expect(api.sum(w, { chunk: 5, offset: 0 })).toBeNaN();
  });
});

it('shows the scan-hint series relegating a chunk that fails a small aligned fit, and v4.14 not', () => {
  for (const allocator of ['bitmap', 'scanhint'] as const) {
    withWorld({ allocator, cpus: 1, unitSize: 4 * 4096, staticSize: 0, reservedSize: 0, dynSize: 0 }, 0, (w) => {
      const refs = Array.from({ length: 4096 }, () => alloc(w, 4, 4));
      expect(refs.every((r) => r.chunk === 0)).toBe(true);
      expect(api.free(w, 0, refs[1] ?? { chunk: 0, offset: 4 })).toBe(0);
      expect(alloc(w, 4, 8).chunk).not.toBe(0);
      const c = chunkById(decodePercpuSnapshot(api.snapshot(w)), 0);
      expect([c?.slot, c?.computedSlot, c?.relegated]).toEqual(allocator === 'scanhint' ? [0, 1, true] : [1, 1, false]);
      expect(api.validate(w).rc).toBe(0);
    });
  }
});

it('refuses bad worlds with the reason', () => {
  expect(() => api.create({ allocator: 'bitmap', cpus: 0, unitSize: 0, staticSize: 0, reservedSize: 0, dynSize: 0 }, 0))
    .toThrow(PercpuError);
  expect(() => api.create({ ...boot('areamap'), staticSize: 262144 }, 0)).toThrow(/could not create a percpu world/);
  // A null world is refused, not followed.
  expect(api.free(0, 0, { chunk: 0, offset: 0 })).toBe(-2);
  expect(api.alloc(0, 0, 4, 4, false)).toEqual({ rc: -2, ref: null });
  expect(api.validate(0)).toEqual({ rc: -2, message: 'no world' });
  expect(() => api.snapshot(0)).toThrow(/no snapshot: the core answered -2/);
  expect(api.drain(0, 1)).toEqual([new Uint8Array(0)]);
});

describe('buffers that are not snapshots', () => {
  let good: Uint8Array;
  let area: Uint8Array;
  beforeAll(() => {
    good = withWorld(boot('scanhint'), 0, (w) => {
      for (let i = 0; i < 20; i++) alloc(w, 3000, 4);
      return api.snapshot(w);
    });
    area = withWorld(boot('areamap'), 0, (w) => {
      alloc(w, 4, 4);
      return api.snapshot(w);
    });
  });
  const u32 = (b: Uint8Array, at: number, v: number) => {
    const c = b.slice();
    new DataView(c.buffer).setUint32(at, v, true);
    return c;
  };

  it('decodes the good ones', () => {
    expect(decodePercpuSnapshot(good).chunks.length).toBeGreaterThan(2);
    expect(Array.from(decodePercpuSnapshot(area).chunks[0]?.map ?? [])).toEqual([1, START | 1, START + 4, END | 1]);
  });

  it('refuses every truncation', () => {
    for (const snap of [good, area]) {
      for (let cut = 0; cut < snap.byteLength; cut += cut < 300 ? 1 : 97)
        expect(() => decodePercpuSnapshot(snap.subarray(0, cut)), `cut at ${cut}`).toThrow(PercpuSnapshotError);
    }
  });

  it('names what is corrupt', () => {
    const chunk1 = HEADER_SIZE + CHUNK_RECORD_SIZE;
    const lists = new DataView(good.buffer, good.byteOffset).getUint32(76, true);
    const cases: [Uint8Array, RegExp][] = [
      [u32(good, 0, 0x42554c53), /magic 0x42554c53 is not "PCPU"/],
      [u32(good, 4, 2), /version 2, this decoder reads 1/],
      [u32(good, 8, good.byteLength + 4), /it says \d+ bytes, \d+ given/],
      [u32(good, 12, 7), /allocator kind 7/],
      [u32(good, 24, 63), /unit of 262144 bytes in 63 pages/],
      [u32(good, 32, 1 << 20), /chunk records do not fit/],
      [u32(good, chunk1, 0), /out of id order at record 1/],
      [u32(good, chunk1 + 92, good.byteLength - 8), /chunk 1: alloc_map .* past the end/],
      [u32(good, lists, 1 << 20), /slot 0's 1048576 chunks run past the end/],
      [u32(area, HEADER_SIZE + 80, 1 << 30), /chunk 0: 1073741824 map entries/],
    ];
    for (const [bytes, message] of cases) expect(() => decodePercpuSnapshot(bytes)).toThrow(message);
    // A slot list naming a chunk that is not there.
    const s = decodePercpuSnapshot(good);
    const slot = s.slots.findIndex((l) => l.length > 0);
    let at = lists + 4 * s.nrSlots;
    for (let i = 0; i < slot; i++) at += 4 * (s.slots[i]?.length ?? 0);
    expect(() => decodePercpuSnapshot(u32(good, at, 99))).toThrow(new RegExp(`slot ${slot} lists chunk 99`));
  });
});
