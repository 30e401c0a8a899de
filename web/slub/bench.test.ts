import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runRows, type BenchPoint } from '../lab/bench';
import { parseNative, slubRows, SHORT_PLAN, type BenchPlan } from './bench';
import type { BenchRowParams } from '../core/bridge-protocol';

/** A plan's rows, run by the engine. */
const runPlan = (plan: BenchPlan, ...rest: [Parameters<typeof runRows>[2], Parameters<typeof runRows>[3], Parameters<typeof runRows>[4], Parameters<typeof runRows>[5]]) =>
  runRows(slubRows(plan), { reps: plan.reps, targetMs: plan.targetMs }, ...rest);

describe('bench plan', () => {
  it('calibrates, interleaves variants, reports every point and stops on cancel', async () => {
    const calls: BenchRowParams[] = [];
    const run = async (p: BenchRowParams) => {
      calls.push(p);
      // detached is 3x cheaper per object than the generic loop; the fast path 10 ns
      const ns = p.experiment === 'fastpath' ? 10 : p.variant === 'generic' ? 30 : 10;
      return { nsPerOp: ns, ops: p.loops * p.row, elapsedMs: (ns * p.loops * p.row) / 1e6, onThread: false };
    };
    const points: BenchPoint[] = [];
    let last = [0, 0];
    const plan = { ...SHORT_PLAN, reps: 2 };
    expect(await runPlan(plan, run, (p) => points.push(p), (d, t) => (last = [d, t]), () => false)).toBe(true);
    expect(points).toHaveLength(4 + 2 * plan.bulkSizes.length);
    expect(last[0]).toBe(last[1]);
    const b16 = points.filter((p) => p.row === 16);
    expect(b16.find((p) => p.variant === 'generic')?.ns).toBe(30);
    // calibrated: a timed call of the generic loop at bulk 16 lasts about targetMs
    const timed = calls.filter((c) => c.experiment === 'bulk' && c.row === 16 && c.variant === 'generic').at(-1);
    expect(((timed?.loops ?? 0) * 16 * 30) / 1e6).toBeCloseTo(plan.targetMs, 0);
    // the second repetition runs the variants in reverse order
    const fp = calls.filter((c) => c.experiment === 'fastpath').slice(4).map((c) => c.variant);
    expect(fp).toEqual(['cmpxchg', 'locked', 'plain', 'rt', 'rt', 'plain', 'locked', 'cmpxchg']);

    let n = 0;
    expect(await runPlan(plan, run, () => undefined, () => undefined, () => ++n > 4)).toBe(false);
  });
});

describe('native results', () => {
  it('reads the fastpath and bulk rows of `slablab all --format json`', () => {
    const r = parseNative(readFileSync(new URL('../../e2e/bench-native.fixture.json', import.meta.url), 'utf8'));
    expect(r.points.filter((p) => p.experiment === 'fastpath').map((p) => p.variant)).toEqual(['cmpxchg', 'locked', 'plain', 'rt']);
    expect(r.points.filter((p) => p.experiment === 'bulk' && p.row === 30).map((p) => p.variant)).toEqual(['generic', 'detached', 'irqoff']);
  });
  it('reads a result written before the rename: its "fallback" is the generic loop', () => {
    const old = readFileSync(new URL('../../e2e/bench-native.fixture.json', import.meta.url), 'utf8').replaceAll('"variant": "generic"', '"variant": "fallback"');
    expect(old).toContain('"fallback"');
    const r = parseNative(old);
    expect(r.points.filter((p) => p.experiment === 'bulk' && p.row === 158).map((p) => p.variant)).toEqual(['generic', 'detached', 'irqoff']);
  });
  it('says what is wrong with a file that is not one', () => {
    expect(() => parseNative('{')).toThrow(/not JSON/);
    expect(() => parseNative('{"schema":"x"}')).toThrow(/slablab-bench\/1/);
    expect(() => parseNative('{"schema":"slablab-bench/1","experiments":[]}')).toThrow(/no fastpath or bulk/);
  });
});
