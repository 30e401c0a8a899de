// slub-api.ts - a typed face for the SLUB bindings (wasm-core/bindings/api_slub.c)
// and the CPU-thread runners (bindings/api_bench_wasm.c) of one core instance.
// It runs where the module runs: in the bridge worker, and under Node in the
// vitest tests (the slablab-node build).  Objects cross as (pfn, index) pairs.

import { CoreError, SlErr } from '../core/core-api';
import { EVENT_SIZE } from '../core/events.generated';
import { copyOut, drainRings, readSized } from '../core/heap-io';
import type { NumaConfig, WorldConfig } from './protocol';
import type { Script } from './script';
import { encodeScript } from './script';
import { BULK_FORMS, FASTPATHS, FREELIST_HARDENED } from './snapshot';

/** The exports this file calls (a superset of core-api.ts's CoreModule). */
export interface SlubModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  UTF8ToString(ptr: number): string;
  _sl_api_strerror(err: number): number;
  _sl_api_slub_last_error(): number;
  _sl_api_slub_kversion_parse(text: number): number;
  _sl_api_slub_kversion_notice(v: number): number;
  _sl_api_slub_world_create(
    arena: number, ncpus: number, objectSize: number, align: number, flags: number,
    fastpath: number, bulkFree: number, track: number, seed: number, kernel?: number,
  ): number;
  _sl_api_slub_world_destroy(w: number): void;
  _sl_api_slub_scratch(w: number, cpu: number): number;
  _sl_api_slub_alloc(w: number, cpu: number): number;
  _sl_api_slub_free(w: number, cpu: number, pfn: number, index: number): number;
  _sl_api_slub_alloc_bulk(w: number, cpu: number, n: number): number;
  _sl_api_slub_snapshot(w: number, buf: number, cap: number): number;
  _sl_api_slub_drain(w: number, cpu: number, out: number, max: number): number;
  _sl_api_slub_events_dropped(w: number, cpu: number): number;
  _sl_api_slub_trace_enable(w: number, on: number): void;
  _sl_api_slub_stat(w: number, cpu: number, i: number): number;
  _sl_api_slub_validate(w: number): number;
  _sl_api_slub_validate_message(w: number): number;
  _sl_api_slub_geometry(objectSize: number, align: number, flags: number, ncpus: number, out: number, kernel?: number): number;
  _sl_api_slub_set_min_partial(w: number, minPartial: number): number;
  _sl_api_slub_set_cpu_partial(w: number, objects: number): number;
  _sl_api_slub_shrink(w: number): number;
  _sl_api_slub_fragment(w: number, on: number): number;
  _sl_api_slub_stat_count(): number;
  _sl_api_slub_stat_kernel_count(): number;
  _sl_api_slub_stat_name(i: number): number;
  _sl_api_slub_run(
    w: number, ops: number, nops: number, refs: number, nrefs: number, irqs: number, nirqs: number,
    stopAt: number, snapBuf: number, snapCap: number, results: number, out: number,
  ): number;
  _sl_api_slub_workload(w: number, cpu: number, kind: number, nops: number, seed: number): number;
  _sl_api_slub_workload_drain(w: number, cpu: number): number;
  _sl_api_freerun_start(w: number, ncpus: number, kind: number, seed: number, duty: number, rate: number): number;
  _sl_api_freerun_stop(w: number): number;
  _sl_api_freerun_ops(cpu: number): number;
  _sl_api_freerun_thread(cpu: number): number;
  _sl_api_freerun_snapshot(w: number, buf: number, cap: number): number;
  _sl_api_bench_fastpath(fastpath: number, loops: number, onThread: number): number;
  _sl_api_bench_bulk(form: number, bulk: number, loops: number, onThread: number): number;
  _sl_api_slub_world_create_version(
    arena: number, ncpus: number, objectSize: number, align: number, flags: number,
    fastpath: number, bulkFree: number, track: number, seed: number, kernel: number, version: number,
  ): number;
  _sl_api_slub_world_create_topology(
    arena: number, ncpus: number, objectSize: number, align: number, flags: number,
    fastpath: number, bulkFree: number, track: number, seed: number, kernel: number, version: number, topology: number,
  ): number;
  _sl_api_slub_topology(w: number, out: number): number;
  _sl_api_slub_node_state(w: number, nid: number, out: number, pfns: number, cap: number): number;
  _sl_api_slub_world_version(w: number): number;
  _sl_api_kernel_seed(w: number, words: number, n: number): number;
  _sl_api_kernel_seed_message(): number;
  _sl_api_slub_kfree_rcu(w: number, cpu: number, pfn: number, index: number): number;
  _sl_api_slub_rcu_grace_period(w: number, cpu: number): number;
  _sl_api_slub_bootstrap_sheaves(w: number): number;
  _sl_api_slub_prefill_sheaf(w: number, cpu: number, slot: number, size: number): number;
  _sl_api_slub_refill_sheaf(w: number, cpu: number, slot: number, size: number): number;
  _sl_api_slub_alloc_from_sheaf(w: number, cpu: number, slot: number): number;
  _sl_api_slub_return_sheaf(w: number, cpu: number, slot: number): number;
  _sl_api_slub_sheaf_size(w: number, slot: number): number;
  _sl_api_slub_sheaves_info(w: number, out: number): number;
  _sl_api_slub_kstat_count(version: number): number;
  _sl_api_slub_kstat_name(version: number, i: number): number;
  _sl_api_slub_kstat_stat(version: number, i: number): number;
  _sl_api_slub_sheaf_capacity(version: number, size: number, flags: number, requested: number): number;
  _sl_api_slub_geometry_version(
    objectSize: number, align: number, flags: number, ncpus: number, out: number, kernel: number, version: number,
  ): number;
}

