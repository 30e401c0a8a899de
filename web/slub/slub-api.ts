// slub-api.ts - a typed face for the SLUB bindings (wasm-core/bindings/api_slub.c)
// and the CPU-thread runners (bindings/api_bench_wasm.c) of one core instance.
// It runs where the module runs: in the bridge worker, and under Node in the
// vitest tests (the slablab-node build).  Objects cross as (pfn, index) pairs.

import { EVENT_SIZE } from '../core/events.generated';
import { copyOut, drainRings, readSized } from '../core/heap-io';
import type { WorldConfig } from './protocol';
import type { Script } from './script';
import { encodeScript } from './script';
import { BULK_FORMS, FASTPATHS } from './snapshot';

/** The exports this file calls (a superset of core-api.ts's CoreModule). */
export interface SlubModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  UTF8ToString(ptr: number): string;
  _sl_api_strerror(err: number): number;
  _sl_api_slub_last_error(): number;
  _sl_api_slub_world_create(
    arena: number, ncpus: number, objectSize: number, align: number, flags: number,
    fastpath: number, bulkFree: number, track: number, seed: number,
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
  _sl_api_slub_geometry(objectSize: number, align: number, flags: number, ncpus: number, out: number): number;
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
  _sl_api_bench_fastpath(fastpath: number, loops: number, onThread: number): number;
  _sl_api_bench_bulk(form: number, bulk: number, loops: number, onThread: number): number;
}

/** A C function returned an sl_err. */
export class SlubError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
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

export class SlubApi {
  constructor(readonly m: SlubModule) {}

  strerror(err: number): string {
    return this.m.UTF8ToString(this.m._sl_api_strerror(err));
  }

  createWorld(c: WorldConfig, track = true): number {
    const w = this.m._sl_api_slub_world_create(
      c.arenaBytes, c.cpus, c.objectSize, 0, 0, FASTPATHS.indexOf(c.fastpath), BULK_FORMS.indexOf(c.bulkFree),
      track ? 1 : 0, c.seed,
    );
    if (!w) {
      const e = this.m._sl_api_slub_last_error();
      throw new SlubError(e, `could not create a SLUB world: ${this.strerror(e)}`);
    }
    return w;
  }

  destroyWorld(w: number): void {
    this.m._sl_api_slub_world_destroy(w);
  }

  /** Objects per slab and the other figures for a cache of this size on `cpus` CPUs. */
  geometry(objectSize: number, cpus: number): number[] {
    const out = this.m._malloc(64);
    try {
      const rc = this.m._sl_api_slub_geometry(objectSize, 0, 0, cpus, out);
      if (rc !== 0) throw new SlubError(rc, `no SLUB geometry for ${objectSize}-byte objects: ${this.strerror(rc)}`);
      return Array.from(new Uint32Array(this.copy(out, 48).buffer));
    } finally {
      this.m._free(out);
    }
  }

  /** The whole state as snapshot bytes (decode with decodeSnapshot). */
  snapshot(w: number): Uint8Array {
    return readSized(this.m, SNAP_START, (buf, cap) => this.m._sl_api_slub_snapshot(w, buf, cap),
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

  /** A fresh (transferable, unshared) copy of `size` bytes at `ptr`. */
  copy(ptr: number, size: number): Uint8Array {
    return copyOut(this.m, ptr, size);
  }
}
