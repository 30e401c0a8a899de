// replay-api.ts - a typed face for the trace replay bindings
// (wasm-core/bindings/api_replay.c): the C replay session the CLI runs, fed
// a file chunk by chunk in the bridge worker, its results, per-cache model
// snapshots for scrubbing, and the Perfetto exporter.  It runs wherever the
// module runs: in the worker, and under Node in the vitest tests.
//
// Typical use (in the worker):
//   const s = ReplaySession.create(m, { collectOps: true });
//   for each chunk of the file: s.feed(chunk)  (status 'paused' -> raise the limit, feed the rest)
//   s.finish(); const result = s.result();  (ReplayResult, docs/replay.md)
//   s.dispose();

/** The exports this file calls. */
export interface ReplayModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  UTF8ToString(ptr: number, maxBytes?: number): string;
  _sl_api_strerror(err: number): number;
  _sl_api_replay_create(kernel: number, cache: number, cpus: number, zoneMb: number, pcpuUnitKb: number, flags: number): number;
  _sl_api_replay_config_error(): number;
  _sl_api_replay_check_kernel(kernel: number): number;
  _sl_api_replay_destroy(h: number): void;
  _sl_api_replay_buffer(h: number): number;
  _sl_api_replay_buffer_size(): number;
  _sl_api_replay_feed(h: number, len: number, consumed: number): number;
  _sl_api_replay_finish(h: number): number;
  _sl_api_replay_set_limit(h: number, events: number): void;
  _sl_api_replay_cancel(h: number): void;
  _sl_api_replay_error(h: number): number;
  _sl_api_replay_progress(h: number, out: number): void;
  _sl_api_replay_json(h: number): number;
  _sl_api_replay_json_data(h: number): number;
  _sl_api_replay_ops_pending(h: number): number;
  _sl_api_replay_ops_data(h: number): number;
  _sl_api_replay_ops_clear(h: number): void;
  _sl_api_replay_ops_overflowed(h: number): number;
  _sl_api_replay_last_line(h: number): number;
  _sl_api_replay_op_layout(out: number): number;
  _sl_api_replay_cache_snapshot(h: number, cache: number, kernel: number, buf: number, cap: number): number;
  _sl_api_replay_lookup(h: number, ptrHi: number, ptrLo: number, kernel: number, out: number): number;
  _sl_api_replay_chunk_granules(h: number, chunk: number, out: number, max: number): number;
  _sl_api_perfetto_begin(counterIntervalUs: number): number;
  _sl_api_perfetto_cache_name(e: number, cache: number, name: number): number;
  _sl_api_perfetto_ops(e: number, ops: number, n: number): void;
  _sl_api_perfetto_pending(e: number): number;
  _sl_api_perfetto_data(e: number): number;
  _sl_api_perfetto_clear(e: number): void;
  _sl_api_perfetto_end(e: number): number;
  _sl_api_perfetto_free(e: number): void;
}

/** A bad option, a refused input, or a C error; `message` says which and why. */
/** sl_api_replay_progress's out[8]: the doubles it writes, in order (wasm-core/bindings/api_replay.c). */
const PROGRESS_OUT = ['bytesIn', 'textBytes', 'lines', 'events', 'modelErrors', 'elapsedS', 'eventsPerS', 'finished'] as const;

export class ReplayError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ReplayError';
  }
}

export interface ReplayOptions {
  /** "X.Y" or "X.Y,X.Y"; default: the capture's kernel. */
  kernel?: string;
  /** Only this cache goes through a model (all are counted). */
  cache?: string;
  /** Model CPUs; default: the capture's, else the trace header's, else 8. */
  cpus?: number;
  /** The model's page zone per kernel, MiB (default 96 in WebAssembly). */
  zoneMb?: number;
  /** Percpu unit size in KiB (default: the capture's, else 2048). */
  pcpuUnitKb?: number;
  /** Model caches keep per-object state, so snapshots can name owners (slower). */
  track?: boolean;
  /** Keep each applied event as a ReplayOp for drainOps() (the overview, scrubbing, export). */
  collectOps?: boolean;
  /** With collectOps: keep the input line of the last op (lastLine(): the words of a scrubbed event). */
  keepLine?: boolean;
}

export type FeedStatus = 'ok' | 'paused' | 'refused';

