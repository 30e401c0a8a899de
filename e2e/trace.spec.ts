// The trace view end to end: the bundled sample opened at start, the caches table sorted by
// keyboard, a cache scrubbed (its slab drawing changes between two events, the event in words),
// both exports downloaded and parsed, each kind of bad file refused with the C's own message
// while the previous result stays, a cancelled replay of a larger generated file, and the page at
// 375 px.
import { readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync, gzipSync } from 'node:zlib';
import { expect, test, type Page } from '@playwright/test';
import { ISOLATED_URL, PLAIN_URL } from './servers';

const fixtures = new URL('../wasm-core/tests/fixtures/replay/', import.meta.url);
const capture = readFileSync(new URL('capture-6.18.slabcap.gz', fixtures));

/** The .slabcap with its second member's header corrupted (its checksum no longer matches). */
function badMember(): Buffer {
  const tar = Buffer.from(gunzipSync(capture));
  const size = parseInt(tar.subarray(124, 136).toString().replace(/\0.*$/s, '').trim(), 8);
  tar[512 + Math.ceil(size / 512) * 512 + 5]! ^= 0x55;
  return gzipSync(tar);
}

const BAD_FILES: { name: string; bytes: Buffer; says: string }[] = [
  { name: 'trace.dat', bytes: readFileSync(new URL('trace-cmd-6.18.dat.head', fixtures)), says: 'run `trace-cmd report -i FILE > trace.txt` first' },
  { name: 'cut.slabcap.gz', bytes: capture.subarray(0, 200_000), says: 'truncated gzip' },
  { name: 'noise.gz', bytes: gzipSync(Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) % 251))), says: 'not a trace: binary data' },
  { name: 'empty.txt', bytes: Buffer.alloc(0), says: 'empty input' },
  { name: 'picture.png', bytes: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82]), says: 'not a trace: binary data (it starts 89 50 4e 47)' },
  { name: 'bad-member.slabcap.gz', bytes: badMember(), says: 'a ustar header whose checksum does not match' },
];

async function openSample(page: Page, base = ISOLATED_URL): Promise<void> {
  await page.goto(`${base}?mode=trace&sample=1`);
  await expect(page.getByTestId('trace-summary')).toContainText('capture-6.18.slabcap.gz', { timeout: 30_000 });
}

async function download(page: Page, button: string): Promise<string> {
  const [d] = await Promise.all([page.waitForEvent('download'), page.getByTestId(button).click()]);
  const path = await d.path();
  return readFileSync(path, 'utf8');
}

test('the sample replays at start; the table sorts; the report exports', async ({ page }) => {
  await openSample(page);
  const summary = page.getByTestId('trace-summary');
  await expect(summary).toContainText('Kernel 6.18');
  await expect(summary).toContainText('model errors: 0');
  await expect(page.getByTestId('trace-rate')).toHaveText(/[\d,]+ events\/s/);
  await expect(page.getByTestId('trace-parse')).toContainText('events parsed');
  await expect(page.getByTestId('trace-chunk-map')).toBeVisible();
  const report = JSON.parse(await download(page, 'trace-export-json')) as { format: string; caches: { name: string; allocs: number; peak_live: number }[] };
  expect(report.format).toBe('slablab-replay/1');
  // Default order: by allocations; sort by peak live with the keyboard, then reverse it.
  const firstRow = () => page.getByTestId('trace-caches').locator('tbody tr').first().locator('th');
  const byAllocs = [...report.caches].sort((a, b) => b.allocs - a.allocs)[0]!.name;
  await expect(firstRow()).toHaveText(byAllocs);
  const peak = page.getByRole('button', { name: 'peak live' });
  await peak.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('columnheader', { name: /peak live/ })).toHaveAttribute('aria-sort', 'descending');
  const byPeak = [...report.caches].sort((a, b) => b.peak_live - a.peak_live)[0]!;
  await expect(page.getByTestId('trace-caches').locator('tbody tr').first().locator('td').nth(5)).toHaveText(byPeak.peak_live.toLocaleString('en-US'));
  await page.keyboard.press('Enter');
  await expect(page.getByRole('columnheader', { name: /peak live/ })).toHaveAttribute('aria-sort', 'ascending');
});

