// The SLUB view across kernel versions end to end: a sheaf story on 7.0 to
// its end (caption, the drawing's words), 6.17 and 7.0 side by side on one
// script, a kernel where the story does not apply (it lands on one that
// does), a refill from partial slabs on 7.0 and 7.3 side by side, a bad
// `kernel=` value and a newer one's notice.
import { expect, test, type Page } from '@playwright/test';
import { settled } from './figures';
import { ISOLATED_URL } from './servers';
import type { SlubTestHook } from '../web/slub/test-hook';

async function ready(page: Page, stop?: number): Promise<SlubTestHook> {
  await page.waitForFunction((s) => {
    const h = window.__slablabSlub;
    return !!h && h.ready && h.stops > 0 && (s === undefined || h.stop === s);
  }, stop);
  return page.evaluate(() => window.__slablabSlub as SlubTestHook);
}

async function playToEnd(page: Page): Promise<SlubTestHook> {
  let h = await ready(page);
  const step = page.getByRole('button', { name: 'Step', exact: true });
  while (await step.isEnabled()) {
    const before = h.stop;
    await step.click();
    await page.waitForFunction((b) => !!window.__slablabSlub?.ready && window.__slablabSlub.stop > b, before);
    h = await ready(page);
  }
  return ready(page, h.stops - 1);
}

const SHOTS = process.env.SCREENSHOTS === '1';

