// layouts.ts - decoders for the C structs the bridge copies out of the core's
// memory (other than sl_event, whose decoder is generated: events.generated.ts).
// Each layout is checked against the compiled C (sl_api_*_layout) by
// layouts.test.ts, so a struct that changes shape on one side fails a test.

/** Byte layout of sl_selftest_result (wasm-core/src/runner/runner.h). */
export const SELFTEST_LAYOUT = {
  size: 152,
  threads: 0,
  iterations: 4,
  counter: 8,
  casFailures: 16,
  threadIds: 24,
  perCpuDone: 88,
  maxCpus: 8,
} as const;

export interface SelftestResult {
  /** Simulated CPUs that ran (CPU threads in the threads build). */
  cpus: number;
  /** Increments each CPU made. */
  iterations: number;
  /** Final value of the shared counter: cpus * iterations when every CAS landed. */
  counter: bigint;
  /** Double-word CAS attempts that lost a race and were retried. */
  casFailures: bigint;
  /** Thread id of each CPU (a pthread = web worker in the threads build). */
  threadIds: bigint[];
  /** Increments each CPU completed. */
  perCpuDone: bigint[];
}

/** Decodes an sl_selftest_result; throws RangeError on a buffer of the wrong size. */
export function decodeSelftestResult(bytes: ArrayBuffer): SelftestResult {
  if (bytes.byteLength !== SELFTEST_LAYOUT.size)
    throw new RangeError(`sl_selftest_result is ${SELFTEST_LAYOUT.size} bytes, got ${bytes.byteLength}`);
  const v = new DataView(bytes);
  const cpus = v.getUint32(SELFTEST_LAYOUT.threads, true);
  const n = Math.min(cpus, SELFTEST_LAYOUT.maxCpus);
  const u64s = (at: number): bigint[] => Array.from({ length: n }, (_, i) => v.getBigUint64(at + 8 * i, true));
  return {
    cpus,
    iterations: v.getUint32(SELFTEST_LAYOUT.iterations, true),
    counter: v.getBigUint64(SELFTEST_LAYOUT.counter, true),
    casFailures: v.getBigUint64(SELFTEST_LAYOUT.casFailures, true),
    threadIds: u64s(SELFTEST_LAYOUT.threadIds),
    perCpuDone: u64s(SELFTEST_LAYOUT.perCpuDone),
  };
}
