// check-api.ts - the live view's agreement, computed by the C core: the SLUB
// model seeded from one real snapshot of the picked cache, driven by the
// events streamed since, compared with the next real snapshot
// (wasm-core/src/replay/check.c through wasm-core/bindings/api_check.c, the
// same code as `slablab replay CAPTURE --check`).  docs/live.md says what
// is kept in step, what is corrected, and what is simplified.

import type { CoreModule } from '../core/core-api';

/** The likely causes of a disagreement, as check.c names them, in its order. */
export const CAUSES = [
  'torn',
  'during_read',
  'lost',
  'unlisted',
  'untraced_free',
  'untraced_alloc',
  'list',
  'place',
  'other',
] as const;
export type Cause = (typeof CAUSES)[number];

export const CAUSE_WORDS: Record<Cause, string> = {
  torn: 'torn snapshot (read while it changed)',
  during_read: 'moved while a snapshot was being read',
  lost: 'lost events (kernel ring, server or page dropped some)',
  unlisted: 'a slab the earlier snapshot did not list (full, or moving between lists while read): its untouched objects were guessed',
  untraced_free: 'a free with no event since its last allocation (kfree_rcu into a sheaf, bulk free, sheaf flush)',
  untraced_alloc: 'an allocation with no event since its last free (sheaf refill or prefill, bulk allocation)',
  list: 'a slab whose objects agree on another list (the model moved it otherwise)',
  place: 'a slab whose objects and list agree, its inuse not (an object free in a sheaf or CPU freelist in one, on the slab in the other)',
  other: "other (the model's state contradicts the last event on the object: a failed correction)",
};

export const PATHS = ['fast', 'slow', 'sheaf'] as const;
export type AllocPath = (typeof PATHS)[number];

/** check.c's sl_check_result, as sl_check_result_json writes it. */
export interface Agreement {
  cache: string;
  kernel_rules: string;
  slabs_compared: number;
  /** Slabs whose list (CPU slab or CPU partial of the same CPU, node partial) and inuse both match. */
  slabs_agreeing: number;
  slabs_list_agreeing: number;
  slabs_inuse_agreeing: number;
  model_only_listed: number;
  objects_compared: number;
  objects_agreeing: number;
  /** Disagreeing objects by likely cause; they add up to objects_compared - objects_agreeing. */
  causes: Record<Cause, number>;
  slab_causes: Record<Cause, number>;
  /** Allocations the model predicted (its own choice equal to the kernel's), by the model's path. */
  allocs: number;
  hits: number;
  paths: Record<AllocPath, { allocs: number; hits: number }>;
  frees: number;
  free_misses: Record<Cause, number>;
  alloc_of_allocated: Record<Cause, number>;
  events_applied: number;
  events_outside: number;
  events_unapplied: number;
  model_errors: number;
  corrections: number;
  cpu_slab_corrections: number;
  corrections_failed: number;
  slabs_seeded: number;
  slabs_adopted_full: number;
  slabs_adopted_new: number;
  slabs_bound_new: number;
  /** Caches with sheaves: free objects in each side's sheaves (a difference shows as inuse, `place`). */
  sheaf_objects_kernel: number;
  sheaf_objects_model: number;
  examples: { base: string; objects: number; cause: Cause; list_agrees: boolean; inuse_agrees: boolean }[];
  notes: string;
}

/** The exports this file uses (every build has them). */
export interface CheckModule extends CoreModule {
  HEAPU32: Uint32Array;
  _sl_api_check_message(): number;
  _sl_api_check_create(json: number, len: number, name: number, startNs: number, endNs: number): number;
  _sl_api_check_events(c: number, words: number, n: number): number;
  _sl_api_check_compare(c: number, json: number, len: number, startNs: number, endNs: number, lost: number, beforeStart: number, beforeEnd: number): number;
  _sl_api_check_destroy(c: number): void;
}

/** The check could not be made or run; `message` is the core's sentence. */
export class CheckError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckError';
  }
}

