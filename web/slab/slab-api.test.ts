// The SLAB bindings' typed wrappers against the real core: slab-types on this machine's
// /proc/slabinfo, a real SLAB kernel's and bad files (the message names the line), worlds
// of each kernel version, and the events a view replays (objects named on every hit).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind } from '../core/events.generated';
import { loadNodeCore } from '../test/node-core';
import { SlabApi, SlabError, kernelCode, type SlabModule, type SlabTypesOptions } from './slab-api';

let api: SlabApi;

beforeAll(async () => {
  api = new SlabApi(await loadNodeCore<SlabModule>());
});

const fixture = (name: string) => readFileSync(new URL(`../../tests/fixtures/slab/${name}`, import.meta.url), 'utf8');
const opts = (o: Partial<SlabTypesOptions> = {}): SlabTypesOptions => ({
  format: 'slabinfo', kernel: '6.7', initOnFree: false, cpus: 2, rules: 'both', source: 'test', ...o,
});

describe('kernelCode', () => {
  it('takes the SLAB kernels 4.10 .. 6.7 and nothing else', () => {
    expect(kernelCode('4.10')).toBe(410);
    expect(kernelCode('5.4')).toBe(504);
    expect(kernelCode('6.7')).toBe(607);
    for (const bad of ['4.9', '6.8', '5.20', '5', '5.4.1', '', 'six']) expect(kernelCode(bad)).toBeNull();
  });
});

describe('slabTypes', () => {
  it("predicts a real 5.4 SLAB kernel's caches and marks the ones it gets wrong", () => {
    const r = api.slabTypes(fixture('slabinfo-5.4.54-slab.txt'), opts({ kernel: '5.4', source: 'lkml' }));
    expect(r.source).toBe('lkml');
    expect(r.kernel).toBe('5.4');
    expect(r.caches).toHaveLength(175);
    expect([r.compared, r.matched]).toEqual([175, 173]); // four caches' creation flags known by name
    // Only the two whose object size slabinfo hides; the four with constructors, RCU or RECLAIM_ACCOUNT get their flags by name.
    expect(r.caches.filter((c) => c.match === false).map((c) => c.name)).toEqual(['iommu_iova', 'fs_cache']);
    expect(r.caches.find((c) => c.name === 'anon_vma')?.flags).toBe(2 | 4);
    const k128 = r.caches.find((c) => c.name === 'kmalloc-128');
    expect(k128?.before?.type).toBe('NORMAL'); // created first at boot
    expect(k128?.after?.type).toBe('OBJFREELIST');
    expect(k128?.kernel).toEqual({ order: 0, objs_per_slab: 32, limit: 120, batchcount: 60, shared: 8 });
    expect(r.totals.after).toEqual({ total: 175, objfreelist: 156, normal_leftover: 3, normal: 16, off: 0 });
  });

  it("reads this machine's SLUB /proc/slabinfo: nothing to compare, one rule set when asked", () => {
    const r = api.slabTypes(fixture('slabinfo-6.18-slub.txt'), opts({ rules: 'after' }));
    expect(r.caches).toHaveLength(235);
    expect(r.compared).toBe(0);
    expect(r.caches.every((c) => c.kernel === null && c.match === null && c.before === undefined)).toBe(true);
    expect(r.totals.before).toBeUndefined();
    expect(r.totals.after?.total).toBe(235);
  });

  it('reads the --caches format and applies the kernel version and init_on_free', () => {
    const text = '# name size\nkmalloc-128 128 hwcache\nmy-256 256\n';
    const r67 = api.slabTypes(text, opts({ format: 'caches' }));
    expect(r67.caches.map((c) => [c.name, c.before?.type, c.after?.type])).toEqual([
      ['kmalloc-128', 'NORMAL', 'OBJFREELIST'],
      ['my-256', 'OFF', 'OBJFREELIST'],
    ]);
    const iof = api.slabTypes(text, opts({ format: 'caches', kernel: '5.3', initOnFree: true }));
    expect(iof.init_on_free).toBe(true);
    expect(iof.caches.map((c) => c.after?.type)).toEqual(['NORMAL', 'OFF']);
    expect(r67.caches[1]).toMatchObject({ limit: 120, batchcount: 60, shared: 8 });
    expect(api.slabTypes(text, opts({ format: 'caches', cpus: 1 })).caches[1]?.shared).toBe(0);
  });

  it('refuses a malformed file with a message naming the line', () => {
    const bad = 'slabinfo - version: 2.1\n# header\ndentry 1 2 192 21 1 : tunables 120 60 8 : slabdata 1 1 0\nbroken 1 2\n';
    expect(() => api.slabTypes(bad, opts())).toThrow(SlabError);
    expect(() => api.slabTypes(bad, opts())).toThrow(/^line 4: expected NAME and 5 numbers/);
    expect(() => api.slabTypes('hello\n', opts())).toThrow(/^line 1: not a \/proc\/slabinfo file/);
    expect(() => api.slabTypes('a 0\n', opts({ format: 'caches' }))).toThrow(/^line 1: object size/);
    expect(() => api.slabTypes('', opts({ kernel: '6.8' }))).toThrow(/kernel 6.8/);
    expect(() => api.slabTypes('a 64\n', opts({ format: 'caches', kernel: '5.2', initOnFree: true }))).toThrow(
      /init_on_free from 5.3/,
    );
  });
});

