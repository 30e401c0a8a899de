// seed.ts - "Open this cache in the model": one cache of a kernel snapshot as
// the start of a SLUB model session.  The world gets the cache's geometry and
// its kernel's version (so its era: CPU partial slabs frozen before 6.8,
// sheaves from 6.18, no CPU slab in 7.0), and its description (`kernelSeed`,
// u32 words wasm-core/bindings/api_kernel.c reads) makes the core's
// sl_slub_seed build the same slabs with the same free objects in the same
// freelist order on the same lists.  The seed is part of the world's
// configuration, so a replay (Back) seeds again and steps from the same start.
//
// What it simplifies (and says so in `notes`):
//   - the model's object size is the real slot size (`size`), with its order
//     fixed by slub_min_order = slub_max_order = the real order: the slots are
//     the same, the object's own bytes and alignment are not modelled;
//   - full slabs, which the snapshot counts but does not read, are made up to
//     MAX_FULL_SLABS (every object in use); partial slabs past --max-slabs are
//     left out;
//   - every slab is made at the cache's order (one the kernel made at its
//     fallback order holds more objects in the model);
//   - sheaves (6.18 with a sheaf_capacity, 7.x): each CPU's main, spare and
//     rcu_free sheaf and the barn's full sheaves hold the real objects in the
//     real order; a sheaf object whose slab was not read (a full slab, or a
//     partial one past --max-slabs) gets its slab listed as a full slab; the
//     barn's empty sheaves are not made; a snapshot whose sheaves disagree
//     with its freelists (read while it changed) seeds them empty instead;
//   - the nodes' partial lists become the model's one node list, in node order.

import type { WorldConfig } from '../slub/protocol';
import type { KCache, KernelSnapshot, KSheaf, KSlab } from './snapshot-file';
import { releaseVersion } from './to-slub';

/** Full slabs made at most (each a strip of in-use objects: enough to see, few enough to draw). */
export const MAX_FULL_SLABS = 64;
/** The model's page size and its CPU limit (wasm-core: SL_PAGE_SIZE, SL_SLUB_MAX_CPUS). */
const MODEL_PAGE_SIZE = 4096;
const MODEL_MAX_CPUS = 8;

/** The words' list codes (SL_SLUB_SEED_*). */
export const SeedList = { CPU_SLAB: 0, CPU_PARTIAL: 1, NODE_PARTIAL: 2, FULL: 3 } as const;
/** The words' sheaf places (SL_SLUB_SEED_MAIN ..). */
export const SeedSheaf = { MAIN: 0, SPARE: 1, RCU_FREE: 2, BARN_FULL: 3 } as const;

export class SeedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SeedError';
  }
}

export interface CacheSeed {
  /** The world to open (its kernelSeed holds the slabs). */
  config: WorldConfig;
  /** What the model leaves out or changes, in words. */
  notes: string[];
  /** Slabs described, and full slabs asked for (the core makes min(full, MAX_FULL_SLABS) as room allows). */
  listed: number;
  full: number;
}

