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
//
// The counting is the core's C (wasm-core/src/replay/live_count.c), the same
// code the native replay benchmark runs, as a standalone WebAssembly module
// (slablab-live.wasm, carried as base64 and instantiated synchronously, which
// a worker may do).  The stream is read there too (push): each fetched chunk
// is copied into its memory once and fed with one call, which cuts the
// frames (keeping a cut frame's bytes), counts the events in place and hands
// back only the other frames, and the picked cache's events (watch), for
// wire.ts to decode.  This class keeps the names (ids the page asks
// about) and the summary's presentation (sorting, the busiest caches and
// sites); the counts are read back from the module twice a second.

import wasmBase64 from '../core/generated/slablab-live-wasm.mjs';
import { ev, EVENT_BYTES, F, FrameReader, isAlloc, WireError, type EventBatch, type Frame, type SlabinfoRow, type Status } from './wire';

export const WINDOW_S = 300;
export const OWNERS = 200_000;
export const TOP_SERIES = 8;
export const TABLE_CACHES = 64;
export const TOP_SITES = 20;
/** Site counts decay by half every this many seconds (the busiest call sites "now"). */
export const SITE_HALF_LIFE_S = 10;

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
  /** Left out as the server's own work, and by which rule (null: the server does not say). */
  serverOwn: number;
  ownByContext: boolean | null;
  ownNote: string;
  snapshotsDropped: number;
  pageDropped: number;
  bytes: number;
}

/** Bytes of one record in the module's memory (cli/live_wire.h). */
const RECORD_BYTES = EVENT_BYTES;

/** The module's exports (wasm-core/bindings/api_live.c). Pointers are byte offsets into memory. */
interface LiveExports {
  memory: WebAssembly.Memory;
  _initialize(): void;
  malloc(bytes: number): number;
  free(ptr: number): void;
  sl_api_live_create(): number;
  sl_api_live_destroy(c: number): void;
  sl_api_live_reset_names(c: number): void;
  sl_api_live_name_cache(c: number, id: number, name: number, len: number): number;
  sl_api_live_add(c: number, baseNs: number, records: number, count: number): void;
  sl_api_live_now_s(c: number): number;
  sl_api_live_events(c: number): number;
  sl_api_live_caches(c: number): number;
  sl_api_live_cache_name(c: number, i: number): number;
  sl_api_live_cache_total(c: number, i: number): number;
  sl_api_live_cache_window(c: number, i: number, out: number): number;
  sl_api_live_sites(c: number): number;
  sl_api_live_site_ids(c: number): number;
  sl_api_live_site(c: number, id: number, out: number): number;
  sl_api_live_owners(c: number): number;
  sl_api_live_cache_ids(c: number): number;
  sl_api_live_feed(c: number, bytes: number, len: number): number;
  sl_api_live_restart(c: number): void;
  sl_api_live_error(c: number): number;
  sl_api_live_out(c: number): number;
  sl_api_live_out_len(c: number): number;
  sl_api_live_pending(c: number): number;
  sl_api_live_watch(c: number, name: number, len: number): number;
  sl_api_live_kernel_lost(c: number): number;
  sl_api_live_newest_ns(c: number): number;
}

/** The live counting module could not be made (a missing build, or no memory). */
export class LiveCoreError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LiveCoreError';
  }
}

let core: LiveExports | null = null;

/** The module, instantiated on first use (synchronously: allowed in workers and Node, where LiveState runs). */
function liveCore(): LiveExports {
  if (core) return core;
  const bin = atob(wasmBase64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  let instance: WebAssembly.Instance;
  try {
    // Its one import: Emscripten's note that memory grew (the views below check the buffer instead).
    instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env: { emscripten_notify_memory_growth: () => undefined } });
  } catch (e) {
    throw new LiveCoreError(`the live counting module (slablab-live.wasm) could not be instantiated: ${(e as Error).message}`);
  }
  const ex = instance.exports as unknown as LiveExports;
  ex._initialize();
  core = ex;
  return ex;
}

const utf8In = new TextEncoder();
const utf8Out = new TextDecoder();
/** Frees a LiveState's C side when the page drops it without dispose(). */
const finalizer = new FinalizationRegistry<{ c: number; scratch: number; out: number }>(({ c, scratch, out }) => {
  const ex = liveCore();
  ex.sl_api_live_destroy(c);
  if (scratch) ex.free(scratch);
  ex.free(out);
});

export class LiveState {
  private readonly ex = liveCore();
  private c: number;
  /** A buffer in the module's memory for records and names, grown as batches need. */
  private scratch = 0;
  private scratchBytes = 0;
  /** 3 * WINDOW_S doubles: a cache's window, or a site's two counts. */
  private out: number;
  private heapBuf: ArrayBuffer | null = null;
  private heap8 = new Uint8Array(0);
  private heapF64 = new Float64Array(0);
  private heapU32 = new Uint32Array(0);
  private cacheNames = new Map<number, string>();
  private siteNames = new Map<number, string>();
  /** What the finalizer frees: the counter and the buffers (scratch replaced as it grows). */
  private readonly held: { c: number; scratch: number; out: number };
  slabinfo: SlabinfoRow[] = [];
  kernelLost = 0;
  status: Status | null = null;
  pageDropped = 0;
  bytes = 0;