/** A C function returned an sl_err (a CoreError: the bridge answers it with code 'core-error'). */
export class SlubError extends CoreError {
  constructor(code: number, message: string) {
    super(code, message);
    this.name = 'SlubError';
  }
}

export interface RunResult {
  opsDone: number;
  microsteps: number;
  /** Snapshot bytes taken at the stop micro-step, if one was asked for and reached. */
  stopSnapshot: Uint8Array | null;
  stopOp: number;
  irqsFired: number;
  /** Each op's return value (alloc 0, bulk alloc the count, bulk free the cmpxchg count, or an sl_err). */
  results: Int32Array;
}

const SNAP_START = 1 << 16;
/** The CPUs a world may have (SL_SLUB_MAX_CPUS), and the words of sl_api_slub_topology and sl_api_slub_node_state. */
const MAX_CPUS = 8;
const TOPOLOGY_STATE_WORDS = 5 + 3 * MAX_CPUS;
const NODE_STATE_WORDS = 8;

/** A world's NUMA topology now (sl_api_slub_topology): masks of nodes and CPUs, and per CPU its node, memory node and barn's node. */
export interface Topology {
  nodes: number;
  memNodes: number;
  barnNodes: number;
  onlineCpus: number;
  defragRatio: number;
  cpuNode: number[];
  /** numa_mem_id(): the nearest node with memory. */
  cpuMemNode: number[];
  /** get_barn's node: numa_mem_id() before 7.1, numa_node_id() from 7.1. */
  cpuBarnNode: number[];
}

/** One node's state (sl_api_slub_node_state). */
export interface NodeState {
  hasMemory: boolean;
  hasBarn: boolean;
  nrPartial: number;
  nrSlabs: number;
  totalObjects: number;
  partialFree: number;
  barnFull: number;
  barnEmpty: number;
}

/**
 * The kernel a world's cache lives in (sl_slub_kernel): boot parameters and build options.
 * Left out: the default (no boot parameter; CONFIG_NR_CPUS = the world's CPUs; CONFIG_PREEMPTION).
 */
export interface KernelParams {
  /** slub_min_order= (0..10). */
  minOrder?: number;
  /** slub_max_order= (clamped to 10 as the kernel does). */
  maxOrder?: number;
  /** slub_min_objects= (0: derived from the CPU count). */
  minObjects?: number;
  /** CONFIG_NR_CPUS, at least the world's CPUs, at most 8192: TID_STEP = roundup_pow_of_two of it. */
  nrCpus?: number;
  /** A kernel without CONFIG_PREEMPTION: TID_STEP 1. */
  noPreempt?: boolean;
}

