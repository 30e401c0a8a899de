// The lab around the figure (issue 19, section 3), measured in Chromium: the dock (playback,
// the operations used most, the counter, the caption) stays in view when Alloc is clicked far
// down the page, at 1440 and at 375 px; one progress counter; the caption says the path the
// operation took; the code panel's current line is inside the listing's visible box at every
// stop; a shared sandbox link keeps its operations when one is added at its first step; the
// Benchmarks page fits 375 px; a trace file dropped anywhere on the page is replayed.
import { readFileSync } from 'node:fs';
import { expect, test, type Page } from '@playwright/test';
import { clickAndWait, labReady } from './lab';
import { ISOLATED_URL, PLAIN_URL } from './servers';

const fixtures = new URL('../wasm-core/tests/fixtures/replay/', import.meta.url);

/** Whether the element's box lies wholly inside the viewport. */
async function inViewport(page: Page, testId: string): Promise<{ top: number; bottom: number; height: number; inside: boolean }> {
  const box = await page.getByTestId(testId).boundingBox();
  const height = page.viewportSize()?.height ?? 0;
  if (!box) return { top: NaN, bottom: NaN, height, inside: false };
  return { top: box.y, bottom: box.y + box.height, height, inside: box.y >= 0 && box.y + box.height <= height };
}

for (const viewport of [
  { width: 1440, height: 900 },
  { width: 375, height: 740 },
])
  test.describe(`at ${viewport.width} px`, () => {
    test.use({ viewport });

    test('Alloc clicked with the page scrolled to the timeline: the dock, with the new caption and its path, is in view', async ({ page }) => {
      await page.goto(`${PLAIN_URL}?scenario=fast-path&step=1000000`);
      const before = await labReady(page, '__slablabSlub');
      // Scroll far down: the timeline is below the picture, the code and the inspector.
      await page.getByTestId('timeline').scrollIntoViewIfNeeded();
      expect(await page.evaluate(() => window.scrollY)).toBeGreaterThan(200);
      const alloc = page.getByRole('button', { name: 'Alloc on CPU 0', exact: true });
      await expect(alloc).toBeInViewport();
      const after = await clickAndWait(page, '__slablabSlub', before, () => alloc.click());
      expect(after.opResults.length).toBe(before.opResults.length + 1);
      for (const id of ['slub-dock', 'slub-caption', 'slub-position']) expect((await inViewport(page, id)).inside, id).toBe(true);
      await expect(page.getByTestId('slub-caption')).toContainText(/Path: (fast path|slow path)/);
      await expect(page.getByTestId('slub-position')).toHaveText(`Step ${after.opResults.length} of ${after.opResults.length}`);
      // The dock leaves room for the picture: at most 60 % of the viewport's height.
      const dock = await inViewport(page, 'slub-dock');
      expect(dock.bottom - dock.top).toBeLessThan(0.6 * dock.height);
    });
  });