/** Cache `c` of snapshot `k` as a seeded model world; throws SeedError when the model cannot hold it. */
export function seedCache(k: KernelSnapshot, c: KCache): CacheSeed {
  const [major, minor] = releaseVersion(k.kernel.release);
  const at = (major << 8) | minor;
  if (at < 0x403 || major > 7) throw new SeedError(`Linux ${k.kernel.release}: the model knows SLUB 4.3 to 7.x`);
  if (k.kernel.pageSize !== MODEL_PAGE_SIZE) throw new SeedError(`pages of ${k.kernel.pageSize} bytes: the model's are ${MODEL_PAGE_SIZE}`);
  // The SLUB view runs 2 to 8 CPUs: a 1-CPU kernel gets an idle second one.
  const cpus = Math.max(2, ...c.cpus.map((p) => p.cpu + 1), k.kernel.nrCpus);
  if (cpus > MODEL_MAX_CPUS) throw new SeedError(`${cpus} CPUs: the model has at most ${MODEL_MAX_CPUS}`);
  // The flags' bit numbers differ between kernels; red zones and user tracking show in the layout.
  if (c.redLeftPad > 0 || c.inuse > Math.ceil(c.objectSize / 8) * 8) throw new SeedError(`${c.name} is a debug cache (red zones, poison, user tracking): the model does not seed one`);
  if (c.order > 10) throw new SeedError(`${c.name}: order ${c.order} is past the model's 10`);
  const size = BigInt(c.size);
  const pad = BigInt(c.redLeftPad);
  const slabBytes = BigInt(MODEL_PAGE_SIZE << c.order);
  const notes: string[] = [];

  const words: number[] = [0, 0, MAX_FULL_SLABS];
  let listed = 0;
  /** Each described slab's base address -> its index in the description. */
  const byBase = new Map<bigint, number>();
  /** Objects on a described slab's freelists, as base:index keys (a sheaf must not hold one). */
  const onFreelist = new Set<string>();
  /** Object addresses as indices in slab s (base: as read, or the first free object's rounded down). */
  const baseOf = (s: KSlab, list: readonly string[]): bigint => {
    const first = list[0] ?? s.freelist[0];
    return s.base ?? (first ? BigInt(first) - (BigInt(first) % slabBytes) : 0n);
  };
  const indices = (s: KSlab, list: readonly string[], what: string): number[] => {
    const base = baseOf(s, list);
    return list.map((o, i) => {
      const off = BigInt(o) - base - pad;
      if (off < 0n || off % size !== 0n || off / size >= BigInt(s.objects))
        throw new SeedError(`slab ${s.address}: ${what}[${i}] ${o} is not an object of the slab`);
      return Number(off / size);
    });
  };
  const add = (s: KSlab, list: number, cpu: number, cpuFree: readonly string[] = []) => {
    let inuse = s.inuse;
    if (s.objects - inuse !== s.freelist.length) {
      notes.push(`slab ${s.address}: inuse ${s.inuse} disagrees with its ${s.freelist.length} free objects (read while it changed); seeded by its freelist`);
      inuse = s.objects - s.freelist.length;
    }
    const free = indices(s, s.freelist, 'freelist');
    const cpuIdx = indices(s, cpuFree, 'cpu freelist');
    words.push(list, cpu, s.objects, inuse, free.length, cpuIdx.length, ...free, ...cpuIdx);
    const base = baseOf(s, cpuFree);
    if (s.base !== null || s.freelist.length || cpuFree.length) byBase.set(base, listed);
    for (const k of [...free, ...cpuIdx]) onFreelist.add(`${base}:${k}`);
    listed++;
  };
  for (const p of c.cpus) {
    if (p.slab) add(p.slab, SeedList.CPU_SLAB, p.cpu, p.freelist);
    for (const s of p.partial) add(s, SeedList.CPU_PARTIAL, p.cpu);
  }
  for (const n of c.nodes) for (const s of n.partial) add(s, SeedList.NODE_PARTIAL, 0);
  const sheafWords = sheavesWords(c, at, size, pad, slabBytes, byBase, onFreelist, notes, (base) => {
    // A sheaf object's slab that was not read: listed as a full slab (all in use), base as found.
    words.push(SeedList.FULL, 0, c.objectsPerSlab, c.objectsPerSlab, 0, 0);
    byBase.set(base, listed);
    return listed++;
  });
  if (c.nodes.length > 1) notes.push(`${c.nodes.length} nodes' partial lists are the model's one node list, in node order`);
  const leftOut = c.nodes.reduce((a, n) => a + n.partialLeftOut, 0);
  if (leftOut) notes.push(`${leftOut} partial slabs past --max-slabs were not read and are not in the model`);
  const nrSlabs = c.nodes.reduce((a, n) => a + n.nrSlabs, 0);
  const full = Math.max(0, nrSlabs - listed - leftOut);
  if (full > MAX_FULL_SLABS) notes.push(`${full} full slabs: the model makes the first ${MAX_FULL_SLABS}`);
  notes.push(`object size ${c.objectSize} is modelled as its ${c.size}-byte slot, order ${c.order} fixed (slub_min_order = slub_max_order)`);
  words[0] = listed;
  words[1] = full;
  words.push(...sheafWords);

  const slabs = listed + Math.min(full, MAX_FULL_SLABS);
  const arenaBytes = Math.min(256 << 20, Math.max(1 << 20, 2 * slabs * Number(slabBytes) + (4 << 20)));
  // 6.18 opts in with the real capacity; 7.x sheaves get the real one as it is (calculate_sheaf_capacity's, read).
  const sheafCapacity =
    at === 0x612 && c.sheafCapacity > 0
      ? { sheafCapacity: Math.min(c.sheafCapacity, 0xffff) }
      : major >= 7 && c.sheafCapacity > 0
        ? { sheafCapacity: Math.min(c.sheafCapacity, 0xffff), exactCapacity: true as const }
        : {};
  return {
    config: {
      cpus,
      objectSize: c.size,
      fastpath: 'cmpxchg',
      bulkFree: 'detached',
      seed: 1,
      arenaBytes,
      kernel: { minOrder: c.order, maxOrder: c.order },
      version: { major, minor },
      ...sheafCapacity,
      kernelSeed: words,
    },
    notes,
    listed,
    full,
  };
}

