// The percpu experiment's plan (one call per row, progress, cancel, the seed's
// worst case over free orders), and real rows run by the core built for Node.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { planRows, runPercpuPlan, SHORT_PLAN, worstOverOrders, type PercpuRow } from './bench';
import { PercpuApi, PercpuError, type PercpuBenchParams, type PercpuModule } from './percpu-api';

let api: PercpuApi;

beforeAll(async () => {
  api = new PercpuApi(await loadNodeCore<PercpuModule>());
});

describe('percpu plan', () => {
  it('runs one call per row in the seed table order, reports each, and stops on cancel', async () => {
    const calls: PercpuBenchParams[] = [];
    const run = async (p: PercpuBenchParams) => {
      calls.push(p);
      return { allocMs: p.size, freeMs: p.order === 'inorder' ? 100 : 1, allocated: p.objects, freed: p.objects,
        status: 'ok' as const, chunks: 1 };
    };
    const rows: PercpuRow[] = [];
    const progress: [number, number][] = [];
    expect(await runPercpuPlan(SHORT_PLAN, run, (r) => rows.push(r), (d, t) => progress.push([d, t]), () => false))
      .toBe(true);
    const n = 3 * 3 * SHORT_PLAN.sizes.length;
    expect(calls).toEqual(planRows(SHORT_PLAN));
    expect(calls.slice(0, 3).map((c) => [c.allocator, c.order, c.size])).toEqual([
      ['areamap', 'inorder', 4], ['areamap', 'inorder', 1024], ['areamap', 'alternate', 4]]);
    expect(progress).toEqual(Array.from({ length: n }, (_, i) => [i + 1, n]));
    expect(rows).toHaveLength(n);

    const worst = worstOverOrders(rows);
    expect(worst).toHaveLength(3 * SHORT_PLAN.sizes.length);
    expect(worst.find((w) => w.allocator === 'bitmap' && w.size === 1024)).toEqual(
      { allocator: 'bitmap', size: 1024, allocMs: 1024, freeMs: 100, incomplete: false });

    let left = 4;
    calls.length = 0;
    expect(await runPercpuPlan(SHORT_PLAN, run, () => undefined, () => undefined, () => left-- <= 0)).toBe(false);
    expect(calls).toHaveLength(4);
  });

  it('marks a worst case whose row did not finish', () => {
    const p = planRows(SHORT_PLAN)[0];
    if (!p) throw new Error('no row');
    const done = { allocMs: 5, freeMs: 5, allocated: 10, freed: 10, status: 'ok' as const, chunks: 1 };
    const cut = { ...done, freeMs: 9, freed: 3, status: 'over_budget' as const };
    expect(worstOverOrders([{ params: p, result: done }, { params: { ...p, order: 'reverse' }, result: cut }])[0])
      .toMatchObject({ freeMs: 9, incomplete: true });
  });
});

describe('percpu rows in WebAssembly', () => {
  const row: PercpuBenchParams = { allocator: 'areamap', size: 4, align: 4, objects: 3000, order: 'inorder',
    prefill: false, units: 2, unitSize: 4 * 4096, budgetMs: 0 };

  it('allocates and frees every object of a row, for each allocator and order', () => {
    for (const allocator of ['areamap', 'bitmap', 'scanhint'] as const) {
      for (const order of ['inorder', 'alternate', 'reverse'] as const) {
        const r = api.benchRow({ ...row, allocator, order }, false);
        expect(r).toMatchObject({ allocated: 3000, freed: 3000, status: 'ok' });
        // 12000 bytes fill three pages of the first chunk; the balance step adds a chunk for empty pages
        expect(r.chunks).toBe(2);
        expect(r.allocMs).toBeGreaterThanOrEqual(0);
        expect(r.freeMs).toBeGreaterThanOrEqual(0);
        const pre = api.benchRow({ ...row, allocator, order, prefill: true }, false);
        expect(pre).toMatchObject({ allocated: 3000, freed: 3000, status: 'ok' });
      }
    }
  });

  it('stops a row at its budget and says how far it got', () => {
    const r = api.benchRow({ ...row, objects: 1 << 18, align: 8, budgetMs: 1 }, false);
    expect(r.status).toBe('over_budget');
    expect(r.allocated).toBeLessThan(1 << 18);
    expect(r.freed).toBe(0);
  });

  it('refuses a row it cannot run', () => {
    expect(() => api.benchRow({ ...row, size: 0 }, false)).toThrow(PercpuError);
    expect(() => api.benchRow({ ...row, unitSize: 1000 }, false)).toThrow(/refused the row/);
  });
});