test('a cache scrubbed: the slabs change between two events, the event in words; Perfetto export', async ({ page }) => {
  await openSample(page);
  await page.getByRole('button', { name: 'vm_area_struct', exact: true }).click();
  const scrub = page.getByTestId('trace-scrub');
  await expect(page.getByTestId('trace-position')).toHaveText(/^1 of [\d,]+ events/, { timeout: 30_000 });
  await expect(page.getByTestId('trace-event')).toContainText('allocated 0x');
  await expect(page.getByTestId('trace-event')).toContainText('from vm_area_struct');
  await expect(page.getByTestId('trace-event')).toContainText('on CPU');
  const canvas = page.getByTestId('trace-slabs');
  await expect(canvas).toBeVisible();
  const shot = async () => (await canvas.screenshot({ animations: 'disabled' })).toString('base64');
  const words = await page.getByTestId('trace-event').textContent();
  const before = await shot();
  // Step until the event's words change and the drawing follows.
  await page.getByTestId('trace-step').click();
  await expect(page.getByTestId('trace-position')).toHaveText(/^2 of /);
  await expect(page.getByTestId('trace-event')).not.toHaveText(words ?? '');
  await expect.poll(shot).not.toBe(before);
  // Jump to a time: the position moves past the start.
  await page.getByTestId('trace-time').fill('1');
  await page.getByRole('button', { name: 'Go' }).click();
  await expect(page.getByTestId('trace-position')).not.toHaveText(/^2 of /);
  await expect(scrub.getByText(/fetched in \d+ ms/)).toBeVisible();
  // A click on the overview scrubs to that time: near its left edge, early in the trace.
  const before2 = await page.getByTestId('trace-position').textContent();
  const over = page.locator('.trace-overview .u-over');
  await over.scrollIntoViewIfNeeded();
  const box = (await over.boundingBox())!;
  await page.mouse.move(box.x + 3, box.y + box.height / 2);
  await page.mouse.click(box.x + 3, box.y + box.height / 2);
  await expect(page.getByTestId('trace-position')).not.toHaveText(before2 ?? '');
  const doc = JSON.parse(await download(page, 'trace-export-perfetto')) as { traceEvents: { ph: string; name: string }[] };
  expect(doc.traceEvents.filter((e) => e.ph === 'X').length).toBeGreaterThan(1000);
  expect(doc.traceEvents.some((e) => e.ph === 'C' && e.name === 'vm_area_struct')).toBe(true);
  expect(doc.traceEvents.some((e) => e.ph === 's')).toBe(true);
});

test('a file dropped on the view is replayed', async ({ page }) => {
  await page.goto(`${ISOLATED_URL}?mode=trace`);
  await expect(page.getByTestId('trace-open')).toBeEnabled({ timeout: 30_000 });
  const text = readFileSync(new URL('percpu-chunks-6.18.trace.txt', fixtures), 'latin1');
  const drop = await page.evaluateHandle((t) => {
    const dt = new DataTransfer();
    dt.items.add(new File([t], 'percpu-chunks.txt', { type: 'text/plain' }));
    return dt;
  }, text);
  await page.getByTestId('trace-view').dispatchEvent('drop', { dataTransfer: drop });
  await expect(page.getByTestId('trace-summary')).toContainText('percpu-chunks.txt', { timeout: 30_000 });
  await expect(page.getByTestId('trace-chunk-map')).toBeVisible();
});

test('bad files are refused with their message and the previous result stays (single-threaded build too)', async ({ page }) => {
  await openSample(page, PLAIN_URL);
  for (const f of BAD_FILES) {
    await page.getByTestId('trace-file-input').setInputFiles({ name: f.name, mimeType: 'application/octet-stream', buffer: f.bytes });
    const alert = page.getByTestId('trace-error');
    await expect(alert).toContainText(`Could not replay ${f.name}`);
    await expect(alert).toContainText(f.says);
    await expect(alert).toContainText('The previous trace (capture-6.18.slabcap.gz (the sample)) is still shown.');
    await expect(page.getByTestId('trace-summary')).toContainText('capture-6.18.slabcap.gz');
  }
});

