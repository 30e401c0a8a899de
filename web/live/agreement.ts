// agreement.ts - how far the event stream explains the kernel's real state:
// one cache's objects as an earlier real snapshot left them, driven by the
// allocations and frees streamed since, compared with the next real snapshot.
//
// What is kept in step here is each listed slab's objects, allocated or
// not (a mirror of object states, in TypeScript), not the SLUB model's lists:
// which list a slab is on (CPU slab, CPU partial, node partial, full) is not
// predicted, so the figure is "slabs whose every object agrees" (hence
// whose inuse agrees) and "objects whose free/allocated state agrees".
// docs/live.md says what this leaves out.
//
// Slabs are found from an object's address: a slab of order n is 2^n pages,
// allocated by the buddy allocator aligned to its size, so its first byte is
// the address rounded down to PAGE_SIZE << order; object i sits at
// base + red_left_pad + i * size (mm/slub.c, 6.18).
//
// A slab the earlier snapshot did not list was either full then (full slabs
// are on no list) or allocated since: the first event on it tells which (a
// free means it was full; an allocation, that it is new, all free, or a
// partial slab past --max-slabs).  Each object that disagrees is put down to
// one likely cause, in this order: a slab or object the snapshot marked
// torn; an event on it while one of the two snapshots was being read (or,
// untouched, a slab first seen in an event during the earlier read: it was
// moving between lists then); lost events (the kernel ring, the server or
// the page dropped some in the window); an untouched object of another slab
// the earlier snapshot did not list, whose state was guessed; an allocation or free the kernel does not trace (bulk allocation
// and free, kfree_bulk of RCU batches, sheaf refills: no tracepoint); and
// "other" for what is left.

import type { KCache, KSlab } from '../kernel/snapshot-file';

/** One allocation or free of the cache, in time order. */
export interface CacheEvent {
  tNs: number;
  alloc: boolean;
  /** The object's address, low 47 bits (unique for canonical kernel addresses). */
  key: number;
}

export type Cause = 'torn' | 'duringRead' | 'lost' | 'unlisted' | 'untracedFree' | 'untracedAlloc' | 'other';

export const CAUSE_WORDS: Record<Cause, string> = {
  torn: 'torn snapshot (read while it changed)',
  duringRead: 'moved while a snapshot was being read',
  lost: 'lost events (kernel ring, server or page dropped some)',
  unlisted: 'a slab the earlier snapshot did not list (full, or moving between lists while read): its untouched objects were guessed',
  untracedFree: 'a free with no event (bulk free, kfree_bulk of RCU batches, sheaf flush)',
  untracedAlloc: 'an allocation with no event (bulk allocation, sheaf refill)',
  other: 'other (event order across CPUs)',
};

export interface Agreement {
  slabsCompared: number;
  slabsAgreeing: number;
  objectsCompared: number;
  objectsAgreeing: number;
  /** Disagreeing objects by likely cause; the counts add up to objectsCompared - objectsAgreeing. */
  causes: Record<Cause, number>;
  /** Disagreeing slabs by the cause of most of their disagreeing objects. */
  slabCauses: Record<Cause, number>;
  /** Slabs listed earlier and not now, which the mirror says are full (consistent) or not. */
  leftListsFull: number;
  leftListsNotFull: number;
  /** Slabs first seen in the events (new, or full at the earlier snapshot). */
  slabsFromEvents: number;
  eventsApplied: number;
  /** Events whose object is outside every slab of this cache's geometry (should be 0). */
  eventsOutside: number;
  /** Up to 20 disagreeing slabs: base address, objects disagreeing, cause. */
  examples: { base: string; objects: number; cause: Cause }[];
}

export const KEY_MASK = (1n << 47n) - 1n;
export const keyOf = (addr: bigint) => Number(addr & KEY_MASK);

const ALLOCATED = 1;
const FREE = 0;
const UNKNOWN = 2;

interface Mirror {
  state: Uint8Array;
  /** Object touched by an event, by kind: bit 0 alloc, bit 1 free, bit 2 during a read. */
  touched: Uint8Array;
  torn: boolean;
  /** First seen in the events, its untouched objects guessed (all allocated, or all free). */
  guessed: boolean;
  /** First seen in an event while the earlier snapshot was being read: it was moving between lists then. */
  firstInRead: boolean;
}

function slabsOf(c: KCache): KSlab[] {
  const out: KSlab[] = [];
  for (const k of c.cpus) {
    if (k.slab) out.push(k.slab);
    out.push(...k.partial);
  }
  for (const n of c.nodes) out.push(...n.partial);
  return out;
}

/** A slab's object states from its snapshot class string (a allocated; f, c, s free; ! unknown). */
function statesOf(s: KSlab): Uint8Array | null {
  if (s.state === null || s.state.length !== s.objects) return null;
  const out = new Uint8Array(s.objects);
  for (let i = 0; i < s.objects; i++) {
    const ch = s.state[i];
    out[i] = ch === 'a' ? ALLOCATED : ch === '!' ? UNKNOWN : FREE;
  }
  return out;
}

export interface Window {
  /** [start, end] of each snapshot's read, on the events' clock. */
  before: [number, number];
  after: [number, number];
  /** Events lost in the window (kernel ring + server + page), as counted. */
  lost: number;
}

