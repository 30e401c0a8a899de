// The SLAB view end to end: each scenario played to its end through the
// controls with both rule sets side by side, checked through what a reader
// sees (caption, figures, inspector) and the test hook that exposes the
// state the canvases draw (window.__slablabSlab); Back; a bad URL
// parameter; the caches panel fed a /proc/slabinfo file and a bad one; the
// embed in a plain page.  Screenshots go to docs/screenshots/ when
// SCREENSHOTS=1.
import { expect, test, type Page } from '@playwright/test';
import { ISOLATED_URL, PLAIN_URL } from './servers';
import { openLab, shot, stepView } from './lab';
import type { SlabCacheHook, SlabPaneHook, SlabTestHook } from '../web/slab/test-hook';

// The step views' shared helpers (e2e/lab.ts), typed with this view's hook.
const { hook, ready, playToEnd, atPosition } = stepView<SlabTestHook>('__slablabSlab');
const open = (page: Page, query: string) => openLab(page, `mode=slab&${query}`);

const cache = (p: SlabPaneHook | undefined, name: string): SlabCacheHook => {
  const c = p?.caches.find((k) => k.name === name);
  if (!c) throw new Error(`pane ${p?.label} has no ${name}`);
  return c;
};
const sum = (c: SlabCacheHook, k: 'allocHit' | 'allocMiss' | 'freeHit' | 'freeMiss') => c.cpus.reduce((n, a) => n + a[k], 0);

test.describe('SLAB scenarios, both rule sets side by side', () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('1. the four management types: the array moves into a free object and the waste disappears', async ({ page }) => {
    await open(page, 'scenario=types&cpus=2');
    const start = await ready(page, 0);
    expect(start.panes.map((p) => p.label)).toEqual(['before OBJFREELIST', 'after OBJFREELIST']);
    await expect(page.getByTestId('slab-caption')).toContainText('Seed 002');
    // After the first step the full OBJFREELIST slab has no array; before, it is off-slab in kmalloc-32.
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    const one = await ready(page, 1);
    expect(cache(one.panes[1], 'plain-256').slabs.map((s) => s.freelist)).toEqual(['none']);
    expect(cache(one.panes[0], 'plain-256').slabs.map((s) => s.freelist)).toEqual(['off-slab']);
    // The refill's 16 and the one handed out; before, also kmalloc-32's refill and the object it gave the array.
    expect(one.panes.map((p) => p.moves)).toEqual([2 * (16 + 1), 16 + 1]);
    const end = await playToEnd(page);
    const [before, after] = end.panes;
    expect([before, after].map((p) => ['plain-256', 'ctor-256', 'ctor-192', 'plain-48'].map((n) => cache(p, n).mgmt))).toEqual([
      ['OFF', 'OFF', 'NORMAL(leftover)', 'NORMAL'],
      ['OBJFREELIST', 'OFF', 'NORMAL(leftover)', 'NORMAL'],
    ]);
    expect(end.panes.map((p) => p.check)).toEqual(['', '']);
    await expect(page.getByTestId('slab-position')).toContainText('Step 6 of 6');
    await expect(page.getByTestId('slab-caption')).toContainText('the waste disappears');
    // The inspector tells what a click on the canvas hit, per pane.
    await page.getByTestId('slab-canvas').first().focus();
    await page.keyboard.press('ArrowDown');
    await expect(page.getByTestId('inspector')).toContainText('before OBJFREELIST: Slab');
    await page.keyboard.press('ArrowRight');
    await expect(page.getByTestId('inspector')).toContainText('Object 0 of slab');
    await shot(page, 'slab-1-types');
  });

  test('2. refill and flush by batchcount', async ({ page }) => {
    await open(page, 'scenario=refill-flush&cpus=2');
    let h = await ready(page, 0);
    // The first kmalloc (the untouched array's refill) is the set-up: the first frame shows its slab.
    for (const p of h.panes) expect(cache(p, 'kmalloc-256').slabs.length).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 2; i++) {
      await page.getByRole('button', { name: 'Step', exact: true }).click();
      h = await ready(page, i + 1);
    }
    // Step 2 freed limit+1 objects: the flush left CPU 0's array below its limit and moved a batch to the shared array.
    for (const p of h.panes) {
      const c = cache(p, 'kmalloc-256');
      expect(c.shared).toBeGreaterThanOrEqual(c.batchcount);
      expect(sum(c, 'freeMiss')).toBeGreaterThan(0);
    }
    await expect(page.getByTestId('timeline')).toContainText('array full: cache_flusharray moves the bottom 60 to the shared array');
    await shot(page, 'slab-2-refill-flush');
    const end = await playToEnd(page);
    expect(end.panes.map((p) => p.check)).toEqual(['', '']);
  });

  test('3. the shared array between two CPUs', async ({ page }) => {
    await open(page, 'scenario=shared&cpus=2');
    let h = await ready(page, 0);
    for (let i = 0; i < 2; i++) {
      await page.getByRole('button', { name: 'Step', exact: true }).click();
      h = await ready(page, i + 1);
    }
    for (const p of h.panes) expect(cache(p, 'kmalloc-256').cpus[1]?.avail).toBe(15);
    await expect(page.getByTestId('timeline')).toContainText('refill from the shared array: 16 objects');
    await shot(page, 'slab-3-shared');
    const end = await playToEnd(page);
    expect(end.panes.map((p) => p.check)).toEqual(['', '']);
  });

  test('4. cache_reap drains an idle array and, when due, free slabs', async ({ page }) => {
    await open(page, 'scenario=reap&cpus=2');
    const end = await playToEnd(page);
    for (const p of end.panes) {
      const c = cache(p, 'kmalloc-256');
      expect(c.cpus[0]?.avail).toBeLessThan(10);
      expect(c.destroyed).toBeGreaterThan(0);
    }
    await expect(page.getByTestId('timeline')).toContainText("cache_reap's node part at");
    await shot(page, 'slab-4-reap');
  });

  test("5. the seed's kmalloc test: 10,000 kmalloc then kfree, with the counters it moves", async ({ page }) => {
    await open(page, 'scenario=kmalloc-test&cpus=2');
    // The 10,000 kmallocs are the set-up: the first frame shows what they built and counted.
    const filled = await ready(page, 0);
    for (const p of filled.panes) {
      const c = cache(p, 'kmalloc-256');
      expect(sum(c, 'allocHit') + sum(c, 'allocMiss')).toBe(10_000);
      expect(c.lists.full).toBe(625);
    }
    // Before OBJFREELIST each slab took an off-slab array from kmalloc-32; after, none did.
    expect(filled.panes[0]?.caches.map((c) => c.name)).toContain('kmalloc-32');
    expect(filled.panes[1]?.caches.map((c) => c.name)).not.toContain('kmalloc-32');
    await expect(page.getByTestId('slab-pane-figures-0')).toContainText('kmalloc-256 (OFF): alloc hits 9375, misses 625');
    await expect(page.getByTestId('slab-pane-figures-1')).toContainText('kmalloc-256 (OBJFREELIST): alloc hits 9375, misses 625');
    await shot(page, 'slab-5-kmalloc-test');
    const end = await playToEnd(page);
    for (const p of end.panes) {
      const c = cache(p, 'kmalloc-256');
      expect(sum(c, 'freeHit') + sum(c, 'freeMiss')).toBe(10_000);
      expect(c.slabs).toHaveLength(0);
    }
  });

  test('6. one cache laid out, opened from the caches panel', async ({ page }) => {
    await open(page, 'scenario=types&cpus=2');
    await ready(page, 0);
    await page.getByLabel('A slabinfo or a sysfs tar').setInputFiles('tests/fixtures/slab/slabinfo-5.4.54-slab.txt');
    await expect(page.getByTestId('slab-caches-source')).toContainText('173 of 175 caches match');
    await page.getByRole('button', { name: 'dentry', exact: true }).click();
    await expect(page).toHaveURL(/scenario=cache&/);
    await expect(page).toHaveURL(/&size=192&name=dentry/);
    const end = await playToEnd(page);
    expect(end.panes.map((p) => cache(p, 'dentry').mgmt)).toEqual(['NORMAL(leftover)', 'OBJFREELIST']);
    expect(end.panes.map((p) => p.check)).toEqual(['', '']);
  });
});

