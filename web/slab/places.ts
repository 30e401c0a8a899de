// places.ts - where every object of a SLAB snapshot is, derived from what the
// snapshot records (docs/snapshot-format.md): free on its slab (freelist
// positions active .. num-1), the home of its slab's freelist array
// (OBJFREELIST), in a CPU's array_cache or the shared array, the home of
// another slab's off-slab array (an object of a kmalloc cache), or held by a
// user (taken from its slab, in no array).  A pure function of the snapshot,
// computed once per snapshot (the canvas lays out again on every animation
// frame).

import type { SlabCacheState, SlabSnapshot, SlabState } from './snapshot';

export const Place = { FREE: 0, ARRAY_HOME: 1, CPU: 2, SHARED: 3, USER: 4, HOSTS_ARRAY: 5 } as const;
export type PlaceKind = (typeof Place)[keyof typeof Place];
export const PLACE_NAMES = [
  'free on its slab',
  "free, and its slab's freelist array lives in it (OBJFREELIST)",
  "in a CPU's array_cache",
  'in the shared array',
  'allocated (held by a user)',
  "holding another cache's slab's freelist array (OFF_SLAB)",
] as const;

/** The OFF slab whose freelist array an object holds. */
export interface HostedArray {
  cacheId: number;
  pfn: number;
}

export interface CachePlaces {
  /** Per slab (cache.slabs order), each object's PlaceKind. */
  kinds: Uint8Array[];
  /** Slab index in cache.slabs by pfn. */
  slabByPfn: Map<number, number>;
}

export interface WorldPlaces {
  byCache: Map<number, CachePlaces>;
  /** "cacheId:pfn:index" of an object holding an off-slab array -> whose. */
  hosted: Map<string, HostedArray>;
}

export const objKey = (cacheId: number, pfn: number, index: number) => `${cacheId}:${pfn}:${index}`;

function cachePlaces(c: SlabCacheState): CachePlaces {
  const slabByPfn = new Map<number, number>();
  const kinds = c.slabs.map((s: SlabState, i) => {
    slabByPfn.set(s.pfn, i);
    const k = new Uint8Array(c.num).fill(Place.USER);
    for (let pos = s.active; pos < c.num; pos++) {
      const idx = s.freelistArray[pos] ?? 0xff;
      if (idx < c.num) k[idx] = Place.FREE;
    }
    if (s.freelist.kind === 'in-object' && s.freelist.index < c.num) k[s.freelist.index] = Place.ARRAY_HOME;
    return k;
  });
  const mark = (pfn: number, index: number, kind: PlaceKind) => {
    const i = slabByPfn.get(pfn);
    const k = i === undefined ? undefined : kinds[i];
    if (k && index < k.length) k[index] = kind;
  };
  for (const a of c.cpus) for (const e of a.entries) mark(e.pfn, e.index, Place.CPU);
  for (const e of c.shared?.entries ?? []) mark(e.pfn, e.index, Place.SHARED);
  return { kinds, slabByPfn };
}

const memo = new WeakMap<SlabSnapshot, WorldPlaces>();

/** Every object's place in `s` (memoised per snapshot). */
export function placesOf(s: SlabSnapshot): WorldPlaces {
  const known = memo.get(s);
  if (known) return known;
  const byCache = new Map(s.caches.map((c) => [c.id, cachePlaces(c)]));
  const hosted = new Map<string, HostedArray>();
  for (const c of s.caches)
    for (const slab of c.slabs) {
      const f = slab.freelist;
      if (f.kind !== 'off-slab') continue;
      hosted.set(objKey(f.cacheId, f.pfn, f.index), { cacheId: c.id, pfn: slab.pfn });
      const host = byCache.get(f.cacheId);
      const i = host?.slabByPfn.get(f.pfn);
      const k = i === undefined ? undefined : host?.kinds[i];
      if (k && f.index < k.length) k[f.index] = Place.HOSTS_ARRAY;
    }
  const wp = { byCache, hosted };
  memo.set(s, wp);
  return wp;
}

/** An object's place kind, or null when (cacheId, pfn, index) is no object of the snapshot. */
export function placeOf(s: SlabSnapshot, cacheId: number, pfn: number, index: number): PlaceKind | null {
  const cp = placesOf(s).byCache.get(cacheId);
  const i = cp?.slabByPfn.get(pfn);
  const k = i === undefined ? undefined : cp?.kinds[i]?.[index];
  return k === undefined ? null : (k as PlaceKind);
}

/** Where an object sits in the arrays: the CPU (or -1 for the shared array) and the slot, or null. */
export function arraySlotOf(c: SlabCacheState, pfn: number, index: number): { owner: number; slot: number } | null {
  for (const [cpu, a] of c.cpus.entries()) {
    const slot = a.entries.findIndex((e) => e.pfn === pfn && e.index === index);
    if (slot >= 0) return { owner: cpu, slot };
  }
  const slot = c.shared?.entries.findIndex((e) => e.pfn === pfn && e.index === index) ?? -1;
  return slot >= 0 ? { owner: -1, slot } : null;
}

/**
 * The caches a view draws: every created cache, and each kmalloc cache once
 * it has grown a slab; created caches first, and a cache holding others'
 * off-slab arrays after the caches whose arrays it holds.
 */
export function shownCaches(s: SlabSnapshot): SlabCacheState[] {
  const hosts = new Set(s.caches.flatMap((c) => (c.freelistCache !== null && c.slabs.length ? [c.freelistCache] : [])));
  const rank = (c: SlabCacheState) => (hosts.has(c.id) ? 2 : c.id >= 20 ? 0 : 1);
  return s.caches.filter((c) => c.id >= 20 || c.grown > 0 || c.slabs.length > 0).sort((a, b) => rank(a) - rank(b) || a.id - b.id);
}