/** sl_slub_geometry's u32 fields in their order (wasm-core/src/slub/slub.h), by the names geometry() gives them. */
export const SLUB_GEOMETRY_FIELDS = [
  'objectSize', 'align', 'inuse', 'offset', 'redLeftPad', 'size', 'order', 'objects',
  'minPartial', 'cpuPartial', 'cpuPartialSlabs', 'flags', 'fallbackOrder', 'fallbackObjects',
] as const;
/** A cache's geometry (sl_slub_geometry) by field name. */
export type SlubGeometry = Record<(typeof SLUB_GEOMETRY_FIELDS)[number], number>;

/** sl_slub_geometry's bytes, read by field name. */
function readGeometry(bytes: Uint8Array): SlubGeometry {
  const words = new Uint32Array(bytes.buffer, bytes.byteOffset, SLUB_GEOMETRY_FIELDS.length);
  return Object.fromEntries(SLUB_GEOMETRY_FIELDS.map((name, i) => [name, words[i] ?? 0])) as SlubGeometry;
}

/** The five u32 words world_create and geometry take (docs/snapshot-format.md, "Bridge API"). */
export function kernelWords(k: KernelParams): Uint32Array {
  return Uint32Array.of(k.minOrder ?? 0, k.maxOrder ?? 0xffffffff, k.minObjects ?? 0, k.nrCpus ?? 0, k.noPreempt ? 1 : 0);
}

/** A Linux version "X.Y" the SLUB model takes (4.3 on; after 7.3 with a notice: wasm-core/src/slub/eras.h). */
export interface KernelVersion {
  major: number;
  minor: number;
}

/** The kernel era of a version (eras.h): which per-CPU layer its caches have. */
export const ERA_NAMES = ['frozen-partial', 'cpu-slab', 'opt-in-sheaves', 'sheaves'] as const;
export type EraName = (typeof ERA_NAMES)[number];

/** The era of a version (eras.h's sl_slub_rules_for): 4.3-6.7, 6.8-6.17, 6.18, 7.0 on (7.1-7.3 refine it: eras.h). */
export function eraOf(v: KernelVersion): EraName {
  const at = (v.major << 8) | v.minor;
  return at >= 0x700 ? 'sheaves' : at >= 0x612 ? 'opt-in-sheaves' : at >= 0x608 ? 'cpu-slab' : 'frozen-partial';
}

/** The newest version whose rules the model follows (eras.h SL_SLUB_KVERSION_NEWEST); newer ones get its rules, with kernelNotice. */
export const NEWEST_KERNEL: KernelVersion = { major: 7, minor: 3 };

/** The forms a version may take, as the core's reader (wasm-core/src/platform/kversion.h) says them. */
export const KERNEL_FORMS = 'X.Y, X.Y.Z or X.Y-rcN, e.g. 6.18, 6.8.12 or 7.3-rc2';

/**
 * Parses a version as the core's one reader does (platform/kversion.h, SL_KVERSION_STRICT): "X.Y",
 * a stable release "X.Y.Z" or a release candidate "X.Y-rcN" (each read as X.Y), optionally led by
 * 'v'; 4.3 or later (newer than NEWEST_KERNEL: accepted, with kernelNotice).  eras.test.ts checks
 * it against the core's sl_api_slub_kversion_parse.  Throws SlubError (SL_EINVAL) for anything else.
 */
export function parseKernelVersion(text: string): KernelVersion {
  const m = /^v?(\d{1,3})\.(\d{1,3})(?:\.\d{1,3})?(?:-rc\d{1,3})?$/.exec(text);
  const v = m ? { major: Number(m[1]), minor: Number(m[2]) } : null;
  if (!v || v.major > 99 || v.minor > 255) throw new SlubError(SlErr.EINVAL, `kernel "${text}": a kernel version is written ${KERNEL_FORMS}`);
  if (v.major < 4 || (v.major === 4 && v.minor < 3)) throw new SlubError(SlErr.EINVAL, `kernel "${text}": the model knows SLUB from 4.3 (the first kmem_cache_free_bulk) on`);
  return v;
}

