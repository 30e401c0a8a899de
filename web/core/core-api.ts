// core-api.ts - a typed face for one instance of the WebAssembly core.
//
// The Emscripten module exposes the C exports as `_sl_api_*` functions over
// its linear memory.  CoreApi is the only code that calls them: it manages the
// scratch buffers, copies binary results out of the module's memory into
// fresh ArrayBuffers (which the bridge worker then transfers to the UI), and
// turns C error codes into CoreError.  It runs wherever the module runs: in
// the bridge worker in the browser, and under Node in the vitest tests.

import type { CoreBuild } from './bridge-protocol';

/** The parts of an Emscripten module instance that CoreApi uses. */
export interface CoreModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  UTF8ToString(ptr: number): string;
  _sl_api_abi_version(): number;
  _sl_api_has_threads(): number;
  _sl_api_bench_build(): number;
  _sl_api_event_size(): number;
  _sl_api_max_cpus(): number;
  _sl_api_event_layout(out: number): number;
  _sl_api_selftest_layout(out: number): number;
  _sl_api_selftest(threads: number, iterations: number, out: number): number;
  _sl_api_selftest_interleaved(cpus: number, iterations: number, seed: number, out: number): number;
  _sl_api_strerror(err: number): number;
}

/** The ABI this UI was written against (SLABLAB_ABI_VERSION in bindings/api_core.c). */
export const EXPECTED_ABI_VERSION = 2;

/** sl_err codes the UI handles by name (wasm-core/src/platform/platform.h). */
export const SlErr = {
  OK: 0,
  ENOMEM: -1,
  EINVAL: -2,
  ENOTHREADS: -3,
  ECORRUPT: -10,
} as const;

/** A C function returned an sl_err; `code` is that error, `message` sl_strerror's text. */
export class CoreError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'CoreError';
  }
}

export interface SelftestRun {
  /** 0, or SL_ECORRUPT when the final count or the lo == hi invariant broke. */
  rc: number;
  /** The raw sl_selftest_result (decode with decodeSelftestResult). */
  bytes: ArrayBuffer;
}

const SCRATCH_BYTES = 4096;

export class CoreApi {
  private readonly scratch: number;

  constructor(private readonly m: CoreModule) {
    this.scratch = m._malloc(SCRATCH_BYTES);
    if (!this.scratch) throw new CoreError(SlErr.ENOMEM, 'could not allocate the bridge scratch buffer');
  }

  get abiVersion(): number {
    return this.m._sl_api_abi_version();
  }
  get hasThreads(): boolean {
    return this.m._sl_api_has_threads() !== 0;
  }
  /** Which C the module was compiled from: the lab's traced build, or SLABLAB_BENCH's. */
  get build(): CoreBuild {
    return this.m._sl_api_bench_build() !== 0 ? 'bench' : 'traced';
  }
  get eventSize(): number {
    return this.m._sl_api_event_size();
  }
  get maxCpus(): number {
    return this.m._sl_api_max_cpus();
  }

  strerror(err: number): string {
    return this.m.UTF8ToString(this.m._sl_api_strerror(err));
  }

  /** sl_api_event_layout: [sizeof, offsets of op, cpu, kind, cache, flags, slab, obj, arg0, arg1, arg2, seq]. */
  eventLayout(): number[] {
    return this.readU32s(this.m._sl_api_event_layout(this.scratch));
  }
  /** sl_api_selftest_layout: [sizeof, offsets of threads, iterations, counter, cas_failures, thread_ids, per_cpu_done, SL_MAX_CPUS]. */
  selftestLayout(): number[] {
    return this.readU32s(this.m._sl_api_selftest_layout(this.scratch));
  }

  /**
   * Runs the self-test: on CPU threads in the threads build, else with the CPUs
   * interleaved on this thread by the deterministic scheduler (`seed`).
   * Throws CoreError for anything but success or a detected corruption.
   */
  selftest(cpus: number, iterations: number, seed: number): SelftestRun {
    const size = this.selftestLayout()[0] ?? 0;
    const rc = this.hasThreads
      ? this.m._sl_api_selftest(cpus, iterations, this.scratch)
      : this.m._sl_api_selftest_interleaved(cpus, iterations, seed, this.scratch);
    if (rc !== SlErr.OK && rc !== SlErr.ECORRUPT) throw new CoreError(rc, this.strerror(rc));
    return { rc, bytes: this.copyOut(this.scratch, size) };
  }

  private readU32s(count: number): number[] {
    const bytes = this.copyOut(this.scratch, 4 * count);
    return Array.from(new Uint32Array(bytes));
  }

  /** A fresh (transferable, unshared) copy of `size` bytes at `ptr`. */
  private copyOut(ptr: number, size: number): ArrayBuffer {
    const out = new ArrayBuffer(size);
    // HEAPU8 is re-read each time: memory growth replaces the view.
    new Uint8Array(out).set(this.m.HEAPU8.subarray(ptr, ptr + size));
    return out;
  }
}
