// accounting.ts - where a cache's memory goes, from a kernel snapshot
// (snapshot-file.ts): its slabs' bytes split into objects in use, free
// objects in node partial slabs, free objects held per CPU (the CPU
// freelist, the CPU slab's own freelist, the CPU partial slabs), objects
// held in sheaves (a CPU's main, spare and rcu_free, the barn's full
// sheaves), and the tail each slab leaves over; the waste (bytes free in
// partial slabs), how empty the partial slabs are, and a histogram of them
// by occupancy.
//
// Counts come from the slabs' own counters (objects - inuse), not from
// the length of their freelists, as /proc/slabinfo's do; a freelist that
// disagrees with its counters is an anomaly (anomalies below).  A CPU slab
// is frozen with inuse = objects when it is taken, so its free objects are
// the CPU freelist's plus what remote frees put back on its own freelist
// since (objects - inuse).  Objects in sheaves are allocated as far as
// their slabs count: they are taken out of "in use" here.  Memory is
// nr_slabs * (page_size << order): a slab allocated at a fallback order is
// counted at the cache's order (the snapshot does not read full slabs).
// The partial slabs past --max-slabs are "unread": their slots are counted
// apart (objects_per_slab each), neither in use nor free.

import type { KCache, KSlab, KernelSnapshot } from './snapshot-file';

/** Occupancy bins of the partial-slab histogram: bin k holds slabs with k*10 % <= inuse/objects < (k+1)*10 % (the last includes 100 %). */
export const HISTOGRAM_BINS = 10;

export interface CacheMemory {
  name: string;
  /** Bytes per object slot. */
  size: number;
  slabs: number;
  /** Bytes of all its slabs. */
  slabBytes: number;
  /** Object slots in all its slabs (total_objects). */
  objects: number;
  /** Objects handed out (to callers, not to a CPU or a sheaf). */
  inUse: number;
  /** Free objects in the node partial slabs read. */
  partialFree: number;
  /** Free objects held by the CPUs: CPU freelists, CPU slabs' own freelists, CPU partial slabs. */
  cpuFree: number;
  /** Of cpuFree, those in CPU partial slabs. */
  cpuPartialFree: number;
  /** Objects in sheaves (CPUs' main, spare, rcu_free; the barns' full sheaves). */
  sheafObjects: number;
  /** Bytes not in any object slot (each slab's tail). */
  tailBytes: number;
  /** Bytes free in partial slabs, node and CPU (the waste to sort by). */
  wasteBytes: number;
  /** Free objects / object slots over the partial slabs read (0: none free or no partial slab). */
  fragmentation: number;
  /** Partial slabs (node and CPU) by occupancy, HISTOGRAM_BINS bins. */
  histogram: number[];
  /** Partial slabs the snapshot counted but did not read (past --max-slabs). */
  partialLeftOut: number;
  /** Their object slots (at objects_per_slab each): in use or free, the snapshot does not say. */
  unread: number;
}

const free = (s: KSlab) => s.objects - s.inuse;

/** The bin of a slab with `inuse` of `objects` in use. */
export function occupancyBin(inuse: number, objects: number): number {
  return objects <= 0 ? 0 : Math.min(HISTOGRAM_BINS - 1, Math.floor((inuse * HISTOGRAM_BINS) / objects));
}