/** For a version newer than the newest modelled, the notice every output carries (eras.c's sl_slub_kversion_notice); null otherwise. */
export function kernelNotice(v: KernelVersion): string | null {
  const n = NEWEST_KERNEL;
  if (((v.major << 8) | v.minor) <= ((n.major << 8) | n.minor)) return null;
  return `Linux ${v.major}.${v.minor} is newer than the newest kernel the model follows (${n.major}.${n.minor}): it gets ${n.major}.${n.minor}'s rules`;
}

/** The bridge's word for a version: major * 256 + minor (0 for the default, 6.17). */
export function versionWord(v?: KernelVersion): number {
  return v ? (v.major << 8) | v.minor : 0;
}

/** A world cache's kernel version and sheaves (world_create_version's five words). */
export interface VersionParams {
  /** Absent: 6.17. */
  version?: KernelVersion;
  /** kmem_cache_args.sheaf_capacity: 6.18's opt-in; in 7.0 a floor over calculate_sheaf_capacity. */
  sheafCapacity?: number;
  /** Model: the sheaves get sheafCapacity as given in 7.0 too (small sheaves, to watch them fill). */
  exactCapacity?: boolean;
  /** 7.0: created before bootstrap_cache_sheaves (a kmalloc cache): the bootstrap sheaf until bootstrapSheaves. */
  earlyBoot?: boolean;
  /** Model: sheaves that may exist at once (0: no limit); past it a sheaf allocation fails. */
  maxSheaves?: number;
}

export function versionWords(p: VersionParams): Uint32Array {
  return Uint32Array.of(versionWord(p.version), p.sheafCapacity ?? 0, p.exactCapacity ? 1 : 0, p.earlyBoot ? 1 : 0, p.maxSheaves ?? 0);
}

/** sheaves_info: the sheaves' figures (every CPU quiet). */
export interface SheavesInfo {
  capacity: number;
  barnFull: number;
  barnEmpty: number;
  sheaves: number;
  /** Objects held by every sheaf (CPU, barn, RCU, prefilled). */
  objects: number;
  /** Objects waiting for an RCU grace period (in rcu sheaves or alone). */
  rcuWaiting: number;
}

/** One of a kernel version's CONFIG_SLUB_STATS counters: its sysfs name and the snapshot counter it reads. */
export interface KernelStat {
  name: string;
  /** Index into the snapshot's counters (STAT_NAMES order). */
  stat: number;
}

/** The counters' sysfs names (sl_slub_stat_name): the kernel's, in its order, and the model's own. */
/** The counters a world reports: its kernel version's (KernelStat), then the model's own. */
export interface StatNames {
  kernel: KernelStat[];
  model: KernelStat[];
}

export class SlubApi {
  constructor(readonly m: SlubModule) {}

  strerror(err: number): string {
    return this.m.UTF8ToString(this.m._sl_api_strerror(err));
  }

  /**
   * A world of one cache; `kernel` gives its boot parameters and kernel options, the config's
   * version and sheaf fields the Linux it follows (absent: 6.17, no sheaves).
   */
  createWorld(c: WorldConfig, track = true, kernel?: KernelParams): number {
    return this.createWorldAt(c, {
      ...(c.version ? { version: c.version } : {}),
      ...(c.sheafCapacity ? { sheafCapacity: c.sheafCapacity } : {}),
      ...(c.exactCapacity ? { exactCapacity: true } : {}),
      ...(c.earlyBoot ? { earlyBoot: true } : {}),
    }, track, kernel);
  }

  destroyWorld(w: number): void {
    this.m._sl_api_slub_world_destroy(w);
  }

  /**
   * Objects per slab and the other figures for a cache of this size on `cpus` CPUs (the
   * sl_slub_geometry fields by name: SLUB_GEOMETRY_FIELDS), under `kernel`'s boot parameters.
   */
  geometry(objectSize: number, cpus: number, kernel?: KernelParams): SlubGeometry {
    const out = this.m._malloc(64);
    try {
      const rc = this.withKernel(kernel, (k) => this.m._sl_api_slub_geometry(objectSize, 0, 0, cpus, out, k));
      if (rc !== 0) throw new SlubError(rc, `no SLUB geometry for ${objectSize}-byte objects: ${this.strerror(rc)}`);
      return readGeometry(this.copy(out, 4 * SLUB_GEOMETRY_FIELDS.length));
    } finally {
      this.m._free(out);
    }
  }

