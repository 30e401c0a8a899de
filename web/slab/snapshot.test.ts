// The SLAB snapshot decoder against the C side: the layout the core reports, and states
// built through the real core (the slablab-node build of the same C sources) whose every
// figure the decoder must return; then truncated, corrupted and foreign bytes, each refused
// with a SlabSnapshotError that says what is wrong.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { SlabApi, type SlabModule } from './slab-api';
import {
  SLAB_SNAPSHOT_LAYOUT,
  SlabSnapshotError,
  cacheById,
  decodeSlabSnapshot,
  type SlabCacheState,
  type SlabSnapshot,
} from './snapshot';

let api: SlabApi;

beforeAll(async () => {
  api = new SlabApi(await loadNodeCore<SlabModule>());
});

function withWorld<T>(cfg: Partial<Parameters<SlabApi['createWorld']>[0]>, fn: (w: number) => T): T {
  const w = api.createWorld({ cpus: 2, arenaMb: 16, rules: 'after', kernel: '6.7', initOnFree: false, ringEvents: 0, ...cfg });
  try {
    return fn(w);
  } finally {
    api.destroyWorld(w);
  }
}

function cache(s: SlabSnapshot, id: number): SlabCacheState {
  const c = cacheById(s, id);
  if (!c) throw new Error(`no cache ${id}`);
  return c;
}

describe('the SLAB snapshot layout', () => {
  it('is the one the C side writes', () => {
    const L = SLAB_SNAPSHOT_LAYOUT;
    expect(api.snapshotLayout()).toEqual([
      L.version, L.header, L.cache, L.array, L.slab, L.ref, L.headerKernel, L.cacheNextReap, L.cacheFirstArray,
      L.arrayFirstEntry, L.slabFreelistA, L.slabFirstFreelistByte,
    ]);
  });
});

