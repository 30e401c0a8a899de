import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { CoreApi, CoreError, EXPECTED_ABI_VERSION, SlErr, type CoreModule } from './core-api';
import { SELFTEST_LAYOUT, decodeSelftestResult } from './layouts';

let api: CoreApi;
beforeAll(async () => {
  api = new CoreApi(await loadNodeCore());
});

describe('the Node build of the core', () => {
  it('is the single-threaded build with the ABI the UI expects', () => {
    expect(api.abiVersion).toBe(EXPECTED_ABI_VERSION);
    expect(api.hasThreads).toBe(false);
    expect(api.build).toBe('traced');
    expect(api.maxCpus).toBe(SELFTEST_LAYOUT.maxCpus);
  });

  it('lays out sl_selftest_result as layouts.ts decodes it', () => {
    expect(api.selftestLayout()).toEqual([
      SELFTEST_LAYOUT.size,
      SELFTEST_LAYOUT.threads,
      SELFTEST_LAYOUT.iterations,
      SELFTEST_LAYOUT.counter,
      SELFTEST_LAYOUT.casFailures,
      SELFTEST_LAYOUT.threadIds,
      SELFTEST_LAYOUT.perCpuDone,
      SELFTEST_LAYOUT.maxCpus,
    ]);
  });

  it('names its errors', () => {
    expect(api.strerror(SlErr.ENOTHREADS)).toBe('this build has no threads');
    expect(api.strerror(SlErr.OK)).not.toBe(api.strerror(SlErr.EINVAL));
  });
});

describe('the interleaved self-test (single-threaded build)', () => {
  it('lands every increment while CPUs interleave and lose CASes', () => {
    const run = api.selftest(4, 1000, 7);
    expect(run.rc).toBe(SlErr.OK);
    const r = decodeSelftestResult(run.bytes);
    expect(r.cpus).toBe(4);
    expect(r.iterations).toBe(1000);
    expect(r.counter).toBe(4000n);
    expect(r.perCpuDone).toEqual([1000n, 1000n, 1000n, 1000n]);
    // Interleaving read and CAS steps of different CPUs makes some snapshots stale.
    expect(r.casFailures).toBeGreaterThan(0n);
    // One worker ran every CPU.
    expect(new Set(r.threadIds).size).toBe(1);
  });

  it('is deterministic for a seed and differs between seeds', () => {
    const retries = (seed: number) => decodeSelftestResult(api.selftest(3, 500, seed).bytes).casFailures;
    expect(retries(11)).toBe(retries(11));
    expect(new Set([retries(1), retries(2), retries(3), retries(4)]).size).toBeGreaterThan(1);
  });

  it('has no retries with one CPU', () => {
    expect(decodeSelftestResult(api.selftest(1, 100, 5).bytes).casFailures).toBe(0n);
  });

  it('rejects bad counts with a CoreError', () => {
    expect(() => api.selftest(0, 10, 1)).toThrow(CoreError);
    expect(() => api.selftest(SELFTEST_LAYOUT.maxCpus + 1, 10, 1)).toThrow(/argument|range/);
  });
});

describe('decodeSelftestResult', () => {
  it('refuses a buffer of the wrong size', () => {
    expect(() => decodeSelftestResult(new ArrayBuffer(SELFTEST_LAYOUT.size - 8))).toThrow(RangeError);
  });
});

describe('the benchmark flavour of the core (node/slablab-bench.js)', () => {
  it('is a SLABLAB_BENCH build with threads and the same ABI, and runs the page\'s benchmark loops', async () => {
    const m = await loadNodeCore<CoreModule & { _sl_api_bench_fastpath(fp: number, loops: number, onThread: number): number; _sl_api_bench_bulk(form: number, bulk: number, loops: number, onThread: number): number }>('slablab-bench');
    const bench = new CoreApi(m);
    expect(bench.build).toBe('bench');
    expect(bench.hasThreads).toBe(true);
    expect(bench.abiVersion).toBe(EXPECTED_ABI_VERSION);
    expect(m._sl_api_bench_fastpath(0, 1000, 0)).toBeGreaterThan(0);
    expect(m._sl_api_bench_bulk(0, 16, 100, 0)).toBeGreaterThan(0);
    // A bad argument is refused, not run.
    expect(m._sl_api_bench_bulk(0, 0, 100, 0)).toBe(SlErr.EINVAL);
  });
});