  /** sysfs min_partial: empty slabs are discarded once the node list holds this many. */
  setMinPartial(w: number, minPartial: number): void {
    this.check(this.m._sl_api_slub_set_min_partial(w, minPartial), `min_partial ${minPartial}`);
  }

  /** sysfs cpu_partial (objects; recomputes cpu_partial_slabs and flushes every CPU). A debug cache takes 0 only. */
  setCpuPartial(w: number, objects: number): void {
    this.check(this.m._sl_api_slub_set_cpu_partial(w, objects), `cpu_partial ${objects}`);
  }

  /** sysfs shrink: flush every CPU, discard empty slabs, sort the node list. True if slabs remain. */
  shrink(w: number): boolean {
    const rc = this.m._sl_api_slub_shrink(w);
    this.check(rc, 'shrink');
    return rc === 1;
  }

  /**
   * Makes the world's page allocator run short of blocks above order 0 (every other free page
   * held), so new slabs of a higher order fall back to the cache's fallback order; false gives
   * the pages back.  Returns how many pages are held.
   */
  fragment(w: number, on: boolean): number {
    const rc = this.m._sl_api_slub_fragment(w, on ? 1 : 0);
    this.check(rc, on ? 'fragmenting the zone' : 'releasing the held pages');
    return rc;
  }

  /**
   * The counters of kernel `version` (undefined: 6.17) under its sysfs names and in its order,
   * then the model's own (bulk calls, bulk CASes, errors), each with its index in the snapshot.
   */
  statNames(version?: KernelVersion): StatNames {
    const n = this.m._sl_api_slub_stat_count();
    const k = this.m._sl_api_slub_stat_kernel_count();
    const model = Array.from({ length: n - k }, (_, j) => ({ name: this.m.UTF8ToString(this.m._sl_api_slub_stat_name(k + j)), stat: k + j }));
    return { kernel: this.kernelStats(version), model };
  }

  private check(rc: number, what: string): void {
    if (rc < 0) throw new SlubError(rc, `${what} refused: ${this.strerror(rc)}`);
  }

  /** Calls fn with the kernel words in module memory (0 for none). */
  private withKernel<T>(kernel: KernelParams | undefined, fn: (ptr: number) => T): T {
    if (!kernel) return fn(0);
    const words = kernelWords(kernel);
    const ptr = this.m._malloc(words.byteLength);
    if (!ptr) throw new SlubError(-1, 'no memory for the kernel parameters');
    try {
      this.m.HEAPU8.set(new Uint8Array(words.buffer), ptr);
      return fn(ptr);
    } finally {
      this.m._free(ptr);
    }
  }

  /** The whole state as snapshot bytes (decode with decodeSnapshot). */
  snapshot(w: number): Uint8Array {
    return readSized(this.m, SNAP_START, (buf, cap) => this.m._sl_api_slub_snapshot(w, buf, cap),
      (what) => new SlubError(-1, `no snapshot: ${what}`));
  }

  /** A snapshot of a world whose CPU threads run a free run, taken with them paused between rounds (so it holds the sheaves). */
  freeRunSnapshot(w: number): Uint8Array {
    return readSized(this.m, SNAP_START, (buf, cap) => this.m._sl_api_freerun_snapshot(w, buf, cap),
      (what) => new SlubError(-1, `no snapshot: ${what}`));
  }

  /**
   * The events in each CPU's ring, at most `limit` per CPU: CPUs still
   * running keep writing, and a drain that waited for an empty ring might
   * never end.  Merge them with mergeRings.
   */
  drain(w: number, ncpus: number, limit = Infinity): Uint8Array[] {
    return drainRings(this.m, ncpus, EVENT_SIZE, (cpu, out, max) => this.m._sl_api_slub_drain(w, cpu, out, max), limit);
  }

  /** Events CPU cpu's ring had no room for. */
  eventsDropped(w: number, cpu: number): number {
    return this.m._sl_api_slub_events_dropped(w, cpu);
  }

