// Free-running mode: with cross-origin isolation every simulated CPU runs on
// its own CPU worker (distinct thread ids, each with operations done), and
// the view keeps draining their event rings; without it the page says so and
// runs the CPUs interleaved on the bridge worker, where the view's copy of
// the state follows the events exactly (it never needs a snapshot again).
import { expect, test, type Page } from '@playwright/test';
import { ISOLATED_URL, PLAIN_URL } from './servers';
import type { FreeRunHook } from '../web/slub/FreeRunView';

const SHOTS = process.env.SCREENSHOTS === '1';

async function hook(page: Page): Promise<FreeRunHook> {
  return page.evaluate(() => {
    const h = window.__slablabFreeRun;
    if (!h) throw new Error('no test hook');
    return h;
  });
}

test('free-running on 4 CPU workers, their event rings drained at display rate', async ({ page }) => {
  await page.goto(`${ISOLATED_URL}?mode=free&cpus=4&workload=prodcons&slabs=32`);
  await expect(page.getByTestId('core-mode')).toContainText('threads');
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForFunction(() => (window.__slablabFreeRun?.samples ?? 0) >= 20);
  const a = await hook(page);
  expect(a.mode).toBe('threads');
  expect(a.slabs).toBeGreaterThanOrEqual(32);
  const ids = a.threadIds.filter((t) => t !== 0);
  expect(ids.length).toBe(4);
  expect(new Set(ids).size).toBe(4);
  expect(a.events).toBeGreaterThan(0);
  await page.waitForFunction((before) => window.__slablabFreeRun?.ops.every((o, k) => o > (before[k] ?? 0)) ?? false, a.ops);
  await expect(page.getByTestId('freerun-table')).toContainText('threads: 4 CPU workers');
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.waitForFunction(() => window.__slablabFreeRun?.running === false);
});

test('free-running without isolation runs interleaved and says why', async ({ page }) => {
  await page.goto(`${PLAIN_URL}?mode=free&cpus=2&slabs=8`);
  await expect(page.getByTestId('core-mode')).toHaveText('single-threaded');
  await expect(page.getByTestId('freerun-view')).toContainText('not cross-origin isolated');
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForFunction(() => (window.__slablabFreeRun?.samples ?? 0) >= 5);
  const h = await hook(page);
  expect(h.mode).toBe('interleaved');
  expect(h.ops.every((o) => o > 0)).toBe(true);
  expect(h.events).toBeGreaterThan(h.ops.reduce((a, b) => a + b, 0));
  expect(h.dropped).toBe(0);
  expect(h.lost).toBe(0);
  expect(h.anchors).toBe(0);
  await expect(page.getByTestId('freerun-events')).toContainText('re-anchored on a snapshot 0 times');
  // Follow a slab: the inspector describes it from the live state; Escape lets go.
  await page.getByTestId('slub-canvas').focus();
  await page.keyboard.press('ArrowDown');
  await expect(page.getByTestId('freerun-inspector')).toContainText(/Slab pfn \d+ \(order \d, \d+ objects\) is on /);
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('freerun-inspector')).toContainText('Click a slab');
  // Space stops the CPUs.
  await page.keyboard.press(' ');
  await page.waitForFunction(() => window.__slablabFreeRun?.running === false);
  await expect(page.getByTestId('freerun-table')).toContainText('interleaved on the bridge worker');
});

