// The Benchmarks page's percpu section (BenchSection.tsx) rendered to markup:
// it leads with each row's counts (entries memmoved / blocks scanned / bits
// searched, the same on every run), says when a row's runs disagreed, and only
// then gives the times, as medians.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { planRows, SHORT_PLAN, type PercpuRow } from './bench';
import { PercpuBenchResults } from './BenchSection';

const rows: PercpuRow[] = planRows({ ...SHORT_PLAN, allocators: ['areamap', 'bitmap'], orders: ['inorder'], sizes: [4] }).map((params) => ({
  params,
  result: {
    allocMs: 1.5, freeMs: 40, allocated: params.objects, freed: params.objects, status: 'ok', chunks: 1,
    work: params.allocator === 'areamap' ? { chunks: 4096, blocks: 4096, bits: 0, memmoves: 8191, entriesMoved: 8394750 } : { chunks: 4096, blocks: 4096, bits: 4096, memmoves: 0, entriesMoved: 0 },
  },
  countsAgree: params.allocator === 'areamap',
}));

describe('the percpu section of the Benchmarks page', () => {
  it('leads with the counts, says when runs disagreed, then gives the times as medians', () => {
    const html = renderToStaticMarkup(createElement(PercpuBenchResults, { rows, native: null, short: true }));
    const counts = html.indexOf('data-testid="percpu-bench-counts"');
    const times = html.indexOf('data-testid="percpu-bench-table"');
    expect(counts).toBeGreaterThan(0);
    expect(times).toBeGreaterThan(counts);
    expect(html).toContain('data-testid="percpu-bench-count">8,394,750 / 4,096 / 0</td>');
    expect(html).toContain('data-testid="percpu-bench-count">0 / 4,096 / 4,096 (runs disagree)</td>');
    expect(html).toContain(`the median of ${SHORT_PLAN.reps} runs: a short run, indicative only`);
  });

  it('shows no counts before a row has run', () => {
    expect(renderToStaticMarkup(createElement(PercpuBenchResults, { rows: [], native: null }))).not.toContain('percpu-bench-counts');
  });
});
