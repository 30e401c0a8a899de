// pick.ts - the picked cache kept in step with the kernel: its events since
// the last real snapshot (at most MAX_LOG; more are dropped and counted, and
// the window they fall in is marked), and at each new snapshot the
// agreement of the earlier one driven by those events with the new one
// (agreement.ts).

import { agreement, type Agreement, type CacheEvent } from './agreement';
import { decodeKernelSnapshot, type KCache } from '../kernel/snapshot-file';

export const MAX_LOG = 1_000_000;
export const HISTORY = 30;

export interface PickedSnapshot {
  takenNs: [number, number];
  cache: KCache;
  pageSize: number;
}

export interface AgreementPoint {
  /** The later snapshot's read start (the events' clock, ns). */
  atNs: number;
  /** The earlier snapshot's read start: the window is atNs - sinceNs. */
  sinceNs: number;
  a: Agreement;
  events: number;
  lost: number;
}

export class Picked {
  readonly name: string;
  private t = new Float64Array(1024);
  private key = new Float64Array(1024);
  private alloc = new Uint8Array(1024);
  private n = 0;
  dropped = 0;
  last: PickedSnapshot | null = null;
  history: AgreementPoint[] = [];
  /** Loss counters when the last snapshot was read (kernel + server), to tell loss in a window. */
  private lostAtLast = 0;
  private droppedAtLast = 0;

  constructor(name: string) {
    this.name = name;
  }

  get logged(): number {
    return this.n;
  }

  push(tNs: number, isAlloc: boolean, objHi: number, objLo: number): void {
    if (this.n === MAX_LOG) {
      this.dropped++;
      return;
    }
    if (this.n === this.t.length) {
      const size = Math.min(MAX_LOG, this.t.length * 2);
      const grow = <T extends Float64Array | Uint8Array>(a: T, make: (n: number) => T) => {
        const b = make(size);
        b.set(a);
        return b;
      };
      this.t = grow(this.t, (k) => new Float64Array(k));
      this.key = grow(this.key, (k) => new Float64Array(k));
      this.alloc = grow(this.alloc, (k) => new Uint8Array(k));
    }
    this.t[this.n] = tNs;
    this.key[this.n] = (objHi & 0x7fff) * 4294967296 + objLo;
    this.alloc[this.n] = isAlloc ? 1 : 0;
    this.n++;
  }

  /**
   * A new real snapshot (its JSON text): compares it with the last one driven
   * by the events between, keeps it as the new start, and forgets events
   * before its read.  Returns the agreement point, or null for the first
   * snapshot or one without the picked cache.  Throws on a snapshot the
   * kernel view's decoder refuses.
   */
  snapshot(text: string, takenNs: [number, number], lostNow: number): AgreementPoint | null {
    const doc = decodeKernelSnapshot(text);
    const cache = doc.caches.find((c) => c.name === this.name);
    if (!cache) return null;
    const next: PickedSnapshot = { takenNs, cache, pageSize: doc.kernel.pageSize };
    let point: AgreementPoint | null = null;
    const prev = this.last;
    if (prev) {
      const events: CacheEvent[] = [];
      for (let i = 0; i < this.n; i++) events.push({ tNs: this.t[i] ?? 0, alloc: this.alloc[i] === 1, key: this.key[i] ?? 0 });
      events.sort((x, y) => x.tNs - y.tNs);
      const lost = lostNow - this.lostAtLast + (this.dropped - this.droppedAtLast);
      const a = agreement(prev.cache, cache, prev.pageSize, events, { before: prev.takenNs, after: takenNs, lost });
      point = { atNs: takenNs[0], sinceNs: prev.takenNs[0], a, events: events.length, lost };
      this.history.push(point);
      if (this.history.length > HISTORY) this.history.shift();
    }
    // Keep the events from this read's start on: the next comparison starts there.
    let k = 0;
    for (let i = 0; i < this.n; i++) {
      if ((this.t[i] ?? 0) >= takenNs[0]) {
        this.t[k] = this.t[i] ?? 0;
        this.key[k] = this.key[i] ?? 0;
        this.alloc[k] = this.alloc[i] ?? 0;
        k++;
      }
    }
    this.n = k;
    this.last = next;
    this.lostAtLast = lostNow;
    this.droppedAtLast = this.dropped;
    return point;
  }
}
