// BenchSection.tsx - the results of seed 003's percpu experiment on the
// Benchmarks page (which runs it, one row per bridge call, among its other
// experiments: web/pages/BenchmarksPage.tsx).  It leads with what each row
// counted (entries memmoved, blocks or map entries scanned: the same on every
// run and machine), then the times, only as medians of repeated runs: the
// seed's table (alloc and free milliseconds by object size and free order,
// per allocator, the worst order marked), charts of nanoseconds per object,
// and a native result (`slablab percpu --format json`) beside them, with
// WebAssembly over native per allocator and size.

import { useMemo } from 'react';
import type uPlot from 'uplot';
import { ratioText } from '../lab/bench';
import { Chart } from '../lab/BenchChart';
import { FULL_PLAN, perObject, SHORT_PLAN, worstOverOrders, type NativePercpu, type PercpuRow, type WorstCase } from './bench';
import { ALLOCATOR_TITLES } from './describe';
import { FREE_ORDERS } from './percpu-api';
import { ALLOCATORS, type Allocator } from './snapshot';
import './percpu.css';
import { numberText as fmt } from '../lab/describe';

const COLORS: Record<Allocator, string> = { areamap: '#d9480f', bitmap: '#1c7ed6', scanhint: '#7048e8' };

/** ns per object against object size (log axis): one series per allocator, the worst free order; native dashed. */
function chart(rows: readonly PercpuRow[], native: NativePercpu | null, phase: 'alloc' | 'free'): { opts: uPlot.Options; data: uPlot.AlignedData } {
  const sizes = [...new Set([...rows.map((r) => r.params.size), ...(native?.points.map((p) => p.size) ?? [])])].sort((a, b) => a - b);
  const series: uPlot.Series[] = [{ label: 'object size' }];
  const data: (number | null)[][] = [sizes];
  const worst = worstOverOrders(rows);
  for (const a of ALLOCATORS) {
    series.push({ label: `wasm ${a}`, stroke: COLORS[a], width: 2, spanGaps: true, points: { show: true } });
    data.push(sizes.map((size) => {
      const w = worst.find((x) => x.allocator === a && x.size === size);
      const objects = rows.find((r) => r.params.allocator === a && r.params.size === size)?.params.objects ?? 0;
      return w ? perObject(phase === 'alloc' ? w.allocMs : w.freeMs, objects) : null;
    }));
  }
  if (native)
    for (const a of ALLOCATORS) {
      const pts = native.points.filter((p) => p.allocator === a && !p.prefill);
      if (!pts.length) continue;
      series.push({ label: `native ${a}`, stroke: COLORS[a], width: 2, dash: [6, 4], spanGaps: true, points: { show: true } });
      data.push(sizes.map((size) => {
        const xs = pts.filter((p) => p.size === size).map((p) => (phase === 'alloc' ? p.allocNs : p.freeNs)).filter(Number.isFinite);
        return xs.length ? Math.max(...xs) : null;
      }));
    }
  return {
    opts: {
      width: 600,
      height: 300,
      title: `percpu: ${phase} nanoseconds per object against object size (the worst free order)`,
      scales: { x: { time: false, distr: 3 }, y: { distr: 3 } },
      axes: [{ label: 'object size, bytes (log)' }, { label: `ns per ${phase} (log)` }],
      series,
    },
    data: data as uPlot.AlignedData,
  };
}

const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

