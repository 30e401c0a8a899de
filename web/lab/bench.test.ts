import { describe, expect, it } from 'vitest';
import type { BenchRowParams } from '../core/bridge-protocol';
import { median, ratioText, readNative, runCalls, runRows, type BenchPoint } from './bench';

describe('bench engine', () => {
  it('prints WebAssembly over native per row, and a dash where there is nothing to divide by', () => {
    expect(ratioText(18.2, 13)).toBe('1.40x');
    expect(ratioText(6, 12)).toBe('0.50x');
    expect(ratioText(18.2, undefined)).toBe('–');
    expect(ratioText(18.2, 0)).toBe('–');
    expect(ratioText(18.2, Number.NaN)).toBe('–');
    expect(ratioText(Number.NaN, 13)).toBe('–');
  });

  it('takes the median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 2, 3])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('calibrates by the operations one loop does, and names the model of each row', async () => {
    const calls: BenchRowParams[] = [];
    const run = async (p: BenchRowParams) => {
      calls.push(p);
      return { nsPerOp: 50, ops: p.loops * 20000, elapsedMs: 0, onThread: false };
    };
    const points: BenchPoint[] = [];
    const rows = [{ model: 'slab', experiment: 'kmalloc', row: 256, variants: ['a', 'b'], opsPerLoop: 20000, probeLoops: 1 }];
    expect(await runRows(rows, { reps: 3, targetMs: 10 }, run, (p) => points.push(p), () => undefined, () => false)).toBe(true);
    expect(calls.every((c) => c.model === 'slab' && c.row === 256)).toBe(true);
    // 50 ns x 20000 operations = 1 ms per loop: 10 loops for 10 ms
    expect(calls.at(-1)?.loops).toBe(10);
    expect(points.map((p) => p.variant)).toEqual(['a', 'b']);
    expect(points[0]?.reps).toBe(3);
  });

  it('runs a fixed row as it is, after its warm-up rows, passing its options, and keeps each timed reply', async () => {
    const calls: BenchRowParams[] = [];
    const run = async (p: BenchRowParams) => {
      calls.push(p);
      return { nsPerOp: calls.length, ops: p.loops, elapsedMs: 0, onThread: false };
    };
    const row = { model: 'percpu', experiment: 'percpu', row: 4, variants: ['bitmap/inorder'], loops: 100, options: { units: 2 }, reps: 3 };
    const got: [BenchPoint, number[]][] = [];
    const plan = { reps: 9, targetMs: 10, warmup: [{ ...row, row: 8 }] };
    expect(runCalls([row], plan)).toBe(4);
    expect(await runRows([row], plan, run, (p, replies) => got.push([p, replies.map((r) => r.nsPerOp)]), () => undefined, () => false)).toBe(true);
    expect(calls.map((c) => [c.row, c.loops, c.options])).toEqual([[8, 100, { units: 2 }], ...Array.from({ length: 3 }, () => [4, 100, { units: 2 }])]);
    expect(got).toEqual([[{ experiment: 'percpu', row: 4, variant: 'bitmap/inorder', ns: 3, min: 2, max: 4, reps: 3, loops: 100 }, [2, 3, 4]]]);
  });

  it('reads the available measurements of a native result, and refuses what is not one', () => {
    const doc = {
      schema: 'slablab-bench/1',
      machine: { cpu_model: 'X', bench_build: false },
      experiments: [{ name: 'kmalloc', measurements: [{ group: 'kmalloc', row: '32', variant: 'slab-after', phase: 'free', available: true, ns: { median: 7 } }, { variant: 'slub', available: false }] }],
    };
    const r = readNative(JSON.stringify(doc));
    expect(r.machine).toBe('X (NOT a benchmark build)');
    expect(r.measurements).toEqual([{ experiment: 'kmalloc', group: 'kmalloc', row: '32', variant: 'slab-after', phase: 'free', ns: 7 }]);
    expect(() => readNative('{')).toThrow(/not JSON/);
    expect(() => readNative('{"schema":"x"}')).toThrow(/slablab-bench\/1/);
    expect(() => readNative('{"schema":"slablab-bench/1"}')).toThrow(/no "experiments" array/);
  });
});
