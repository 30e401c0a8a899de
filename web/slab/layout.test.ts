// The SLAB view's layout and hit test over real snapshots: what a click at
// an object, an array slot, a slab thumbnail or a freelist cell names is what
// the layout drew there, and the words the inspector gives for it.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { describeHit } from './describe';
import { hitObject, hitTest, layoutSnapshot, objectRect, positionRect, slotRect, thumbRect, wrap, type Layout } from './layout';
import { Place, placeOf } from './places';
import type { Script } from './script';
import { SlabApi, type SlabModule } from './slab-api';
import { decodeSlabSnapshot, type SlabSnapshot } from './snapshot';
import { slabSessions } from './worker';

let api: SlabApi;
let snap: SlabSnapshot;

beforeAll(async () => {
  api = new SlabApi(await loadNodeCore<SlabModule>());
  // 40 objects of kmalloc-256 on CPU 0, 20 of them freed: slabs on every list but free, objects in the array and held.
  const script: Script = {
    ops: [
      { kind: 'kmalloc', cpu: 0, size: 256, count: 40 },
      { kind: 'free', cpu: 0, refs: [{ op: 0, first: 0, count: 20 }] },
      { kind: 'drain', cpu: 0 },
      { kind: 'kmalloc', cpu: 0, size: 256, count: 3 },
    ],
  };
  const w = slabSessions(api).create({ cpus: 2, rules: 'after', kernel: '6.7', arenaMb: 8, caches: [] });
  w.run(script, 0, script.ops.length, 0);
  snap = decodeSlabSnapshot(w.snapshot());
  w.destroy();
});

const centre = (r: { x: number; y: number; w: number; h: number } | null) => {
  if (!r) throw new Error('not drawn');
  return [r.x + r.w / 2, r.y + r.h / 2] as const;
};

describe('layout and hit', () => {
  let l: Layout;
  beforeAll(() => {
    l = layoutSnapshot(snap, 1000, null);
  });

  it('draws the cache that has slabs, its arrays, lists and three slabs to scale', () => {
    const c = snap.caches.find((k) => k.name === 'kmalloc-256');
    expect(l.caches.map((b) => b.cacheId)).toEqual([c?.id]);
    expect(l.arrays.filter((a) => a.cacheId === c?.id).map((a) => a.owner)).toEqual([0, 1, -1]);
    expect(l.details).toHaveLength(3);
    expect(l.thumbs).toHaveLength(c?.slabs.length ?? -1);
    for (const d of l.details) expect(d.w / d.scale).toBeCloseTo(4096);
  });

  it('names the object under a click on a slab drawn to scale, and the inspector tells where it is', () => {
    const d = l.details[0];
    if (!d) throw new Error('no slab drawn');
    for (const index of [0, 7, 15]) {
      const h = hitTest(l, snap, ...centre(objectRect(l, snap, d.cacheId, d.pfn, index)));
      expect(h).toEqual({ kind: 'object', cacheId: d.cacheId, pfn: d.pfn, index });
    }
    const text = describeHit(snap, { kind: 'object', cacheId: d.cacheId, pfn: d.pfn, index: 0 });
    const place = placeOf(snap, d.cacheId, d.pfn, 0);
    expect(text).toContain(`Object 0 of slab ${d.pfn}`);
    expect(text).toContain(['free on its slab', 'free, and its slab', "in a CPU's array_cache", 'in the shared array', 'allocated', 'holding'][place ?? 0]);
  });

  it('names the array slot under a click, and through it the object the slot holds', () => {
    const c = snap.caches.find((k) => k.name === 'kmalloc-256');
    const a = c?.cpus[0];
    if (!c || !a || a.avail < 2) throw new Error('CPU 0 holds too few objects');
    const h = hitTest(l, snap, ...centre(slotRect(l, c.id, 0, a.avail - 1)));
    expect(h).toEqual({ kind: 'entry', cacheId: c.id, owner: 0, slot: a.avail - 1 });
    const top = a.entries[a.avail - 1];
    expect(h && hitObject(snap, h)).toEqual({ cacheId: c.id, pfn: top?.pfn, index: top?.index });
    expect(placeOf(snap, c.id, top?.pfn ?? 0, top?.index ?? 0)).toBe(Place.CPU);
    expect(h && describeHit(snap, h)).toMatch(/the top: the next allocation on this CPU pops it/);
    const empty = hitTest(l, snap, ...centre(slotRect(l, c.id, 1, 0)));
    expect(empty && describeHit(snap, empty)).toMatch(/It is empty/);
  });

  it('names a slab thumbnail and a freelist position', () => {
    const t = l.thumbs.at(-1);
    if (!t) throw new Error('no thumbnail');
    expect(hitTest(l, snap, ...centre(thumbRect(t)))).toEqual({ kind: 'slab', cacheId: t.cacheId, pfn: t.pfn });
    const d = l.details[0];
    if (!d) throw new Error('no slab drawn');
    const h = hitTest(l, snap, ...centre(positionRect(d, 2)));
    expect(h).toEqual({ kind: 'position', cacheId: d.cacheId, pfn: d.pfn, pos: 2 });
    expect(h && describeHit(snap, h)).toMatch(/^Position 2 of slab \d+'s freelist array holds index \d+/);
  });

  it('draws the selected slab to scale first', () => {
    const last = l.thumbs.at(-1);
    if (!last) throw new Error('no thumbnail');
    const focused = layoutSnapshot(snap, 1000, { cacheId: last.cacheId, pfn: last.pfn });
    expect(focused.details[0]?.pfn).toBe(last.pfn);
  });

  it('wraps labels to the width', () => {
    expect(wrap('aaaa bbbb cccc', 60, 'small')).toEqual(['aaaa bbbb', 'cccc']);
    expect(wrap('x', 10, 'small')).toEqual(['x']);
  });
});