/** Each row's counts, by allocator, size and free order: what the allocators did, not how long it took. */
function CountsTable({ rows }: { rows: readonly PercpuRow[] }) {
  const keys = [...new Map(rows.map((r) => [`${r.params.allocator}/${r.params.size}`, r.params])).values()];
  return (
    <div className="bench-table-scroll" tabIndex={0} role="region" aria-label="percpu counts table">
      <table className="per-cpu" data-testid="percpu-bench-counts">
        <caption>
          What each row did, counted (the same on every run and machine), over the timed allocations and frees: entries memmoved by the area map
          (none for the bitmaps), blocks scanned (the area map: map entries visited), and alloc_map bits searched (the bitmaps)
        </caption>
        <thead>
          <tr>
            <th scope="col">allocator</th>
            <th scope="col">object size</th>
            {FREE_ORDERS.map((o) => (
              <th key={o} scope="col">
                {o}: memmoved / scanned / bits
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={`${k.allocator}-${k.size}`}>
              <td>{ALLOCATOR_TITLES[k.allocator]}</td>
              <td>{k.size} B</td>
              {FREE_ORDERS.map((o) => {
                const r = rows.find((x) => x.params.allocator === k.allocator && x.params.size === k.size && x.params.order === o);
                if (!r) return <td key={o}>–</td>;
                const w = r.result.work;
                return (
                  <td key={o} data-testid="percpu-bench-count">
                    {fmt(w.entriesMoved)} / {fmt(w.blocks)} / {fmt(w.bits)}
                    {r.countsAgree ? '' : ' (runs disagree)'}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** A row's native worst case and WebAssembly's over it (per object, so runs of different lengths compare). */
function NativeCells({ rows, worst, native }: { rows: readonly PercpuRow[]; worst: WorstCase; native: { allocNs: number; freeNs: number } | undefined }) {
  const objects = rows.find((r) => r.params.allocator === worst.allocator && r.params.size === worst.size)?.params.objects ?? 0;
  return (
    <>
      <td>{native ? `${native.allocNs.toFixed(0)} / ${native.freeNs.toFixed(0)}` : '–'}</td>
      <td data-testid="percpu-bench-ratio">
        {ratioText(perObject(worst.allocMs, objects), native?.allocNs)} / {ratioText(perObject(worst.freeMs, objects), native?.freeNs)}
      </td>
    </>
  );
}

/** The percpu rows run so far and a native result's, as the seed's table and two charts. */
export function PercpuBenchResults({ rows, native, short = false }: { rows: readonly PercpuRow[]; native: NativePercpu | null; short?: boolean }) {
  const alloc = useMemo(() => chart(rows, native, 'alloc'), [rows, native]);
  const free = useMemo(() => chart(rows, native, 'free'), [rows, native]);
  const worst = useMemo(() => worstOverOrders(rows), [rows]);
  /** The native result's worst alloc and free ns per object over the free orders, or undefined. */
  const nativeWorst = (a: Allocator, size: number): { allocNs: number; freeNs: number } | undefined => {
    const pts = native?.points.filter((p) => p.allocator === a && p.size === size && !p.prefill) ?? [];
    return pts.length ? { allocNs: Math.max(...pts.map((p) => p.allocNs)), freeNs: Math.max(...pts.map((p) => p.freeNs)) } : undefined;
  };

  return (
    <section className="percpu-bench" aria-labelledby="percpu-bench-title">
      <h3 id="percpu-bench-title">percpu: area map, bitmap, scan hints (seed 003)</h3>
      {rows.length > 0 && <CountsTable rows={rows} />}
      <p>
        Seed 003's workload in WebAssembly: allocate {fmt(FULL_PLAN.objects)} objects of one size into a fresh instance of each allocator
        (2 units of 256 KiB), then free them in order, alternating (every other one first) or last first, timing both halves and counting the work (the table above: the
        same on every run); one call per run, each row run {FULL_PLAN.reps} times (a short run: {SHORT_PLAN.reps}, over fewer objects) and its times
        the median, after an untimed run of each allocator and order. The
        seed used 2<sup>20</sup> objects, and its table gives each allocator's worst free order; here the table has every order and marks the worst, and
        the charts compare nanoseconds per object, which runs of different lengths share. Native: <code>npm run -s bench -- percpu --format json &gt; percpu.json</code>{' '}
        (or the <code>all</code> result), loaded above.
      </p>
      <div className="bench-charts">
        <Chart opts={alloc.opts} data={alloc.data} label="percpu: allocation nanoseconds per object against object size, per allocator (the table below has the figures)" />
        <Chart opts={free.opts} data={free.data} label="percpu: free nanoseconds per object against object size, per allocator (the table below has the figures)" />
      </div>
      {rows.length > 0 && (
        <div className="bench-table-scroll" tabIndex={0} role="region" aria-label="percpu results table">
        <table className="per-cpu" data-testid="percpu-bench-table">
          <caption>
            WebAssembly results: chunks in use when every object was live (a count: the same on every run), then alloc / free milliseconds per row (
            {fmt(rows[0]?.params.objects ?? 0)} objects; the median of {short ? `${SHORT_PLAN.reps} runs: a short run, indicative only` : `${FULL_PLAN.reps} runs`}), worst order in bold
          </caption>
          <thead>
            <tr>
              <th scope="col">allocator</th>
              <th scope="col">object size</th>
              <th scope="col">chunks</th>
              {FREE_ORDERS.map((o) => (
                <th key={o} scope="col">
                  {o}
                </th>
              ))}
              <th scope="col">native ns/object, worst (alloc / free)</th>
              <th scope="col">wasm/native, worst (alloc / free)</th>
            </tr>
          </thead>
          <tbody>
            {worst.map((w) => (
              <tr key={`${w.allocator}-${w.size}`}>
                <td>{ALLOCATOR_TITLES[w.allocator]}</td>
                <td>{w.size} B</td>
                <td data-testid="percpu-bench-chunks">{rows.find((x) => x.params.allocator === w.allocator && x.params.size === w.size)?.result.chunks ?? '–'}</td>
                {FREE_ORDERS.map((o) => {
                  const r = rows.find((x) => x.params.allocator === w.allocator && x.params.size === w.size && x.params.order === o);
                  if (!r) return <td key={o}>–</td>;
                  const cut = r.result.status !== 'ok' ? ` (${r.result.status === 'over_budget' ? 'over budget' : 'allocation failed'})` : '';
                  const a = <span style={{ fontWeight: r.result.allocMs === w.allocMs ? 700 : 400 }}>{ms(r.result.allocMs)}</span>;
                  const f = <span style={{ fontWeight: r.result.freeMs === w.freeMs ? 700 : 400 }}>{ms(r.result.freeMs)}</span>;
                  return (
                    <td key={o}>
                      {a} / {f}
                      {cut}
                    </td>
                  );
                })}
                <NativeCells rows={rows} worst={w} native={nativeWorst(w.allocator, w.size)} />
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
    </section>
  );
}
