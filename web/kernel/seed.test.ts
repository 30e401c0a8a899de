// "Open this cache in the model" (seed.ts) through the Node build of the core: the bundled
// sample's caches seeded into SLUB worlds, the model's snapshot compared with the real one
// (the same slabs on the same lists, inuse, and every freelist in its real order), the world
// stepped on from the seed, and descriptions the core must refuse.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { SlubApi, SlubError, type SlubModule } from '../slub/slub-api';
import { decodeSnapshot, NONE32, SheafPlace, SlabList, type SlubSnapshot } from '../slub/snapshot';
import { slubSessions } from '../slub/worker';
import { replaySessions, type Session } from '../lab/session';
import type { Script } from '../slub/script';
import { seedCache, MAX_FULL_SLABS, SeedError } from './seed';
import { decodeKernelSnapshot, type KCache, type KernelSnapshot, type KSheaf, type KSlab } from './snapshot-file';

const sample = decodeKernelSnapshot(new TextEncoder().encode(readFileSync(new URL('../../public/samples/snapshot-6.18.json', import.meta.url), 'utf8')));
let api: SlubApi;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
});

/** The indices of slab record i's chain from `head` in model snapshot s. */
function chain(s: SlubSnapshot, i: number, head: number): number[] {
  const out: number[] = [];
  const first = s.slab.firstObj[i] ?? 0;
  for (let o = head; o !== NONE32 && out.length <= (s.slab.objects[i] ?? 0); o = s.obj.next[first + o] ?? NONE32) out.push(o);
  return out;
}

/** A real slab's freelist (or a CPU freelist of it) as indices. */
function realIndices(c: KCache, s: KSlab, list: readonly string[]): number[] {
  const base = s.base ?? 0n;
  return list.map((o) => Number((BigInt(o) - base - BigInt(c.redLeftPad)) / BigInt(c.size)));
}

/** Seeds c into a world through the SLUB sessions' create (as the lab does) and returns its decoded snapshot. */
function seeded(k: KernelSnapshot, c: KCache): SlubSnapshot {
  const { config } = seedCache(k, c);
  const sessions = slubSessions(api);
  const world = sessions.create(sessions.checkWorld(config));
  try {
    return decodeSnapshot(world.snapshot());
  } finally {
    world.destroy();
  }
}

/** The caches of the sample the model can take, with something on their lists. */
const seedable = sample.caches.filter((c) => c.nodes.some((n) => n.partial.length) || c.cpus.some((p) => p.slab));

