// The kernel view (`?mode=kernel`) end to end on the recorded snapshots of this project's build
// machine: the sample opens at start with every cache in the memory table; sorting by waste with
// the keyboard puts the most wasteful cache first; each row's histogram and bar say their counts;
// a cache picked is drawn (its real slabs, the inspector naming real addresses, the arrow keys
// moving along them); each kind of bad file is refused with its own message while the view keeps
// what it showed; the second sample turns on the diff; the page at 375 px.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { expect, test, type Page } from '@playwright/test';
import { snapshotMemory, sortMemory } from '../web/kernel/accounting';
import { listedSlabs } from '../web/kernel/diff';
import { decodeKernelSnapshot } from '../web/kernel/snapshot-file';
import { writeTar } from '../web/slab/tar';
import { ISOLATED_URL } from './servers';

const SAMPLES = new URL('../public/samples/', import.meta.url);
const textA = readFileSync(new URL('snapshot-6.18.json', SAMPLES), 'utf8');
const a = decodeKernelSnapshot(textA);
const b = decodeKernelSnapshot(readFileSync(new URL('snapshot-6.18-b.json', SAMPLES), 'utf8'));
const rows = snapshotMemory(a);
/** The cache without sheaves with the most slabs listed: the one to draw (its first stop is a slab). */
const busy = a.caches.filter((c) => !c.sheafCapacity).sort((x, y) => listedSlabs(y).size - listedSlabs(x).size)[0]!;

const BAD_FILES: { name: string; bytes: Buffer; says: string }[] = [
  { name: 'empty.json', bytes: Buffer.alloc(0), says: 'not a slablab snapshot: the file is empty' },
  { name: 'picture.png', bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), says: 'binary data, not JSON (it starts 89 50 4e 47' },
  { name: 'cut.json', bytes: Buffer.from(textA.slice(0, 5000)), says: 'the JSON does not parse' },
  { name: 'trace.txt.gz', bytes: gzipSync(Buffer.from('cat-1 [000] 1.0: kmem_cache_alloc: ptr=0x1\n'.repeat(100))), says: 'not a .slabcap: the gzip data is not a tar archive' },
  { name: 'old.slabcap', bytes: Buffer.from(writeTar([{ path: 'slabcap.meta', data: Buffer.from('format=slabcap/1\n') }])), says: 'this .slabcap holds no kernel snapshot' },
  { name: 'replay.json', bytes: Buffer.from('{"format":"slablab-replay/1","caches":[]}'), says: 'its format is "slablab-replay/1", not "slablab-snapshot/1"' },
  {
    name: 'damaged.json',
    bytes: Buffer.from(textA.replace(/"page_size":\s*\d+/, '"page_size":"4096"')),
    says: 'kernel.page_size: expected a whole number, found the string "4096"',
  },
];

async function openSample(page: Page): Promise<void> {
  await page.goto(`${ISOLATED_URL}?mode=kernel&sample=1`);
  await expect(page.getByTestId('kernel-summary')).toContainText('snapshot-6.18.json', { timeout: 30_000 });
}

const firstRow = (page: Page) => page.getByTestId('kernel-caches').locator('tbody tr').first().locator('th');

test('the sample opens at start: every cache, by memory; sorting by waste and fragmentation with the keyboard; bars and histograms in words', async ({ page }) => {
  await openSample(page);
  await expect(page.getByTestId('kernel-summary')).toContainText(`Linux ${a.kernel.release}`);
  await expect(page.getByTestId('kernel-total')).toContainText(`${a.caches.length} caches`);
  await expect(firstRow(page)).toHaveText(sortMemory(rows, 'memory')[0]!.name);
  const all = page.getByTestId('kernel-show-all');
  await all.click();
  await expect(page.getByTestId('kernel-caches').locator('tbody tr')).toHaveCount(a.caches.length);

  const waste = page.getByRole('button', { name: 'waste' });
  await waste.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('columnheader', { name: /waste/ })).toHaveAttribute('aria-sort', 'descending');
  const top = sortMemory(rows, 'waste')[0]!;
  await expect(firstRow(page)).toHaveText(top.name);
  await expect(page).toHaveURL(/sort=waste/);
  // The most wasteful cache's bar and histogram say what they draw.
  const row = page.getByTestId('kernel-caches').locator('tbody tr').first();
  await expect(row.getByRole('img').first()).toHaveAttribute('aria-label', new RegExp(`^${top.name}: .* in ${top.slabs.toLocaleString('en-US')} slabs: ${top.inUse.toLocaleString('en-US')} objects in use`));
  const partial = top.histogram.reduce((s, n) => s + n, 0);
  await expect(row.getByRole('img').nth(1)).toHaveAttribute('aria-label', partial ? new RegExp(`${partial.toLocaleString('en-US')} partial slabs by occupancy`) : /no partial slabs read/);
  // Again: the other way round.
  await page.keyboard.press('Enter');
  await expect(page.getByRole('columnheader', { name: /waste/ })).toHaveAttribute('aria-sort', 'ascending');
  await page.getByRole('button', { name: 'fragmentation' }).click();
  await expect(firstRow(page)).toHaveText(sortMemory(rows, 'fragmentation')[0]!.name);
});