  validate(w: number): { rc: number; message: string } {
    const rc = this.m._sl_api_slub_validate(w);
    return { rc, message: rc === 0 ? '' : this.m.UTF8ToString(this.m._sl_api_slub_validate_message(w)) };
  }

  /**
   * Runs a driver script (sched.h) on world w; with stopAt > 0 a snapshot is
   * taken at that micro-step and the run ends with that operation.
   */
  run(w: number, script: Script, nops: number, stopAt: number): RunResult {
    const enc = encodeScript(script, nops);
    const m = this.m;
    const bytes = enc.ops.byteLength + enc.refs.byteLength + enc.irqs.byteLength;
    const snapCap = stopAt > 0 ? 8 << 20 : 0;
    const base = m._malloc(bytes + 4 * Math.max(1, nops) + 64 + snapCap);
    if (!base) throw new SlubError(-1, 'no memory for the script');
    try {
      const opsAt = base;
      const refsAt = opsAt + enc.ops.byteLength;
      const irqsAt = refsAt + enc.refs.byteLength;
      const resultsAt = irqsAt + enc.irqs.byteLength;
      const outAt = resultsAt + 4 * Math.max(1, nops);
      const snapAt = outAt + 64;
      m.HEAPU8.set(enc.ops, opsAt);
      m.HEAPU8.set(enc.refs, refsAt);
      m.HEAPU8.set(enc.irqs, irqsAt);
      const rc = m._sl_api_slub_run(w, opsAt, nops, refsAt, enc.refs.byteLength / 8, irqsAt, enc.irqs.byteLength / 16,
        stopAt, snapCap ? snapAt : 0, snapCap, resultsAt, outAt);
      if (rc !== 0) throw new SlubError(rc, `the driver refused the script: ${this.strerror(rc)}`);
      const out = new Int32Array(this.copy(outAt, 32).buffer);
      const snapLen = out[2] ?? 0;
      return {
        opsDone: out[0] ?? 0,
        microsteps: out[1] ?? 0,
        stopSnapshot: snapLen > 0 ? this.copy(snapAt, snapLen) : null,
        stopOp: out[3] ?? 0,
        irqsFired: out[4] ?? 0,
        results: new Int32Array(this.copy(resultsAt, 4 * nops).buffer),
      };
    } finally {
      m._free(base);
    }
  }

  /** A world of one cache in a kernel version with its sheaves (kernel: boot parameters, as createWorld). */
  createWorldAt(c: WorldConfig, version: VersionParams, track = true, kernel?: KernelParams): number {
    const words = versionWords(version);
    const vptr = this.m._malloc(words.byteLength);
    if (!vptr) throw new SlubError(-1, 'no memory for the version parameters');
    try {
      this.m.HEAPU8.set(new Uint8Array(words.buffer), vptr);
      const w = this.withKernel(kernel, (k) => this.withTopology(c.numa, (t) => this.m._sl_api_slub_world_create_topology(
        c.arenaBytes, c.cpus, c.objectSize, 0, c.hardened ? FREELIST_HARDENED : 0, FASTPATHS.indexOf(c.fastpath), BULK_FORMS.indexOf(c.bulkFree),
        track ? 1 : 0, c.seed, k, vptr, t,
      )));
      if (!w) {
        const e = this.m._sl_api_slub_last_error();
        const v = version.version ?? { major: 6, minor: 17 };
        throw new SlubError(e, `could not create a SLUB world of ${v.major}.${v.minor}: ${this.strerror(e)}`);
      }
      return w;
    } finally {
      this.m._free(vptr);
    }
  }

  /** Runs `f` with the topology's words in the core's memory (read_topology in api_slub.c: nr_nodes, memoryless, offline CPUs, each CPU's node), or 0 for one node. */
  private withTopology<T>(numa: NumaConfig | undefined, f: (ptr: number) => T): T {
    if (!numa) return f(0);
    const words = Uint32Array.from([numa.nodes, numa.memoryless, numa.offline ?? 0, ...Array.from({ length: MAX_CPUS }, (_, c) => numa.cpuNode[c] ?? 0)]);
    const ptr = this.m._malloc(words.byteLength);
    if (!ptr) throw new SlubError(-1, 'no memory for the NUMA topology');
    try {
      this.m.HEAPU8.set(new Uint8Array(words.buffer), ptr);
      return f(ptr);
    } finally {
      this.m._free(ptr);
    }
  }