  /** Throws a LiveCoreError when the module cannot be made or has no memory left. */
  constructor() {
    this.c = this.ex.sl_api_live_create();
    this.out = this.ex.malloc(3 * WINDOW_S * 8);
    if (!this.c || !this.out) throw new LiveCoreError('the live counting module has no memory left');
    this.held = { c: this.c, scratch: 0, out: this.out };
    finalizer.register(this, this.held, this.held);
    this.reserve(1 << 16);
  }

  /** Frees the C side now (the state is unusable afterwards). */
  dispose(): void {
    if (!this.c) return;
    finalizer.unregister(this.held);
    this.ex.sl_api_live_destroy(this.c);
    this.ex.free(this.scratch);
    this.ex.free(this.out);
    this.c = this.scratch = this.out = 0;
  }

  /** Views of the module's memory, made anew when it has grown (growth replaces the buffer). */
  private views(): void {
    const buf = this.ex.memory.buffer;
    if (buf === this.heapBuf) return;
    this.heapBuf = buf;
    this.heap8 = new Uint8Array(buf);
    this.heapF64 = new Float64Array(buf);
    this.heapU32 = new Uint32Array(buf);
  }

  /** Makes scratch hold at least `bytes`. Throws a LiveCoreError when the module has no memory left. */
  private reserve(bytes: number): void {
    if (bytes <= this.scratchBytes) return;
    let size = Math.max(this.scratchBytes, 1 << 16);
    while (size < bytes) size *= 2;
    const p = this.ex.malloc(size);
    if (!p) throw new LiveCoreError(`the live counting module has no memory left for ${bytes} bytes`);
    if (this.scratch) this.ex.free(this.scratch);
    this.scratch = p;
    this.scratchBytes = size;
    this.held.scratch = p;
  }

  private string(ptr: number): string {
    this.views();
    let end = ptr;
    while (this.heap8[end] !== 0) end++;
    return utf8Out.decode(this.heap8.subarray(ptr, end));
  }

  /** A new connection: ids are the server's, numbered anew after a restart. */
  resetNames(): void {
    this.cacheNames.clear();
    this.siteNames.clear();
    this.ex.sl_api_live_reset_names(this.c);
  }
  nameCache(id: number, name: string): void {
    this.cacheNames.set(id, name);
    const bytes = utf8In.encode(name);
    this.reserve(bytes.length);
    this.views();
    this.heap8.set(bytes, this.scratch);
    this.ex.sl_api_live_name_cache(this.c, id, this.scratch, bytes.length);
  }
  nameSite(id: number, name: string): void {
    this.siteNames.set(id, name);
  }
  cacheName(id: number): string {
    return id === 0 ? '' : (this.cacheNames.get(id) ?? `cache ${id}`);
  }
  /**
   * Reads a chunk of the stream (cut anywhere) in the module: events are counted there, caches
   * named (and all names forgotten at a HELLO).  Returns the other frames it completes, and the
   * watched cache's events as EVENTS frames of their own, decoded, in stream order (their bytes
   * are the state's own copy).  Throws a WireError on a malformed stream (then restart() before
   * the next stream), a LiveCoreError when the module has no memory left for the chunk.
   */
  push(chunk: Uint8Array): Frame[] {
    const ex = this.ex;
    this.reserve(chunk.length);
    this.views();
    this.heap8.set(chunk, this.scratch);
    if (ex.sl_api_live_feed(this.c, this.scratch, chunk.length) !== 0) throw new WireError(this.string(ex.sl_api_live_error(this.c)));
    this.kernelLost = ex.sl_api_live_kernel_lost(this.c);
    const n = ex.sl_api_live_out_len(this.c);
    if (!n) return [];
    this.views();
    const at = ex.sl_api_live_out(this.c);
    // Whole frames: a reader of its own decodes them, never left holding a cut one.
    const frames = new FrameReader().push(this.heap8.slice(at, at + n));
    for (const f of frames) {
      if (f.type === F.HELLO) {
        this.cacheNames.clear();
        this.siteNames.clear();
      } else if (f.type === F.CACHE) this.cacheNames.set(f.cache.id, f.cache.name);
      else if (f.type === F.SITE) this.siteNames.set(f.site.id, f.site.name);
    }
    return frames;
  }
  /** A new stream: a cut frame of the last one and its error are dropped. */
  restart(): void {
    this.ex.sl_api_live_restart(this.c);
  }
  /** Bytes held of a frame cut at the end of the last chunk. */
  get pending(): number {
    return this.ex.sl_api_live_pending(this.c);
  }
  /** push hands back the events (percpu's aside) of the caches named `name` from now on; null: none. */
  watch(name: string | null): void {
    const bytes = utf8In.encode(name ?? '');
    this.reserve(bytes.length);
    this.views();
    this.heap8.set(bytes, this.scratch);
    if (this.ex.sl_api_live_watch(this.c, this.scratch, bytes.length) !== 0) throw new LiveCoreError('the live counting module has no memory left');
  }
  /** The newest event's time read by push (ns, the events' clock), 0 before any. */
  get newestEventNs(): number {
    return this.ex.sl_api_live_newest_ns(this.c);
  }
  /** Events counted, in or out of the window. */
  get events(): number {
    return this.ex.sl_api_live_events(this.c);
  }

