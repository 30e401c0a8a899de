// The stories page (public/docs.html, in dist/ beside slab-lab.js) from a
// plain static server: every figure renders and steps; with ?threads the
// page isolates itself through coi-serviceworker and the figures run the
// threads build.
import { expect, test } from '@playwright/test';
import { figureState, loadFigures } from './figures';
import { PLAIN_URL } from './servers';

const DOCS = `${PLAIN_URL}docs.html`;
const SHOTS = process.env.SCREENSHOTS === '1';

test('every figure of the stories page renders and steps, on a plain static server', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(DOCS);
  expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(false);
  const ids = await loadFigures(page);
  expect(ids.length).toBeGreaterThanOrEqual(3);
  for (const id of ids) {
    const fig = page.locator(`#${id}`);
    const before = await figureState(page, id);
    expect(before.stops).toBeGreaterThan(1);
    await expect(fig.getByTestId('core-mode')).toHaveText('single-threaded');
    // Drawn: the canvas has pixels, the caption words.
    const drawn = await fig.locator('canvas').first().evaluate((c: HTMLCanvasElement) => c.width > 0 && (c.getContext('2d')?.getImageData(1, 1, 1, 1).data[3] ?? 0) === 255);
    expect(drawn).toBe(true);
    await expect(fig.locator('.lab-caption').first()).not.toBeEmpty();
    await fig.getByRole('button', { name: 'Micro-step', exact: true }).click();
    await figureState(page, id, before.step + 1);
  }
  // What sheaves changed in 7.0: two 7.0 figures and 6.17 beside 7.0.
  for (const id of ['fig-sheaf-hit', 'fig-barn', 'fig-sheaves-compare']) expect(ids).toContain(id);
  await expect(page.locator('#fig-sheaf-hit').getByTestId('slub-caption')).toContainText('A sheaf hit'); // one micro-step past the set-up's refill
  await expect(page.locator('#fig-sheaves-compare').getByTestId('slub-compare-1')).toContainText('Per-CPU layer (sheaves)');
  await expect(page.locator('#fig-sheaves-compare').getByTestId('slub-compare-0')).toContainText('Per-CPU layer (tid fast path)');
  expect(errors).toEqual([]);
  if (SHOTS) {
    await page.setViewportSize({ width: 1280, height: 1500 });
    await page.locator('#fast-path-title').scrollIntoViewIfNeeded();
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: 'docs/screenshots/docs-page.png' });
  }
});

test('static hosting: ?threads isolates the page through coi-serviceworker, and leaving it off removes the worker', async ({ page }) => {
  await page.goto(`${DOCS}?threads`);
  // The service worker registers, the page reloads once under it and is then isolated.
  await page.waitForFunction(() => window.crossOriginIsolated === true, null, { timeout: 30_000 });
  await expect(page.locator('#mode')).toContainText('cross-origin isolated');
  await figureState(page, 'fig-fast-path');
  await expect(page.locator('#fig-fast-path').getByTestId('core-mode')).toHaveText(/threads/);

  await page.goto(DOCS);
  await page.waitForFunction(() => window.crossOriginIsolated === false && navigator.serviceWorker.controller === null, null, { timeout: 30_000 });
  await figureState(page, 'fig-fast-path');
  await expect(page.locator('#fig-fast-path').getByTestId('core-mode')).toHaveText('single-threaded');
});