test('a larger replay can be cancelled; the sample stays', async ({ page }) => {
  await openSample(page);
  // About 150 MB of text on disk: a recorded percpu trace repeated (its pointers repeat too; the pairing counts that).
  const body = readFileSync(new URL('percpu-chunks-6.18.trace.txt', fixtures));
  const path = test.info().outputPath('big.txt');
  writeFileSync(path, Buffer.concat(new Array<Buffer>(Math.ceil(150e6 / body.length)).fill(body)));
  await page.getByTestId('trace-file-input').setInputFiles(path);
  await expect(page.getByTestId('trace-progress')).toContainText(/events\/s in the replay/);
  await page.getByTestId('trace-cancel').click();
  await expect(page.getByTestId('trace-error')).toContainText('Cancelled the replay of big.txt. The previous trace');
  await expect(page.getByTestId('trace-summary')).toContainText('capture-6.18.slabcap.gz');
  await expect(page.getByTestId('trace-progress')).toHaveCount(0);
});

test('usable at 375 px', async ({ page }) => {
  await page.setViewportSize({ width: 375, height: 800 });
  await openSample(page);
  await page.getByRole('button', { name: 'vm_area_struct', exact: true }).click();
  await expect(page.getByTestId('trace-position')).toHaveText(/^1 of /, { timeout: 30_000 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  // The scrub controls wrap inside the width rather than off it.
  const box = await page.getByTestId('trace-step').boundingBox();
  expect(box && box.x >= 0 && box.x + box.width <= 375).toBe(true);
  const canvas = await page.getByTestId('trace-slabs').boundingBox();
  expect(canvas && canvas.width <= 375).toBe(true);
});

test('a lab session exports to Perfetto from the shared controls', async ({ page }) => {
  await page.goto(`${ISOLATED_URL}?mode=slub&scenario=remote-frees`);
  await expect(page.getByTestId('slub-position')).toContainText('Start', { timeout: 30_000 });
  const doc = JSON.parse(await download(page, 'slub-export-perfetto')) as { traceEvents: { ph: string; name?: string; args?: { name?: string } }[] };
  expect(doc.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => e.args?.name)).toContain('CPU 1');
  expect(doc.traceEvents.some((e) => e.ph === 'B')).toBe(true);
  expect(doc.traceEvents.some((e) => e.ph === 'C' && /live objects$/.test(e.name ?? ''))).toBe(true);
  expect(doc.traceEvents.some((e) => e.ph === 's')).toBe(true);
});

test('the SLUB rules follow the capture\'s kernel, and another picked replays the trace again under its rules', async ({ page }) => {
  await openSample(page);
  const summary = page.getByTestId('trace-summary');
  await expect(page.getByTestId('trace-model-kernel')).toHaveText('6.18');
  await expect(summary).toContainText('sheaves in 2 caches');
  await page.getByTestId('trace-kernel').selectOption('7.0');
  await expect(page.getByTestId('trace-model-kernel')).toHaveText('7.0', { timeout: 30_000 });
  await expect(summary).toContainText('model errors: 0');
  await expect(page).toHaveURL(/kernel=7\.0/);
  await page.getByTestId('trace-kernel').selectOption('6.17');
  await expect(page.getByTestId('trace-model-kernel')).toHaveText('6.17', { timeout: 30_000 });
  await expect(summary).not.toContainText('sheaves in');
  // A bad version in the URL is named, and the capture's kernel is used.
  await page.goto(`${ISOLATED_URL}?mode=trace&sample=1&kernel=3.2`);
  await expect(page.getByTestId('url-problems')).toContainText('kernel="3.2" is not valid');
  await expect(page.getByTestId('trace-model-kernel')).toHaveText('6.18', { timeout: 30_000 });
});