test.describe('the counter, the cue and the code', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('one progress counter: the toolbar says where the story is, the caption does not repeat it; the cue names the next step first', async ({ page }) => {
    await page.goto(`${PLAIN_URL}?scenario=slow-path&cpus=2`);
    let h = await labReady(page, '__slablabSlub', 0);
    const view = page.getByTestId('slub-view');
    await expect(page.getByTestId('slub-position')).toHaveText(/^Start \(\d+ steps\)$/);
    // The story's steps: its operations after the set-up, which the start already shows.
    const steps = Number((await page.getByTestId('slub-position').textContent())?.match(/\d+/)?.[0]);
    expect(steps).toBeLessThan(h.opResults.length);
    // The cue before the first step names it; after Step the caption tells what it did.
    const cue = (await page.getByTestId('slub-next').textContent()) ?? '';
    expect(cue).toMatch(/^ ?Next: alloc on CPU 0/);
    h = await clickAndWait(page, '__slablabSlub', h, () => page.getByRole('button', { name: 'Step', exact: true }).click());
    await expect(page.getByTestId('slub-position')).toHaveText(`Step 1 of ${steps}`);
    expect(h.position).toBe(`Step 1 of ${steps}`);
    expect(h.caption).not.toMatch(/\b(Step|stop) \d+ of \d+/);
    // Exactly one "N of M" counter in the view's text.
    const counters = (await view.innerText()).match(/\b(Step|stop) \d+ of \d+/g) ?? [];
    expect(counters).toEqual([`Step 1 of ${steps}`]);
    // Inside a step the one counter says which micro-step.
    h = await clickAndWait(page, '__slablabSlub', h, () => page.getByRole('button', { name: 'Micro-step', exact: true }).click());
    if (h.position.includes('micro-step')) expect(h.position).toMatch(/^Step 2 of \d+ · micro-step \d+$/);
  });

  test('the code panel keeps the current line in view at every stop of the slow path', async ({ page }) => {
    await page.goto(`${PLAIN_URL}?scenario=slow-path&cpus=2`);
    let h = await labReady(page, '__slablabSlub', 0);
    const code = page.getByTestId('slub-code');
    let checked = 0;
    while (h.stop < h.stops - 1) {
      h = await clickAndWait(page, '__slablabSlub', h, () => page.getByRole('button', { name: 'Micro-step', exact: true }).click());
      const summary = (await code.locator('summary').textContent()) ?? '';
      const line = Number(summary.match(/:(\d+)\)$/)?.[1] ?? NaN);
      if (!Number.isFinite(line)) continue;
      // Wait for the listing's own scroll to settle on this stop's line.
      await expect(code.locator('.now .ln')).toHaveText(String(line));
      const box = await code.locator('pre').evaluate((pre) => {
        const row = pre.querySelector('.now');
        const p = pre.getBoundingClientRect();
        const r = row?.getBoundingClientRect();
        return r ? { inside: r.top >= p.top - 1 && r.bottom <= p.bottom + 1, line: row?.querySelector('.ln')?.textContent } : null;
      });
      expect(box, `stop ${h.stop}: ${summary}`).toEqual({ inside: true, line: String(line) });
      checked++;
    }
    expect(checked).toBeGreaterThan(5);
  });
});

test.describe('a shared sandbox link', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('opened at its first step, adding an operation keeps its operations and shows the new one', async ({ page }) => {
    // Make a sandbox of three operations, and take its link without the step.
    await page.goto(`${PLAIN_URL}?scenario=fast-path&step=1000000`);
    let h = await labReady(page, '__slablabSlub');
    const alloc = page.getByRole('button', { name: 'Alloc on CPU 0', exact: true });
    h = await clickAndWait(page, '__slablabSlub', h, () => alloc.click());
    const ops = new URL(page.url()).searchParams.get('ops') ?? '';
    const n = h.opResults.length;
    expect(n).toBeGreaterThan(2);
    const shared = `${PLAIN_URL}?scenario=sandbox&ops=${encodeURIComponent(ops)}`;
    // The reader opens it (at the start) and adds an alloc there.
    await page.goto(shared);
    h = await labReady(page, '__slablabSlub', 0);
    expect(h.opResults.length).toBe(n);
    h = await clickAndWait(page, '__slablabSlub', h, () => alloc.click());
    expect(h.opResults.length).toBe(n + 1);
    const now = new URL(page.url()).searchParams.get('ops') ?? '';
    // The new alloc comes first (a0), every shared operation after it, as it was.
    expect(now).toBe(`a0.${ops}`);
    // The lab lands on the end of the operation added, and says so.
    expect(h.position).toBe(`Step 1 of ${n + 1}`);
    await expect(page.getByTestId('slub-caption')).toContainText('Path:');
  });
});

