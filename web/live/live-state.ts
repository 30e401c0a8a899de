// live-state.ts - what the live worker keeps of the stream, all of it
// bounded: per-second allocation, free and remote-free counts per cache over
// the last WINDOW_S seconds (a ring of bins), call-site counts, the owner
// CPU of recently allocated objects (two generations of at most OWNERS
// each, to tell a remote free: freed on another CPU than the one that
// allocated it), /proc/slabinfo's latest counts, and the loss counters.
// A cache with no event in the window is forgotten (caches come and go
// with names of their own: a long stream must not keep them all).
// The picked cache's events since its last snapshot are kept apart
// (pick.ts).  Keyed by cache name, so that history survives a server restart
// (which numbers caches anew).

import { isAlloc, K, type EventBatch, type SlabinfoRow, type Status } from './wire';

export const WINDOW_S = 300;
export const OWNERS = 200_000;
export const TOP_SERIES = 8;
export const TABLE_CACHES = 64;
export const TOP_SITES = 20;
/** The bins id of percpu events (server cache ids are 16-bit). */
const PERCPU_ID = -1;
/** Server cache ids (16-bit). */
const CACHE_IDS = 1 << 16;
/** Site counts decay by half every this many seconds (the busiest call sites "now"). */
export const SITE_HALF_LIFE_S = 10;

export interface CacheBins {
  name: string;
  allocs: Float64Array;
  frees: Float64Array;
  remote: Float64Array;
  total: number;
  /** The newest second with an event of this cache. */
  lastS: number;
}

/** How many entries each of the state's tables holds (tests and the benchmark check they stay bounded). */
export interface LiveStateSizes {
  caches: number;
  cacheIds: number;
  owners: number;
  sites: number;
  cacheNames: number;
  siteNames: number;
}

export interface SiteRow {
  name: string;
  cache: string;
  /** Decayed counts (events per half-life, roughly). */
  allocs: number;
  frees: number;
}

export interface LiveSummary {
  /** The newest second with events (the events' clock, seconds); the bins end there. */
  nowS: number;
  /** Seconds per bin, and bins (oldest first). */
  bins: number;
  caches: { name: string; allocs: number[]; frees: number[]; remote: number[]; total: number }[];
  sites: SiteRow[];
  slabinfo: SlabinfoRow[];
  events: number;
  kernelLost: number;
  serverDropped: number;
  snapshotsDropped: number;
  pageDropped: number;
  bytes: number;
}

/** Owner table slots: a power of two with OWNERS at most half full, so that probes stay short. */
const OWNER_BITS = 19;
const OWNER_MASK = (1 << OWNER_BITS) - 1;
/** Site ids the page counts (the server numbers at most 65,535). */
const SITE_IDS = 1 << 16;

/**
 * Object -> allocating CPU, open addressing in one typed array: a Map keyed by 47-bit addresses
 * boxes every key and was most of the worker's time per event.  Slot i is two words: the
 * address's low 32 bits, and a tag holding its next 15 bits plus one (0 marks an empty slot) with
 * the CPU above them, so that a probe reads one cache line.  Deletion shifts the probe run back,
 * so no tombstones accumulate.
 */
class OwnerTable {
  private slots = new Uint32Array(2 * (OWNER_MASK + 1));
  n = 0;

