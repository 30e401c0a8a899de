// pick.ts - the picked cache kept in step with the kernel: its events since
// the last real snapshot (at most MAX_LOG; more are dropped and counted, and
// the window they fall in is marked), and at each new snapshot the
// agreement computed by the C core (check-api.ts: the SLUB model seeded from
// the earlier snapshot, driven by those events in time order, compared with
// the new one), then a new check seeded from the new snapshot.

import { Check, CheckError, type Agreement, type CheckModule } from './check-api';

export const MAX_LOG = 1_000_000;
export const HISTORY = 30;

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
  private cpu = new Uint8Array(1024);
  private alloc = new Uint8Array(1024);
  private hi = new Uint32Array(1024);
  private lo = new Uint32Array(1024);
  private n = 0;
  dropped = 0;
  /** The check seeded from the last snapshot (null before the first, or when the core refused it). */
  private check: Check | null = null;
  /** Whether a snapshot with the picked cache has arrived. */
  seen = false;
  history: AgreementPoint[] = [];
  /** Loss counters when the last snapshot was read (kernel + server), to tell loss in a window. */
  private lostAtLast = 0;
  private droppedAtLast = 0;

  constructor(
    name: string,
    private readonly core: CheckModule,
  ) {
    this.name = name;
  }

  get logged(): number {
    return this.n;
  }

  push(tNs: number, cpu: number, isAlloc: boolean, objHi: number, objLo: number): void {
    if (this.n === MAX_LOG) {
      this.dropped++;
      return;
    }
    if (this.n === this.t.length) {
      const size = Math.min(MAX_LOG, this.t.length * 2);
      const grow = <T extends Float64Array | Uint8Array | Uint32Array>(a: T, make: (n: number) => T) => {
        const b = make(size);
        b.set(a);
        return b;
      };
      this.t = grow(this.t, (k) => new Float64Array(k));
      this.cpu = grow(this.cpu, (k) => new Uint8Array(k));
      this.alloc = grow(this.alloc, (k) => new Uint8Array(k));
      this.hi = grow(this.hi, (k) => new Uint32Array(k));
      this.lo = grow(this.lo, (k) => new Uint32Array(k));
    }
    this.t[this.n] = tNs;
    this.cpu[this.n] = cpu;
    this.alloc[this.n] = isAlloc ? 1 : 0;
    this.hi[this.n] = objHi;
    this.lo[this.n] = objLo;
    this.n++;
  }

  /**
   * A new real snapshot (its JSON text): the check seeded from the last one
   * is driven by the events between, in time order, and compared with it; a
   * new check is seeded from it, and events before its read are forgotten.
   * Returns the agreement point, or null for the first snapshot, one
   * without the picked cache, or a restart (a looped recording starting
   * again: no event leads to it, so it is only seeded from).  Throws CheckError when the core refuses the
   * snapshot or the cache (a debug cache, a version it does not model).
   */
  snapshot(text: string, takenNs: [number, number], lostNow: number, restart = false): AgreementPoint | null {
    if (!new RegExp(`"name":\\s*"${this.name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`).test(text)) return null;
    let point: AgreementPoint | null = null;
    const prev = this.check;
    this.check = null;
    try {
      if (prev && !restart) {
        const order = Array.from({ length: this.n }, (_, i) => i)
          .filter((i) => (this.t[i] ?? 0) >= prev.takenNs[0])
          .sort((x, y) => (this.t[x] ?? 0) - (this.t[y] ?? 0));
        const pick = <T extends Float64Array | Uint8Array | Uint32Array>(a: T, make: (n: number) => T) => {
          const b = make(order.length);
          order.forEach((i, k) => (b[k] = a[i] ?? 0));
          return b;
        };
        prev.events({
          n: order.length,
          tNs: pick(this.t, (k) => new Float64Array(k)),
          cpu: pick(this.cpu, (k) => new Uint8Array(k)),
          alloc: pick(this.alloc, (k) => new Uint8Array(k)),
          hi: pick(this.hi, (k) => new Uint32Array(k)),
          lo: pick(this.lo, (k) => new Uint32Array(k)),
        });
        const lost = lostNow - this.lostAtLast + (this.dropped - this.droppedAtLast);
        const a = prev.compare(text, takenNs, lost);
        point = { atNs: takenNs[0], sinceNs: prev.takenNs[0], a, events: order.length, lost };
        this.history.push(point);
        if (this.history.length > HISTORY) this.history.shift();
      }
    } finally {
      prev?.destroy();
      this.forgetBefore(takenNs[0]);
      this.lostAtLast = lostNow;
      this.droppedAtLast = this.dropped;
      this.seen = true;
    }
    this.check = Check.create(this.core, text, this.name, takenNs);
    return point;
  }

  /** Keeps the events from t on: the next comparison starts there. */
  private forgetBefore(t: number): void {
    let k = 0;
    for (let i = 0; i < this.n; i++) {
      if ((this.t[i] ?? 0) >= t) {
        this.t[k] = this.t[i] ?? 0;
        this.cpu[k] = this.cpu[i] ?? 0;
        this.alloc[k] = this.alloc[i] ?? 0;
        this.hi[k] = this.hi[i] ?? 0;
        this.lo[k] = this.lo[i] ?? 0;
        k++;
      }
    }
    this.n = k;
  }

  /** Frees the core's check. */
  close(): void {
    this.check?.destroy();
    this.check = null;
  }
}

export { CheckError };