describe('decodeSlabSnapshot', () => {
  it('decodes a fresh 6.7 world: its kmalloc caches, their geometry, tunables and empty arrays', () => {
    withWorld({}, (w) => {
      const s = decodeSlabSnapshot(api.snapshot(w));
      expect(s.kernel).toBe('6.7');
      expect(s.rules).toBe('after');
      expect(s.ncpus).toBe(2);
      // 6.1 on: kmalloc-32 .. kmalloc-8k, ids = kmalloc indexes.
      expect(s.caches.map((c) => c.name)).toEqual([
        'kmalloc-32', 'kmalloc-64', 'kmalloc-96', 'kmalloc-128', 'kmalloc-192', 'kmalloc-256', 'kmalloc-512',
        'kmalloc-1k', 'kmalloc-2k', 'kmalloc-4k', 'kmalloc-8k',
      ]);
      const k256 = cache(s, 5);
      expect(k256).toMatchObject({ objectSize: 256, size: 256, align: 256, colourOff: 256, num: 16, mgmt: 'OBJFREELIST' });
      expect(k256).toMatchObject({ limit: 120, batchcount: 60, sharedLimit: 480, freeLimit: 3 * 60 + 16, totalSlabs: 0 });
      expect(k256.cpus.map((a) => [a.avail, a.limit, a.batchcount, a.touched])).toEqual([
        [0, 120, 60, false],
        [0, 120, 60, false],
      ]);
      expect(k256.shared?.limit).toBe(480);
      expect(cache(s, 10).shared).toBeNull(); // kmalloc-8k: larger than a page
      expect(cache(s, 0).mgmt).toBe('NORMAL');
      expect(s.large).toEqual([]);
    });
  });

  it('shows each slab, its list, active, colour and where its freelist array lives, and the arrays entry by entry', () => {
    withWorld({ rules: 'before' }, (w) => {
      // kmalloc-256 is OFF_SLAB before OBJFREELIST: its arrays are kmalloc-32 objects.
      const ptrs = Array.from({ length: 20 }, () => api.kmalloc(w, 0, 200));
      expect(ptrs.every((p) => p !== 0)).toBe(true);
      for (const p of ptrs.slice(0, 5)) expect(api.kfree(w, 1, p)).toBe(0);
      // Two full slabs of 16 (a refill takes what one new slab has); CPU 0 still caches 12 of the
      // second: draining them leaves that slab partial.
      api.drainCpu(w, 0);
      const s = decodeSlabSnapshot(api.snapshot(w));
      const c = cache(s, 5);
      expect(c.mgmt).toBe('OFF');
      expect(c.freelistCache).toBe(0);
      expect(c.slabs.length).toBe(c.totalSlabs);
      expect(c.slabs.length).toBe(2);
      for (const slab of c.slabs) {
        expect(slab.freelist.kind).toBe('off-slab');
        if (slab.freelist.kind !== 'off-slab') continue;
        expect(slab.freelist.cacheId).toBe(0);
        // The array is a live kmalloc-32 object: its pointer maps back to the same (pfn, index).
        const holder = api.objectAt(w, 0, slab.freelist);
        expect(holder).not.toBe(0);
        expect(api.objectRef(w, holder)).toEqual({ pfn: slab.freelist.pfn, index: slab.freelist.index });
        expect(slab.freelistArray.length).toBe(16);
        // Positions active .. 15 list distinct free objects.
        const free = Array.from(slab.freelistArray.slice(slab.active));
        expect(new Set(free).size).toBe(16 - slab.active);
        expect(slab.sMemOffset).toBe(slab.colour * c.colourOff);
      }
      const free = c.slabs.reduce((n, sl) => n + (c.num - sl.active), 0);
      expect(free).toBe(c.freeObjects);
      expect(c.slabs.map((sl) => [sl.list, sl.position, sl.active])).toEqual([
        ['partial', 0, 4],
        ['full', 0, 16],
      ]);
      // CPU 1's array holds the five it freed, bottom to top in free order; CPU 0's is empty.
      expect(c.cpus[1]?.entries).toEqual(ptrs.slice(0, 5).map((p) => api.objectRef(w, p)));
      expect(c.cpus[1]?.freeHit).toBe(5);
      expect(c.cpus[0]?.avail).toBe(0);
      expect(c.cpus[0]?.allocMiss).toBe(2);
      for (const e of c.cpus[1]?.entries ?? []) expect(api.objectAt(w, 5, e)).not.toBe(0);
    });
  });

  it('moves the OBJFREELIST array: none while the slab is full, then inside the first object freed', () => {
    withWorld({ cpus: 1 }, (w) => {
      const p = Array.from({ length: 4 }, () => api.kmalloc(w, 0, 1024)); // kmalloc-1k: 4 per slab
      let c = cache(decodeSlabSnapshot(api.snapshot(w)), 7);
      expect(c.slabs).toHaveLength(1);
      expect(c.slabs[0]?.freelist).toEqual({ kind: 'none' });
      expect(c.slabs[0]?.list).toBe('full');
      expect(api.kfree(w, 0, p[2] ?? 0)).toBe(0);
      api.drainCpu(w, 0);
      c = cache(decodeSlabSnapshot(api.snapshot(w)), 7);
      const home = api.objectRef(w, p[2] ?? 0);
      expect(c.slabs[0]?.freelist).toEqual({ kind: 'in-object', index: home?.index });
      expect(c.slabs[0]?.active).toBe(3);
      expect(c.slabs[0]?.freelistArray[3]).toBe(home?.index);
      for (const q of [p[0], p[1], p[3]]) expect(api.kfree(w, 0, q ?? 0)).toBe(0);
    });
  });

  it('shows a NORMAL slab array at the slab end, the node counters, the reap timer and kmalloc_large blocks', () => {
    withWorld({}, (w) => {
      const id = api.cacheCreate(w, 'ctor-100', 100, 0, 0x4); // a constructor: NORMAL(leftover)
      const objs = Array.from({ length: 50 }, () => api.cacheAlloc(w, id, 0));
      const big = api.kmalloc(w, 1, 20000); // above 8 KiB on 6.7: an order-3 block
      api.reap(w, 0, 1000);
      let s = decodeSlabSnapshot(api.snapshot(w));
      const c = cache(s, id);
      expect(c.mgmt).toBe('NORMAL(leftover)');
      expect(c.nextReap).toBe(4000 + (id % 4) * 1000);
      expect(s.reapClock).toBe(1000);
      for (const slab of c.slabs) {
        expect(slab.freelist).toEqual({ kind: 'in-page', offset: (4096 << slab.order) - c.num });
      }
      expect(s.large).toHaveLength(1);
      expect(s.large[0]?.order).toBe(3);
      expect(api.kfree(w, 1, big)).toBe(0);
      for (const o of objs) expect(api.cacheFree(w, id, 0, o)).toBe(0);
      api.reap(w, 0, 9000);
      s = decodeSlabSnapshot(api.snapshot(w));
      expect(s.large).toEqual([]);
      expect(cache(s, id).nextReap).toBe(13000);
      expect(api.validate(w)).toEqual({ rc: 0, message: '' });
    });
  });
});