  private static home(lo: number, hi: number): number {
    return Math.imul(lo ^ Math.imul(hi, 0x9e3779b1), 0x85ebca6b) >>> (32 - OWNER_BITS);
  }
  /** The slot holding (lo, hi), or the empty slot where it would go. */
  private find(lo: number, hi: number): number {
    const t = this.slots;
    let i = OwnerTable.home(lo, hi);
    for (;;) {
      const tag = t[2 * i + 1] ?? 0;
      if (tag === 0 || ((tag & 0xffff) === hi && t[2 * i] === lo)) return i;
      i = (i + 1) & OWNER_MASK;
    }
  }
  /** Records (lo, hi) as allocated on cpu; hi is the address's bits 32-46 plus one. */
  set(lo: number, hi: number, cpu: number): void {
    const i = this.find(lo, hi);
    if (this.slots[2 * i + 1] === 0) this.n++;
    this.slots[2 * i] = lo;
    this.slots[2 * i + 1] = hi | (cpu << 16);
  }
  /** Removes (lo, hi). Returns its CPU, or -1 when it was not there. */
  take(lo: number, hi: number): number {
    const t = this.slots;
    let i = this.find(lo, hi);
    const tag = t[2 * i + 1] ?? 0;
    if (tag === 0) return -1;
    this.n--;
    let j = i;
    for (;;) {
      t[2 * i + 1] = 0;
      let home: number;
      let moved: number;
      do {
        j = (j + 1) & OWNER_MASK;
        moved = t[2 * j + 1] ?? 0;
        if (moved === 0) return tag >>> 16;
        home = OwnerTable.home(t[2 * j] ?? 0, moved & 0xffff);
      } while (i <= j ? home > i && home <= j : home > i || home <= j);
      t[2 * i] = t[2 * j] ?? 0;
      t[2 * i + 1] = moved;
      i = j;
    }
  }
  clear(): void {
    this.slots.fill(0);
    this.n = 0;
  }
}

const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** A batch's records as 32-bit words (6 per event): a view when they are 4-byte aligned, else an aligned copy. */
function words(r: DataView, count: number): Uint32Array {
  if (littleEndian) {
    if (r.byteOffset % 4 === 0) return new Uint32Array(r.buffer, r.byteOffset, count * 6);
    return new Uint32Array(new Uint8Array(r.buffer, r.byteOffset, count * 24).slice().buffer);
  }
  const w = new Uint32Array(count * 6);
  for (let k = 0; k < w.length; k++) w[k] = r.getUint32(k * 4, true);
  return w;
}

export class LiveState {
  private cacheNames = new Map<number, string>();
  private siteNames = new Map<number, string>();
  private bins = new Map<string, CacheBins>();
  /** The bins of each server cache id at [id - PERCPU_ID] (0: page-sized kmalloc; PERCPU_ID: percpu), found once per id. */
  private binsById: (CacheBins | undefined)[] = new Array<CacheBins | undefined>(CACHE_IDS + 1).fill(undefined);
  /** The second each ring slot holds. */
  private slotSec = new Float64Array(WINDOW_S).fill(-1);
  private nowS = 0;
  /** Call sites by server id: decayed counts, the second they were decayed to (-1: unused), the cache of the first event. */
  private siteAllocs = new Float64Array(SITE_IDS);
  private siteFrees = new Float64Array(SITE_IDS);
  private siteAt = new Float64Array(SITE_IDS).fill(-1);
  private siteCache: string[] = [];
  private siteIds: number[] = [];
  /** Two generations of object owners: the older goes when the newer reaches OWNERS. */
  private owners = new OwnerTable();
  private oldOwners = new OwnerTable();
  slabinfo: SlabinfoRow[] = [];
  events = 0;
  kernelLost = 0;
  status: Status | null = null;
  pageDropped = 0;
  bytes = 0;

  /** A new connection: ids are the server's, numbered anew after a restart. */
  resetNames(): void {
    this.cacheNames.clear();
    this.siteNames.clear();
    for (const id of this.siteIds) this.siteAt[id] = -1;
    this.siteIds = [];
    this.siteCache = [];
    this.binsById.fill(undefined);
  }
  nameCache(id: number, name: string): void {
    this.cacheNames.set(id, name);
    this.binsById[id - PERCPU_ID] = undefined;
  }
  nameSite(id: number, name: string): void {
    this.siteNames.set(id, name);
  }
  /** The server's ids of caches named `name` (a name can be reused by a cache created anew). */
  idsNamed(name: string): number[] {
    return [...this.cacheNames.entries()].filter(([, n]) => n === name).map(([id]) => id);
  }
  cacheName(id: number): string {
    return id === 0 ? '' : (this.cacheNames.get(id) ?? `cache ${id}`);
  }