test('a recorded run saves to a file that replays to the same state; a damaged file is refused', async ({ page }) => {
  await page.goto(`${PLAIN_URL}?mode=free&cpus=2&slabs=8&workload=prodcons`);
  await expect(page.getByTestId('core-mode')).toHaveText('single-threaded');
  await page.getByLabel('record the run').check();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForFunction(() => (window.__slablabFreeRun?.samples ?? 0) >= 30);
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.waitForFunction(() => window.__slablabFreeRun?.running === false);
  const live = await hook(page);
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /Save recording/ }).click()]);
  expect(download.suggestedFilename()).toBe('slablab-prodcons-2cpus.slabrec');
  await page.getByLabel('Open a recording').setInputFiles(await download.path());
  await expect(page.getByTestId('freerun-replay')).toContainText('prodcons, 2 CPUs');
  const opened = await hook(page);
  expect(opened.replayFrames).toBeGreaterThanOrEqual(live.samples);
  // The frame the live view showed last, rebuilt from the file alone.
  await page.getByLabel('Recording position').fill(String(live.samples - 1));
  await expect(page.getByTestId('replay-caption')).toContainText(`frame ${live.samples} of ${opened.replayFrames}`);
  const replayed = await hook(page);
  expect(replayed.slabs).toBe(live.slabs);
  expect(replayed.inuse).toBe(live.inuse);
  expect(live.inuse).toBeGreaterThan(0);
  await page.getByLabel('Recording position').fill('0');
  await expect(page.getByTestId('replay-caption')).toContainText(`frame 1 of ${opened.replayFrames}`);
  await page.getByLabel('Open a recording').setInputFiles({ name: 'bad.slabrec', mimeType: 'application/octet-stream', buffer: Buffer.from('not a recording at all') });
  await expect(page.getByRole('alert').filter({ hasText: 'Could not open' })).toContainText(
    'Could not open bad.slabrec: not a slablab recording: it does not start with "SLRC"',
  );
  // The replay shown before is still there.
  await expect(page.getByTestId('freerun-replay')).toContainText('prodcons, 2 CPUs');
});

test('free-running on 7.0: each CPU\'s sheaves and the barn followed exactly, their counters moving', async ({ page }) => {
  await page.goto(`${PLAIN_URL}?mode=free&cpus=2&slabs=8&workload=prodcons&kernel=7.0`);
  await expect(page.getByTestId('slub-kernel')).toHaveValue('7.0');
  await page.getByRole('button', { name: 'Start' }).click();
  // The barn fills as remote frees fill the consumers' sheaves.
  await page.waitForFunction(() => (window.__slablabFreeRun?.samples ?? 0) >= 20 && (window.__slablabFreeRun?.barnFull ?? 0) + (window.__slablabFreeRun?.barnEmpty ?? 0) > 0);
  const h = await hook(page);
  expect(h.kernel).toBe('7.0');
  // A main sheaf per CPU at least, and the barn's.
  expect(h.sheaves).toBeGreaterThan(2);
  const sum = (name: string) => h.counters.reduce((n, c) => n + (c[name] ?? 0), 0);
  for (const name of ['ALLOC_CPU_SHEAF', 'FREE_CPU_SHEAF', 'SHEAF_REFILL', 'BARN_PUT']) expect(sum(name), name).toBeGreaterThan(0);
  // No per-CPU slab in 7.0: its fast path never runs.
  expect(sum('ALLOC_FASTPATH')).toBe(0);
  expect(h.lost).toBe(0);
  expect(h.anchors).toBe(0);
  await expect(page.getByTestId('freerun-table')).toContainText('served by a sheaf');
  await expect(page.getByTestId('freerun-events')).toContainText('re-anchored on a snapshot 0 times');
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.waitForFunction(() => window.__slablabFreeRun?.running === false);
  if (SHOTS) await page.screenshot({ path: 'docs/screenshots/freerun-sheaves.png', fullPage: true });
});

test('free-running on 7.0 with CPU threads: the sheaves drawn, and a re-anchor keeps them (the threads pause for the snapshot)', async ({ page }) => {
  await page.goto(`${ISOLATED_URL}?mode=free&cpus=2&slabs=8&workload=prodcons&kernel=7.0&rate=0`);
  await expect(page.getByTestId('core-mode')).toContainText('threads');
  await page.getByRole('button', { name: 'Start' }).click();
  // Uncapped, the rings overflow and the view re-anchors on snapshots.
  await page.waitForFunction(() => (window.__slablabFreeRun?.anchors ?? 0) >= 1 && (window.__slablabFreeRun?.samples ?? 0) >= 10);
  await page.waitForFunction(() => (window.__slablabFreeRun?.sheaves ?? 0) >= 2);
  const h = await hook(page);
  expect(h.mode).toBe('threads');
  expect(h.counters.every((c) => (c.ALLOC_CPU_SHEAF ?? 0) > 0)).toBe(true);
  await page.getByRole('button', { name: 'Stop' }).click();
  await page.waitForFunction(() => window.__slablabFreeRun?.running === false);
});