/** Events for Check.events: per event its time (ns), CPU, kind, and address (high and low 32 bits). */
export interface CheckEvents {
  n: number;
  tNs: Float64Array;
  cpu: Uint8Array;
  alloc: Uint8Array;
  hi: Uint32Array;
  lo: Uint32Array;
}

const utf8 = new TextEncoder();

/** Copies bytes (and a NUL) into the core's memory; returns the pointer (the caller frees it). */
function put(m: CheckModule, bytes: Uint8Array): number {
  const p = m._malloc(bytes.length + 1);
  if (!p) throw new CheckError(`no memory in the core for ${bytes.length} bytes`);
  m.HEAPU8.set(bytes, p);
  m.HEAPU8[p + bytes.length] = 0;
  return p;
}

/** One check: the model seeded from a snapshot of one cache. */
export class Check {
  private constructor(
    private readonly m: CheckModule,
    private ptr: number,
    /** The earlier snapshot's read. */
    readonly takenNs: [number, number],
  ) {}

  /** Seeds a check of `cache` from a snapshot's JSON text; throws CheckError with the core's reason. */
  static create(m: CheckModule, snapshot: string, cache: string, takenNs: [number, number]): Check {
    const bytes = utf8.encode(snapshot);
    const json = put(m, bytes);
    const name = put(m, utf8.encode(cache));
    try {
      const c = m._sl_api_check_create(json, bytes.length, name, takenNs[0], takenNs[1]);
      if (!c) throw new CheckError(m.UTF8ToString(m._sl_api_check_message()));
      return new Check(m, c, takenNs);
    } finally {
      m._free(json);
      m._free(name);
    }
  }

  /** Applies events [0, e.n) in the order given (time order); returns how many were applied as they were. */
  events(e: CheckEvents): number {
    const chunk = 65536;
    let ok = 0;
    const p = this.m._malloc(chunk * 20);
    if (!p) throw new CheckError('no memory in the core for the events');
    try {
      for (let at = 0; at < e.n; at += chunk) {
        const n = Math.min(chunk, e.n - at);
        const w = this.m.HEAPU32.subarray(p >> 2, (p >> 2) + n * 5);
        for (let i = 0; i < n; i++) {
          const t = e.tNs[at + i] ?? 0;
          w[i * 5] = t % 4294967296;
          w[i * 5 + 1] = Math.floor(t / 4294967296);
          w[i * 5 + 2] = e.lo[at + i] ?? 0;
          w[i * 5 + 3] = e.hi[at + i] ?? 0;
          w[i * 5 + 4] = ((e.cpu[at + i] ?? 0) | ((e.alloc[at + i] ?? 0) ? 0x80000000 : 0)) >>> 0;
        }
        ok += this.m._sl_api_check_events(this.ptr, p, n);
      }
    } finally {
      this.m._free(p);
    }
    return ok;
  }

  /** Compares the model with the same cache in a later snapshot; throws CheckError with the core's reason. */
  compare(snapshot: string, takenNs: [number, number], lost: number): Agreement {
    const bytes = utf8.encode(snapshot);
    const json = put(this.m, bytes);
    try {
      const r = this.m._sl_api_check_compare(this.ptr, json, bytes.length, takenNs[0], takenNs[1], lost, this.takenNs[0], this.takenNs[1]);
      if (!r) throw new CheckError(this.m.UTF8ToString(this.m._sl_api_check_message()));
      return JSON.parse(this.m.UTF8ToString(r)) as Agreement;
    } finally {
      this.m._free(json);
    }
  }

  destroy(): void {
    if (this.ptr) this.m._sl_api_check_destroy(this.ptr);
    this.ptr = 0;
  }
}

/** The agreement in one line of words. */
export function agreementWords(a: Agreement): string {
  const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)} %` : '—');
  return `${pct(a.slabs_agreeing, a.slabs_compared)} of ${a.slabs_compared} slabs agree (list and inuse), ${pct(a.objects_agreeing, a.objects_compared)} of ${a.objects_compared} objects; ${pct(a.hits, a.allocs)} of ${a.allocs} allocations predicted`;
}
