// The percpu view end to end: each scenario stepped to its end on each
// allocator alone and on all three side by side, checked through what a
// reader sees (caption, figures, inspector text) and the test hook that
// exposes the state the canvases draw (window.__slablabPercpu); Back, the
// URL, a bad URL parameter, steps by hand, the embed in a plain page, and
// the percpu experiment on the Benchmarks page.  Screenshots of each
// scenario go to docs/screenshots/ when SCREENSHOTS=1.
import { expect, test, type Page } from '@playwright/test';
import { ISOLATED_URL, PLAIN_URL } from './servers';
import { openLab, shot, stepView } from './lab';
import type { PercpuTestHook } from '../web/percpu/test-hook';

const SHOTS = process.env.SCREENSHOTS === '1';
const ALLOCATORS = ['areamap', 'bitmap', 'scanhint'] as const;
const SCENARIOS = ['in-order', 'free-orders', 'second-half', 'align8', 'bpf-burst'] as const;
/** The step each scenario's screenshot shows. */
const SHOT_STEP: Record<(typeof SCENARIOS)[number], number> = { 'in-order': 3, 'free-orders': 3, 'second-half': 3, align8: 7, 'bpf-burst': 3 };
/** A step past any story's end: the view shows the last one (web/lab/use-step-lab.ts). */
const STEP_END = 1_000_000;

// The step views' shared helpers (e2e/lab.ts), typed with this view's hook.
const { ready, playToEnd } = stepView<PercpuTestHook>('__slablabPercpu');
const open = (page: Page, query: string) => openLab(page, `mode=percpu&${query}`);

const total = (h: PercpuTestHook, pane: number, k: 'entriesMovedSoFar') => h.panes[pane]?.step?.[k] ?? -1;

test.describe('percpu scenarios, one allocator at a time', () => {
  test.use({ viewport: { width: 1280, height: 900 } });
  for (const scenario of SCENARIOS)
    for (const allocator of ALLOCATORS)
      test(`${scenario} on ${allocator}: every step done, the checker quiet, Back replays`, async ({ page }) => {
        // The story's end straight from the URL (the side-by-side tests below step through every step).
        await open(page, `scenario=${scenario}&allocator=${allocator}&step=${STEP_END}`);
        const end = await ready(page);
        expect(end.stop).toBe(end.stops - 1);
        expect(end.panes).toHaveLength(1);
        expect(end.panes[0]?.allocator).toBe(allocator);
        expect(end.opResults.every((r) => r > 0)).toBe(true);
        const pane = end.panes[0];
        expect(pane?.check).toBe('');
        // The bitmaps never memmove; the area map's free steps do.
        if (allocator === 'areamap') expect(total(end, 0, 'entriesMovedSoFar')).toBeGreaterThan(0);
        else expect(total(end, 0, 'entriesMovedSoFar')).toBe(0);
        await expect(page.getByTestId('percpu-figures')).toContainText('This step: entries memmoved');
        await expect(page.getByTestId('percpu-position')).toContainText(`Step ${end.stops - 1} of ${end.stops - 1}`);
        await page.getByRole('button', { name: 'Back' }).click();
        const back = await ready(page, end.stops - 2);
        expect(back.panes[0]?.allocs).toBeLessThanOrEqual(pane?.allocs ?? 0);
        expect(back.panes[0]?.check).toBe('');
      });
});

test.describe('percpu scenarios side by side', () => {
  test.use({ viewport: { width: 1280, height: 900 } });
  for (const scenario of SCENARIOS)
    test(`${scenario}: the three allocators step together on the same script`, async ({ page }) => {
      await open(page, `scenario=${scenario}`);
      const start = await ready(page, 0);
      expect(start.panes.map((p) => p.label)).toEqual(['area map (v4.13)', 'bitmap (v4.14)', 'scan hints (v5.2)']);
      const end = await playToEnd(page);
      for (const p of end.panes) expect(p.check).toBe('');
      // Each world allocated and freed as many areas as the others.
      expect(new Set(end.panes.map((p) => `${p.allocs}/${p.frees}`)).size).toBe(1);
      expect(total(end, 0, 'entriesMovedSoFar')).toBeGreaterThan(0);
      expect([total(end, 1, 'entriesMovedSoFar'), total(end, 2, 'entriesMovedSoFar')]).toEqual([0, 0]);
      await expect(page.getByTestId('percpu-pane-figures-0')).toContainText('map entries visited');
      await expect(page.getByTestId('percpu-pane-figures-1')).toContainText('blocks scanned');
      if (scenario === 'align8') {
        // The last step: 64 aligned areas; the area map walks its full chunks' maps, scan hints skip relegated chunks.
        const [area, bitmap, scan] = end.panes.map((p) => p.step);
        expect(area?.blocksScanned).toBeGreaterThan(100 * (bitmap?.blocksScanned ?? 0));
        expect(scan?.chunksScanned).toBeLessThan(bitmap?.chunksScanned ?? 0);
        expect(end.panes[2]?.chunks.filter((c) => c.relegated).length).toBeGreaterThan(0);
      }
      if (SHOTS) {
        // The screenshot: the step that tells the story, the first chunk's first area selected, zoomed in on it.
        await page.goto(`${ISOLATED_URL}?mode=percpu&scenario=${scenario}&step=${SHOT_STEP[scenario]}`);
        await ready(page, SHOT_STEP[scenario]);
        await page.getByTestId('percpu-canvas').first().focus();
        await page.keyboard.press('ArrowDown');
        for (let i = 0; i < 5; i++) await page.keyboard.press('+');
        await shot(page, `percpu-${scenario}`);
      }
    });
});

