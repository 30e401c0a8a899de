// percpu-api.ts - a typed face for the percpu bindings (wasm-core/bindings/api_percpu.c)
// and the percpu benchmark row (bindings/api_bench_wasm.c) of one core
// instance.  It runs where the module runs: in the bridge worker, and under
// Node in the vitest tests (the slablab-node build).  Areas cross as
// (chunk id, offset) pairs, which a replay on a fresh world names again.

import { CoreError } from '../core/core-api';
import { EVENT_SIZE } from '../core/events.generated';
import { copyOut, drainRings, readSized } from '../core/heap-io';
import { ALLOCATORS, type Allocator } from './snapshot';

/** The exports this file calls (a superset of core-api.ts's CoreModule). */
export interface PercpuModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  UTF8ToString(ptr: number): string;
  _sl_api_strerror(err: number): number;
  _sl_api_pcpu_last_error(): number;
  _sl_api_pcpu_create(
    kind: number, units: number, unitSize: number, staticSize: number, reservedSize: number, dynSize: number,
    traceRing: number,
  ): number;
  _sl_api_pcpu_destroy(w: number): void;
  _sl_api_pcpu_alloc(w: number, cpu: number, size: number, align: number, reserved: number, ref: number): number;
  _sl_api_pcpu_free(w: number, cpu: number, chunk: number, offset: number): number;
  _sl_api_pcpu_add(w: number, chunk: number, offset: number, cpu: number, delta: number): number;
  _sl_api_pcpu_sum(w: number, chunk: number, offset: number): number;
  _sl_api_pcpu_validate(w: number): number;
  _sl_api_pcpu_validate_message(w: number): number;
  _sl_api_pcpu_snapshot(w: number, buf: number, cap: number): number;
  _sl_api_pcpu_snapshot_layout(out: number): number;
  _sl_api_pcpu_drain(w: number, cpu: number, out: number, max: number): number;
  _sl_api_pcpu_events_dropped(w: number, cpu: number): number;
  _sl_api_pcpu_step_begin(w: number, cpu: number, kind: number, areas: number, size: number): number;
  _sl_api_pcpu_step_end(w: number, cpu: number, op: number, kind: number, result: number, ns: number): void;
  _sl_api_bench_percpu(
    kind: number, size: number, align: number, objects: number, order: number, prefill: number, units: number,
    unitSize: number, budgetMs: number, onThread: number, out: number,
  ): number;
}

/** A world: one percpu instance, booted with its first chunk (sl_pcpu_config). */
export interface PercpuConfig {
  allocator: Allocator;
  /** CPUs, one unit each (1..64). */
  cpus: number;
  /** Bytes per unit, a multiple of 4096 (0: 256 KiB). */
  unitSize: number;
  /** The first chunk's static and reserved regions, and its dynamic region (0: the rest of the unit). */
  staticSize: number;
  reservedSize: number;
  dynSize: number;
}

/** A real x86-64 boot: "Embedded 54 pages/cpu s183296 r8192 d28672 u262144". */
export const KERNEL_BOOT = { unitSize: 262144, staticSize: 183296, reservedSize: 8192, dynSize: 28672 } as const;

/** An area: its chunk's id and its offset in the unit. */
export interface PercpuRef {
  chunk: number;
  offset: number;
}

export const FREE_ORDERS = ['inorder', 'alternate', 'reverse'] as const;
export type FreeOrder = (typeof FREE_ORDERS)[number];

/** One row of seed 003's experiment: one allocator, object size and free order on a fresh instance. */
export interface PercpuBenchParams {
  allocator: Allocator;
  size: number;
  align: number;
  objects: number;
  order: FreeOrder;
  /** Allocate into chunks whose second half was filled first (the seed's second table). */
  prefill: boolean;
  units: number;
  /** Bytes per unit (0: 256 KiB). */
  unitSize: number;
  /** Stop once alloc + free took this long (0: no budget). */
  budgetMs: number;
}

