// agreement.test.ts - the mirror of object states against hand-built snapshots (each class of
// disagreement on its own), and on the real stream of fixtures/stream-filp.bin (two real
// snapshots of filp and the events between them: every disagreement has a cause).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeKernelSnapshot, type KCache, type KSlab } from '../kernel/snapshot-file';
import { agreement, keyOf, type CacheEvent } from './agreement';
import { ev, F, FrameReader, isAlloc } from './wire';

const PAGE = 4096;
const SIZE = 256;
const PER = 16;
const base = (i: number) => 0xffff888100000000n + BigInt(i) * 4096n;
const obj = (slab: number, i: number) => keyOf(base(slab) + BigInt(i * SIZE));

function slab(i: number, state: string, torn = false): KSlab {
  const inuse = [...state].filter((c) => c === 'a').length;
  return { address: `0x${(0xffffea0000000000n + BigInt(i) * 64n).toString(16)}`, base: base(i), objects: PER, inuse, frozen: false, freelist: [], freelistError: null, torn, state };
}

function cache(slabs: KSlab[]): KCache {
  return {
    name: 'test', address: '0x1', objectSize: SIZE, size: SIZE, offset: 0, align: 8, order: 0, objectsPerSlab: PER, flags: 0, inuse: SIZE, redLeftPad: 0, minPartial: 5, cpuPartial: 0, sheafCapacity: 0,
    cpus: [],
    nodes: [{ node: 0, nrPartial: slabs.length, nrSlabs: slabs.length, totalObjects: slabs.length * PER, partial: slabs, partialLeftOut: 0, barn: null }],
    torn: { cpus: [], slabs: [], nodes: [], droppedRecords: 0, complete: true },
    totals: null,
  };
}

const W = { before: [0, 10] as [number, number], after: [1000, 1010] as [number, number], lost: 0 };
const A = 'a'.repeat(PER);
const set = (s: string, i: number, c: string) => s.slice(0, i) + c + s.slice(i + 1);