test('a cache picked is drawn with its real slabs; the inspector names real addresses; the arrow keys and the address box select', async ({ page }) => {
  await openSample(page);
  await page.getByTestId('kernel-show-all').click();
  const button = page.getByRole('button', { name: busy.name, exact: true });
  await button.focus();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(new RegExp(`cache=${busy.name}`));
  const detail = page.getByTestId('kernel-detail');
  await expect(detail.getByRole('heading', { name: busy.name })).toBeVisible();
  await expect(page.getByTestId('kernel-histogram')).toHaveAttribute('aria-label', /partial slabs by occupancy|no partial slabs read/);
  const canvas = page.getByTestId('kernel-slabs');
  await expect(canvas).toBeVisible();
  expect((await canvas.boundingBox())!.height).toBeGreaterThan(100);
  await expect(canvas).toHaveAttribute('aria-label', new RegExp(`^${busy.name}: \\d+ CPU lanes, [\\d,]+ slabs drawn`));
  // The canvas drew something other than its background.
  const inked = await canvas.evaluate((el) => {
    const c = el as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, Math.min(c.height, 400)).data;
    const colours = new Set<number>();
    for (let i = 0; i < d.length; i += 64) colours.add((d[i]! << 16) | (d[i + 1]! << 8) | d[i + 2]!);
    return colours.size;
  });
  expect(inked).toBeGreaterThan(4);

  // Down from nothing selects the first thing drawn; its words name a slab the snapshot lists.
  await canvas.focus();
  await page.keyboard.press('ArrowDown');
  const inspector = page.getByTestId('kernel-inspector');
  await expect(inspector).toContainText(/(Slab|slab) 0x[0-9a-f]+/);
  const named = /(?:Slab|slab) (0x[0-9a-f]+)/.exec((await inspector.textContent()) ?? '')?.[1];
  expect([...listedSlabs(busy).keys()]).toContain(named);
  await page.keyboard.press('ArrowRight');
  await expect(inspector).toContainText(/Object 0x[0-9a-f]+: index 0 of slab/);

  // A free object found by its address.
  const slab = listedSlabs(busy).values().next().value!.slab;
  const free = slab.freelist[0];
  if (free) {
    await page.getByTestId('kernel-find').fill(free);
    await page.getByTestId('kernel-find').press('Enter');
    await expect(inspector).toContainText(`Object ${free}: index`);
    await expect(inspector).toContainText(/on the slab freelist|on a CPU freelist/);
  }
  await page.getByTestId('kernel-find').fill('0x1');
  await page.getByTestId('kernel-find').press('Enter');
  await expect(page.getByRole('status').filter({ hasText: 'is no object' })).toContainText('0x1 is no object of a slab drawn here');
});