  private binsOf(name: string): CacheBins {
    let b = this.bins.get(name);
    if (!b) {
      b = { name, allocs: new Float64Array(WINDOW_S), frees: new Float64Array(WINDOW_S), remote: new Float64Array(WINDOW_S), total: 0, lastS: -Infinity };
      this.bins.set(name, b);
    }
    return b;
  }

  /** The ring slot for second s, cleared if it held an older second. */
  private slot(s: number): number {
    const i = ((s % WINDOW_S) + WINDOW_S) % WINDOW_S;
    if (this.slotSec[i] !== s) {
      this.slotSec[i] = s;
      for (const [name, b] of this.bins) {
        if (b.lastS <= s - WINDOW_S) {
          this.bins.delete(name); // no event in the window: forgotten
          continue;
        }
        b.allocs[i] = 0;
        b.frees[i] = 0;
        b.remote[i] = 0;
      }
      for (let k = 0; k < this.binsById.length; k++) {
        const b = this.binsById[k];
        if (b && this.bins.get(b.name) !== b) this.binsById[k] = undefined;
      }
    }
    return i;
  }

  /** The sizes of the state's tables, all bounded whatever the stream's length. */
  sizes(): LiveStateSizes {
    return {
      caches: this.bins.size,
      cacheIds: this.binsById.reduce((n, b) => (b ? n + 1 : n), 0),
      owners: this.owners.n + this.oldOwners.n,
      sites: this.siteIds.length,
      cacheNames: this.cacheNames.size,
      siteNames: this.siteNames.size,
    };
  }

  /** Counts one batch. Returns nothing; the per-event callback sees each decoded event (for the picked cache). */
  add(batch: EventBatch, each?: (cacheId: number, tNs: number, alloc: boolean, objHi: number, objLo: number) => void): void {
    const w = words(batch.records, batch.count);
    const base = Number(batch.baseNs);
    this.kernelLost = batch.kernelLost;
    let s = -1;
    let slot = 0;
    // The current second's span, in µs after base: most events fall in it, so most need no division.
    let fromUs = 1;
    let toUs = 0;
    let lastBid = NaN;
    let b: CacheBins | undefined;
    for (let i = 0, j = 0; i < batch.count; i++, j += 6) {
      const w0 = w[j] ?? 0;
      const kind = w0 & 0xff;
      const dtUs = w[j + 2] ?? 0;
      if (dtUs < fromUs || dtUs >= toUs) {
        s = Math.floor((base + dtUs * 1000) / 1e9);
        fromUs = (s * 1e9 - base) / 1000;
        toUs = fromUs + 1e6;
        if (s < this.nowS - WINDOW_S + 1) {
          fromUs = 1; // older than the window (a late CPU): not counted in bins
          toUs = 0;
          continue;
        }
        if (s > this.nowS) this.nowS = s;
        slot = this.slot(s);
        lastBid = NaN; // slot() may have forgotten a cache
      }
      const cid = w0 >>> 16;
      const pcpu = kind === K.PCPU_ALLOC || kind === K.PCPU_FREE;
      const bid = pcpu ? PERCPU_ID : cid;
      if (bid !== lastBid || !b) {
        b = this.binsById[bid - PERCPU_ID];
        if (!b) {
          b = this.binsOf(pcpu ? 'percpu' : cid === 0 ? 'kmalloc (pages)' : this.cacheName(cid));
          this.binsById[bid - PERCPU_ID] = b;
        }
        lastBid = bid;
      }
      const alloc = isAlloc(kind);
      const lo = w[j + 4] ?? 0;
      const hi = w[j + 5] ?? 0;
      const key = (hi & 0x7fff) + 1;
      const cpu = (w0 >>> 8) & 0xff;
      if (alloc) {
        b.allocs[slot] = (b.allocs[slot] ?? 0) + 1;
        this.owners.set(lo, key, cpu);
        if (this.owners.n >= OWNERS) {
          const old = this.oldOwners;
          this.oldOwners = this.owners;
          old.clear();
          this.owners = old;
        }
      } else {
        b.frees[slot] = (b.frees[slot] ?? 0) + 1;
        const mine = this.owners.take(lo, key);
        const older = this.oldOwners.take(lo, key);
        const owner = mine >= 0 ? mine : older;
        if (owner >= 0 && owner !== cpu) b.remote[slot] = (b.remote[slot] ?? 0) + 1;
      }
      b.total++;
      if (s > b.lastS) b.lastS = s;
      const site = w[j + 1] ?? 0;
      if (site && site < SITE_IDS) {
        const at = this.siteAt[site] ?? -1;
        if (at < 0) {
          this.siteAt[site] = s;
          this.siteAllocs[site] = 0;
          this.siteFrees[site] = 0;
          this.siteCache[site] = b.name;
          this.siteIds.push(site);
        } else if (s > at) {
          const decay = 0.5 ** ((s - at) / SITE_HALF_LIFE_S);
          this.siteAllocs[site] = (this.siteAllocs[site] ?? 0) * decay;
          this.siteFrees[site] = (this.siteFrees[site] ?? 0) * decay;
          this.siteAt[site] = s;
        }
        if (alloc) this.siteAllocs[site] = (this.siteAllocs[site] ?? 0) + 1;
        else this.siteFrees[site] = (this.siteFrees[site] ?? 0) + 1;
      }
      each?.(cid, base + dtUs * 1000, alloc, hi, lo);
    }
    this.events += batch.count;
  }

