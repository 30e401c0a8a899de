// The percpu experiment's plan run by the lab's one runner (one call per run,
// progress, cancel, the medians, the seed's worst case over free orders), and
// real rows run by the core built for Node, their counts deterministic.
import { beforeAll, describe, expect, it } from 'vitest';
import { labHandlers } from '../lab/worker-host';
import { loadNodeBridgeCore, loadNodeCore } from '../test/node-core';
import type { BenchRowReply } from '../core/bridge-protocol';
import { runCalls, runRows } from '../lab/bench';
import { benchFigures, checkBenchRow, medianRun, parsePercpuNative, percpuBench, planRows, resultOfReply, rowRequest, SHORT_PLAN, warmupRows, worstOverOrders, type PercpuPlan, type PercpuRow } from './bench';
import { percpuModel } from './worker';
import { PercpuApi, PercpuError, type PercpuBenchParams, type PercpuBenchResult, type PercpuModule } from './percpu-api';

let api: PercpuApi;

beforeAll(async () => {
  api = new PercpuApi(await loadNodeCore<PercpuModule>());
});

/** A reply of the engine's benchRow for a percpu row with these results (worker.ts's answer). */
const reply = (r: PercpuBenchResult): BenchRowReply => ({ nsPerOp: 1, ops: r.allocated + r.freed, elapsedMs: 0, onThread: false, figures: benchFigures(r) });
const work = { chunks: 1, blocks: 2, bits: 3, memmoves: 4, entriesMoved: 5 };
const ok = { allocated: 10, freed: 10, status: 'ok' as const, chunks: 1, work };

/** Runs a percpu plan through the lab's runner, as the Benchmarks page does; `result` answers each call. */
async function runPlan(plan: PercpuPlan, result: (p: PercpuBenchParams) => PercpuBenchResult, cancelled = () => false) {
  const bench = percpuBench(plan);
  const calls: PercpuBenchParams[] = [];
  const rows: PercpuRow[] = [];
  const progress: [number, number][] = [];
  const finished = await runRows(bench.rows, { reps: 99, targetMs: 0, warmup: bench.warmup }, async (p) => {
    const { model: _model, ...request } = p;
    const params = checkBenchRow(request);
    calls.push(params);
    return reply(result(params));
  }, (point, replies) => {
    const row = bench.rowOf(point, replies);
    if (row) rows.push(row);
  }, (d, t) => progress.push([d, t]), cancelled);
  return { finished, calls, rows, progress, bench };
}