  /** The sizes of the state's tables, all bounded whatever the stream's length. */
  sizes(): LiveStateSizes {
    return {
      caches: this.ex.sl_api_live_caches(this.c),
      cacheIds: this.ex.sl_api_live_cache_ids(this.c),
      owners: this.ex.sl_api_live_owners(this.c),
      sites: this.ex.sl_api_live_sites(this.c),
      cacheNames: this.cacheNames.size,
      siteNames: this.siteNames.size,
    };
  }

  /**
   * Counts one batch: its records copied into the module and counted with one call.  The
   * per-event callback, when given, sees each decoded event (for the picked cache).
   */
  add(batch: EventBatch, each?: (cacheId: number, tNs: number, alloc: boolean, objHi: number, objLo: number) => void): void {
    const n = batch.count * RECORD_BYTES;
    this.reserve(n);
    this.views();
    const r = batch.records;
    this.heap8.set(new Uint8Array(r.buffer, r.byteOffset, n), this.scratch);
    const base = Number(batch.baseNs);
    this.ex.sl_api_live_add(this.c, base, this.scratch, batch.count);
    this.kernelLost = batch.kernelLost;
    if (each)
      for (let i = 0; i < batch.count; i++) each(ev.cache(r, i), base + ev.dtUs(r, i) * 1000, isAlloc(ev.kind(r, i)), ev.objHi(r, i), ev.objLo(r, i));
  }

/** Everything the page draws, for the caches with events in the window (the busiest TABLE_CACHES). */
  summary(): LiveSummary {
    const ex = this.ex;
    const now = ex.sl_api_live_now_s(this.c);
    const held: { i: number; inWindow: number }[] = [];
    for (let i = 0, n = ex.sl_api_live_caches(this.c); i < n; i++) {
      const inWindow = ex.sl_api_live_cache_window(this.c, i, this.out);
      if (inWindow > 0) held.push({ i, inWindow });
    }
    const caches = held
      .sort((a, b) => b.inWindow - a.inWindow)
      .slice(0, TABLE_CACHES)
      .map(({ i }) => {
        ex.sl_api_live_cache_window(this.c, i, this.out);
        this.views();
        const w = this.heapF64.subarray(this.out / 8, this.out / 8 + 3 * WINDOW_S);
        return {
          name: this.string(ex.sl_api_live_cache_name(this.c, i)),
          allocs: Array.from(w.subarray(0, WINDOW_S)),
          frees: Array.from(w.subarray(WINDOW_S, 2 * WINDOW_S)),
          remote: Array.from(w.subarray(2 * WINDOW_S)),
          total: ex.sl_api_live_cache_total(this.c, i),
        };
      });
    const nSites = ex.sl_api_live_sites(this.c);
    const idsAt = ex.sl_api_live_site_ids(this.c) / 4;
    const sites: SiteRow[] = [];
    for (let k = 0; k < nSites; k++) {
      this.views();
      const id = this.heapU32[idsAt + k] ?? 0;
      const cache = ex.sl_api_live_site(this.c, id, this.out);
      this.views();
      sites.push({ name: this.siteNames.get(id) ?? `site ${id}`, cache: cache ? this.string(cache) : '', allocs: this.heapF64[this.out / 8] ?? 0, frees: this.heapF64[this.out / 8 + 1] ?? 0 });
    }
    sites.sort((a, b) => b.allocs + b.frees - (a.allocs + a.frees)).splice(TOP_SITES);
    return {
      nowS: now,
      bins: WINDOW_S,
      caches,
      sites,
      slabinfo: this.slabinfo,
      events: this.events,
      kernelLost: this.kernelLost,
      serverDropped: this.status?.server_dropped ?? 0,
      serverOwn: this.status?.server_own ?? 0,
      ownByContext: this.status?.own_by_context ?? null,
      ownNote: this.status?.own_note ?? '',
      snapshotsDropped: this.status?.snapshots_dropped ?? 0,
      pageDropped: this.pageDropped,
      bytes: this.bytes,
    };
  }
}
