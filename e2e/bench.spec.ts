// The Benchmarks page: a short run of the fastpath, bulk and kmalloc experiments
// (percpu's has its own test in percpu.spec.ts) completes in the WebAssembly
// build with every point measured, a native result loads beside it with
// WebAssembly over native per row, the page names the benchmark build it
// timed, Cancel stops a run, and a wrong file is refused with a message.
import { expect, test } from '@playwright/test';
import { ISOLATED_URL } from './servers';

test('a short benchmark run completes, with a native result side by side', async ({ page }) => {
  test.setTimeout(120_000);
  await page.goto(`${ISOLATED_URL}?page=benchmarks`);
  await expect(page.getByTestId('core-mode')).toContainText('threads');
  await page.getByLabel(/Native result/).setInputFiles('e2e/bench-native.fixture.json');
  await expect(page.getByTestId('bench-native')).toContainText('native points');
  await page.getByRole('checkbox', { name: /^percpu/ }).uncheck();
  await page.getByRole('button', { name: 'Short run' }).click();
  await expect(page.getByTestId('bench-status')).toHaveText('Finished: a short run (fewer rows and repetitions), indicative only.', { timeout: 100_000 });
  await expect(page.getByTestId('bench-indicative')).toBeVisible();
  const h = await page.evaluate(() => window.__slablabBench);
  const of = (e: string) => h?.points.filter((p) => p.experiment === e) ?? [];
  // Four fast-path variants (rt included) and two bulk forms at three sizes.
  expect(of('fastpath').map((p) => p.variant).sort()).toEqual(['cmpxchg', 'locked', 'plain', 'rt']);
  expect(of('bulk').length).toBe(2 * 3);
  await expect(page.getByTestId('bench-table')).toContainText('generic');
  // kmalloc (SLAB, seed 002): 3 sizes x both rule sets x both phases.
  expect(of('kmalloc').map((p) => `${p.row} ${p.variant}`).sort()).toEqual(
    [32, 256, 4096].flatMap((r) => ['slab-after:alloc', 'slab-after:free', 'slab-before:alloc', 'slab-before:free'].map((v) => `${r} ${v}`)).sort(),
  );
  for (const p of h?.points ?? []) expect(p.ns).toBeGreaterThan(0);
  expect(h?.percpu).toEqual([]);
  await expect(page.getByTestId('bench-table')).toContainText('detached');
  await expect(page.getByTestId('bench-table').locator('tr', { hasText: '4096 B' }).filter({ hasText: 'slab-after:alloc' })).not.toContainText('–');
  // The native column is filled where the native result has the same row, with WebAssembly over native beside it.
  const bulk158 = page.getByTestId('bench-table').locator('tr', { hasText: 'bulk 158' }).first();
  await expect(bulk158).not.toContainText('–');
  await expect(bulk158.getByTestId('bench-ratio')).toHaveText(/^\d+\.\d\dx$/);
  // The page times the benchmark flavour of the core, and says so.
  await expect(page.getByTestId('bench-build')).toContainText('WebAssembly benchmark build (SLABLAB_BENCH');
  await page.screenshot({ path: 'test-results/bench.png', fullPage: true });
});

test('Cancel stops a run; a file that is not a result is refused', async ({ page }) => {
  await page.goto(`${ISOLATED_URL}?page=benchmarks`);
  await expect(page.getByTestId('core-mode')).toContainText('threads');
  await page.getByRole('button', { name: 'Run', exact: true }).click();
  await page.waitForFunction(() => (window.__slablabBench?.done ?? 0) >= 2);
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expect(page.getByTestId('bench-status')).toHaveText('Cancelled.', { timeout: 30_000 });
  await page.getByLabel(/Native result/).setInputFiles({ name: 'x.json', mimeType: 'application/json', buffer: Buffer.from('{"a":1}') });
  await expect(page.getByRole('alert')).toContainText('x.json: not a slablab benchmark result');
});