describe('SLAB worlds through the bindings', () => {
  it('names the object on every array hit, and brackets reap as one operation', () => {
    const w = api.createWorld({ cpus: 2, arenaMb: 16, rules: 'after', kernel: '6.7', initOnFree: false, ringEvents: 4096 });
    try {
      const p = api.kmalloc(w, 0, 64);
      const q = api.kmalloc(w, 0, 64);
      api.drain(w, 2);
      expect(api.kfree(w, 0, q)).toBe(0);
      expect(api.kmalloc(w, 0, 64)).toBe(q);
      const ev = decodeEvents(api.drain(w, 2)[0] ?? new Uint8Array());
      const hits = ev.filter((e) => e.kind === EventKind.SLAB_FREE_HIT || e.kind === EventKind.SLAB_ALLOC_HIT);
      expect(hits).toHaveLength(2);
      for (const e of hits) expect({ pfn: e.slab, index: e.obj }).toEqual(api.objectRef(w, q));
      api.reap(w, 1, 5000);
      const reap = decodeEvents(api.drain(w, 2)[1] ?? new Uint8Array());
      expect(reap[0]?.kind).toBe(EventKind.OP_BEGIN);
      expect(reap[0]?.arg1).toBe(5000);
      expect(reap.at(-1)?.kind).toBe(EventKind.OP_END);
      expect(reap.filter((e) => e.kind === EventKind.SLAB_REAP_NODE).length).toBeGreaterThan(0);
      for (const x of [p, q]) expect(api.kfree(w, 1, x)).toBe(0);
      expect(api.kfree(w, 1, q)).toBeLessThan(0); // a double free is refused
      expect(api.validate(w).rc).toBe(0);
    } finally {
      api.destroyWorld(w);
    }
  });

  it('applies the kernel version: kmalloc_large from 6.1, kmalloc-16k before', () => {
    for (const [kernel, large] of [['6.1', 1], ['6.0', 0]] as const) {
      const w = api.createWorld({ cpus: 1, arenaMb: 16, rules: 'after', kernel, initOnFree: false, ringEvents: 0 });
      try {
        const p = api.kmalloc(w, 0, 10000);
        expect(p).not.toBe(0);
        expect(api.objectRef(w, p) === null).toBe(large === 1);
        expect(api.kfree(w, 0, p)).toBe(0);
      } finally {
        api.destroyWorld(w);
      }
    }
    expect(() =>
      api.createWorld({ cpus: 1, arenaMb: 16, rules: 'after', kernel: '5.2', initOnFree: true, ringEvents: 0 }),
    ).toThrow(/could not create a SLAB world/);
  });
});
