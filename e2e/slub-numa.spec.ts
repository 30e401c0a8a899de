// The SLUB view on NUMA nodes: nodes= and memoryless= in the URL draw each node with its CPUs,
// its barn and its partial list (the texts the canvas draws, recorded from before the page
// loads); the memoryless-barn story compares 7.0 and 7.1 side by side, with 7.0's link from the
// memoryless node's CPU to node 0's barn; the picker keeps the nodes in the URL; bad values get
// their own messages; 375 px wide nothing is wider than the screen.
import { expect, test, type Page } from '@playwright/test';
import { openLab, recordTexts, shot, stepView } from './lab';
import { ISOLATED_URL } from './servers';

const slub = stepView('__slablabSlub');

const drawn = (page: Page) => page.evaluate(() => [...(window as unknown as { __texts: Set<string> }).__texts]);

test.describe('NUMA nodes in the SLUB figure', () => {
  test.use({ viewport: { width: 1440, height: 900 } });
  test.beforeEach(async ({ page }) => recordTexts(page));

  test('kernel=7.1&nodes=2&memoryless=1: each node with its CPUs, barn and list, stepped to the end', async ({ page }) => {
    await openLab(page, 'mode=slub&kernel=7.1&nodes=2&memoryless=1');
    const end = await slub.playToEnd(page);
    expect(end.stop).toBe(end.stops - 1);
    const texts = await drawn(page);
    for (const t of ['Node 0', 'Node 1 (memoryless)', 'Barn · node 0', 'Barn · node 1', 'Node 0 partial', 'memoryless: slabs from node 0'])
      expect(texts, `the canvas draws "${t}"`).toContain(t);
    expect(texts.some((t) => t.startsWith('Node 1 partial')), 'a memoryless node has no partial list').toBe(false);
    const canvas = page.getByTestId('slub-canvas').first();
    await expect(canvas).toHaveAttribute('data-figure-nodes', '2');
    await expect(canvas).toHaveAttribute('data-figure-barns', '2');
    // The picker shows the nodes and keeps them in the URL.
    await expect(page.getByRole('combobox', { name: /^NUMA nodes/ })).toHaveValue('2');
    await page.getByRole('combobox', { name: /^Memoryless/ }).selectOption('');
    await expect.poll(() => new URL(page.url()).searchParams.get('memoryless')).toBe(null);
    await expect.poll(() => new URL(page.url()).searchParams.get('nodes')).toBe('2');
  });

  test('the memoryless-barn story: 7.0 links CPU 1 to node 0\'s barn, 7.1 gives node 1 its own', async ({ page }) => {
    await openLab(page, 'mode=slub&scenario=memoryless-barn&kernel=7.0,7.1&cpus=2');
    await expect(page.getByTestId('slub-canvas')).toHaveCount(2);
    const end = await slub.playToEnd(page);
    expect(end.caption).toContain('barn_get');
    const texts = await drawn(page);
    expect(texts).toContain("CPU 1's sheaves → node 0's barn");
    expect(texts).toContain("its CPUs use node 0's");
    expect(texts).toContain('Barn · node 1');
    const [old, now] = await page.getByTestId('slub-canvas').evaluateAll((cs) => cs.map((c) => ({ barns: c.getAttribute('data-figure-barns'), links: c.getAttribute('data-figure-links') })));
    expect(old).toEqual({ barns: '1', links: '1' });
    expect(now).toEqual({ barns: '2', links: '0' });
    await page.setViewportSize({ width: 1280, height: 900 }); // the docs' screenshots are 1280 wide
    await shot(page, 'slub-numa');
  });

  test('the sandbox on two nodes offers CPU hotplug, one step each, and the node heading says which CPU is offline', async ({ page }) => {
    await openLab(page, 'mode=slub&kernel=7.1&nodes=2&memoryless=1&cpus=2&scenario=sandbox');
    await slub.ready(page);
    await page.getByRole('combobox', { name: /^As CPU/ }).selectOption('1');
    await page.getByRole('button', { name: 'Take CPU 1 offline' }).click();
    expect((await slub.atPosition(page, 'Step 1 of 1')).opResults).toEqual([0]);
    await expect.poll(async () => (await drawn(page)).some((t) => t.includes('(offline: 1)'))).toBe(true);
    await page.getByRole('button', { name: 'Bring CPU 1 online' }).click();
    // 7.1's slub_cpu_setup: node 1 already has its barn (CPU 1 was online when the cache was made), so none is made.
    expect((await slub.atPosition(page, 'Step 2 of 2')).opResults).toEqual([0, 0]);
    await expect.poll(() => new URL(page.url()).searchParams.get('ops')).toBe('D1.O1');
  });

  test('every slab says its node: a CPU slab of the memoryless node\'s CPU is node 0\'s (6.17, slab_nid from the snapshot)', async ({ page }) => {
    await openLab(page, 'mode=slub&kernel=6.17&nodes=2&memoryless=1&cpus=2&scenario=sandbox&ops=a1');
    const end = await slub.playToEnd(page);
    expect(end.opResults).toEqual([0]);
    // CPU 1 is node 1's, which has no memory: its CPU slab comes from node 0 (numa_mem_id), on no list.
    await expect.poll(async () => (await drawn(page)).filter((t) => t.startsWith('CPU slab · '))).toEqual([expect.stringMatching(/^CPU slab · pfn \d+ · node 0 · \d+\/\d+ in use/)]);
  });

  test('a bad nodes= value, and values that do not fit together, each say what is wrong', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?mode=slub&nodes=9`);
    await expect(page.getByText('URL parameter nodes="9" is not valid: expected a whole number from 1 to 4. Using 1.')).toBeVisible();
    await slub.ready(page); // the lab still runs, on one node
    await page.goto(`${ISOLATED_URL}?mode=slub&kernel=7.1&nodes=2&memoryless=2`);
    await expect(page.getByText('memoryless=2 names node 2, but nodes=2 has nodes 0, 1')).toBeVisible();
  });
});

test('375 px wide: the two nodes fit the screen', async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 812 });
  await openLab(page, 'mode=slub&kernel=7.1&nodes=2&memoryless=1&cpus=2&step=2');
  await slub.ready(page);
  const canvas = page.getByTestId('slub-canvas').first();
  await expect(canvas).toHaveAttribute('data-figure-nodes', '2');
  const box = await canvas.boundingBox();
  expect((box?.x ?? 0) + (box?.width ?? 999)).toBeLessThanOrEqual(375);
  expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBe(0);
  await shot(page, 'slub-numa-375');
});