  /** World w's NUMA topology now (sl_api_slub_topology): which nodes have memory and a barn, which CPUs are online, each CPU's nodes. */
  topology(w: number): Topology {
    const out = this.m._malloc(4 * TOPOLOGY_STATE_WORDS);
    try {
      const rc = this.m._sl_api_slub_topology(w, out);
      if (rc !== 0) throw new SlubError(rc, `no topology: ${this.strerror(rc)}`);
      const v = new Uint32Array(this.copy(out, 4 * TOPOLOGY_STATE_WORDS).buffer);
      const cpu = (k: number) => Array.from(v.subarray(5 + k * MAX_CPUS, 5 + (k + 1) * MAX_CPUS));
      return { nodes: v[0] ?? 1, memNodes: v[1] ?? 1, barnNodes: v[2] ?? 0, onlineCpus: v[3] ?? 0, defragRatio: v[4] ?? 0, cpuNode: cpu(0), cpuMemNode: cpu(1), cpuBarnNode: cpu(2) };
    } finally {
      this.m._free(out);
    }
  }

  /** Node nid's counts and barn (sl_api_slub_node_state; every CPU quiet), or null when a CPU is busy.  A slab's node is in the snapshot (slab.nid). */
  nodeState(w: number, nid: number): NodeState | null {
    const out = this.m._malloc(4 * NODE_STATE_WORDS);
    try {
      const rc = this.m._sl_api_slub_node_state(w, nid, out, 0, 0);
      if (rc < 0) return null;
      const v = new Uint32Array(this.copy(out, 4 * NODE_STATE_WORDS).buffer);
      return {
        hasMemory: v[0] === 1, hasBarn: v[1] === 1, nrPartial: v[2] ?? 0, nrSlabs: v[3] ?? 0, totalObjects: v[4] ?? 0, partialFree: v[5] ?? 0,
        barnFull: v[6] ?? 0, barnEmpty: v[7] ?? 0,
      };
    } finally {
      this.m._free(out);
    }
  }

  /**
   * Seeds world w's cache, just created, from a real cache's slabs (the words web/kernel/seed.ts
   * writes; wasm-core/bindings/api_kernel.c reads them).  Returns the full slabs made; throws
   * SlubError with the core's sentence for a description it refuses.
   */
  seedWorld(w: number, words: readonly number[]): number {
    const data = Uint32Array.from(words);
    const ptr = this.m._malloc(Math.max(4, data.byteLength));
    if (!ptr) throw new SlubError(-1, 'no memory for the seed description');
    try {
      this.m.HEAPU8.set(new Uint8Array(data.buffer), ptr);
      const rc = this.m._sl_api_kernel_seed(w, ptr, data.length);
      if (rc < 0) throw new SlubError(rc, `the seed was refused: ${this.m.UTF8ToString(this.m._sl_api_kernel_seed_message())}`);
      return rc;
    } finally {
      this.m._free(ptr);
    }
  }

  /** The world cache's kernel version and era. */
  worldVersion(w: number): KernelVersion & { era: EraName } {
    const v = this.m._sl_api_slub_world_version(w);
    return { major: (v >> 8) & 0xff, minor: v & 0xff, era: ERA_NAMES[(v >> 16) & 0xff] ?? 'cpu-slab' };
  }

  /** kfree_rcu of object (pfn, index) as `cpu`: it waits for a grace period (rcuGracePeriod). */
  kfreeRcu(w: number, cpu: number, pfn: number, index: number): void {
    this.check(this.m._sl_api_slub_kfree_rcu(w, cpu, pfn, index), `kfree_rcu of (${pfn}, ${index})`);
  }

  /** A grace period ends for what `cpu` queued; returns the objects that left the wait. */
  rcuGracePeriod(w: number, cpu: number): number {
    const rc = this.m._sl_api_slub_rcu_grace_period(w, cpu);
    this.check(rc, 'the grace period');
    return rc;
  }

  /** bootstrap_cache_sheaves of a 7.0 cache created with earlyBoot. */
  bootstrapSheaves(w: number): void {
    this.check(this.m._sl_api_slub_bootstrap_sheaves(w), 'bootstrap_cache_sheaves');
  }