test.describe('the Benchmarks page at 375 px', () => {
  test.use({ viewport: { width: 375, height: 740 } });

  test('nothing is wider than the screen, the chart titles stay inside their charts, with native results loaded', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?page=benchmarks`);
    await page.getByLabel(/Native result/).setInputFiles('e2e/bench-native.fixture.json');
    await expect(page.getByTestId('bench-native')).toBeVisible();
    await page.waitForFunction(() => document.querySelectorAll('.bench-chart .u-title').length >= 5);
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    expect(width).toBeLessThanOrEqual(375);
    const titles = await page.locator('.bench-chart').evaluateAll((charts) =>
      charts.map((c) => {
        const t = c.querySelector('.u-title')?.getBoundingClientRect();
        const b = c.getBoundingClientRect();
        return t ? { inside: t.left >= b.left - 1 && t.right <= b.right + 1 && t.top >= b.top - 1, top: t.top, bottom: t.bottom, chartTop: b.top, chartBottom: b.bottom } : null;
      }),
    );
    for (const t of titles) expect(t?.inside).toBe(true);
    // No two charts overlap (one a row at this width).
    const sorted = titles.filter((t) => t !== null).sort((a, b) => a.chartTop - b.chartTop);
    for (let i = 1; i < sorted.length; i++) expect(sorted[i]?.chartTop ?? 0).toBeGreaterThanOrEqual((sorted[i - 1]?.chartBottom ?? 0) - 1);
  });
});

test.describe('the Benchmarks page', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('a short run is marked indicative, and every row of the table is in its chart (the fast path\'s rt included)', async ({ page }) => {
    test.setTimeout(120_000);
    await page.goto(`${ISOLATED_URL}?page=benchmarks`);
    for (const e of [/^bulk/, /^kmalloc/, /^percpu/]) await page.getByRole('checkbox', { name: e }).uncheck();
    await page.getByRole('button', { name: 'Short run' }).click();
    await expect(page.getByTestId('bench-status')).toContainText('Finished: a short run', { timeout: 100_000 });
    await expect(page.getByTestId('bench-indicative')).toBeVisible();
    await expect(page.getByTestId('bench-table').locator('caption')).toContainText('indicative');
    const rows = await page.getByTestId('bench-table').locator('tbody tr').count();
    expect(rows).toBe(4); // cmpxchg, locked, plain, rt
    await expect(page.locator('.bench-chart').first()).toHaveAttribute('data-wasm-points', String(rows));
  });
});

test('a trace file dropped anywhere on the page (here on the top bar) is replayed, with the page as the visible drop target', async ({ page }) => {
  await page.goto(`${ISOLATED_URL}?mode=trace`);
  await expect(page.getByTestId('trace-open')).toBeEnabled({ timeout: 30_000 });
  const url = page.url();
  const text = readFileSync(new URL('percpu-chunks-6.18.trace.txt', fixtures), 'latin1');
  const files = await page.evaluateHandle((t) => {
    const dt = new DataTransfer();
    dt.items.add(new File([t], 'dropped-anywhere.txt', { type: 'text/plain' }));
    return dt;
  }, text);
  const bar = page.locator('header.topbar');
  await bar.dispatchEvent('dragenter', { dataTransfer: files });
  // The whole page shows it is the drop target.
  const overlay = page.getByTestId('trace-drop-overlay');
  await expect(overlay).toBeVisible();
  const box = await overlay.boundingBox();
  expect(box?.width).toBe(page.viewportSize()?.width);
  expect(box?.height).toBe(page.viewportSize()?.height);
  // The browser's default (opening the file in place of the app) is prevented on the way.
  expect(await bar.evaluate((el, dt) => !el.dispatchEvent(new DragEvent('dragover', { bubbles: true, cancelable: true, dataTransfer: dt })), files)).toBe(true);
  await bar.dispatchEvent('drop', { dataTransfer: files });
  await expect(overlay).toBeHidden();
  await expect(page.getByTestId('trace-summary')).toContainText('dropped-anywhere.txt', { timeout: 30_000 });
  expect(page.url()).toBe(url);
});
