// protocol.ts - what the SLAB view sends through the engine's requests
// (web/core/bridge-protocol.ts) and gets back, checked on arrival by the SLAB
// model adapter (worker.ts): the world configuration, worldInfo's facts about
// a world's caches under both rule sets, and the slab-types query of the
// "Your kernel's caches" panel.

import type { MgmtName, Rules } from './snapshot';

/** What a cache name may be in the URL and in a world (the model keeps 63 bytes). */
export const CACHE_NAME = /^[\w:.@-]{1,63}$/;

/** A cache the world creates (kmem_cache_create) before the script runs; the script names it by its place in the list. */
export interface CacheSpec {
  name: string;
  objectSize: number;
  /** 0 or a power of two. */
  align: number;
  /** SL_SLAB_* bits (snapshot.ts's CACHE_FLAGS). */
  flags: number;
}

export interface WorldConfig {
  cpus: number;
  rules: Rules;
  /** "X.Y", 4.10 .. 6.7 */
  kernel: string;
  arenaMb: number;
  caches: CacheSpec[];
}

/** What the stories need to know about one cache before anything ran. */
export interface CacheFacts {
  id: number;
  name: string;
  objectSize: number;
  size: number;
  order: number;
  num: number;
  mgmt: MgmtName;
  colour: number;
  colourOff: number;
  limit: number;
  batchcount: number;
  sharedLimit: number;
  freeLimit: number;
  /** Reap time (ms) at which cache_reap's node part is first due. */
  nextReap: number;
  /** OFF: the kmalloc cache holding the freelist arrays. */
  freelistCache: string | null;
  /** Bytes per slab that hold no object (left-over and an on-slab array), plus an off-slab array's object. */
  waste: number;
}

/** worldInfo: every cache of a fresh world of this configuration, under each rule set. */
export interface SlabWorldInfo {
  before: CacheFacts[];
  after: CacheFacts[];
}

/** The query of the caches panel: a kernel's cache list in, seed 002's table out (SlabTypesReport). */
export interface TypesQuery {
  kind: 'types';
  /** The text the core parses: a /proc/slabinfo file, or the caches list a sysfs tar was turned into. */
  text: string;
  format: 'slabinfo' | 'caches';
  kernel: string;
  cpus: number;
  source: string;
}
