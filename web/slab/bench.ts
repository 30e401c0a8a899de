// bench.ts - the SLAB model's experiment on the Benchmarks page: seed 002's
// slab_test (`slablab kmalloc`), rounds of 10,000 kmalloc(size) then 10,000
// kfree on one CPU, with the management-type rules before and after
// OBJFREELIST_SLAB, each phase timed on its own (sl_api_bench_kmalloc), run by
// the engine's web/lab/bench.ts; and the native measurements that match.

import { readNative, type BenchRow, type NativeResult } from '../lab/bench';

export const KMALLOC_SIZES = [32, 64, 128, 256, 512, 1024, 2048, 4096] as const;
export const KMALLOC_SHORT_SIZES = [32, 256, 4096] as const;
/** The native variants' names (`slablab kmalloc`); the wasm build runs the two SLAB ones. */
export const KMALLOC_RULES = ['slab-before', 'slab-after'] as const;
export const KMALLOC_PHASES = ['alloc', 'free'] as const;
/** The largest size the slab_test loop takes (the seed's 32 .. 4096). */
export const KMALLOC_SIZE_MAX = 4096;
/** kmalloc and kfree calls in one round (the seed's 10,000 of each). */
const ROUND_CALLS = 20_000;

/** A wasm variant: the rules and the timed phase, e.g. "slab-after:free". */
export const KMALLOC_VARIANTS = KMALLOC_RULES.flatMap((r) => KMALLOC_PHASES.map((p) => `${r}:${p}`));

export function parseKmallocVariant(v: string): { rules: (typeof KMALLOC_RULES)[number]; phase: (typeof KMALLOC_PHASES)[number] } | null {
  const [rules, phase] = v.split(':');
  const r = KMALLOC_RULES.find((x) => x === rules);
  const p = KMALLOC_PHASES.find((x) => x === phase);
  return r && p && v.split(':').length === 2 ? { rules: r, phase: p } : null;
}

/** The kmalloc rows: nanoseconds per call of the timed phase; a loop is one round of both phases. */
export function kmallocRows(short: boolean): BenchRow[] {
  return (short ? KMALLOC_SHORT_SIZES : KMALLOC_SIZES).map((size) => ({ model: 'slab', experiment: 'kmalloc', row: size, variants: KMALLOC_VARIANTS, opsPerLoop: ROUND_CALLS, probeLoops: 1 }));
}

/** The kmalloc rows of a native result (every variant, slub included, as variant:phase); throws an Error that says what is wrong. */
export function parseKmallocNative(text: string): NativeResult {
  const { machine, measurements } = readNative(text);
  const points = measurements.filter((m) => m.experiment === 'kmalloc' && m.group === 'kmalloc').map((m) => ({ experiment: 'kmalloc', row: Number(m.row), variant: `${m.variant}:${m.phase}`, ns: m.ns }));
  if (!points.length) throw new Error('it has no kmalloc measurements (run `slablab kmalloc --format json`)');
  return { machine, points };
}