describe('decodeSlabSnapshot refuses bytes that are not a snapshot', () => {
  const bytes = () => withWorld({}, (w) => {
    api.kmalloc(w, 0, 64);
    return api.snapshot(w);
  });

  it('too short, wrong magic, another version', () => {
    expect(() => decodeSlabSnapshot(new Uint8Array(10))).toThrow(SlabSnapshotError);
    expect(() => decodeSlabSnapshot(new Uint8Array(10))).toThrow(/shorter than its 96-byte header/);
    const b = bytes();
    const bad = b.slice();
    bad[0] = 0;
    expect(() => decodeSlabSnapshot(bad)).toThrow(/magic .* is not "SLAB"/);
    const v2 = b.slice();
    new DataView(v2.buffer).setUint32(4, 2, true);
    expect(() => decodeSlabSnapshot(v2)).toThrow(/version 2, this decoder reads 1/);
  });

  it('truncated anywhere', () => {
    const b = bytes();
    for (const cut of [96, 200, b.byteLength - 1]) {
      expect(() => decodeSlabSnapshot(b.subarray(0, cut))).toThrow(SlabSnapshotError);
    }
    expect(decodeSlabSnapshot(b).caches).toHaveLength(11);
  });

  it('counts or offsets that point past the end, and records with impossible values', () => {
    const b = bytes();
    const set = (at: number, value: number) => {
      const c = b.slice();
      new DataView(c.buffer).setUint32(at, value, true);
      return c;
    };
    expect(() => decodeSlabSnapshot(set(12, 0))).toThrow(/0 CPUs/);
    expect(() => decodeSlabSnapshot(set(20, 5))).toThrow(/array records for/);
    expect(() => decodeSlabSnapshot(set(24, 100000))).toThrow(/slab records past the end/);
    expect(() => decodeSlabSnapshot(set(28, 1 << 20))).toThrow(/array entries past the end/);
    expect(() => decodeSlabSnapshot(set(64, 608))).toThrow(/kernel 608/);
    const dv = new DataView(b.buffer, b.byteOffset);
    const offCaches = dv.getUint32(40, true);
    const offArrays = dv.getUint32(44, true);
    const offSlabs = dv.getUint32(48, true);
    expect(() => decodeSlabSnapshot(set(offCaches + 64 + 24, 7))).toThrow(/management type 7/);
    expect(() => decodeSlabSnapshot(set(offCaches + 64 + 20, 0))).toThrow(/with 0 objects per slab/);
    expect(() => decodeSlabSnapshot(set(offArrays + 4, 1000))).toThrow(/over its limit/);
    expect(() => decodeSlabSnapshot(set(offArrays, 7))).toThrow(/array 0 belongs to 7/);
    const c = b.slice();
    c[offSlabs + 6] = 9;
    expect(() => decodeSlabSnapshot(c)).toThrow(/on list 9/);
    const d = b.slice();
    d[offSlabs + 7] = 8;
    expect(() => decodeSlabSnapshot(d)).toThrow(/freelist kind 8/);
  });
});
