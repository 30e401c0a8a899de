// The SLUB snapshot decoder's version 2: the kernel words and the sheaves section (sheaves,
// barn, RCU waits, prefilled sheaves), against the real core (the slablab-node build), and the
// typed wrappers of kernel versions, kfree_rcu and the prefill API.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import type { WorldConfig } from './protocol';
import { parseKernelVersion, SlubApi, SlubError, type SlubModule } from './slub-api';
import { decodeSnapshot, Era, ObjState, SheafPlace, sheavesAt, SNAP_VERSION, SnapshotError, stat } from './snapshot';

let api: SlubApi;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
});

const config: WorldConfig = { cpus: 2, objectSize: 256, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 };

function scratchPair(w: number, cpu: number): { pfn: number; index: number } {
  const pair = new Uint32Array(api.copy(api.m._sl_api_slub_scratch(w, cpu), 8).buffer);
  return { pfn: pair[0] ?? 0, index: pair[1] ?? 0 };
}

describe('the record sections', () => {
  it('decode the same from bytes at an odd offset as from aligned ones (the object records read field by field)', () => {
    const w = api.createWorldAt(config, { version: parseKernelVersion('7.0'), sheafCapacity: 4, exactCapacity: true });
    try {
      for (let i = 0; i < 40; i++) expect(api.m._sl_api_slub_alloc(w, i % 2)).toBe(0);
      const o = scratchPair(w, 1);
      expect(api.m._sl_api_slub_free(w, 0, o.pfn, o.index)).toBe(0);
      const bytes = api.snapshot(w);
      const odd = new Uint8Array(bytes.byteLength + 1).subarray(1);
      odd.set(bytes);
      const aligned = decodeSnapshot(bytes);
      expect(aligned.nslabs).toBeGreaterThan(1);
      expect(aligned.sheaves.nsheaves).toBeGreaterThan(0);
      expect(aligned.obj.state).toContain(ObjState.ALLOCATED);
      expect(decodeSnapshot(odd)).toEqual(aligned);
    } finally {
      api.destroyWorld(w);
    }
  });
});

describe('the sheaves section', () => {
  it('holds each sheaf where it is, its objects, and their states', () => {
    const w = api.createWorldAt(config, { version: parseKernelVersion('7.0'), sheafCapacity: 4, exactCapacity: true });
    try {
      const objs: { pfn: number; index: number }[] = [];
      for (let i = 0; i < 12; i++) {
        expect(api.m._sl_api_slub_alloc(w, 0)).toBe(0);
        objs.push(scratchPair(w, 0));
      }
      for (const o of objs.slice(0, 9)) expect(api.m._sl_api_slub_free(w, 1, o.pfn, o.index)).toBe(0);
      const rcu = objs[9] ?? { pfn: 0, index: 0 };
      api.kfreeRcu(w, 1, rcu.pfn, rcu.index);
      api.prefillSheaf(w, 0, 0, 2);
      const s = decodeSnapshot(api.snapshot(w));
      expect(SNAP_VERSION).toBe(2);
      expect(s.kernel).toEqual({ major: 7, minor: 0, era: Era.SHEAVES, hasSheaves: true, cpuSlab: false });
      const sh = s.sheaves;
      expect(sh.taken).toBe(true);
      expect(sh.capacity).toBe(4);
      expect(sh.barnFull).toBe(1);
      // CPU 1: main holds the last object it freed, the spare four, one full sheaf went to the barn.
      const main1 = sh.pcs[1]?.main ?? -1;
      expect(sh.sheaf.place[main1]).toBe(SheafPlace.MAIN);
      expect(sh.sheaf.size[main1]).toBe(1);
      const top = sh.sheaf.first[main1] ?? 0;
      expect({ pfn: sh.entryPfn[top], index: sh.entryIndex[top] }).toEqual(objs[8]);
      expect(sh.sheaf.size[sh.pcs[1]?.spare ?? -1]).toBe(4);
      expect(sheavesAt(s, SheafPlace.BARN_FULL)).toHaveLength(1);
      expect(sheavesAt(s, SheafPlace.RCU_FREE, 1)).toHaveLength(1);
      const [pre] = sheavesAt(s, SheafPlace.PREFILLED);
      expect(pre).toBeDefined();
      expect(sh.sheaf.size[pre ?? -1]).toBe(4);
      expect(sh.sheaf.cpu[pre ?? -1]).toBe(0xff);
      // Object states follow the sheaves: 5 on CPU sheaves, 4 in the barn, 1 waiting for RCU, 4 prefilled.
      const count = (st: number) => s.obj.state.filter((x) => x === st).length;
      expect(count(ObjState.CPU_SHEAF)).toBe(5);
      expect(count(ObjState.BARN)).toBe(4);
      expect(count(ObjState.RCU)).toBe(1);
      expect(count(ObjState.PREFILLED)).toBe(4);
      expect(count(ObjState.ALLOCATED)).toBe(2);
      expect(stat(s, 'ALLOC_CPU_SHEAF')).toBe(12);
      expect(stat(s, 'BARN_PUT')).toBe(1);
      api.returnSheaf(w, 0, 0);
    } finally {
      api.destroyWorld(w);
    }
  });

  it('is empty for a cache without sheaves, and says which kernel it is', () => {
    const w = api.createWorldAt(config, { version: parseKernelVersion('4.4') });
    try {
      expect(api.m._sl_api_slub_alloc(w, 0)).toBe(0);
      const s = decodeSnapshot(api.snapshot(w));
      expect(s.kernel).toEqual({ major: 4, minor: 4, era: Era.FROZEN_PARTIAL, hasSheaves: false, cpuSlab: true });
      expect(s.sheaves.nsheaves).toBe(0);
      expect(s.sheaves.pcs.map((p) => p.main)).toEqual([-1, -1]);
    } finally {
      api.destroyWorld(w);
    }
  });

  it('refuses a snapshot whose sheaves section runs past its end', () => {
    const w = api.createWorldAt(config, { version: parseKernelVersion('6.18'), sheafCapacity: 32 });
    try {
      const bytes = api.snapshot(w);
      const v = new DataView(bytes.buffer, bytes.byteOffset);
      v.setUint32(84, bytes.byteLength - 8, true); // the section offset: its header no longer fits
      expect(() => decodeSnapshot(bytes)).toThrow(SnapshotError);
    } finally {
      api.destroyWorld(w);
    }
  });
});