  /** Everything the page draws, for the caches with events in the window (the busiest TABLE_CACHES). */
  summary(): LiveSummary {
    const order: number[] = [];
    for (let k = WINDOW_S - 1; k >= 0; k--) order.push((((this.nowS - k) % WINDOW_S) + WINDOW_S) % WINDOW_S);
    const valid = order.map((i, k) => this.slotSec[i] === this.nowS - (WINDOW_S - 1 - k));
    const pick = (a: Float64Array) => order.map((i, k) => (valid[k] ? (a[i] ?? 0) : 0));
    const caches = [...this.bins.values()]
      .map((b) => ({ name: b.name, allocs: pick(b.allocs), frees: pick(b.frees), remote: pick(b.remote), total: b.total }))
      .map((c) => ({ ...c, inWindow: c.allocs.reduce((x, y) => x + y, 0) + c.frees.reduce((x, y) => x + y, 0) }))
      .filter((c) => c.inWindow > 0)
      .sort((a, b) => b.inWindow - a.inWindow)
      .slice(0, TABLE_CACHES)
      .map(({ inWindow: _w, ...c }) => c);
    const now = this.nowS;
    const sites = this.siteIds
      .map((id) => {
        const decay = 0.5 ** ((now - (this.siteAt[id] ?? now)) / SITE_HALF_LIFE_S);
        return { name: this.siteNames.get(id) ?? `site ${id}`, cache: this.siteCache[id] ?? '', allocs: (this.siteAllocs[id] ?? 0) * decay, frees: (this.siteFrees[id] ?? 0) * decay };
      })
      .sort((a, b) => b.allocs + b.frees - (a.allocs + a.frees))
      .slice(0, TOP_SITES);
    return {
      nowS: now,
      bins: WINDOW_S,
      caches,
      sites,
      slabinfo: this.slabinfo,
      events: this.events,
      kernelLost: this.kernelLost,
      serverDropped: this.status?.server_dropped ?? 0,
      snapshotsDropped: this.status?.snapshots_dropped ?? 0,
      pageDropped: this.pageDropped,
      bytes: this.bytes,
    };
  }
}
