// The walking skeleton end to end: the core in workers, both builds, the
// failure paths a user can meet, and the embed.
import { expect, test, type Page } from '@playwright/test';
import { ISOLATED_URL, PLAIN_URL } from './servers';

/** Fails the test on any uncaught page error (a blank screen usually starts as one). */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return errors;
}

async function runSelftest(page: Page) {
  await page.getByRole('button', { name: 'Run self-test' }).click();
  const result = page.getByTestId('selftest-result');
  await expect(result).toBeVisible({ timeout: 30_000 });
  return result;
}

test('isolated page: the threads build runs the self-test on several CPU workers', async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto(`${ISOLATED_URL}?mode=selftest&cpus=4&iters=200000`);
  expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(true);
  await expect(page.getByTestId('core-mode')).toHaveText('threads: 4 workers');
  const result = await runSelftest(page);
  await expect(result).toHaveAttribute('data-passed', 'true');
  await expect(page.getByTestId('selftest-counter')).toHaveText(String(4 * 200000));
  // Four CPU threads, each with its own pthread id: four distinct workers ran.
  await expect(page.getByTestId('selftest-workers')).toHaveText('4');
  await expect(result).toContainText('4 distinct CPU workers (threads sharing the memory) ran it');
  const rows = page.getByRole('table', { name: 'Per CPU' }).locator('tbody tr');
  await expect(rows).toHaveCount(4);
  for (let i = 0; i < 4; i++) await expect(rows.nth(i).locator('td').nth(1)).toHaveText('200000');
  expect(errors).toEqual([]);
});

test('isolated page: two CPUs also work, and the keyboard runs it', async ({ page }) => {
  await page.goto(`${ISOLATED_URL}?mode=selftest&cpus=2&iters=50000`);
  await expect(page.getByTestId('core-mode')).toHaveText('threads: 2 workers');
  await expect(page.getByRole('button', { name: 'Run self-test' })).toBeEnabled();
  await page.keyboard.press('r');
  await expect(page.getByTestId('selftest-counter')).toHaveText('100000', { timeout: 30_000 });
  await expect(page.getByTestId('selftest-workers')).toHaveText('2');
});

test('plain static server without COOP/COEP: the single-threaded build works and says so', async ({ page }) => {
  const errors = watchErrors(page);
  await page.goto(`${PLAIN_URL}?mode=selftest&cpus=3&iters=1000`);
  expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(false);
  await expect(page.getByTestId('core-mode')).toHaveText('single-threaded');
  const result = await runSelftest(page);
  await expect(result).toHaveAttribute('data-passed', 'true');
  await expect(page.getByTestId('selftest-counter')).toHaveText('3000');
  await expect(page.getByTestId('selftest-workers')).toHaveText('1');
  await expect(result).toContainText('One worker ran all 3 CPUs, interleaved');
  // The deterministic scheduler interleaves the CPUs, so some CASes lose.
  expect(Number(await page.getByTestId('selftest-retries').textContent())).toBeGreaterThan(0);
  expect(errors).toEqual([]);
});

for (const [what, body, expected] of [
  ['missing', null, /could not load the WebAssembly core: slablab-threads-[\w-]+\.wasm is missing \(HTTP 404/],
  ['corrupt', Buffer.from('<!doctype html><p>not wasm</p>'), /could not load the WebAssembly core: slablab-threads-[\w-]+\.wasm is not a WebAssembly binary/],
  ['truncated', Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x05]), /could not load the WebAssembly core: slablab-threads-[\w-]+\.wasm is corrupt: CompileError/],
] as const) {
  test(`a ${what} .wasm shows a specific error, not a blank page`, async ({ page }) => {
    await page.route('**/*.wasm', (route) =>
      body === null ? route.fulfill({ status: 404, body: 'Not Found' }) : route.fulfill({ status: 200, contentType: 'application/wasm', body }),
    );
    await page.goto(`${ISOLATED_URL}?mode=selftest`);
    const alert = page.getByTestId('core-error');
    await expect(alert).toBeVisible({ timeout: 30_000 });
    await expect(alert).toHaveText(expected);
    await expect(page.getByRole('heading', { name: 'CPU self-test' })).toBeVisible();
    await expect(page.getByRole('button', { name: 'Run self-test' })).toBeDisabled();
  });
}