/**
 * Compares `after` with `before` driven by `events` (the cache's, in time
 * order, from the start of before's read to the end of after's).  Returns
 * the agreement with every disagreement given a cause.
 */
export function agreement(before: KCache, after: KCache, pageSize: number, events: readonly CacheEvent[], w: Window): Agreement {
  const slabBytes = pageSize * 2 ** before.order;
  const perSlab = before.objectsPerSlab;
  const mirror = new Map<number, Mirror>();
  for (const s of slabsOf(before)) {
    if (s.base === null) continue;
    const st = statesOf(s);
    if (st) mirror.set(keyOf(s.base), { state: st, touched: new Uint8Array(s.objects), torn: s.torn, guessed: false, firstInRead: false });
  }
  const r: Agreement = {
    slabsCompared: 0,
    slabsAgreeing: 0,
    objectsCompared: 0,
    objectsAgreeing: 0,
    causes: { torn: 0, duringRead: 0, lost: 0, unlisted: 0, untracedFree: 0, untracedAlloc: 0, other: 0 },
    slabCauses: { torn: 0, duringRead: 0, lost: 0, unlisted: 0, untracedFree: 0, untracedAlloc: 0, other: 0 },
    leftListsFull: 0,
    leftListsNotFull: 0,
    slabsFromEvents: 0,
    eventsApplied: 0,
    eventsOutside: 0,
    examples: [],
  };
  const inRead = (t: number) => (t >= w.before[0] && t <= w.before[1]) || (t >= w.after[0] && t <= w.after[1]);
  for (const e of events) {
    if (e.tNs < w.before[0] || e.tNs > w.after[1]) continue;
    const base = e.key - (e.key % slabBytes);
    const off = e.key - base - before.redLeftPad;
    const idx = Math.floor(off / before.size);
    if (off < 0 || idx >= perSlab || off % before.size !== 0) {
      r.eventsOutside++;
      continue;
    }
    let m = mirror.get(base);
    if (!m) {
      // First seen now: full at the earlier snapshot (a free comes first) or new (an allocation).
      m = { state: new Uint8Array(perSlab).fill(e.alloc ? FREE : ALLOCATED), touched: new Uint8Array(perSlab), torn: false, guessed: true, firstInRead: e.tNs <= w.before[1] };
      mirror.set(base, m);
      r.slabsFromEvents++;
    }
    // An event before the earlier snapshot's read ended may already be in it: only during-read ones are.
    m.state[idx] = e.alloc ? ALLOCATED : FREE;
    m.touched[idx] = (m.touched[idx] ?? 0) | (e.alloc ? 1 : 2) | (inRead(e.tNs) ? 4 : 0);
    r.eventsApplied++;
  }
  const seen = new Set<number>();
  for (const s of slabsOf(after)) {
    if (s.base === null) continue;
    const real = statesOf(s);
    if (!real) continue;
    const key = keyOf(s.base);
    seen.add(key);
    // Not listed before and no event on it: full then, and still full as far as the events say.
    const m = mirror.get(key) ?? { state: new Uint8Array(s.objects).fill(ALLOCATED), touched: new Uint8Array(s.objects), torn: false, guessed: true, firstInRead: false };
    r.slabsCompared++;
    const slabCause: Record<Cause, number> = { torn: 0, duringRead: 0, lost: 0, unlisted: 0, untracedFree: 0, untracedAlloc: 0, other: 0 };
    let bad = 0;
    for (let i = 0; i < s.objects; i++) {
      r.objectsCompared++;
      const want = real[i];
      const got = m.state[i];
      if (want === got) {
        r.objectsAgreeing++;
        continue;
      }
      bad++;
      const t = m.touched[i] ?? 0;
      const cause: Cause =
        want === UNKNOWN || got === UNKNOWN || s.torn || m.torn
          ? 'torn'
          : t & 4 || (m.firstInRead && t === 0)
            ? 'duringRead'
            : w.lost > 0
              ? 'lost'
              : m.guessed && t === 0
                ? 'unlisted'
                : want === FREE && !(t & 2)
                ? 'untracedFree'
                : want === ALLOCATED && !(t & 1)
                  ? 'untracedAlloc'
                  : 'other';
      r.causes[cause]++;
      slabCause[cause]++;
    }
    if (bad === 0) {
      r.slabsAgreeing++;
    } else {
      const top = (Object.keys(slabCause) as Cause[]).reduce((a, b) => (slabCause[b] > slabCause[a] ? b : a));
      r.slabCauses[top]++;
      if (r.examples.length < 20) r.examples.push({ base: `0x${s.base.toString(16)}`, objects: bad, cause: top });
    }
  }
  for (const s of slabsOf(before)) {
    if (s.base === null || seen.has(keyOf(s.base))) continue;
    const m = mirror.get(keyOf(s.base));
    if (!m) continue;
    if (m.state.every((v) => v === ALLOCATED)) r.leftListsFull++;
    else if (!m.state.every((v) => v === FREE)) r.leftListsNotFull++;
  }
  return r;
}

/** The agreement in one line of words. */
export function agreementWords(a: Agreement): string {
  const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)} %` : '—');
  return `${pct(a.slabsAgreeing, a.slabsCompared)} of ${a.slabsCompared} slabs agree (every object), ${pct(a.objectsAgreeing, a.objectsCompared)} of ${a.objectsCompared} objects`;
}