test('a cache opened in the model: its CPU slabs, CPU freelists and node list seeded, an alloc stepped, Back replays from the seed', async ({ page }) => {
  // The cache with the longest CPU freelist: the model's first allocation on that CPU takes its head.
  const seeded = a.caches
    .filter((c) => !c.sheafCapacity && c.cpus.some((p) => p.slab && p.freelist.length > 1))
    .sort((x, y) => Math.max(...y.cpus.map((p) => p.freelist.length)) - Math.max(...x.cpus.map((p) => p.freelist.length)))[0]!;
  const cpu = seeded.cpus.reduce((best, p) => (p.freelist.length > best.freelist.length ? p : best));
  await page.goto(`${ISOLATED_URL}?mode=kernel&sample=1&cache=${seeded.name}`);
  await expect(page.getByTestId('kernel-detail')).toBeVisible({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Open this cache in the model' }).click();
  await expect(page.getByTestId('kernel-seeded')).toContainText(`${seeded.name} in the model`);
  await page.waitForFunction(() => window.__slablabSlub?.ready === true, null, { timeout: 30_000 });
  const start = await page.evaluate(() => window.__slablabSlub!);
  expect(start.cpus[cpu.cpu]?.freelistLength).toBe(cpu.freelist.length);
  expect(start.nodePartial.length).toBe(seeded.nodes.reduce((n, x) => n + x.partial.length, 0));
  expect(start.check).not.toMatch(/corrupt|fail/i);
  // Alloc on that CPU by hand: the CPU freelist is one shorter, from the fast path.
  await page.getByLabel('As CPU').selectOption(String(cpu.cpu));
  await page.getByRole('button', { name: `Alloc on CPU ${cpu.cpu}`, exact: true }).click();
  await expect(page.getByText('You: alloc on CPU')).toBeVisible();
  await page.waitForFunction(({ k, n }) => window.__slablabSlub?.ready === true && window.__slablabSlub.stop > 0 && window.__slablabSlub.cpus[k]?.freelistLength === n, { k: cpu.cpu, n: cpu.freelist.length - 1 });
  expect(await page.evaluate(() => window.__slablabSlub!.stats.ALLOC_FASTPATH)).toBe(1);
  // Back: replayed from the seed, the freelist is whole again.
  await page.getByRole('button', { name: 'Back', exact: true }).click();
  await page.waitForFunction(() => window.__slablabSlub?.ready === true && window.__slablabSlub.stop === 0);
  expect(await page.evaluate((k) => window.__slablabSlub!.cpus[k]!.freelistLength, cpu.cpu)).toBe(cpu.freelist.length);
});

test('maple_node opened in the model: its sheaves seeded with the real objects, and an alloc served by a CPU\'s main sheaf', async ({ page }) => {
  const c = a.caches.find((x) => x.name === 'maple_node')!;
  const p = c.cpus.find((x) => (x.sheaves?.main?.size ?? 0) > 0)!;
  const held = c.cpus.reduce((n, x) => n + (x.sheaves?.main?.size ?? 0) + (x.sheaves?.spare?.size ?? 0) + (x.sheaves?.rcuFree?.size ?? 0), 0) + c.nodes.reduce((n, x) => n + (x.barn?.full ?? []).reduce((m, s) => m + s.size, 0), 0);
  await page.goto(`${ISOLATED_URL}?mode=kernel&sample=1&cache=maple_node`);
  await expect(page.getByTestId('kernel-detail')).toBeVisible({ timeout: 30_000 });
  await page.getByRole('button', { name: 'Open this cache in the model' }).click();
  await expect(page.getByTestId('kernel-seeded-notes')).toContainText(`hold their ${held} real objects in order`);
  await page.waitForFunction(() => window.__slablabSlub?.ready === true, null, { timeout: 30_000 });
  expect(await page.evaluate(() => window.__slablabSlub!.check)).not.toMatch(/corrupt|fail/i);
  await page.getByLabel('As CPU').selectOption(String(p.cpu));
  await page.getByRole('button', { name: `Alloc on CPU ${p.cpu}`, exact: true }).click();
  await page.waitForFunction(() => window.__slablabSlub?.ready === true && window.__slablabSlub.stop > 0);
  const after = await page.evaluate(() => window.__slablabSlub!);
  expect(after.sysfs['alloc_cpu_sheaf']).toBe(`1 C${p.cpu}=1`);
  expect(after.check).not.toMatch(/corrupt|fail/i);
});

test('each bad file is refused with its own message and the view keeps what it showed', async ({ page }) => {
  await openSample(page);
  await page.getByRole('button', { name: sortMemory(rows, 'memory')[0]!.name, exact: true }).click();
  await expect(page.getByTestId('kernel-detail')).toBeVisible();
  for (const f of BAD_FILES) {
    await page.getByTestId('kernel-file-input').setInputFiles({ name: f.name, mimeType: 'application/json', buffer: f.bytes });
    const alert = page.getByTestId('kernel-error');
    await expect(alert).toContainText(`Could not open ${f.name}: `);
    await expect(alert).toContainText(f.says);
    await expect(alert).toContainText('Still showing snapshot-6.18.json (the sample)');
    await expect(page.getByTestId('kernel-summary')).toContainText('snapshot-6.18.json');
    await expect(page.getByTestId('kernel-detail')).toBeVisible();
  }
  // A good file after them opens, and the message goes.
  await page.getByTestId('kernel-file-input').setInputFiles({ name: 'mine.json', mimeType: 'application/json', buffer: Buffer.from(textA) });
  await expect(page.getByTestId('kernel-summary')).toContainText('mine.json');
  await expect(page.getByTestId('kernel-error')).toHaveCount(0);
});

test('the second sample is compared with the first: the caches that changed, and a cache\'s slabs by address', async ({ page }) => {
  await openSample(page);
  await page.getByTestId('kernel-compare-sample').click();
  const diff = page.getByTestId('kernel-diff');
  await expect(diff).toContainText('snapshot-6.18.json (the sample) → snapshot-6.18-b.json');
  const { diffCaches, diffSlabs } = await import('../web/kernel/diff');
  const deltas = diffCaches(a, b).filter((d) => d.slabs || d.bytes || d.inUse || d.waste || !d.before || !d.after);
  expect(deltas.length).toBeGreaterThan(0);
  await expect(page.getByTestId('kernel-diff-table').locator('tbody tr').first().locator('th')).toContainText(deltas[0]!.name);
  // The cache whose slabs changed most, opened from the diff.
  const most = [...a.caches].sort((x, y) => diffSlabs(y, b.caches.find((c) => c.name === y.name)).length - diffSlabs(x, b.caches.find((c) => c.name === x.name)).length)[0]!;
  const changes = diffSlabs(most, b.caches.find((c) => c.name === most.name));
  expect(changes.length).toBeGreaterThan(0);
  await page.goto(`${ISOLATED_URL}?mode=kernel&sample=1&compare=1&cache=${most.name}`);
  const list = page.getByTestId('kernel-slab-changes');
  await expect(list).toContainText(`${changes.filter((c) => c.kind === 'filled').length} filled`, { timeout: 30_000 });
  await expect(list).toContainText(changes[0]!.address);
  await page.getByTestId('kernel-compare-close').click();
  await expect(diff).toHaveCount(0);

  // A file dropped anywhere on the page, once a snapshot is open, is the second one.
  const secondText = readFileSync(new URL('snapshot-6.18-b.json', SAMPLES), 'utf8');
  const dropped = await page.evaluateHandle((text) => {
    const t = new DataTransfer();
    t.items.add(new File([text], 'dropped-b.json', { type: 'application/json' }));
    return t;
  }, secondText);
  await page.locator('header, body').first().dispatchEvent('dragover', { dataTransfer: dropped });
  await page.locator('body').dispatchEvent('drop', { dataTransfer: dropped });
  await expect(diff).toContainText('snapshot-6.18.json (the sample) → dropped-b.json');
});

test('a .slabcap opens its two snapshots, before and after its trace, compared', async ({ page }) => {
  await page.goto(`${ISOLATED_URL}?mode=kernel`);
  const b = readFileSync(new URL('snapshot-6.18-b.json', SAMPLES));
  const trace = Buffer.from('  cat-1 [000] .....  1.000000: kmem_cache_alloc: call_site=x ptr=0xffff888100000000\n'.repeat(20_000));
  const cap = gzipSync(
    writeTar([
      { path: 'slabcap.meta', data: Buffer.from('format=slabcap/1\n') },
      { path: 'snapshot-start.json', data: Buffer.from(textA) },
      { path: 'trace', data: trace },
      { path: 'slabcap-end.meta', data: Buffer.from('events=20000\n') },
      { path: 'snapshot-end.json', data: b },
    ]),
  );
  await page.getByTestId('kernel-file-input').setInputFiles({ name: 'run.slabcap', mimeType: 'application/gzip', buffer: cap });
  await expect(page.getByTestId('kernel-summary')).toContainText('run.slabcap: snapshot-start.json', { timeout: 30_000 });
  await expect(page.getByTestId('kernel-diff')).toContainText('run.slabcap: snapshot-start.json → run.slabcap: snapshot-end.json');
});

test.describe('at 375 px', () => {
  test.use({ viewport: { width: 375, height: 800 } });
  test('the page does not scroll sideways; the table scrolls in its box; a cache opens and draws', async ({ page }) => {
    await openSample(page);
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(await overflow()).toBeLessThanOrEqual(1);
    await page.getByTestId('kernel-caches').locator('tbody tr').first().getByRole('button').click();
    await expect(page.getByTestId('kernel-slabs')).toBeVisible();
    expect(await overflow()).toBeLessThanOrEqual(1);
    if (process.env.SCREENSHOTS === '1') await page.screenshot({ path: 'docs/screenshots/kernel-375.png', fullPage: false });
  });
});

test('screenshots for the docs (SCREENSHOTS=1)', async ({ page }) => {
  test.skip(process.env.SCREENSHOTS !== '1', 'screenshots only when SCREENSHOTS=1');
  await page.setViewportSize({ width: 1280, height: 1000 });
  await openSample(page);
  await page.screenshot({ path: 'docs/screenshots/kernel-memory.png' });
  // A cache with sheaves and a barn, an object selected.
  const shown = a.caches.find((c) => c.name === 'maple_node') ?? busy;
  await page.goto(`${ISOLATED_URL}?mode=kernel&sample=1&cache=${shown.name}`);
  await expect(page.getByTestId('kernel-slabs')).toBeVisible({ timeout: 30_000 });
  await page.getByTestId('kernel-slabs').focus();
  for (const key of ['ArrowDown', 'ArrowRight', 'ArrowRight']) await page.keyboard.press(key);
  await expect(page.getByTestId('kernel-inspector')).toContainText('0x');
  await page.getByTestId('kernel-detail').scrollIntoViewIfNeeded();
  await page.getByTestId('kernel-detail').screenshot({ path: 'docs/screenshots/kernel-cache.png' });
});