test.describe('SLAB view driving', () => {
  test('Back replays to an earlier state; the URL holds the step; one rule set at a time too', async ({ page }) => {
    await open(page, 'scenario=refill-flush&rules=after&cpus=2&step=0');
    await ready(page, 0);
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('ArrowRight');
    await atPosition(page, 'Step 2 of');
    const two = await hook(page);
    expect(two.panes).toHaveLength(1);
    await page.keyboard.press('ArrowRight');
    await atPosition(page, 'Step 3 of');
    await page.getByRole('button', { name: 'Back', exact: true }).click();
    await atPosition(page, 'Step 2 of');
    expect((await hook(page)).panes).toEqual(two.panes);
    expect(page.url()).toMatch(/step=2/);
    const again = await page.context().newPage();
    await again.goto(page.url());
    await atPosition(again, 'Step 2 of');
    expect((await hook(again)).panes).toEqual(two.panes);
  });

  test('operations by hand make a sandbox whose script is in the URL', async ({ page }) => {
    await open(page, 'scenario=sandbox&rules=after&cpus=2');
    await ready(page, 0);
    await page.getByLabel('Times').fill('3');
    await page.getByRole('button', { name: 'kmalloc(256) on CPU 0' }).click();
    await expect(page).toHaveURL(/ops=m0-256-3/);
    await page.waitForFunction(() => window.__slablabSlab?.ready && window.__slablabSlab.stop === 1);
    await page.getByRole('button', { name: 'Drain CPU 0' }).click();
    await expect(page).toHaveURL(/ops=m0-256-3\.d0/);
    await page.waitForFunction(() => window.__slablabSlab?.ready && window.__slablabSlab.stop === 2);
    expect(cache((await hook(page)).panes[0], 'kmalloc-256').cpus[0]?.avail).toBe(0);
  });

  test('a bad URL parameter gets a clear message naming it', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?mode=slab&rules=all&kernel=6.8`);
    await expect(page.getByTestId('url-problems')).toContainText('URL parameter rules="all" is not valid: expected one of before, after, both');
    await expect(page.getByTestId('url-problems')).toContainText('URL parameter kernel="6.8" is not valid: expected a kernel version from 4.10 to 6.7');
    await ready(page);
    await page.goto(`${ISOLATED_URL}?mode=slab&scenario=kmalloc-test&size=8192`);
    await expect(page.getByTestId('slab-error')).toContainText("URL parameter size=8192: the kmalloc test runs sizes 1 to 4096 (the seed's 32 to 4096)");
    await page.goto(`${ISOLATED_URL}?mode=slab&scenario=sandbox&ops=m0-64.f0-9_1`);
    await expect(page.getByTestId('url-problems')).toContainText('step 2 frees objects of step 9, which does not come before it');
  });
});

test.describe("Your kernel's caches", () => {
  test.use({ viewport: { width: 1280, height: 900 } });

  test('a /proc/slabinfo gives the table and the totals; a bad file names its line and the table stays; sortable', async ({ page }) => {
    await open(page, 'scenario=types');
    await ready(page);
    await page.getByRole('button', { name: /This project's machine/ }).click();
    await expect(page.getByTestId('slab-totals')).toContainText('/Before/235 = 0 + 119 + 50 + 66');
    await expect(page.getByTestId('slab-totals')).toContainText('/After/235 = 155 + 39 + 35 + 6');
    await page.getByLabel('A slabinfo or a sysfs tar').setInputFiles('tests/fixtures/slab/slabinfo-6.18-slub.txt');
    await expect(page.getByTestId('slab-caches-source')).toContainText('slabinfo-6.18-slub.txt: 235 caches');
    await expect(page.getByTestId('slab-totals')).toContainText('/After/235 = 197 + 3 + 35 + 0');
    await page.getByRole('button', { name: 'bytes wasted per slab after' }).click();
    await page.getByRole('button', { name: 'bytes wasted per slab after' }).click();
    await expect(page.getByRole('columnheader', { name: 'bytes wasted per slab after' })).toHaveAttribute('aria-sort', 'descending');
    const wastes = await page.getByTestId('slab-caches-table').locator('tbody tr td:nth-child(8)').allInnerTexts();
    expect(wastes.map(Number)).toEqual([...wastes.map(Number)].sort((a, b) => b - a));
    await page.getByRole('button', { name: /This project's machine/ }).click();
    await expect(page.getByTestId('slab-caches-source')).toContainText('sysfs-6.18.tar: 235 caches');
    await shot(page, 'slab-caches-panel', page.getByTestId('slab-caches'));
    await page.getByLabel('A slabinfo or a sysfs tar').setInputFiles('tests/fixtures/slab/slabinfo-6.18-slub.txt');
    await expect(page.getByTestId('slab-caches-source')).toContainText('slabinfo-6.18-slub.txt: 235 caches');
    const bad = 'slabinfo - version: 2.1\n# name <active_objs> <num_objs> <objsize> <objperslab> <pagesperslab> : tunables <limit> <batchcount> <sharedfactor> : slabdata <active_slabs> <num_slabs> <sharedavail>\nkmalloc-64 10 10 64 64 1 : tunables 0 0 0 : slabdata 1 1 0\ndentry 10 ten 192 21 1 : tunables 0 0 0 : slabdata 1 1 0\n';
    await page.getByLabel('A slabinfo or a sysfs tar').setInputFiles({ name: 'broken.txt', mimeType: 'text/plain', buffer: Buffer.from(bad) });
    await expect(page.getByTestId('slab-caches-problem')).toContainText('broken.txt: line 4');
    await expect(page.getByTestId('slab-caches-source')).toContainText('slabinfo-6.18-slub.txt: 235 caches');
  });
});

test.describe('SLAB embed', () => {
  test('embed.html?view=slab works in a non-isolated page with the single-threaded build, also inside an iframe', async ({ page }) => {
    await page.goto(`${PLAIN_URL}embed.html?view=slab&scenario=refill-flush&step=2&cpus=2`);
    await expect(page.getByTestId('core-mode')).toHaveText('single-threaded');
    const h = await ready(page, 2);
    expect(h.panes).toHaveLength(2);
    await expect(page.getByLabel('Scenario')).toHaveCount(0);
    await expect(page.getByRole('heading', { name: "Your kernel's caches" })).toHaveCount(0);
    await expect(page.getByRole('link', { name: 'Open in slablab' })).toHaveAttribute('href', /mode=slab.*scenario=refill-flush.*step=2/);
    await shot(page, 'slab-embed');
    await page.goto(PLAIN_URL);
    await page.setContent(`<h1>docs</h1><iframe title="slablab" src="${PLAIN_URL}embed.html?view=slab&scenario=types&step=2&rules=after" width="1000" height="700"></iframe>`);
    const frame = page.frameLocator('iframe[title=slablab]');
    await expect(frame.getByTestId('core-mode')).toHaveText('single-threaded');
    await expect(frame.getByTestId('slab-position')).toContainText('Step 2 of 6');
  });
});