describe('percpu plan', () => {
  it('runs the warm-up rows, then each row plan.reps times in the seed table order, reports each, and stops on cancel', async () => {
    const { finished, calls, rows, progress, bench } = await runPlan(SHORT_PLAN, (p) => ({ ...ok, allocMs: p.size, freeMs: p.order === 'inorder' ? 100 : 1, allocated: p.objects, freed: p.objects }));
    expect(finished).toBe(true);
    const n = 3 * 3 * SHORT_PLAN.sizes.length;
    const warm = warmupRows(SHORT_PLAN);
    expect(warm.map((c) => [c.allocator, c.order, c.size])).toEqual(
      ['areamap', 'bitmap', 'scanhint'].flatMap((a) => ['inorder', 'alternate', 'reverse'].map((o) => [a, o, 4])));
    expect(calls).toEqual([...warm, ...planRows(SHORT_PLAN).flatMap((r) => Array<PercpuBenchParams>(SHORT_PLAN.reps).fill(r))]);
    expect(calls.slice(9, 9 + 3 * SHORT_PLAN.reps).filter((_, i) => i % SHORT_PLAN.reps === 0).map((c) => [c.allocator, c.order, c.size])).toEqual([
      ['areamap', 'inorder', 4], ['areamap', 'inorder', 1024], ['areamap', 'alternate', 4]]);
    const total = 9 + n * SHORT_PLAN.reps;
    expect(runCalls(bench.rows, { reps: 99, targetMs: 0, warmup: bench.warmup })).toBe(total);
    expect(progress).toEqual(Array.from({ length: total }, (_, i) => [i + 1, total]));
    expect(rows).toHaveLength(n);
    expect(rows.every((r) => r.countsAgree)).toBe(true);

    const worst = worstOverOrders(rows);
    expect(worst).toHaveLength(3 * SHORT_PLAN.sizes.length);
    expect(worst.find((w) => w.allocator === 'bitmap' && w.size === 1024)).toEqual(
      { allocator: 'bitmap', size: 1024, allocMs: 1024, freeMs: 100, incomplete: false });

    let left = 12;
    const cut = await runPlan(SHORT_PLAN, () => ({ ...ok, allocMs: 1, freeMs: 1 }), () => left-- <= 0);
    expect(cut.finished).toBe(false);
    expect(cut.calls).toHaveLength(12);
  });

  it('reports the median alloc and free of a row\'s runs, or the run that did not finish', async () => {
    const plan = { ...SHORT_PLAN, allocators: ['bitmap' as const], orders: ['reverse' as const], sizes: [16], reps: 3 };
    // The warm-up call (ignored), then the row's three runs.
    const runs: [number, number][] = [[50, 50], [5, 1], [2, 9], [3, 4]];
    let call = 0;
    const { rows } = await runPlan(plan, () => {
      const [allocMs, freeMs] = runs[call++] ?? [0, 0];
      return { ...ok, allocMs, freeMs };
    });
    expect(call).toBe(1 + 3);
    expect(rows.map((r) => [r.result.allocMs, r.result.freeMs])).toEqual([[3, 4]]);
    expect(rows[0]?.result.work).toEqual(work);

    const cut = { ...ok, allocMs: 7, freeMs: 8, freed: 3, status: 'over_budget' as const };
    call = 0;
    const again = await runPlan(plan, () => (call++ === 2 ? cut : { ...ok, allocMs: 1, freeMs: 1 }));
    expect(again.rows.map((r) => r.result)).toEqual([cut]);
  });

  it('says when a row\'s runs counted different work', () => {
    const same = { ...ok, allocMs: 1, freeMs: 1 };
    expect(medianRun([same, same]).countsAgree).toBe(true);
    expect(medianRun([same, { ...same, work: { ...work, entriesMoved: 6 } }]).countsAgree).toBe(false);
  });

  it('marks a worst case whose row did not finish', () => {
    const p = planRows(SHORT_PLAN)[0];
    if (!p) throw new Error('no row');
    const done = { ...ok, allocMs: 5, freeMs: 5 };
    const cut = { ...done, freeMs: 9, freed: 3, status: 'over_budget' as const };
    expect(worstOverOrders([{ params: p, result: done, countsAgree: true }, { params: { ...p, order: 'reverse' }, result: cut, countsAgree: true }])[0])
      .toMatchObject({ freeMs: 9, incomplete: true });
  });
});

