// The typed wrappers of the SLUB tunables, boot parameters and counter names, against the
// real core (the slablab-node build of the same C sources).
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import type { WorldConfig } from './protocol';
import { kernelWords, SlubApi, SlubError, type SlubModule } from './slub-api';
import { decodeSnapshot, stat, STAT_NAMES } from './snapshot';

let api: SlubApi;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
});

const config: WorldConfig = { cpus: 2, objectSize: 256, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 };

describe('kernel parameters', () => {
  it('encodes the five words, "not given" for an absent slub_max_order', () => {
    expect(Array.from(kernelWords({}))).toEqual([0, 0xffffffff, 0, 0, 0]);
    expect(Array.from(kernelWords({ minOrder: 1, maxOrder: 2, minObjects: 9, nrCpus: 64, noPreempt: true }))).toEqual([1, 2, 9, 64, 1]);
  });

  it('shapes the geometry and the tid step of a world', () => {
    expect(api.geometry(256, 2).order).toBe(0);
    const g = api.geometry(256, 2, { minOrder: 2 });
    expect(g.order).toBe(2);
    expect(g.objects).toBe(64);
    expect(g.fallbackOrder).toBe(0);
    expect(g.fallbackObjects).toBe(16);
    // Every field by name, in sl_slub_geometry's order: the object size asked for comes first.
    expect(g.objectSize).toBe(256);
    expect(g.size).toBeGreaterThanOrEqual(256);
    const w = api.createWorld(config, true, { nrCpus: 8192 });
    try {
      expect(decodeSnapshot(api.snapshot(w)).geometry.tidStep).toBe(8192);
    } finally {
      api.destroyWorld(w);
    }
    expect(() => api.createWorld(config, true, { nrCpus: 1 })).toThrow(SlubError);
    expect(() => api.geometry(256, 2, { minOrder: 11 })).toThrow(SlubError);
  });
});

describe('sysfs tunables', () => {
  it('writes min_partial and cpu_partial, and shrinks', () => {
    const w = api.createWorld(config);
    try {
      api.setMinPartial(w, 0);
      api.setCpuPartial(w, 30);
      const s = decodeSnapshot(api.snapshot(w));
      expect(s.geometry.minPartial).toBe(0);
      expect(s.geometry.cpuPartial).toBe(30);
      expect(s.geometry.cpuPartialSlabs).toBe(4);
      expect(api.shrink(w)).toBe(false); // no slab at all
      expect(() => api.setCpuPartial(0, 1)).toThrow(SlubError);
    } finally {
      api.destroyWorld(w);
    }
  });

  it('makes the page allocator run short, and new slabs fall back', () => {
    const w = api.createWorld(config, true, { minOrder: 1 });
    try {
      expect(api.fragment(w, true)).toBeGreaterThan(0);
      api.m._sl_api_slub_alloc(w, 0);
      const s = decodeSnapshot(api.snapshot(w));
      expect(stat(s, 'ORDER_FALLBACK')).toBe(1);
      expect(s.slab.objects[0]).toBe(16);
      expect(s.geometry.objects).toBe(32);
      expect(api.fragment(w, false)).toBe(0);
    } finally {
      api.destroyWorld(w);
    }
  });

  it('refuses cpu_partial for a debug cache but 0', () => {
    const STORE_USER = 0x10000;
    const m = api.m;
    const w = m._sl_api_slub_world_create(1 << 20, 2, 256, 0, STORE_USER, 0, 0, 1, 1);
    try {
      expect(() => api.setCpuPartial(w, 10)).toThrow(/cpu_partial 10 refused/);
      api.setCpuPartial(w, 0);
    } finally {
      api.destroyWorld(w);
    }
  });
});

describe('counters', () => {
  it("names a version's counters as sysfs does, in its order, each with its snapshot index; the model's own after the kernel's", () => {
    const names = api.statNames();
    expect(names.kernel.map((k) => k.name)).toEqual(api.kernelStats().map((k) => k.name));
    expect(names.kernel).toHaveLength(26);
    expect(names.kernel[0]).toEqual({ name: 'alloc_fastpath', stat: 0 });
    expect(names.kernel.find((k) => k.name === 'order_fallback')?.stat).toBe(19);
    expect(names.kernel.some((k) => k.name === 'alloc_cpu_sheaf')).toBe(false);
    expect(api.statNames({ major: 6, minor: 18 }).kernel).toHaveLength(26 + 17);
    expect(names.model.map((k) => k.name)).toEqual(['bulk_alloc_calls', 'bulk_free_calls', 'bulk_free_cas', 'bulk_free_groups', 'errors', 'model_list_lock']);
    for (const k of [...names.kernel, ...names.model]) expect(STAT_NAMES[k.stat]?.toLowerCase()).toBe(k.name);
    const w = api.createWorld(config);
    try {
      api.m._sl_api_slub_alloc(w, 0);
      const s = decodeSnapshot(api.snapshot(w));
      expect(s.nstats).toBe(STAT_NAMES.length);
      expect(stat(s, 'ALLOC_SLAB')).toBe(1);
      expect(stat(s, 'ORDER_FALLBACK')).toBe(0);
    } finally {
      api.destroyWorld(w);
    }
  });
});