export interface PercpuBenchResult {
  allocMs: number;
  freeMs: number;
  allocated: number;
  freed: number;
  /** done, stopped by the budget, or an allocation failed (no memory). */
  status: 'ok' | 'over_budget' | 'alloc_failed';
  /** Chunks when every object was live. */
  chunks: number;
  /** The timed phases' work: counts, the same on every run. */
  work: PercpuWork;
}

/** sl_pcpu_work: what the allocator did, counted (chunks tried, blocks or map entries visited, bits searched, memmoves, entries moved). */
export interface PercpuWork {
  chunks: number;
  blocks: number;
  bits: number;
  memmoves: number;
  entriesMoved: number;
}
export const WORK_COUNTS = ['chunks', 'blocks', 'bits', 'memmoves', 'entriesMoved'] as const satisfies readonly (keyof PercpuWork)[];

/** sl_api_bench_percpu's out[]: the doubles it writes, in order (wasm-core/bindings/api_bench_wasm.c). */
const BENCH_OUT = ['allocMs', 'freeMs', 'allocated', 'freed', 'status', 'chunks', ...WORK_COUNTS.map((k) => `work.${k}` as const)] as const;

/** PercpuBenchResult.status by the C side's number (sl_api_bench_percpu's out[4], 'status'). */
export const BENCH_STATUS = ['ok', 'over_budget', 'alloc_failed'] as const;

/** A C function returned an sl_err (a CoreError: the bridge answers it with code 'core-error'). */
export class PercpuError extends CoreError {
  constructor(code: number, message: string) {
    super(code, message);
    this.name = 'PercpuError';
  }
}

/** What a script step does (sl_api_pcpu_step_begin's kind). */
export const StepKind = { ALLOC: 0, FREE: 1 } as const;
/** OP_BEGIN/OP_END arg0 of a script step: SL_API_PCPU_STEP_OPCODE + its kind. */
export const STEP_OPCODE = 16;

const SNAP_START = 1 << 16;
const SCRATCH_BYTES = 128;

export class PercpuApi {
  private readonly scratch: number;

  constructor(readonly m: PercpuModule) {
    this.scratch = m._malloc(SCRATCH_BYTES);
    if (!this.scratch) throw new PercpuError(-1, 'no memory for the percpu scratch buffer');
  }

  strerror(err: number): string {
    return this.m.UTF8ToString(this.m._sl_api_strerror(err));
  }

  /** A world; traceRing events per CPU are kept for drain (0: no events). */
  create(c: PercpuConfig, traceRing: number): number {
    const w = this.m._sl_api_pcpu_create(ALLOCATORS.indexOf(c.allocator), c.cpus, c.unitSize, c.staticSize,
      c.reservedSize, c.dynSize, traceRing);
    if (!w) {
      const e = this.m._sl_api_pcpu_last_error();
      throw new PercpuError(e, `could not create a percpu world: ${this.strerror(e)}`);
    }
    return w;
  }

  destroyWorld(w: number): void {
    this.m._sl_api_pcpu_destroy(w);
  }

  /** One allocation (reserved: from the reserved chunk); rc 0 and the area, or an sl_err and null. */
  alloc(w: number, cpu: number, size: number, align: number, reserved: boolean): { rc: number; ref: PercpuRef | null } {
    const rc = this.m._sl_api_pcpu_alloc(w, cpu, size, align, reserved ? 1 : 0, this.scratch);
    const words = this.u32(this.scratch, 2);
    return { rc, ref: rc === 0 ? { chunk: words[0] ?? 0, offset: words[1] ?? 0 } : null };
  }

  /** One free: 0, or the sl_err (a ref naming no chunk is a foreign pointer). */
  free(w: number, cpu: number, ref: PercpuRef): number {
    return this.m._sl_api_pcpu_free(w, cpu, ref.chunk, ref.offset);
  }

  /** this_cpu_add on the 64-bit counter at ref: 0 or SL_EINVAL. */
  add(w: number, ref: PercpuRef, cpu: number, delta: number): number {
    return this.m._sl_api_pcpu_add(w, ref.chunk, ref.offset, cpu, delta);
  }