describe('kernel versions and sheaves through the bridge', () => {
  it('parses versions and refuses what the model does not know', () => {
    expect(parseKernelVersion('6.18')).toEqual({ major: 6, minor: 18 });
    for (const bad of ['4.2', '6', '6.18.x', '7.3-rc', 'x.y', ''])
      expect(() => parseKernelVersion(bad)).toThrow(SlubError);
    // A stable release or an -rc is its X.Y; a version newer than the newest modelled is taken (with a notice).
    expect(parseKernelVersion('6.18.1')).toEqual({ major: 6, minor: 18 });
    expect(parseKernelVersion('8.0')).toEqual({ major: 8, minor: 0 });
  });

  it("names each version's counters as its sysfs does", () => {
    const v618 = api.kernelStats(parseKernelVersion('6.18'));
    expect(v618).toHaveLength(43);
    expect(v618[0]?.name).toBe('alloc_cpu_sheaf');
    const v70 = api.kernelStats(parseKernelVersion('7.0'));
    expect(v70).toHaveLength(26);
    expect(v70[0]).toEqual({ name: 'alloc_fastpath', stat: v618[0]?.stat });
    expect(api.kernelStats()).toHaveLength(26);
  });

  it('computes sheaf capacities and geometry per version', () => {
    expect(api.sheafCapacity(parseKernelVersion('7.0'), 64)).toBe(60);
    expect(api.sheafCapacity(parseKernelVersion('6.18'), 64, 0, 32)).toBe(32);
    expect(api.sheafCapacity(parseKernelVersion('6.17'), 64, 0, 32)).toBe(0);
    expect(api.geometryAt(10928, 2, parseKernelVersion('4.4')).order).toBe(2);
    expect(api.geometryAt(10928, 2, parseKernelVersion('7.0')).order).toBe(3);
  });

  it('runs kfree_rcu, the grace period, the prefill API and bootstrap', () => {
    const w = api.createWorldAt({ ...config, objectSize: 64 }, { version: parseKernelVersion('7.0'), earlyBoot: true });
    try {
      expect(api.worldVersion(w)).toEqual({ major: 7, minor: 0, era: 'sheaves' });
      expect(api.sheavesInfo(w).capacity).toBe(0);
      // Sheaves off (capacity 0): kmem_cache_prefill_sheaf hands out an oversize sheaf, not a refusal.
      api.prefillSheaf(w, 0, 0, 2);
      api.returnSheaf(w, 0, 0);
      api.bootstrapSheaves(w);
      expect(api.sheavesInfo(w).capacity).toBe(60);
      expect(api.m._sl_api_slub_alloc(w, 1)).toBe(0);
      const o = scratchPair(w, 1);
      api.kfreeRcu(w, 1, o.pfn, o.index);
      expect(api.sheavesInfo(w).rcuWaiting).toBe(1);
      expect(api.rcuGracePeriod(w, 1)).toBe(0); // the rcu_free sheaf is not full: it waits for more
      api.prefillSheaf(w, 0, 3, 2);
      expect(api.sheafSize(w, 3)).toBe(60);
      expect(api.allocFromSheaf(w, 0, 3)).not.toBeNull();
      api.refillSheaf(w, 0, 3, 70);
      expect(api.sheafSize(w, 3)).toBe(70);
      api.returnSheaf(w, 0, 3);
      expect(api.sheafSize(w, 3)).toBe(-1);
      expect(() => api.returnSheaf(w, 0, 3)).toThrow(SlubError);
      expect(api.validate(w).rc).toBe(0);
    } finally {
      api.destroyWorld(w);
    }
    expect(() => api.createWorldAt(config, { version: parseKernelVersion('6.18'), earlyBoot: true })).toThrow(SlubError);
  });
});