test.describe('percpu view driving', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('Back replays to the earlier state; the keys step; the URL holds the step', async ({ page }) => {
    await open(page, 'scenario=in-order&step=0');
    await ready(page, 0);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    let h = await ready(page, 2);
    const two = h.panes.map((p) => p.chunks);
    await page.keyboard.press('ArrowRight');
    h = await ready(page, 3);
    expect(h.panes.map((p) => p.chunks)).not.toEqual(two);
    await page.getByRole('button', { name: 'Back' }).click();
    h = await ready(page, 2);
    expect(h.panes.map((p) => p.chunks)).toEqual(two);
    expect(page.url()).toMatch(/step=2/);
    // The same URL in a fresh page shows the same moment.
    const again = await page.context().newPage();
    await again.goto(page.url());
    expect((await ready(again, 2)).panes.map((p) => p.chunks)).toEqual(two);
    // Micro-step is a step here (no preemption points); the help panel lists the view's keys.
    await page.getByRole('button', { name: 'Micro-step', exact: true }).click();
    await ready(page, 3);
    await page.keyboard.press('?');
    const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await expect(help).toContainText('Zoom in (around the selected byte)');
    await expect(help).toContainText('Back: one operation backward');
  });

  test('the inspector names the step that allocated a clicked area, and zooming keeps it in view', async ({ page }) => {
    await open(page, 'scenario=in-order&allocator=bitmap&step=1');
    await ready(page, 1);
    const canvas = page.getByTestId('percpu-canvas');
    await canvas.focus();
    // Down to the first chunk, then along its bits: the first areas of step 1 start at byte 6,144.
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('inspector')).toContainText('Byte 6,144 of the first chunk (0) (bit 1,536)');
    await expect(page.getByTestId('inspector')).toContainText('belongs to the 4-byte area at offset 6,144');
    await expect(page.getByTestId('inspector')).toContainText('allocated by step 1 (alloc 256 × 4 B on CPU 0), the 1st area of that step');
    await expect(page.getByTestId('inspector')).toContainText('Block 1 covers bits 1,024 to 2,047');
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('inspector')).toContainText('the 2nd area of that step');
    for (let i = 0; i < 8; i++) await page.keyboard.press('+');
    await expect(page.getByTestId('percpu-zoom')).toContainText('(16 bits across)');
    await expect(page.getByTestId('percpu-zoom')).toContainText('bytes 6,116 to 6,180');
    await page.keyboard.press('0');
    await expect(page.getByTestId('percpu-zoom')).toContainText('bytes 0 to 16,384');
  });

  test('steps by hand: allocate, free the selected area, a double free refused and said so', async ({ page }) => {
    await open(page, 'scenario=sandbox&allocator=areamap,bitmap');
    await ready(page, 0);
    await page.getByLabel('Size').fill('8');
    await page.getByLabel('Areas', { exact: true }).fill('4');
    await page.getByRole('button', { name: 'Allocate' }).click();
    await expect(page).toHaveURL(/ops=a0-8-8-4/);
    let h = await ready(page, 1);
    expect(h.panes.map((p) => p.allocs)).toEqual([4, 4]);
    const canvas = page.getByTestId('percpu-canvas').first();
    await canvas.focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('inspector')).toContainText('the 2nd area of that step');
    await page.getByRole('button', { name: 'Free the selected area' }).click();
    await expect(page).toHaveURL(/ops=a0-8-8-4\.f0-0-1-1/);
    h = await ready(page, 2);
    expect(h.panes.map((p) => p.frees)).toEqual([1, 1]);
    await page.getByRole('button', { name: 'Free at the selected place' }).click();
    await expect(page).toHaveURL(/\.x0-0-6152/);
    h = await ready(page, 3);
    expect(h.opResults[2]).toBeLessThan(0);
    await expect(page.getByTestId('percpu-caption')).toContainText('It failed with area map (v4.13): double free');
    expect(h.panes.map((p) => p.check)).toEqual(['', '']);
  });

  test('a bad URL parameter gets a message naming it and what it accepts', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?mode=percpu&allocator=slub`);
    await expect(page.getByTestId('url-problems')).toContainText('URL parameter allocator="slub" is not valid: expected one of areamap, bitmap, scanhint, or a comma list of up to 3 different ones.');
    await page.goto(`${ISOLATED_URL}?mode=percpu&units=9`);
    await expect(page.getByTestId('url-problems')).toContainText('units="9" is not valid: expected a whole number from 1 to 4');
    await page.goto(`${ISOLATED_URL}?mode=percpu&scenario=sandbox&ops=a0-4.f0-3`);
    await expect(page.getByTestId('url-problems')).toContainText('"f0-3": it frees areas of step 3, which is not an earlier alloc step');
    await page.goto(`${ISOLATED_URL}?mode=percpu&scenario=in-order&step=99`);
    await expect(page.getByTestId('step-problem')).toContainText('step=99 is past the end of this story (7 steps, 0 to 6)');
    // A script for more units than the world has: the view says so instead of running it.
    await page.goto(`${ISOLATED_URL}?mode=percpu&scenario=sandbox&units=1&ops=a3-4`);
    await expect(page.getByTestId('percpu-error')).toContainText('cannot run with 1 units');
  });
});

test.describe('percpu embed', () => {
  test('embed.html?view=percpu works in a plain page with the single-threaded build', async ({ page }) => {
    await page.goto(`${PLAIN_URL}embed.html?view=percpu&scenario=align8&allocator=areamap,scanhint&step=8`);
    await expect(page.getByTestId('core-mode')).toHaveText('single-threaded');
    const h = await ready(page, 8);
    expect(h.panes.map((p) => p.allocator)).toEqual(['areamap', 'scanhint']);
    await expect(page.getByLabel('Scenario')).toHaveCount(0); // minimal controls: no pickers
    const link = page.getByRole('link', { name: 'Open in slablab' });
    await expect(link).toHaveAttribute('href', /mode=percpu/);
    await expect(link).toHaveAttribute('href', /allocator=areamap(,|%2C)scanhint/);
    await expect(link).toHaveAttribute('href', /step=8/);
  });

  test('the embed inside an iframe of a plain page', async ({ page }) => {
    await page.goto(PLAIN_URL);
    await page.setContent(`<h1>docs</h1><iframe title="slablab" src="${PLAIN_URL}embed.html?view=percpu&scenario=bpf-burst&allocator=bitmap&step=2" width="1000" height="800"></iframe>`);
    const frame = page.frameLocator('iframe[title=slablab]');
    await expect(frame.getByTestId('core-mode')).toHaveText('single-threaded');
    await expect(frame.getByTestId('percpu-position')).toContainText('Step 2 of 4');
    await expect(frame.getByTestId('percpu-canvas')).toBeVisible();
  });
});

test.describe('percpu on the Benchmarks page', () => {
  test('a short run of percpu alone completes with every row, a native result and the ratio beside it; Cancel stops a run', async ({ page }) => {
    test.setTimeout(180_000);
    await page.goto(`${ISOLATED_URL}?page=benchmarks`);
    await expect(page.getByTestId('core-mode')).toContainText('threads');
    await page.getByLabel(/Native result/).setInputFiles('e2e/percpu-native.fixture.json');
    await expect(page.getByTestId('bench-native')).toContainText('native points');
    for (const other of [/^fastpath/, /^bulk/, /^kmalloc/]) await page.getByRole('checkbox', { name: other }).uncheck();
    await page.getByRole('button', { name: 'Short run' }).click();
    await expect(page.getByTestId('bench-status')).toHaveText('Finished: a short run (fewer rows and repetitions), indicative only.', { timeout: 150_000 });
    const h = await page.evaluate(() => window.__slablabBench);
    expect(h?.points).toEqual([]);
    expect(h?.percpu).toHaveLength(3 * 3 * 2);
    for (const r of h?.percpu ?? []) expect(r.result).toMatchObject({ status: 'ok', allocated: r.params.objects, freed: r.params.objects });
    // The counts lead: the same on each of a row's runs, and only the area map memmoves.
    for (const r of h?.percpu ?? []) {
      expect(r.countsAgree).toBe(true);
      if (r.params.allocator === 'areamap') expect(r.result.work.entriesMoved).toBeGreaterThan(r.params.objects);
      else expect(r.result.work.entriesMoved).toBe(0);
    }
    const counts = page.getByTestId('percpu-bench-counts');
    await expect(counts.locator('tr', { hasText: 'area map' }).first().getByTestId('percpu-bench-count').first()).toHaveText(/^[1-9][\d,]* \/ [\d,]+ \/ 0$/);
    await expect(counts.locator('tr', { hasText: 'scan hints' }).first().getByTestId('percpu-bench-count').first()).toHaveText(/^0 \/ [\d,]+ \/ [1-9][\d,]*$/);
    const table = page.getByTestId('percpu-bench-table');
    await expect(table).toContainText('scan hints (v5.2)');
    // The native column is filled for the sizes the native result has.
    await expect(table.locator('tr', { hasText: '1024 B' }).first()).not.toContainText('–');
    await expect(table.locator('tr', { hasText: '1024 B' }).first().getByTestId('percpu-bench-ratio')).toHaveText(/^\d+\.\d\dx \/ \d+\.\d\dx$/);
    await shot(page, 'percpu-benchmarks');
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.waitForFunction(() => (window.__slablabBench?.done ?? 0) >= 1);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expect(page.getByTestId('bench-status')).toHaveText('Cancelled.', { timeout: 120_000 });
  });
});