export interface ReplayProgress {
  bytesIn: number;
  textBytes: number;
  lines: number;
  events: number;
  modelErrors: number;
  elapsedS: number;
  eventsPerS: number;
  finished: boolean;
}

/** enum sl_replay_op_kind. */
export const OpKind = {
  alloc: 1,
  free: 2,
  freeUnknown: 3,
  pcpuAlloc: 4,
  pcpuFree: 5,
  pcpuFreeUnknown: 6,
  chunkCreate: 7,
  chunkDestroy: 8,
} as const;

/** SL_REPLAY_F_* bits of ReplayOp.flags. */
export const OpFlag = { slowPath: 1, crossCpu: 2, modelError: 4, newSlab: 8, slabFreed: 16 } as const;

/** One applied event (sl_replay_op, 64 bytes). Model fields describe the first kernel's model. */
export interface ReplayOp {
  tsNs: bigint;
  ptr: bigint;
  allocTsNs: bigint;
  line: number;
  bytes: number;
  live: number;
  slabs: number;
  partial: number;
  /** The model object's slab pfn, or 0xffffffff; percpu: unused. */
  objPfn: number;
  /** Its index in the slab; percpu: the area's offset in the chunk. */
  objIndex: number;
  cpu: number;
  /** Frees of objects the trace allocated: the allocating CPU; else 0xffff. */
  allocCpu: number;
  /** Cache index (ReplayCache.index); percpu kinds: chunk index; 0xffff none. */
  cache: number;
  kind: number;
  flags: number;
  /** The event's ordinal in the trace (1-based, as setLimit counts events): setLimit(event) stops right after it. */
  event: number;
}

/** The JSON document (docs/replay.md lists every field); the parts the UI reads are typed. */
export interface ReplayCache {
  name: string;
  index: number;
  type: 'named' | 'kmalloc' | 'kmalloc-large' | 'unnamed';
  modelled: boolean;
  geometry: {
    source: 'sysfs' | 'computed';
    object_size: number;
    slab_size: number;
    order: number;
    objs_per_slab: number;
    matches_kernel: boolean | null;
  } | null;
  allocs: number;
  frees: number;
  freed_unknown: number;
  untraced_frees: number;
  bytes_req: number;
  bytes_alloc: number;
  internal_frag: number;
  live_at_end: number;
  peak_live: number;
  cross_cpu_frees: number;
  lifetimes: number;
  lifetime_p50_us: number;
  lifetime_p99_us: number;
  fastpath_share: number;
  alloc_fastpath_share: number;
  free_fastpath_share: number;
  slabs_allocated: number;
  slabs_freed: number;
  slabs_at_end: number;
  partial_at_end: number;
  max_partial: number;
  /** The model cache's per-CPU sheaf capacity (0: none; 6.18 opt-in, 7.0 every cache), its refills from and flushes to slabs. */
  sheaf_capacity: number;
  sheaf_refills: number;
  sheaf_flushes: number;
}

export interface ReplayModel {
  kernel: string | null;
  kernel_source: 'capture' | 'option' | 'unknown';
  /** True: the model caches follow the SLUB rules of `slub_kernel` (the kernel's version, clamped to the model's eras). */
  kernel_switch: boolean;
  slub_kernel: string;
  rules: { slub: string; percpu: string; kmalloc_types: string };
  cpus: number;
  cpus_folded_events: number;
  caches_modelled: number;
  percpu_allocator: string | null;
  errors: number;
  error_list: { line: number; message: string }[];
  /** Sheaves counters summed over the model's caches (zero before 6.18). */
  sheaves: {
    caches: number;
    alloc_cpu_sheaf: number;
    free_cpu_sheaf: number;
    sheaf_refill: number;
    sheaf_flush: number;
    barn_get: number;
    barn_get_fail: number;
    barn_put: number;
    barn_put_fail: number;
  };
}