/** Where one cache's memory goes. */
export function cacheMemory(c: KCache, pageSize: number): CacheMemory {
  const histogram = new Array<number>(HISTOGRAM_BINS).fill(0);
  let slabs = 0;
  let objects = 0;
  let partialFree = 0;
  let partialSlots = 0;
  let leftOut = 0;
  let sheafObjects = 0;
  const partial = (s: KSlab) => {
    partialSlots += s.objects;
    const k = occupancyBin(s.inuse, s.objects);
    histogram[k] = (histogram[k] ?? 0) + 1;
  };
  for (const n of c.nodes) {
    slabs += n.nrSlabs;
    objects += n.totalObjects;
    leftOut += n.partialLeftOut;
    for (const s of n.partial) {
      partial(s);
      partialFree += free(s);
    }
    if (n.barn) sheafObjects += n.barn.full.reduce((a, sh) => a + sh.size, 0) + Math.max(0, n.barn.nrFull - n.barn.full.length) * c.sheafCapacity;
  }
  let cpuFree = 0;
  let cpuPartialFree = 0;
  for (const k of c.cpus) {
    cpuFree += k.freelist.length + (k.slab ? free(k.slab) : 0);
    for (const s of k.partial) {
      partial(s);
      cpuPartialFree += free(s);
    }
    if (k.sheaves) for (const sh of [k.sheaves.main, k.sheaves.spare, k.sheaves.rcuFree]) sheafObjects += sh?.size ?? 0;
  }
  cpuFree += cpuPartialFree;
  const slabBytes = slabs * (pageSize << c.order);
  const unread = Math.min(leftOut * c.objectsPerSlab, Math.max(0, objects - partialFree - cpuFree - sheafObjects));
  const partialFreeAll = partialFree + cpuPartialFree;
  return {
    name: c.name,
    size: c.size,
    slabs,
    slabBytes,
    objects,
    inUse: Math.max(0, objects - partialFree - cpuFree - sheafObjects - unread),
    partialFree,
    cpuFree,
    cpuPartialFree,
    sheafObjects,
    tailBytes: Math.max(0, slabBytes - objects * c.size),
    wasteBytes: partialFreeAll * c.size,
    fragmentation: partialSlots ? partialFreeAll / partialSlots : 0,
    histogram,
    partialLeftOut: leftOut,
    unread,
  };
}

/** Every cache's memory, in the snapshot's order. */
export function snapshotMemory(s: KernelSnapshot): CacheMemory[] {
  return s.caches.map((c) => cacheMemory(c, s.kernel.pageSize));
}

export const SORT_KEYS = ['memory', 'waste', 'fragmentation', 'objects', 'name'] as const;
export type SortKey = (typeof SORT_KEYS)[number];

const SORT_VALUE: Record<SortKey, (m: CacheMemory) => number | string> = {
  memory: (m) => m.slabBytes,
  waste: (m) => m.wasteBytes,
  fragmentation: (m) => m.fragmentation,
  objects: (m) => m.objects,
  name: (m) => m.name,
};

/** Caches sorted: numbers largest first, names A to Z; `flip` reverses; ties by name. */
export function sortMemory(rows: readonly CacheMemory[], key: SortKey, flip = false): CacheMemory[] {
  const value = SORT_VALUE[key];
  const sign = flip ? -1 : 1;
  return [...rows].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    const d = typeof x === 'string' || typeof y === 'string' ? String(x).localeCompare(String(y)) : y - x;
    return sign * d || a.name.localeCompare(b.name);
  });
}

/** The whole machine's slab memory, summed. */
export function totals(rows: readonly CacheMemory[]): Pick<CacheMemory, 'slabs' | 'slabBytes' | 'objects' | 'inUse' | 'partialFree' | 'cpuFree' | 'sheafObjects' | 'unread' | 'wasteBytes' | 'tailBytes'> {
  const t = { slabs: 0, slabBytes: 0, objects: 0, inUse: 0, partialFree: 0, cpuFree: 0, sheafObjects: 0, unread: 0, wasteBytes: 0, tailBytes: 0 };
  for (const r of rows) for (const k of Object.keys(t) as (keyof typeof t)[]) t[k] += r[k];
  return t;
}

/** Bytes in words: "1.5 MiB". */
export function bytesText(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = Math.abs(n);
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  const t = u === 0 ? String(v) : v.toFixed(v < 10 ? 2 : v < 100 ? 1 : 0);
  return `${n < 0 ? '-' : ''}${t} ${units[u]}`;
}
