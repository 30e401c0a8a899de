// Accessibility: axe-core on every page, every view of the Lab, the embeds
// and the stories page, in the light and the dark theme (no serious or
// critical violation); a scenario walked with the keyboard alone; the
// caption announced through its live region; the layout at 375 px wide
// (screenshots to docs/screenshots/ when SCREENSHOTS=1).
import { createRequire } from 'node:module';
import { expect, test, type Page } from '@playwright/test';
import type { AxeResults } from 'axe-core';
import type { SlabLabElement } from '../web/embed/slab-lab';
import { figureState, loadFigures } from './figures';
import { labReady } from './lab';
import { PLAIN_URL } from './servers';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SHOTS = process.env.SCREENSHOTS === '1';

/** The serious and critical violations axe-core finds on the page as it is (open shadow roots included), in words. */
async function axeProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const results = await page.evaluate(() => (window as unknown as { axe: { run: (ctx: Document) => Promise<AxeResults> } }).axe.run(document));
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${v.help} at ${JSON.stringify(n.target)}: ${n.failureSummary ?? ''}`));
}

/** Waits until the page's step view, if any, shows a loaded stop (the SLUB hook) or the core is ready. */
async function settle(page: Page): Promise<void> {
  await expect(page.getByTestId('core-mode').first()).not.toHaveText(/loading/, { timeout: 30_000 });
}

/** The ids of the Lab's views: its buttons, one per entry of web/views.ts. */
async function labViews(page: Page): Promise<string[]> {
  await page.goto(PLAIN_URL);
  const titles = await page.getByRole('navigation', { name: 'Lab views' }).getByRole('button').allTextContents();
  expect(titles.length).toBeGreaterThan(1);
  return titles;
}

/** The embeddable view ids, as the embed's own message for a bad `view` lists them. */
async function embeddableViews(page: Page): Promise<string[]> {
  await page.goto(`${PLAIN_URL}embed.html?view=-`);
  const text = (await page.getByTestId('url-problems').textContent()) ?? '';
  const list = /expected one of ([\w, -]+)\./.exec(text)?.[1];
  expect(list).toBeTruthy();
  return (list ?? '').split(', ');
}

for (const scheme of ['light', 'dark'] as const) {
  test.describe(`axe-core, ${scheme} theme`, () => {
    test.use({ colorScheme: scheme, viewport: { width: 1280, height: 900 } });

    test('every view of the Lab, the Benchmarks and About pages', async ({ page }) => {
      // Twelve pages, each loading the core: a loaded 2-core machine needs more than the default minute.
      test.setTimeout(180_000);
      const views = await labViews(page);
      const problems: string[] = [];
      for (const title of views) {
        await page.goto(PLAIN_URL);
        await page.getByRole('navigation', { name: 'Lab views' }).getByRole('button', { name: title }).click();
        await settle(page);
        await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
        problems.push(...(await axeProblems(page)).map((p) => `${title}: ${p}`));
      }
      // SLUB in 7.0 with sheaves and the barn, alone and beside 6.17 (the legend, selector and comparison rows); on NUMA nodes (the nodes pickers).
      for (const q of ['scenario=barn-exchange&kernel=7.0&cpus=2&step=7', 'scenario=sheaf-hit&kernel=6.17,7.0&cpus=2', 'kernel=7.1&nodes=2&memoryless=1&step=3', 'scenario=memoryless-barn&kernel=7.0,7.1&cpus=2&step=6']) {
        await page.goto(`${PLAIN_URL}?${q}`);
        await settle(page);
        problems.push(...(await axeProblems(page)).map((x) => `${q}: ${x}`));
      }
      for (const p of ['benchmarks', 'about']) {
        await page.goto(`${PLAIN_URL}?page=${p}`);
        await settle(page);
        problems.push(...(await axeProblems(page)).map((x) => `${p}: ${x}`));
      }
      expect(problems).toEqual([]);
    });

    test('the trace view with the sample replayed and a cache scrubbed', async ({ page }) => {
      await page.goto(`${PLAIN_URL}?mode=trace&sample=1`);
      await expect(page.getByTestId('trace-summary')).toBeVisible({ timeout: 30_000 });
      await page.getByRole('button', { name: 'vm_area_struct', exact: true }).click();
      await expect(page.getByTestId('trace-slabs')).toBeVisible({ timeout: 30_000 });
      expect(await axeProblems(page)).toEqual([]);
    });

    test('the kernel view with both samples open, the diff and a cache drawn', async ({ page }) => {
      await page.goto(`${PLAIN_URL}?mode=kernel&sample=1&compare=1&cache=dentry`);
      await expect(page.getByTestId('kernel-diff')).toBeVisible({ timeout: 30_000 });
      await expect(page.getByTestId('kernel-slabs')).toBeVisible();
      await expect(page.locator('html')).toHaveAttribute('data-theme', scheme);
      expect(await axeProblems(page)).toEqual([]);
    });

    test('every embeddable view in embed.html', async ({ page }) => {
      const problems: string[] = [];
      for (const id of await embeddableViews(page)) {
        await page.goto(`${PLAIN_URL}embed.html?view=${id}`);
        await settle(page);
        problems.push(...(await axeProblems(page)).map((p) => `${id}: ${p}`));
      }
      expect(problems).toEqual([]);
    });

    test('the stories page with every figure loaded', async ({ page }) => {
      await page.goto(`${PLAIN_URL}docs.html`);
      expect((await loadFigures(page)).length).toBeGreaterThan(0);
      expect(await axeProblems(page)).toEqual([]);
    });
  });
}

test.describe('keyboard and screen reader', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('a scenario walked with the keyboard alone: Tab reaches every control, Enter and the keys step, the caption is announced', async ({ page }) => {
    await page.goto(`${PLAIN_URL}?scenario=fast-path&cpus=2`);
    await labReady(page, '__slablabSlub');
    // The caption is one live region for the whole walk: the node that announces is never replaced.
    const caption = page.getByTestId('slub-caption');
    await expect(caption).toHaveAttribute('aria-live', 'polite');
    await caption.evaluate((el) => ((el as HTMLElement & { __walk?: boolean }).__walk = true));
    const first = await caption.textContent();

    // Tab from the top of the page until the Step button has the focus, noting every control passed.
    const reached: string[] = [];
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      const name = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement | null;
        return el ? `${el.tagName.toLowerCase()}:${el.getAttribute('aria-label') ?? el.textContent?.trim() ?? ''}` : '';
      });
      reached.push(name);
      if (name === 'button:Step') break;
    }
    expect(reached).toContain('button:Play');
    expect(reached).toContain('button:Micro-step');
    expect(reached.at(-1)).toBe('button:Step');
    // Enter on Step moves one operation; the announcement is the new caption, in the same node.
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => window.__slablabSlub?.ready === true && window.__slablabSlub.stop > 0);
    await expect(caption).not.toHaveText(first ?? '');
    await expect(page.getByTestId('slub-position')).toContainText('Step 1 of 5');
    expect(await caption.evaluate((el) => (el as HTMLElement & { __walk?: boolean }).__walk)).toBe(true);
    // The rest of the story by keys: → to the end, then ← back, r to the start.
    const stops = await page.evaluate(() => window.__slablabSlub?.stops ?? 0);
    for (let i = 0; i < 12; i++) await page.keyboard.press('ArrowRight');
    await page.waitForFunction((n) => window.__slablabSlub?.ready === true && window.__slablabSlub.stop === n - 1, stops);
    await expect(page.getByTestId('slub-position')).toContainText('Step 5 of 5');
    await page.keyboard.press('ArrowLeft');
    await page.waitForFunction((n) => window.__slablabSlub?.ready === true && window.__slablabSlub.stop < n - 1, stops);
    // The canvas is reachable too (Tab, past the legend), and the arrows there select what the inspector then says.
    for (let i = 0; i < 20 && (await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))) !== 'slub-canvas'; i++) await page.keyboard.press('Tab');
    await expect(page.getByTestId('slub-canvas')).toBeFocused();
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('inspector')).toContainText("is on CPU 0's CPU slab");
    await page.keyboard.press('r');
    await labReady(page, '__slablabSlub', 0);
  });

  test('a <slab-lab> figure is reachable by Tab and steps by Enter', async ({ page }) => {
    await page.goto(`${PLAIN_URL}docs.html`);
    await figureState(page, 'fig-fast-path');
    await page.locator('#fig-fast-path').getByRole('link', { name: 'Open in slablab' }).focus();
    let name = '';
    for (let i = 0; i < 10 && name !== 'Step'; i++) {
      await page.keyboard.press('Tab');
      name = await page.evaluate(() => {
        let el = document.activeElement;
        while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
        return el?.textContent?.trim() ?? '';
      });
    }
    expect(name).toBe('Step');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => ((document.getElementById('fig-fast-path') as SlabLabElement | null)?.state?.step ?? 0) > 0);
  });
});

test.describe('375 px wide', () => {
  test.use({ viewport: { width: 375, height: 812 } });

  for (const [name, path] of [
    ['lab-375', '?scenario=why-tid&cpus=2&step=4'],
    ['lab-375-sheaves', '?scenario=barn-exchange&kernel=7.0&cpus=2&step=7'],
    ['lab-375-numa', '?scenario=memoryless-barn&kernel=7.0,7.1&cpus=2&step=6'],
    ['docs-375', 'docs.html'],
  ] as const)
    test(`${name}: nothing wider than the screen`, async ({ page }, info) => {
      await page.goto(`${PLAIN_URL}${path}`);
      if (path === 'docs.html') await loadFigures(page);
      else await page.waitForFunction(() => window.__slablabSlub?.ready === true);
      await page.evaluate(() => window.scrollTo(0, 0));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      expect(overflow).toBe(0);
      const shot = await page.screenshot({ fullPage: true, ...(SHOTS ? { path: `docs/screenshots/${name}.png` } : {}) });
      await info.attach(name, { body: shot, contentType: 'image/png' });
    });
});