describe('a cache of the sample seeded into the model', () => {
  it('has the real slabs on the real lists, inuse and freelists in their real order', () => {
    expect(seedable.length).toBeGreaterThan(20);
    let compared = 0;
    for (const c of seedable) {
      const s = seeded(sample, c);
      expect(s.geometry.objects, c.name).toBe(c.objectsPerSlab);
      expect(s.geometry.order, c.name).toBe(c.order);
      // CPU slabs and their two freelists, CPU partial lists in order.
      for (const p of c.cpus) {
        const cpu = s.cpus[p.cpu];
        if (!cpu) throw new Error(`${c.name}: CPU ${p.cpu} missing in the model`);
        if (p.slab) {
          const i = s.slab.pfn.indexOf(cpu.slabPfn);
          expect(s.slab.list[i], c.name).toBe(SlabList.CPU_SLAB);
          expect(s.slab.inuse[i], c.name).toBe(p.slab.objects - p.slab.freelist.length);
          expect(chain(s, i, s.slab.freelistHead[i] ?? NONE32), c.name).toEqual(realIndices(c, p.slab, p.slab.freelist));
          expect(chain(s, i, cpu.freelistIndex), c.name).toEqual(realIndices(c, p.slab, p.freelist));
        } else {
          expect(cpu.slabPfn, c.name).toBe(NONE32);
        }
        let pfn = cpu.firstPartialPfn;
        for (const real of p.partial) {
          const i = s.slab.pfn.indexOf(pfn);
          expect(i, c.name).toBeGreaterThanOrEqual(0);
          expect(s.slab.list[i], c.name).toBe(SlabList.CPU_PARTIAL);
          expect(chain(s, i, s.slab.freelistHead[i] ?? NONE32), c.name).toEqual(realIndices(c, real, real.freelist));
          pfn = s.slab.next[i] ?? NONE32;
        }
        expect(pfn, c.name).toBe(NONE32);
      }
      // The node partial list, slab by slab in order.
      const realNode = c.nodes.flatMap((n) => n.partial);
      expect(s.nodePartial.length, c.name).toBe(realNode.length);
      realNode.forEach((real, at) => {
        const i = s.nodePartial[at] ?? -1;
        expect(s.slab.inuse[i], c.name).toBe(real.objects - real.freelist.length);
        expect(chain(s, i, s.slab.freelistHead[i] ?? NONE32), c.name).toEqual(realIndices(c, real, real.freelist));
      });
      // Full slabs: the rest of the kernel's, up to the cap.
      const listed = c.cpus.reduce((a, p) => a + (p.slab ? 1 : 0) + p.partial.length, 0) + realNode.length;
      // Slabs not read that hold sheaf objects are listed as full slabs, out of the full ones.
      const extra = seedCache(sample, c).listed - listed;
      const full = c.nodes.reduce((a, n) => a + n.nrSlabs - n.partialLeftOut, 0) - listed - extra;
      expect(s.node.nrSlabs, c.name).toBe(listed + extra + Math.min(Math.max(0, full), MAX_FULL_SLABS));
      compared++;
    }
    expect(compared).toBe(seedable.length);
  }, 60_000);

  it('fills maple_node and vm_area_struct sheaves and barn with their real objects in order, validate clean', () => {
    for (const name of ['maple_node', 'vm_area_struct']) {
      const c = sample.caches.find((x) => x.name === name);
      if (!c) throw new Error(`no ${name} in the sample`);
      const { config } = seedCache(sample, c);
      const w = api.createWorld(config, true, config.kernel);
      try {
        api.seedWorld(w, config.kernelSeed ?? []);
        expect(api.validate(w).rc, name).toBe(0);
        const s = decodeSnapshot(api.snapshot(w));
        const sh = s.sheaves;
        expect(sh.taken && sh.capacity, name).toBe(c.sheafCapacity);
        // Real slab base <-> model pfn, one to one, built as the sheaves are compared.
        const pfnOf = new Map<bigint, number>();
        const baseOf = new Map<number, bigint>();
        const slabBytes = 4096n << BigInt(c.order);
        const same = (record: number, real: KSheaf | null | undefined, what: string) => {
          const objects = real?.objects ?? [];
          expect(record >= 0 ? (sh.sheaf.size[record] ?? -1) : 0, what).toBe(objects.length);
          const first = record >= 0 ? (sh.sheaf.first[record] ?? 0) : 0;
          objects.forEach((o, k) => {
            const a = BigInt(o);
            const base = a - (a % slabBytes);
            const pfn = sh.entryPfn[first + k] ?? NONE32;
            expect(sh.entryIndex[first + k], `${what}[${k}]`).toBe(Number((a - base) / BigInt(c.size)));
            if (!pfnOf.has(base)) pfnOf.set(base, pfn);
            if (!baseOf.has(pfn)) baseOf.set(pfn, base);
            expect([pfnOf.get(base), baseOf.get(pfn)], `${what}[${k}]`).toEqual([pfn, base]);
          });
        };
        let held = 0;
        for (const p of c.cpus) {
          const pcs = sh.pcs[p.cpu];
          if (!pcs) throw new Error(`${name}: CPU ${p.cpu} missing`);
          same(pcs.main, p.sheaves?.main, `${name} CPU ${p.cpu} main`);
          same(pcs.spare, p.sheaves?.spare?.size ? p.sheaves.spare : null, `${name} CPU ${p.cpu} spare`);
          same(pcs.rcuFree, p.sheaves?.rcuFree?.size ? p.sheaves.rcuFree : null, `${name} CPU ${p.cpu} rcu_free`);
          held += (p.sheaves?.main?.size ?? 0) + (p.sheaves?.spare?.size ?? 0) + (p.sheaves?.rcuFree?.size ?? 0);
        }
        const realBarn = c.nodes.flatMap((n) => n.barn?.full ?? []);
        const barn = Array.from({ length: sh.nsheaves }, (_, i) => i).filter((i) => sh.sheaf.place[i] === SheafPlace.BARN_FULL).sort((a, b) => (sh.sheaf.position[a] ?? 0) - (sh.sheaf.position[b] ?? 0));
        expect(barn.length, `${name} barn`).toBe(realBarn.length);
        expect(sh.barnFull, `${name} barn`).toBe(realBarn.length);
        realBarn.forEach((real, i) => same(barn[i] ?? -1, real, `${name} barn full[${i}]`));
        held += realBarn.reduce((a, b) => a + b.size, 0);
        expect(held, name).toBeGreaterThan(0);
        expect(held, name).toBe(c.totals?.inSheaves ?? held);
        // The next allocation on a CPU with a non-empty main pops its top object.
        const p = c.cpus.find((x) => (x.sheaves?.main?.size ?? 0) > 0);
        const pcs = p ? sh.pcs[p.cpu] : undefined;
        if (p && pcs) {
          const top = (sh.sheaf.first[pcs.main] ?? 0) + (sh.sheaf.size[pcs.main] ?? 0) - 1;
          expect(api.m._sl_api_slub_alloc(w, p.cpu)).toBe(0);
          const pair = new Uint32Array(api.copy(api.m._sl_api_slub_scratch(w, p.cpu), 8).buffer);
          expect([pair[0], pair[1]], name).toEqual([sh.entryPfn[top], sh.entryIndex[top]]);
          expect(api.validate(w).rc, name).toBe(0);
        }
      } finally {
        api.destroyWorld(w);
      }
    }
  });

  it('steps on from the seed: an allocation takes the CPU freelist head, a free of a seeded object, validate clean', () => {
    const c = seedable.find((x) => x.cpus.some((p) => p.slab && p.freelist.length > 0));
    if (!c) throw new Error('the sample has no cache with a CPU freelist');
    const { config } = seedCache(sample, c);
    const w = api.createWorld(config, true, config.kernel);
    try {
      api.seedWorld(w, config.kernelSeed ?? []);
      const before = decodeSnapshot(api.snapshot(w));
      const p = c.cpus.find((x) => x.slab && x.freelist.length > 0);
      const cpu = before.cpus[p?.cpu ?? 0];
      if (!p || !cpu) throw new Error('no CPU');
      expect(api.m._sl_api_slub_alloc(w, p.cpu)).toBe(0);
      const pair = new Uint32Array(api.copy(api.m._sl_api_slub_scratch(w, p.cpu), 8).buffer);
      expect([pair[0], pair[1]]).toEqual([cpu.slabPfn, cpu.freelistIndex]);
      expect(api.validate(w).rc).toBe(0);
      const after = decodeSnapshot(api.snapshot(w));
      expect(after.cpus[p.cpu]?.freelistLength).toBe(cpu.freelistLength - 1);
    } finally {
      api.destroyWorld(w);
    }
  });

  it('replays from the seed: every stop the same forward, backward and from a fresh session', () => {
    const c = seedable.find((x) => x.cpus.some((p) => p.slab && p.freelist.length > 0));
    if (!c) throw new Error('no cache with a CPU freelist');
    const { config } = seedCache(sample, c);
    const open = replaySessions(slubSessions(api));
    // Allocations past the CPU freelist's end: the CPU partial list and the node list take over.
    const script: Script = { ops: Array.from({ length: c.objectsPerSlab + 3 }, (_, i) => ({ kind: 'alloc' as const, cpu: i % config.cpus })), irqs: [] };
    const session = open(config, script);
    const r = session.load();
    const bytes = (s: Session, i: number) => Array.from(new Uint8Array(s.at(i).snapshot));
    const start = decodeSnapshot(session.at(0).snapshot);
    expect(start.node.nrPartial).toBe(c.nodes.reduce((a, n) => a + n.partial.length, 0));
    const forward = r.stops.map((_, i) => bytes(session, i));
    const backward = r.stops.map((_, i) => r.stops.length - 1 - i).map((i) => bytes(session, i)).reverse();
    expect(backward).toEqual(forward);
    const fresh = open(config, script);
    fresh.load();
    for (const i of [r.stops.length - 1, 0, 2]) expect(bytes(fresh, i)).toEqual(forward[i]);
    expect(forward[0]).not.toEqual(forward[r.stops.length - 1]);
    session.dispose();
    fresh.dispose();
  });

  it('says what the model simplifies, and refuses what it cannot hold', () => {
    const c = sample.caches.find((x) => x.name === 'maple_node');
    if (!c) throw new Error('no maple_node in the sample');
    const { notes, config } = seedCache(sample, c);
    expect(config.version).toEqual({ major: 6, minor: 18 });
    expect(notes.join(' ')).toMatch(/modelled as its \d+-byte slot/);
    expect(() => seedCache({ ...sample, kernel: { ...sample.kernel, nrCpus: 64 } }, c)).toThrow(SeedError);
    expect(() => seedCache(sample, { ...c, redLeftPad: 64 })).toThrow(/debug cache/);
    const bad = structuredClone(c);
    const slab = bad.nodes[0]?.partial[0];
    if (!slab) throw new Error('maple_node has no node partial slab');
    slab.freelist = [...slab.freelist, `0x${((slab.base ?? 0n) + 3n).toString(16)}`];
    expect(() => seedCache(sample, bad)).toThrow(/is not an object of the slab/);
  });

  it('the core refuses a repeated object and counts that disagree, by name, and leaves the world empty', () => {
    const c = seedable[0];
    if (!c) throw new Error('no cache');
    const { config } = seedCache(sample, c);
    const w = api.createWorld(config, true, config.kernel);
    try {
      // One node partial slab of 2 free objects, the same object twice.
      const objects = c.objectsPerSlab;
      expect(() => api.seedWorld(w, [1, 0, 0, 2, 0, objects, objects - 2, 2, 0, 1, 1])).toThrow(/object 1 is on its freelists twice/);
      expect(() => api.seedWorld(w, [1, 0, 0, 2, 0, objects, objects - 1, 2, 0, 1, 2])).toThrow(/do not make its/);
      expect(() => api.seedWorld(w, [1, 0, 0, 2, 0, objects, objects - 1, 1, 0, objects])).toThrow(/outside the slab/);
      expect(() => api.seedWorld(w, [3, 0, 0, 2, 0])).toThrow(SlubError);
      expect(decodeSnapshot(api.snapshot(w)).node.nrSlabs).toBe(0);
    } finally {
      api.destroyWorld(w);
    }
  });
});