  /** kmem_cache_prefill_sheaf into sheaf slot `slot` (0..7, shared with scripts). */
  prefillSheaf(w: number, cpu: number, slot: number, size: number): void {
    this.check(this.m._sl_api_slub_prefill_sheaf(w, cpu, slot, size), `prefilling ${size} objects`);
  }

  /** kmem_cache_refill_sheaf of slot `slot` to at least `size` objects. */
  refillSheaf(w: number, cpu: number, slot: number, size: number): void {
    this.check(this.m._sl_api_slub_refill_sheaf(w, cpu, slot, size), `refilling to ${size} objects`);
  }

  /** kmem_cache_alloc_from_sheaf: the object, or null once the sheaf is empty. */
  allocFromSheaf(w: number, cpu: number, slot: number): { pfn: number; index: number } | null {
    const rc = this.m._sl_api_slub_alloc_from_sheaf(w, cpu, slot);
    if (rc === SlErr.ENOMEM) return null;
    this.check(rc, `an allocation from sheaf slot ${slot}`);
    const pair = new Uint32Array(this.copy(this.m._sl_api_slub_scratch(w, cpu), 8).buffer);
    return { pfn: pair[0] ?? 0, index: pair[1] ?? 0 };
  }

  /** kmem_cache_return_sheaf of slot `slot` (the slot empties). */
  returnSheaf(w: number, cpu: number, slot: number): void {
    this.check(this.m._sl_api_slub_return_sheaf(w, cpu, slot), `returning sheaf slot ${slot}`);
  }

  /** Objects in the sheaf of `slot`, or -1 for an empty slot. */
  sheafSize(w: number, slot: number): number {
    return this.m._sl_api_slub_sheaf_size(w, slot);
  }

  sheavesInfo(w: number): SheavesInfo {
    const out = this.m._malloc(24);
    try {
      this.check(this.m._sl_api_slub_sheaves_info(w, out), 'sheaves_info');
      const v = new Uint32Array(this.copy(out, 24).buffer);
      return { capacity: v[0] ?? 0, barnFull: v[1] ?? 0, barnEmpty: v[2] ?? 0, sheaves: v[3] ?? 0, objects: v[4] ?? 0, rcuWaiting: v[5] ?? 0 };
    } finally {
      this.m._free(out);
    }
  }

  /** The counters kernel `version` has (undefined: 6.17), in its order under its sysfs names. */
  kernelStats(version?: KernelVersion): KernelStat[] {
    const word = versionWord(version);
    const n = this.m._sl_api_slub_kstat_count(word);
    this.check(n, 'the kernel version');
    return Array.from({ length: n }, (_, i) => ({
      name: this.m.UTF8ToString(this.m._sl_api_slub_kstat_name(word, i)),
      stat: this.m._sl_api_slub_kstat_stat(word, i),
    }));
  }

  /** calculate_sheaf_capacity (7.0), or the 6.18 opt-in request; 0 before 6.18 and for debug flags. */
  sheafCapacity(version: KernelVersion, size: number, flags = 0, requested = 0): number {
    const rc = this.m._sl_api_slub_sheaf_capacity(versionWord(version), size, flags, requested);
    this.check(rc, 'sheaf capacity');
    return rc;
  }

  /** geometry() under the rules of kernel `version`. */
  geometryAt(objectSize: number, cpus: number, version: KernelVersion, kernel?: KernelParams): SlubGeometry {
    const out = this.m._malloc(64);
    try {
      const rc = this.withKernel(kernel, (k) => this.m._sl_api_slub_geometry_version(objectSize, 0, 0, cpus, out, k, versionWord(version)));
      if (rc !== 0) throw new SlubError(rc, `no SLUB geometry for ${objectSize}-byte objects: ${this.strerror(rc)}`);
      return readGeometry(this.copy(out, 4 * SLUB_GEOMETRY_FIELDS.length));
    } finally {
      this.m._free(out);
    }
  }

  /** A fresh (transferable, unshared) copy of `size` bytes at `ptr`. */
  copy(ptr: number, size: number): Uint8Array {
    return copyOut(this.m, ptr, size);
  }
}