describe('agreement', () => {
  it('agrees fully when the events explain every change', () => {
    const before = cache([slab(0, 'f'.repeat(PER)), slab(1, set(A, 3, 'f'))]);
    const after = cache([slab(0, set(set('f'.repeat(PER), 0, 'a'), 1, 'a')), slab(1, set(A, 5, 'f'))]);
    const events: CacheEvent[] = [
      { tNs: 100, alloc: true, key: obj(0, 0) },
      { tNs: 110, alloc: true, key: obj(0, 1) },
      { tNs: 120, alloc: true, key: obj(1, 3) },
      { tNs: 130, alloc: false, key: obj(1, 5) },
    ];
    const a = agreement(before, after, PAGE, events, W);
    expect(a.slabsCompared).toBe(2);
    expect(a.slabsAgreeing).toBe(2);
    expect(a.objectsAgreeing).toBe(2 * PER);
    expect(a.eventsApplied).toBe(4);
  });

  it('puts a free the events do not show down to an untraced free, and an unseen allocation to an untraced allocation', () => {
    const before = cache([slab(0, A), slab(1, 'f'.repeat(PER))]);
    const after = cache([slab(0, set(A, 2, 'f')), slab(1, set('f'.repeat(PER), 4, 'a'))]);
    const a = agreement(before, after, PAGE, [], W);
    expect(a.slabsAgreeing).toBe(0);
    expect(a.causes.untracedFree).toBe(1);
    expect(a.causes.untracedAlloc).toBe(1);
    expect(a.objectsCompared - a.objectsAgreeing).toBe(2);
  });

  it('blames a torn slab, an event during a read, and lost events before an untraced change', () => {
    const before = cache([slab(0, A), slab(1, A), slab(2, A)]);
    const after = cache([slab(0, set(A, 0, 'f'), true), slab(1, set(A, 1, 'f')), slab(2, set(A, 2, 'f'))]);
    const events: CacheEvent[] = [{ tNs: 1005, alloc: true, key: obj(1, 1) }];
    const a = agreement(before, after, PAGE, events, { ...W, lost: 0 });
    expect(a.causes.torn).toBe(1);
    expect(a.causes.duringRead).toBe(1);
    expect(a.causes.untracedFree).toBe(1);
    const lost = agreement(before, after, PAGE, events, { ...W, lost: 3 });
    expect(lost.causes.lost).toBe(1);
    expect(lost.causes.untracedFree).toBe(0);
  });

  it('takes a slab first seen in a free as full before, and one first seen in an allocation as new', () => {
    const before = cache([]);
    const after = cache([slab(7, set(A, 9, 'f')), slab(8, set('f'.repeat(PER), 0, 'a'))]);
    const events: CacheEvent[] = [
      { tNs: 200, alloc: false, key: obj(7, 9) },
      { tNs: 210, alloc: true, key: obj(8, 0) },
    ];
    const a = agreement(before, after, PAGE, events, W);
    expect(a.slabsFromEvents).toBe(2);
    expect(a.slabsAgreeing).toBe(2);
  });

  it('puts the untouched objects of a slab the earlier snapshot did not list down to the guess', () => {
    // Slab 9 was listed nowhere (moving while read), then one allocation: taken as new (all free), but most objects are in use.
    const after = cache([slab(9, set(A, 1, 'f'))]);
    const a = agreement(cache([]), after, PAGE, [{ tNs: 300, alloc: true, key: obj(9, 0) }], W);
    expect(a.causes.unlisted).toBe(PER - 2);
    expect(a.causes.untracedAlloc).toBe(0);
  });

  it('puts an unlisted slab first seen during the earlier read down to moving while read', () => {
    const after = cache([slab(9, set(A, 1, 'f'))]);
    const a = agreement(cache([]), after, PAGE, [{ tNs: 5, alloc: true, key: obj(9, 0) }], W);
    expect(a.causes.duringRead).toBe(PER - 2);
    expect(a.causes.unlisted).toBe(0);
  });

  it('counts events outside the geometry instead of applying them', () => {
    const a = agreement(cache([slab(0, A)]), cache([slab(0, A)]), PAGE, [{ tNs: 50, alloc: false, key: obj(0, 0) + 8 }], W);
    expect(a.eventsOutside).toBe(1);
    expect(a.slabsAgreeing).toBe(1);
  });

  it('on the real stream: every disagreement between two real snapshots of filp has a cause', () => {
    const r = new FrameReader();
    const frames = r.push(new Uint8Array(readFileSync(new URL('./fixtures/stream-filp.bin', import.meta.url))));
    const snaps: { taken: [number, number]; c: KCache; page: number }[] = [];
    const events: CacheEvent[] = [];
    for (const f of frames) {
      if (f.type === F.SNAPSHOT) {
        const d = decodeKernelSnapshot(f.snapshot);
        const c = d.caches[0];
        if (c) snaps.push({ taken: f.takenNs, c, page: d.kernel.pageSize });
      } else if (f.type === F.EVENTS) {
        const rec = f.batch.records;
        for (let i = 0; i < f.batch.count; i++) {
          const hi = BigInt(ev.objHi(rec, i)) << 32n;
          events.push({ tNs: Number(f.batch.baseNs) + ev.dtUs(rec, i) * 1000, alloc: isAlloc(ev.kind(rec, i)), key: keyOf(hi | BigInt(ev.objLo(rec, i))) });
        }
      }
    }
    expect(snaps.length).toBeGreaterThanOrEqual(2);
    const [s0, s1] = [snaps[0], snaps[1]];
    if (!s0 || !s1) throw new Error('two snapshots');
    events.sort((x, y) => x.tNs - y.tNs);
    const a = agreement(s0.c, s1.c, s0.page, events, { before: s0.taken, after: s1.taken, lost: 0 });
    expect(a.slabsCompared).toBeGreaterThan(10);
    expect(a.eventsApplied).toBeGreaterThan(100);
    expect(a.eventsOutside).toBe(0);
    const causes = Object.values(a.causes).reduce((x, y) => x + y, 0);
    expect(causes).toBe(a.objectsCompared - a.objectsAgreeing);
    expect(a.objectsAgreeing / a.objectsCompared).toBeGreaterThan(0.5);
  });
});