describe('percpu counts in WebAssembly', () => {
  const row: PercpuBenchParams = { allocator: 'areamap', size: 4, align: 4, objects: 4096, order: 'alternate',
    prefill: false, units: 2, unitSize: 0, budgetMs: 0 };

  it('counts the same work on every run of a row, and different work for the allocators and orders the section compares', () => {
    const counts = (allocator: PercpuBenchParams['allocator'], order: PercpuBenchParams['order'] = row.order) => {
      const [a, b] = [api.benchRow({ ...row, allocator, order }, false), api.benchRow({ ...row, allocator, order }, false)];
      expect(a.status).toBe('ok');
      expect(b.work).toEqual(a.work);
      return a.work;
    };
    const [areamap, bitmap, scanhint] = [counts('areamap'), counts('bitmap'), counts('scanhint')];
    // Only the area map memmoves its entries: on allocation each split moves the map's tail, and the
    // alternate order's second half merges.
    expect(areamap.memmoves).toBeGreaterThan(row.objects);
    expect(areamap.entriesMoved).toBeGreaterThan(100 * areamap.memmoves);
    expect(bitmap.entriesMoved).toBe(0);
    expect(scanhint.entriesMoved).toBe(0);
    // Freeing in allocation order merges every area with the free tail: more memmoves than alternating.
    expect(counts('areamap', 'inorder').memmoves).toBeGreaterThan(areamap.memmoves);
    // The bitmaps search alloc_map bits (a 4-byte object is one bit); the area map has none.
    expect(bitmap.bits).toBe(row.objects);
    expect(areamap.bits).toBe(0);
    // Every allocation tries a chunk and visits at least one block or map entry.
    for (const w of [areamap, bitmap, scanhint]) {
      expect(w.chunks).toBeGreaterThanOrEqual(row.objects);
      expect(w.blocks).toBeGreaterThanOrEqual(row.objects);
    }
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

describe('percpu rows through the engine\'s benchRow', () => {
  const row: PercpuBenchParams = { allocator: 'scanhint', size: 16, align: 8, objects: 2000, order: 'alternate',
    prefill: true, units: 2, unitSize: 4 * 4096, budgetMs: 0 };

  it('carry every field of a row there and its result back', async () => {
    const { model: _model, ...request } = rowRequest(row);
    expect(checkBenchRow(request)).toEqual(row);
    const core = await loadNodeBridgeCore();
    const reply = labHandlers([percpuModel]).benchRow(rowRequest(row), core).result;
    const r = resultOfReply(reply);
    expect(r).toMatchObject({ allocated: 2000, freed: 2000, status: 'ok' });
    expect(reply.ops).toBe(4000);
    expect(reply.nsPerOp).toBeCloseTo(((r.allocMs + r.freeMs) * 1e6) / 2000, 6);
  });

  it('refuses a row it cannot read, naming the field', async () => {
    const { model: _model, ...request } = rowRequest(row);
    expect(() => checkBenchRow({ ...request, variant: 'slab/inorder' })).toThrow(/variant's allocator must be one of areamap, bitmap, scanhint, got slab/);
    expect(() => checkBenchRow({ ...request, variant: 'bitmap' })).toThrow(/variant's free order must be one of inorder, alternate, reverse/);
    expect(() => checkBenchRow({ ...request, experiment: 'bulk' })).toThrow(/experiment must be percpu, got bulk/);
    expect(() => checkBenchRow({ ...request, options: { ...(request.options as object), units: 0 } })).toThrow(/units must be a whole number from 1 to 64/);
    const core = await loadNodeBridgeCore();
    expect(() => labHandlers([percpuModel]).benchRow({ ...rowRequest(row), row: 0 }, core)).toThrow(/row must be a whole number/);
  });
});

describe('native results', () => {
  it('reads `slablab percpu --format json` per object, skipping runs that did not finish', () => {
    const doc = { experiment: 'percpu', units: 2, unit_size: 262144, budget_s: 0, runs: [
      { allocator: 'areamap', free_order: 'inorder', prefill: 'none', align: 4, size: 4, objects: 1000, allocated: 1000, freed: 1000, alloc_ms: 2, free_ms: 30, status: 'ok', chunks: 1 },
      { allocator: 'bitmap', free_order: 'reverse', prefill: 'second-half', align: 4, size: 64, objects: 1000, allocated: 1000, freed: 1000, alloc_ms: 4, free_ms: 1, status: 'ok', chunks: 1 },
      { allocator: 'areamap', free_order: 'inorder', prefill: 'none', align: 8, size: 4, objects: 1000, allocated: 10, freed: 0, alloc_ms: 9, free_ms: 0, status: 'over_budget', chunks: 0 },
    ] };
    expect(parsePercpuNative(JSON.stringify(doc)).points).toEqual([
      { allocator: 'areamap', order: 'inorder', prefill: false, size: 4, allocNs: 2000, freeNs: 30000 },
      { allocator: 'bitmap', order: 'reverse', prefill: true, size: 64, allocNs: 4000, freeNs: 1000 },
    ]);
  });

  it('reads the percpu experiment of a slablab-bench/1 document, both phases of a row as one point', () => {
    const m = (group: string, variant: string, phase: string, ns: number) => ({ group, row: '16B', variant, phase, available: true, ops: 1, reps: 1, ns: { median: ns, min: ns, max: ns } });
    const doc = { schema: 'slablab-bench/1', machine: { cpu_model: 'Test CPU' }, experiments: [
      { name: 'bulk', measurements: [] },
      { name: 'percpu', measurements: [m('inorder', 'areamap', 'alloc', 80), m('inorder', 'areamap', 'free', 500), m('second-half', 'bitmap', 'free', 20)] },
    ] };
    const r = parsePercpuNative(JSON.stringify(doc));
    expect(r.machine).toBe('Test CPU');
    expect(r.points).toEqual([
      { allocator: 'areamap', order: 'inorder', prefill: false, size: 16, allocNs: 80, freeNs: 500 },
      { allocator: 'bitmap', order: 'inorder', prefill: true, size: 16, allocNs: NaN, freeNs: 20 },
    ]);
  });

  it('says what is wrong with a file that is not one', () => {
    expect(() => parsePercpuNative('{')).toThrow(/^not JSON/);
    expect(() => parsePercpuNative('{"a":1}')).toThrow('not a percpu result (make one with `slablab percpu --format json`)');
    expect(() => parsePercpuNative('{"schema":"slablab-bench/1","experiments":[{"name":"bulk","measurements":[]}]}')).toThrow('it has no percpu experiment');
    expect(() => parsePercpuNative('{"experiment":"percpu","runs":[]}')).toThrow('its "runs" hold no finished run');
  });
});