test.describe('SLUB across kernel versions', () => {
  test('the barn exchange on 7.0: the full sheaf CPU 0 put in the barn ends on CPU 1', async ({ page }) => {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.goto(`${ISOLATED_URL}?scenario=barn-exchange&kernel=7.0&cpus=2`);
    let h = await ready(page);
    // At barn_put's end the barn holds the full sheaf: the screenshot of 7.0's sheaves and barn.
    while (!(await page.getByTestId('slub-caption').textContent())?.includes('Main and spare are both full')) {
      const before = h.stop;
      await page.getByRole('button', { name: 'Step', exact: true }).click();
      await page.waitForFunction((b) => !!window.__slablabSlub?.ready && window.__slablabSlub.stop > b, before);
      h = await ready(page);
    }
    expect(h.sysfs.barn_put).toBe('1 C0=1');
    if (SHOTS) {
      await settled(page);
      await page.screenshot({ path: 'docs/screenshots/slub-sheaves.png', fullPage: true });
    }
    h = await playToEnd(page);
    expect(h.check).toBe('');
    expect(h.sysfs.barn_put).toBe('1 C0=1');
    expect(h.sysfs.barn_get).toBe('1 C1=1');
    await expect(page.getByTestId('slub-caption')).toContainText('without touching a slab');
  });

  test('a sheaf hit on 7.0: to its end, the objects said to be in CPU 0\'s main sheaf', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=sheaf-hit&kernel=7.0&cpus=2`);
    await expect(page.getByTestId('slub-kernel')).toHaveValue('7.0');
    const h = await playToEnd(page);
    await expect(page.getByTestId('slub-caption')).toContainText('A sheaf is a stack');
    expect(h.check).toBe('');
    // 7.0's alloc_fastpath counts the sheaf hits; the per-CPU slab's counters are gone.
    expect(h.sysfs.alloc_fastpath).toBe('3 C0=3');
    expect(h.sysfs.cpuslab_flush).toBeUndefined();
    // The drawing in words: select the first object of the slab from the keyboard.
    await page.getByTestId('slub-canvas').first().focus();
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('inspector')).toContainText(/Object 0 of slab pfn \d+ is in a CPU sheaf \(main or spare\).*It is in slot 0 of CPU 0's main sheaf #\d+ \(2 of 4 objects\)/);
    await expect(page.getByText(/^Linux 7\.0: 512-byte objects .*no per-CPU slab, no tid\. Sheaves of 4/)).toBeVisible();
  });

  test('the keyboard alone selects sheaves and their slots, the barn\'s, then slabs (7.0)', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=barn-exchange&kernel=7.0&cpus=2`);
    await ready(page);
    // Forward to the end with the keyboard's Step (ArrowRight away from the canvas).
    const stops = (await ready(page)).stops;
    for (let i = 1; i < stops; i++) await page.keyboard.press('ArrowRight');
    await ready(page, stops - 1);
    const inspector = page.getByTestId('inspector');
    await page.getByTestId('slub-canvas').first().focus();
    // Down: the top of CPU 0's lane, its main sheaf as a whole.
    await page.keyboard.press('ArrowDown');
    await expect(inspector).toContainText(/^CPU 0's main sheaf #\d+ \(\d of 4 objects\)/);
    // Right: along its slots; an empty slot says so, a held object is described with its place.
    await page.keyboard.press('ArrowRight');
    await expect(inspector).toContainText(/Slot 0 is empty\.|It is in slot 0 of CPU 0's main sheaf/);
    await page.keyboard.press('ArrowLeft');
    await expect(inspector).toContainText(/^CPU 0's main sheaf/);
    // Down through the lanes to the barn's sheaf.
    for (let i = 0; i < 8 && !(await inspector.textContent())?.includes('in the barn'); i++) await page.keyboard.press('ArrowDown');
    await expect(inspector).toContainText(/sheaf in the barn #\d+/);
    // Down again leaves the sheaves for the slabs; Up comes back.
    let slabs = 0;
    for (; slabs < 12 && !(await inspector.textContent())?.startsWith('Slab pfn'); slabs++) await page.keyboard.press('ArrowDown');
    await expect(inspector).toContainText(/^Slab pfn \d+/);
    await page.keyboard.press('ArrowUp');
    await expect(inspector).not.toContainText(/^Slab pfn/);
    expect(page.url()).toContain('scenario=barn-exchange');
  });

  test('the sheaf operations by hand on 7.0: prefill a sheaf, allocate from it, return it', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=sandbox&kernel=7.0&cpus=2`);
    await ready(page);
    const ops = page.getByRole('group', { name: 'Sheaves: kfree_rcu and the prefill API' });
    await ops.getByRole('button', { name: 'Prefill 8 into slot 0' }).click();
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.opResults.length === 1);
    await ops.getByRole('button', { name: 'Alloc from slot 0' }).click();
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.opResults.length === 2);
    await ops.getByRole('button', { name: 'Return slot 0' }).click();
    await page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.opResults.length === 3);
    expect(page.url()).toContain('ops=p0-0-8.t0-0.u0-0');
    const h = await ready(page);
    expect(h.opResults).toEqual([0, 0, 0]);
    // 8 objects fit 7.0's 28-object sheaves of 512-byte objects: a prefill from the spare or the barn, not an oversize one.
    const first = (name: string) => Number(h.sysfs[name]?.split(' ')[0]);
    expect(first('sheaf_prefill_fast') + first('sheaf_prefill_slow')).toBe(1);
    expect(first('sheaf_return_fast') + first('sheaf_return_slow')).toBe(1);
    await expect(page.getByTestId('slub-caption')).toContainText('You: return the sheaf in slot 0 on CPU 0.');
  });

  for (const kernel of ['6.18', '7.0'])
    test(`a refill from slabs on ${kernel}: forward to the sheaf hit after it, back to the refill`, async ({ page }) => {
      await page.goto(`${ISOLATED_URL}?scenario=sheaf-refill&kernel=${kernel}&cpus=2`);
      let h = await playToEnd(page);
      expect(h.check).toBe('');
      expect(h.sysfs.sheaf_refill).toBe('4 C0=4');
      expect(h.sysfs.barn_get_fail?.startsWith('2 ')).toBe(true);
      await expect(page.getByTestId('slub-caption')).toContainText('The next allocation is a sheaf hit');
      // 6.18 counts the hit as alloc_cpu_sheaf, 7.0 as alloc_fastpath.
      const hits = kernel === '7.0' ? 'alloc_fastpath' : 'alloc_cpu_sheaf';
      expect(h.sysfs[hits]).toBe('2 C0=2');
      await page.getByRole('button', { name: 'Back', exact: true }).click();
      await expect(page.getByTestId('slub-caption')).toContainText('__refill_objects_node takes the node partial slabs A and B');
      h = await ready(page);
      expect(h.sysfs.sheaf_refill).toBe('4 C0=4');
      expect(h.sysfs[hits]).toBe('1 C0=1');
      expect(h.check).toBe('');
    });

  for (const kernel of ['6.18', '7.0'])
    test(`a flush to slabs when the barn is full on ${kernel}: forward to barn_put_fail, back before it`, async ({ page }) => {
      await page.goto(`${ISOLATED_URL}?scenario=barn-full-flush&kernel=${kernel}&cpus=2`);
      let h = await playToEnd(page);
      expect(h.check).toBe('');
      await expect(page.getByTestId('slub-caption')).toContainText('barn_put_fail');
      expect(h.sysfs.barn_put).toBe('10 C0=10');
      expect(h.sysfs.barn_put_fail).toBe('1 C0=1');
      expect(h.sysfs.sheaf_flush).toBe('4 C0=4');
      await page.getByRole('button', { name: 'Back', exact: true }).click();
      await expect(page.getByTestId('slub-caption')).toContainText('the barn at its limit');
      h = await ready(page);
      expect(h.sysfs.barn_put_fail?.startsWith('0')).toBe(true);
      expect(h.sysfs.sheaf_flush?.startsWith('0')).toBe(true);
    });

  test('6.17 and 7.0 side by side step together, each with its own counters', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=sandbox&kernel=6.17,7.0&cpus=2&ops=a0.a0.a0`);
    const h = await playToEnd(page);
    expect(h.panes.map((p) => p.label)).toEqual(['6.17', '7.0']);
    expect(h.panes[0]?.sysfs.alloc_fastpath).toBe('2 C0=2');
    expect(h.panes[0]?.sysfs.alloc_cpu_sheaf).toBeUndefined();
    // 7.0's alloc_fastpath counts the sheaves.
    expect(h.panes[1]?.sysfs.alloc_fastpath).toBe('3 C0=3');
    // The comparison row of each pane.
    await expect(page.getByTestId('slub-compare-0')).toHaveText('Per-CPU layer (tid fast path): 2 served at once, 1 slow path (67% fast); cmpxchg retries 0; list_lock taken 0×.');
    await expect(page.getByTestId('slub-compare-1')).toContainText(/^Per-CPU layer \(sheaves\): 3 served at once, 0 slow path \(100% fast\); cmpxchg retries 0; list_lock taken \d+×; barn lock taken 1×;/);
    await page.getByRole('button', { name: 'Show one world' }).click();
    await ready(page);
    await expect(page.getByTestId('slub-kernel')).toHaveValue('6.17');
  });

  test('a kernel where the story does not apply lands on one that does, never on an error', async ({ page }) => {
    // ?mode=slub&kernel=7.0: the default story (the fast path) has no 7.0; its 7.0 counterpart runs.
    await page.goto(`${ISOLATED_URL}?mode=slub&kernel=7.0&cpus=2`);
    let h = await ready(page);
    expect(h.stops).toBeGreaterThan(1);
    await expect(page.getByTestId('slub-error')).toHaveCount(0);
    await expect(page.getByTestId('slub-caption')).toContainText('"The fast path" does not apply to Linux 7.0');
    await expect(page.getByTestId('slub-caption')).toContainText('Showing "A sheaf hit" instead.');
    h = await playToEnd(page);
    expect(h.check).toBe('');
    await expect(page.getByTestId('slub-caption')).toContainText('A sheaf is a stack');
    // Choosing a kernel in the selector moves the story to the one that tells it.
    await page.goto(`${ISOLATED_URL}?scenario=why-tid&kernel=6.17&cpus=2`);
    await ready(page);
    await page.getByTestId('slub-kernel').selectOption('7.3');
    await page.waitForURL(/scenario=sheaf-irq/);
    await ready(page);
    await expect(page.getByTestId('slub-error')).toHaveCount(0);
    // 7.x offers no CPU-slab fast path to pick, and says so.
    await expect(page.getByText('Fast path: 7.x has none to choose')).toBeVisible();
  });

  test('after 7.0: a refill from partial slabs, 7.0 and 7.3 side by side, the surplus counted only by 7.0', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=refill-partial&kernel=7.0,7.3&cpus=2`);
    const h = await playToEnd(page);
    expect(h.check).toBe('');
    expect(h.panes.map((p) => p.label)).toEqual(['7.0', '7.3']);
    expect(h.panes[0]?.sysfs.free_add_partial).toBe('3 C0=3');
    expect(h.panes[1]?.sysfs.free_add_partial).toBe('2 C0=2');
    expect(h.panes[0]?.sysfs.sheaf_refill).toBe(h.panes[1]?.sysfs.sheaf_refill);
    await expect(page.getByTestId('slub-caption')).toContainText('A sheaf hit in both');
  });

  test('a bad kernel= value gets a message naming what is accepted; a newer one a notice of its rules', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?kernel=4.2&cpus=2`);
    await expect(page.getByTestId('url-problems')).toContainText('kernel="4.2" is not valid: expected a Linux version from 4.3, written X.Y, X.Y.Z or X.Y-rcN');
    await ready(page);
    await page.goto(`${ISOLATED_URL}?scenario=sheaf-hit&kernel=7.9&cpus=2`);
    await ready(page);
    await expect(page.getByTestId('url-problems')).toHaveCount(0);
    await expect(page.getByTestId('slub-caption')).toContainText("Linux 7.9 is newer than the newest kernel the model follows (7.3): it gets 7.3's rules.");
  });
});