/**
 * The words of c's sheaves (nsheaves, then per sheaf place, cpu, size and (slab, index) pairs), or
 * [] for a cache without them.  `unread(base)` lists a slab no list holds and returns its index.
 * When the sheaves disagree with the freelists or with each other (a snapshot read while it
 * changed), or a sheaf breaks the model's rules, they are left out with a note.
 */
function sheavesWords(
  c: KCache,
  at: number,
  size: bigint,
  pad: bigint,
  slabBytes: bigint,
  byBase: Map<bigint, number>,
  onFreelist: Set<string>,
  notes: string[],
  unread: (base: bigint) => number,
): number[] {
  const has = (at === 0x612 || at >= 0x700) && c.sheafCapacity > 0;
  const sheaves: { place: number; cpu: number; sheaf: KSheaf }[] = [];
  for (const p of c.cpus) {
    const s = p.sheaves;
    if (!s) continue;
    if (s.main?.size) sheaves.push({ place: SeedSheaf.MAIN, cpu: p.cpu, sheaf: s.main });
    if (s.spare?.size) sheaves.push({ place: SeedSheaf.SPARE, cpu: p.cpu, sheaf: s.spare });
    if (s.rcuFree?.size) sheaves.push({ place: SeedSheaf.RCU_FREE, cpu: p.cpu, sheaf: s.rcuFree });
  }
  for (const n of c.nodes) for (const b of n.barn?.full ?? []) sheaves.push({ place: SeedSheaf.BARN_FULL, cpu: 0, sheaf: b });
  const empties = c.nodes.reduce((a, n) => a + (n.barn?.nrEmpty ?? 0), 0);
  if (!has || !sheaves.length) {
    if (sheaves.length) notes.push('the sheaves were read, but the model gives this version no sheaves: their objects are allocated in the model');
    return [];
  }
  const cap = c.sheafCapacity;
  const skip = (why: string): number[] => {
    notes.push(`sheaves start empty (${why}): the objects they held are allocated in the model`);
    return [];
  };
  const bad = sheaves.find(({ place, sheaf }) => sheaf.size !== sheaf.objects.length || sheaf.size > cap || (place === SeedSheaf.RCU_FREE && sheaf.size === cap) || (place !== SeedSheaf.MAIN && place !== SeedSheaf.RCU_FREE && sheaf.size !== cap));
  if (bad) return skip(`a sheaf of ${bad.sheaf.size} objects breaks the capacity ${cap} rules`);
  const seen = new Set<string>();
  const pending = new Map<bigint, true>();
  const located: [bigint, number][][] = [];
  for (const { sheaf } of sheaves) {
    const pairs: [bigint, number][] = [];
    for (const o of sheaf.objects) {
      const a = BigInt(o);
      const base = a - (a % slabBytes);
      const off = a - base - pad;
      if (off < 0n || off % size !== 0n || off / size >= BigInt(c.objectsPerSlab)) return skip(`${o} is not an object slot`);
      const key = `${base}:${off / size}`;
      if (onFreelist.has(key) || seen.has(key)) return skip(`${o} is also on a freelist or in another sheaf`);
      seen.add(key);
      if (!byBase.has(base)) pending.set(base, true);
      pairs.push([base, Number(off / size)]);
    }
    located.push(pairs);
  }
  for (const base of pending.keys()) unread(base);
  const out: number[] = [sheaves.length];
  sheaves.forEach(({ place, cpu, sheaf }, i) => {
    out.push(place, cpu, sheaf.size);
    for (const [base, index] of located[i] ?? []) out.push(byBase.get(base) ?? 0, index);
  });
  const held = sheaves.reduce((a, s) => a + s.sheaf.size, 0);
  notes.push(`${sheaves.length} sheaves hold their ${held} real objects in order${pending.size ? `; ${pending.size} slabs not read are made full to hold them` : ''}${empties ? `; the barn's ${empties} empty sheaves are not made` : ''}`);
  return out;
}
