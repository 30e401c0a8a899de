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

import { ev, isAlloc, K, type EventBatch, type SlabinfoRow, type Status } from './wire';

export const WINDOW_S = 300;
export const OWNERS = 200_000;
export const TOP_SERIES = 8;
export const TABLE_CACHES = 64;
export const TOP_SITES = 20;
/** The bins id of percpu events (server cache ids are 16-bit). */
const PERCPU_ID = -1;
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

export class LiveState {
  private cacheNames = new Map<number, string>();
  private siteNames = new Map<number, string>();
  private bins = new Map<string, CacheBins>();
  /** The bins of each server cache id (0: page-sized kmalloc; PERCPU_ID: percpu), found once per id. */
  private binsById = new Map<number, CacheBins>();
  /** The second each ring slot holds. */
  private slotSec = new Float64Array(WINDOW_S).fill(-1);
  private nowS = 0;
  private sites = new Map<number, { allocs: number; frees: number; cache: string; at: number }>();
  private owners = new Map<number, number>();
  private oldOwners = new Map<number, number>();
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
    this.sites.clear();
    this.binsById.clear();
  }
  nameCache(id: number, name: string): void {
    this.cacheNames.set(id, name);
    this.binsById.delete(id);
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
      for (const [id, b] of this.binsById) if (this.bins.get(b.name) !== b) this.binsById.delete(id);
    }
    return i;
  }

  /** The sizes of the state's tables, all bounded whatever the stream's length. */
  sizes(): LiveStateSizes {
    return {
      caches: this.bins.size,
      cacheIds: this.binsById.size,
      owners: this.owners.size + this.oldOwners.size,
      sites: this.sites.size,
      cacheNames: this.cacheNames.size,
      siteNames: this.siteNames.size,
    };
  }

  /** Counts one batch. Returns nothing; the per-event callback sees each decoded event (for the picked cache). */
  add(batch: EventBatch, each?: (cacheId: number, tNs: number, alloc: boolean, objHi: number, objLo: number) => void): void {
    const r = batch.records;
    const base = Number(batch.baseNs);
    this.kernelLost = batch.kernelLost;
    let lastSec = -1;
    let slot = 0;
    for (let i = 0; i < batch.count; i++) {
      const kind = ev.kind(r, i);
      const t = base + ev.dtUs(r, i) * 1000;
      const s = Math.floor(t / 1e9);
      if (s < this.nowS - WINDOW_S + 1) continue; // older than the window (a late CPU): not counted in bins
      if (s > this.nowS) this.nowS = s;
      if (s !== lastSec) {
        slot = this.slot(s);
        lastSec = s;
      }
      const cid = ev.cache(r, i);
      const pcpu = kind === K.PCPU_ALLOC || kind === K.PCPU_FREE;
      const bid = pcpu ? PERCPU_ID : cid;
      let b = this.binsById.get(bid);
      if (!b) {
        b = this.binsOf(pcpu ? 'percpu' : cid === 0 ? 'kmalloc (pages)' : this.cacheName(cid));
        this.binsById.set(bid, b);
      }
      const name = b.name;
      const alloc = isAlloc(kind);
      const lo = ev.objLo(r, i);
      const hi = ev.objHi(r, i);
      const key = (hi & 0x7fff) * 4294967296 + lo;
      const cpu = ev.cpu(r, i);
      if (alloc) {
        b.allocs[slot] = (b.allocs[slot] ?? 0) + 1;
        this.owners.set(key, cpu);
        if (this.owners.size >= OWNERS) {
          this.oldOwners = this.owners;
          this.owners = new Map();
        }
      } else {
        b.frees[slot] = (b.frees[slot] ?? 0) + 1;
        const owner = this.owners.get(key) ?? this.oldOwners.get(key);
        if (owner !== undefined && owner !== cpu) b.remote[slot] = (b.remote[slot] ?? 0) + 1;
        this.owners.delete(key);
        this.oldOwners.delete(key);
      }
      b.total++;
      if (s > b.lastS) b.lastS = s;
      const site = ev.site(r, i);
      if (site) {
        let st = this.sites.get(site);
        if (!st) {
          st = { allocs: 0, frees: 0, cache: name, at: s };
          this.sites.set(site, st);
        }
        if (s > st.at) {
          const decay = 0.5 ** ((s - st.at) / SITE_HALF_LIFE_S);
          st.allocs *= decay;
          st.frees *= decay;
          st.at = s;
        }
        if (alloc) st.allocs++;
        else st.frees++;
      }
      each?.(cid, t, alloc, hi, lo);
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
    const sites = [...this.sites.entries()]
      .map(([id, s]) => {
        const decay = 0.5 ** ((now - s.at) / SITE_HALF_LIFE_S);
        return { name: this.siteNames.get(id) ?? `site ${id}`, cache: s.cache, allocs: s.allocs * decay, frees: s.frees * decay };
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