export interface ReplayResult {
  format: 'slablab-replay/1';
  status: 'ok' | 'refused' | 'in progress';
  error: string | null;
  warnings: string[];
  input: { bytes: number; gzip: boolean; archive: boolean; text_bytes: number; members_skipped: number };
  capture: {
    kernel_release: string | null;
    preemption: 'none' | 'preempt' | 'rt' | null;
    cpus_possible: number;
    cpus_present: number;
    percpu_unit_size: number;
    sysfs_caches: number;
  } | null;
  events: {
    lines: number;
    parsed: number;
    skipped: number;
    skipped_by_reason: { header: number; other_event: number; bad: number };
    lost: number;
    by_kind: Record<string, number>;
    bad_lines: { line: number; reason: string }[];
    first_ts_s: number;
    last_ts_s: number;
    duration_s: number;
  };
  pairs: {
    matched: number;
    live_at_end: number;
    freed_unknown: number;
    null_frees: number;
    alloc_failed: number;
    zero_size: number;
    untraced_frees: number;
    cache_mismatch: number;
  };
  /** SLUB allocations by the context their gfp_flags give (docs/replay.md, "The allocation's context"). */
  alloc_contexts: { blocking: number; nonblocking: number; no_reclaim: number; unknown: number };
  caches: ReplayCache[];
  callsites: { site: string; allocs: number; frees: number; bytes_req: number; bytes_alloc: number; cross_cpu: number; frag: number }[];
  /** Allocations and frees per time bin (bins double in width to stay under 1024): the busiest caches, then "other". */
  timeline: { t0_s: number; bin_s: number; bins: number; series: { name: string; allocs: number[]; frees: number[] }[] };
  percpu: {
    allocator: string | null;
    unit_size: number | null;
    allocs: number;
    frees: number;
    freed_unknown: number;
    live_at_end: number;
    chunks: { base: string; seen: string; destroyed: boolean; allocs: number; frees: number; live: number; model_free_bytes: number }[];
  };
  model: ReplayModel;
  models: ReplayModel[];
  elapsed_s: number;
  events_per_s: number;
  cpu_s: number;
  events_per_cpu_s: number;
  validate_s: number;
}

/** The fields of sl_replay_op, in the order sl_api_replay_op_layout reports their offsets, with their widths. */
const OP_FIELDS = [
  ['tsNs', 8], ['ptr', 8], ['allocTsNs', 8], ['line', 4], ['bytes', 4], ['live', 4], ['slabs', 4], ['partial', 4],
  ['objPfn', 4], ['objIndex', 4], ['cpu', 2], ['allocCpu', 2], ['cache', 2], ['kind', 1], ['flags', 1], ['event', 4],
] as const satisfies readonly (readonly [keyof ReplayOp, 1 | 2 | 4 | 8])[];

/** The record size and each field's offset, as the compiled C reports them. */
export type OpLayout = { size: number } & Record<keyof ReplayOp, number>;

function withCString<T>(m: ReplayModule, s: string | undefined, f: (ptr: number) => T): T {
  if (s === undefined || s === '') return f(0);
  const bytes = new TextEncoder().encode(s);
  const ptr = m._malloc(bytes.length + 1);
  if (!ptr) throw new ReplayError('out of memory in the core');
  m.HEAPU8.set(bytes, ptr);
  m.HEAPU8[ptr + bytes.length] = 0;
  try {
    return f(ptr);
  } finally {
    m._free(ptr);
  }
}

/** The layout of sl_replay_op from the core. */
export function opLayout(m: ReplayModule): OpLayout {
  const ptr = m._malloc(4 * (OP_FIELDS.length + 1));
  try {
    const n = m._sl_api_replay_op_layout(ptr);
    if (n !== OP_FIELDS.length + 1) throw new ReplayError(`sl_api_replay_op_layout gave ${n} values, not ${OP_FIELDS.length + 1}`);
    const v = new Uint32Array(m.HEAPU8.buffer, ptr, n);
    const layout = { size: v[0]! } as OpLayout;
    OP_FIELDS.forEach(([name], i) => (layout[name] = v[i + 1]!));
    return layout;
  } finally {
    m._free(ptr);
  }
}

/** Decodes packed sl_replay_op records (little endian). */
export function decodeOps(bytes: ArrayBuffer, l: OpLayout): ReplayOp[] {
  const v = new DataView(bytes);
  const out: ReplayOp[] = [];
  for (let o = 0; o + l.size <= bytes.byteLength; o += l.size) {
    const op: Record<string, number | bigint> = {};
    for (const [name, width] of OP_FIELDS) {
      const at = o + l[name];
      op[name] = width === 8 ? v.getBigUint64(at, true) : width === 4 ? v.getUint32(at, true) : width === 2 ? v.getUint16(at, true) : v.getUint8(at);
    }
    out.push(op as unknown as ReplayOp);
  }
  return out;
}