test('a bad URL parameter gives a clear message and the page still works', async ({ page }) => {
  await page.goto(`${PLAIN_URL}?mode=selftest&cpus=99&page=lab&colour=blue`);
  const problems = page.getByTestId('url-problems');
  await expect(problems).toContainText('URL parameter cpus="99" is not valid: expected a whole number from 1 to 8. Using 4.');
  await expect(problems).toContainText('Unknown URL parameter "colour" was ignored');
  await expect(page.getByRole('spinbutton', { name: 'CPUs' })).toHaveValue('4');
  await page.goto(`${PLAIN_URL}?page=nowhere`);
  await expect(page.getByTestId('url-problems')).toContainText(
    'URL parameter page="nowhere" is not valid: expected one of lab, benchmarks, about.',
  );
});

test('tabs, URL state and the keyboard help', async ({ page }) => {
  await page.goto(`${PLAIN_URL}?mode=selftest`);
  await page.getByRole('link', { name: 'About' }).click();
  await expect(page).toHaveURL(/\?page=about&mode=selftest$/);
  await expect(page.getByRole('heading', { name: 'About slablab' })).toBeVisible();
  await page.keyboard.press('2');
  await expect(page.getByRole('heading', { name: 'Benchmarks' })).toBeVisible();
  await page.goBack();
  await expect(page.getByRole('heading', { name: 'About slablab' })).toBeVisible();
  await page.keyboard.press('1');
  await page.getByRole('spinbutton', { name: 'CPUs' }).fill('6');
  await expect(page).toHaveURL(/cpus=6/);
  // Shortcuts are off while typing in a field.
  await page.keyboard.press('?');
  await expect(page.getByRole('dialog')).toHaveCount(0);
  await page.getByRole('heading', { name: 'CPU self-test' }).click();
  await page.keyboard.press('?');
  const help = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await expect(help).toBeVisible();
  await expect(help).toContainText('Run the CPU self-test');
  await page.keyboard.press('Escape');
  await expect(help).toBeHidden();
});

test('embed page renders without isolation and its "Open in slablab" link works', async ({ page, context }) => {
  const errors = watchErrors(page);
  await page.goto(`${PLAIN_URL}embed.html?view=selftest&cpus=2&iters=500`);
  await expect(page.getByTestId('core-mode')).toHaveText('single-threaded');
  await expect(page.getByRole('navigation')).toHaveCount(0);
  await runSelftest(page);
  await expect(page.getByTestId('selftest-counter')).toHaveText('1000');
  const [lab] = await Promise.all([context.waitForEvent('page'), page.getByRole('link', { name: 'Open in slablab' }).click()]);
  await lab.waitForLoadState();
  expect(new URL(lab.url()).searchParams.get('cpus')).toBe('2');
  await expect(lab.getByRole('navigation', { name: 'Pages' })).toBeVisible();
  await expect(lab.getByRole('spinbutton', { name: 'CPUs' })).toHaveValue('2');
  await expect(lab.getByRole('spinbutton', { name: 'Iterations per CPU' })).toHaveValue('500');
  expect(errors).toEqual([]);
});

test('embed inside an iframe of a plain page', async ({ page }) => {
  await page.goto(`${PLAIN_URL}embed.html`);
  await page.setContent(`<iframe title="slablab" src="${PLAIN_URL}embed.html?view=selftest&cpus=2&iters=100" width="800" height="500"></iframe>`);
  const frame = page.frameLocator('iframe[title="slablab"]');
  await expect(frame.getByTestId('core-mode')).toHaveText('single-threaded', { timeout: 30_000 });
  await frame.getByRole('button', { name: 'Run self-test' }).click();
  await expect(frame.getByTestId('selftest-counter')).toHaveText('200');
});