  /** The sum over CPUs of the counter at ref; NaN when ref names no counter. */
  sum(w: number, ref: PercpuRef): number {
    return this.m._sl_api_pcpu_sum(w, ref.chunk, ref.offset);
  }

  validate(w: number): { rc: number; message: string } {
    const rc = this.m._sl_api_pcpu_validate(w);
    return { rc, message: rc === 0 ? '' : this.m.UTF8ToString(this.m._sl_api_pcpu_validate_message(w)) };
  }

  /** The whole state as snapshot bytes (decode with decodePercpuSnapshot). */
  snapshot(w: number): Uint8Array {
    return readSized(this.m, SNAP_START, (buf, cap) => this.m._sl_api_pcpu_snapshot(w, buf, cap),
      (what) => new PercpuError(-1, `no snapshot: ${what}`));
  }

  /** sl_pcpu_snapshot_layout: [header, chunk record and block record bytes, magic, version, bits per block, NONE]. */
  snapshotLayout(): number[] {
    return Array.from(this.u32(this.scratch, this.m._sl_api_pcpu_snapshot_layout(this.scratch)));
  }

  /** The events in each CPU's ring (sl_event records), at most `limit` per CPU. */
  drain(w: number, cpus: number, limit = Infinity): Uint8Array[] {
    return drainRings(this.m, cpus, EVENT_SIZE, (cpu, out, max) => this.m._sl_api_pcpu_drain(w, cpu, out, max), limit);
  }

  /**
   * Brackets one step of a script as one top-level operation (OP_BEGIN ...
   * OP_END, the step's own calls nested inside): returns the operation number
   * to pass to stepEnd.
   */
  stepBegin(w: number, cpu: number, kind: number, areas: number, size: number): number {
    return this.m._sl_api_pcpu_step_begin(w, cpu, kind, areas, size) >>> 0;
  }

  /** Ends the step `op`: its result and the nanoseconds its calls took (capped at 2^32 - 1). */
  stepEnd(w: number, cpu: number, op: number, kind: number, result: number, ns: number): void {
    this.m._sl_api_pcpu_step_end(w, cpu, op, kind, result, Math.min(0xffffffff, Math.max(0, Math.round(ns))));
  }

  /** Events CPU cpu's ring had no room for. */
  eventsDropped(w: number, cpu: number): number {
    return this.m._sl_api_pcpu_events_dropped(w, cpu);
  }

  /** One row of the percpu experiment, on a CPU thread when onThread and the build has threads. */
  benchRow(p: PercpuBenchParams, onThread: boolean): PercpuBenchResult {
    const rc = this.m._sl_api_bench_percpu(ALLOCATORS.indexOf(p.allocator), p.size, p.align, p.objects,
      FREE_ORDERS.indexOf(p.order), p.prefill ? 1 : 0, p.units, p.unitSize, p.budgetMs, onThread ? 1 : 0, this.scratch);
    if (rc !== 0) throw new PercpuError(rc, `the percpu benchmark refused the row: ${this.strerror(rc)}`);
    const v = new DataView(copyOut(this.m, this.scratch, 8 * BENCH_OUT.length).buffer);
    const f = (name: (typeof BENCH_OUT)[number]) => v.getFloat64(8 * BENCH_OUT.indexOf(name), true);
    return {
      allocMs: f('allocMs'),
      freeMs: f('freeMs'),
      allocated: f('allocated'),
      freed: f('freed'),
      status: BENCH_STATUS[f('status')] ?? 'alloc_failed',
      chunks: f('chunks'),
      work: { chunks: f('work.chunks'), blocks: f('work.blocks'), bits: f('work.bits'), memmoves: f('work.memmoves'), entriesMoved: f('work.entriesMoved') },
    };
  }

  private u32(ptr: number, count: number): Uint32Array {
    return new Uint32Array(copyOut(this.m, ptr, 4 * count).buffer);
  }
}