/** Checks a --kernel string without a session; null when it is good, else the message. */
export function kernelOptionError(m: ReplayModule, kernel: string): string | null {
  const rc = withCString(m, kernel, (p) => m._sl_api_replay_check_kernel(p));
  return rc > 0 ? null : m.UTF8ToString(m._sl_api_replay_config_error());
}

export class ReplaySession {
  private readonly scratch: number;
  private readonly bufSize: number;
  private disposed = false;
  /** The op record layout (decodeOps(drainOpBytes(), session.layout)). */
  readonly layout: OpLayout;

  private constructor(
    private readonly m: ReplayModule,
    private readonly h: number,
  ) {
    this.scratch = m._malloc(64);
    this.bufSize = m._sl_api_replay_buffer_size();
    this.layout = opLayout(m);
  }

  static create(m: ReplayModule, opts: ReplayOptions = {}): ReplaySession {
    const flags = (opts.track ? 1 : 0) | (opts.collectOps ? 2 : 0) | (opts.keepLine ? 4 : 0);
    const h = withCString(m, opts.kernel, (k) =>
      withCString(m, opts.cache, (c) =>
        m._sl_api_replay_create(k, c, opts.cpus ?? 0, opts.zoneMb ?? 0, opts.pcpuUnitKb ?? 0, flags),
      ),
    );
    if (!h) throw new ReplayError(m.UTF8ToString(m._sl_api_replay_config_error()));
    return new ReplaySession(m, h);
  }

  private live(): number {
    if (this.disposed) throw new ReplayError('the replay session was disposed');
    return this.h;
  }

  /**
   * Feeds the next bytes of the file.  'paused': the event limit stopped it after `consumed` bytes
   * (raise the limit and feed the rest); 'refused': the input is not a trace (error() says why).
   */
  feed(chunk: Uint8Array): { status: FeedStatus; consumed: number } {
    const h = this.live();
    let consumed = 0;
    while (consumed < chunk.length) {
      const n = Math.min(this.bufSize, chunk.length - consumed);
      this.m.HEAPU8.set(chunk.subarray(consumed, consumed + n), this.m._sl_api_replay_buffer(h));
      const rc = this.m._sl_api_replay_feed(h, n, this.scratch);
      consumed += new Uint32Array(this.m.HEAPU8.buffer, this.scratch, 1)[0]!;
      if (rc < 0) return { status: 'refused', consumed };
      if (rc === 1) return { status: 'paused', consumed };
    }
    return { status: 'ok', consumed };
  }

  /** The end of the file: the last line, truncation checks, the final validation. */
  finish(): FeedStatus {
    const rc = this.m._sl_api_replay_finish(this.live());
    return rc < 0 ? 'refused' : rc === 1 ? 'paused' : 'ok';
  }

  /** Stop after this many applied events (Infinity: no limit). */
  setLimit(events: number): void {
    this.m._sl_api_replay_set_limit(this.live(), Number.isFinite(events) ? events : -1);
  }

  cancel(): void {
    this.m._sl_api_replay_cancel(this.live());
  }

  /** Why the input was refused, or null. */
  error(): string | null {
    const p = this.m._sl_api_replay_error(this.live());
    return p ? this.m.UTF8ToString(p) : null;
  }

  progress(): ReplayProgress {
    this.m._sl_api_replay_progress(this.live(), this.scratch);
    const d = new Float64Array(this.m.HEAPU8.buffer, this.scratch, PROGRESS_OUT.length);
    const f = (name: (typeof PROGRESS_OUT)[number]) => d[PROGRESS_OUT.indexOf(name)] ?? 0;
    return {
      bytesIn: f('bytesIn'), textBytes: f('textBytes'), lines: f('lines'), events: f('events'), modelErrors: f('modelErrors'), elapsedS: f('elapsedS'),
      eventsPerS: f('eventsPerS'), finished: f('finished') === 1,
    };
  }

  /** The results document (also while in progress, with status 'in progress'). */
  result(): ReplayResult {
    const h = this.live();
    const n = this.m._sl_api_replay_json(h);
    if (n < 0) throw new ReplayError(this.m.UTF8ToString(this.m._sl_api_strerror(n)));
    const ptr = this.m._sl_api_replay_json_data(h);
    // A copy (slice): TextDecoder refuses views of the threads build's shared memory.
    return JSON.parse(new TextDecoder().decode(this.m.HEAPU8.slice(ptr, ptr + n))) as ReplayResult;
  }

  /** The op records collected since the last drain, as bytes (decodeOps) ; empty without collectOps. */
  drainOpBytes(): ArrayBuffer {
    const h = this.live();
    if (this.m._sl_api_replay_ops_overflowed(h)) throw new ReplayError('op records were lost: drain after every feed');
    const n = this.m._sl_api_replay_ops_pending(h);
    const ptr = this.m._sl_api_replay_ops_data(h);
    const bytes = this.m.HEAPU8.slice(ptr, ptr + n * this.layout.size).buffer;
    this.m._sl_api_replay_ops_clear(h);
    return bytes;
  }

  /** keepLine sessions: the input line of the last op collected ('' before any). */
  lastLine(): string {
    return this.m.UTF8ToString(this.m._sl_api_replay_last_line(this.live()));
  }

  /** A model cache's snapshot (docs/snapshot-format.md), or null when the cache is not modelled. */
  cacheSnapshot(cache: number, kernel = 0): ArrayBuffer | null {
    const h = this.live();
    // Asked with no room: the negative size needed, or SL_EINVAL (-2) when the cache is not modelled
    // (a snapshot is never as small as 2 bytes).
    const need = this.m._sl_api_replay_cache_snapshot(h, cache, kernel, 0, 0);
    if (need >= -2) return null;
    const size = -need;
    const buf = this.m._malloc(size);
    try {
      const n = this.m._sl_api_replay_cache_snapshot(h, cache, kernel, buf, size);
      return n > 0 ? this.m.HEAPU8.slice(buf, buf + n).buffer : null;
    } finally {
      this.m._free(buf);
    }
  }

  /** The model object a live trace pointer maps to, or null. */
  lookup(ptr: bigint, kernel = 0): { cache: number; pfn: number; index: number } | null {
    const hi = Number(ptr >> 32n), lo = Number(ptr & 0xffffffffn);
    if (this.m._sl_api_replay_lookup(this.live(), hi, lo, kernel, this.scratch) !== 0) return null;
    const v = new Uint32Array(this.m.HEAPU8.buffer, this.scratch, 3);
    return { cache: v[0]!, pfn: v[1]!, index: v[2]! };
  }

  /** A percpu chunk's granules (one byte per 4 bytes: 0 free, 1 area start, 2 continuation), or null. */
  chunkGranules(chunk: number, unitSize: number): Uint8Array | null {
    const n = unitSize / 4;
    const buf = this.m._malloc(n);
    try {
      const got = this.m._sl_api_replay_chunk_granules(this.live(), chunk, buf, n);
      return got >= 0 ? this.m.HEAPU8.slice(buf, buf + got) : null;
    } finally {
      this.m._free(buf);
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.m._sl_api_replay_destroy(this.h);
    this.m._free(this.scratch);
  }
}

/**
 * A Perfetto (Chrome JSON) trace of op records: one track per CPU, counters per cache, flows
 * from allocations to remote frees.  `names[i]` names cache index i.  Returns the JSON text.
 */
export function exportPerfetto(m: ReplayModule, ops: Iterable<ArrayBuffer>, names: string[], counterIntervalUs = 100): string {
  const e = m._sl_api_perfetto_begin(counterIntervalUs);
  if (!e) throw new ReplayError('out of memory in the core');
  const parts: string[] = [];
  const decoder = new TextDecoder();
  const take = () => {
    const n = m._sl_api_perfetto_pending(e);
    if (n) parts.push(decoder.decode(m.HEAPU8.slice(m._sl_api_perfetto_data(e), m._sl_api_perfetto_data(e) + n)));
    m._sl_api_perfetto_clear(e);
  };
  try {
    names.forEach((name, i) => withCString(m, name, (p) => m._sl_api_perfetto_cache_name(e, i, p)));
    const opSize = opLayout(m).size;
    for (const batch of ops) {
      if (!batch.byteLength) continue;
      const ptr = m._malloc(batch.byteLength);
      if (!ptr) throw new ReplayError('out of memory in the core');
      m.HEAPU8.set(new Uint8Array(batch), ptr);
      m._sl_api_perfetto_ops(e, ptr, batch.byteLength / opSize);
      m._free(ptr);
      take();
    }
    if (m._sl_api_perfetto_end(e) !== 0) throw new ReplayError('out of memory while exporting');
    take();
    return parts.join('');
  } finally {
    m._sl_api_perfetto_free(e);
  }
}
