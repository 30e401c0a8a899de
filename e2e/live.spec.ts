// The live view (`?mode=live`) in Chromium against a real `slablab serve` on this machine's
// kernel (root and BPF; skipped, saying why, where either is missing): the page draws and its
// figures move while files are opened and closed; picking filp brings its real snapshot and,
// with the next one, the agreement; a killed server shows "Disconnected" and the page recovers
// when the server comes back (same port, the token kept in SLABLAB_SERVE_TOKEN); the page served
// by a plain static server says nothing is connected and how to start the server.  A recording
// (`serve --from`, the filp capture of the native tests) needs neither root nor BPF: the page says
// it is a recording, draws it, and picks filp to its agreement.
// Every server listens on 127.0.0.1 on a free port and stops by itself (--exit-after).
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import { expect, test, type Page } from '@playwright/test';
import type { AxeResults } from 'axe-core';
import { PLAIN_URL } from './servers';

const BIN = process.env.SLABLAB_BIN ?? new URL('../wasm-core/build/native/slablab', import.meta.url).pathname;
const SITE = new URL('../dist', import.meta.url).pathname;
const servers: ChildProcess[] = [];

function startServe(extra: string[], token: string, kernel = ['--snapshot-interval', '2']): Promise<{ child: ChildProcess; url: string; port: number }> {
  const child = spawn(BIN, ['serve', '--site', SITE, '--exit-after', '120', ...kernel, ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SLABLAB_SERVE_TOKEN: token },
  });
  servers.push(child);
  let out = '';
  let err = '';
  child.stderr?.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve printed no URL: ${err}`)), 15_000);
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:(\d+)\/\?mode=live&token=[0-9a-f]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1] ?? '', port: Number(m[2]) });
      }
    });
    child.on('exit', (code) => reject(new Error(`serve exited with ${code}: ${err}`)));
  });
}

/** Opens and closes n files every 50 ms until stopped: filp allocations and frees. */
function churn(n = 200): () => void {
  const t = setInterval(() => {
    for (let i = 0; i < n; i++) closeSync(openSync('/dev/null', 'r'));
  }, 50);
  return () => clearInterval(t);
}

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** axe-core's serious and critical violations on the page as it is, in words. */
async function axeProblems(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const r = await page.evaluate(() => (window as unknown as { axe: { run: (ctx: Document) => Promise<AxeResults> } }).axe.run(document));
  return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').flatMap((v) => v.nodes.map((n) => `${v.id}: ${v.help} at ${JSON.stringify(n.target)}`));
}

const eventCount = async (text: string) => Number((/^([\d,]+) events/.exec(text)?.[1] ?? '0').replace(/,/g, ''));

test.afterEach(() => {
  for (const c of servers.splice(0)) if (c.exitCode === null) c.kill('SIGTERM');
});

test.describe('live view against slablab serve', () => {
  test.skip(process.getuid?.() !== 0, 'needs root (BPF) for slablab serve');
  test.skip(!existsSync(BIN), `no slablab binary at ${BIN} (node scripts/test.mjs native builds it)`);
  test.skip(!existsSync(`${SITE}/index.html`), 'no built site (npx vite build)');

  test('draws, updates, picks filp, shows its snapshot and the agreement', async ({ page }) => {
    test.setTimeout(150_000); // two snapshots 2 s apart on a busy machine, then axe-core
    const token = randomBytes(16).toString('hex');
    const s = await startServe(['--port', '0'], token);
    const stop = churn();
    try {
      await page.goto(s.url);
      await expect(page.getByTestId('live-connection')).toContainText('Connected to Linux', { timeout: 20_000 });
      const figures = page.getByTestId('live-figures');
      await expect(figures).toContainText('events', { timeout: 10_000 });
      // What the server leaves out as its own is counted and shown, with the rule (#21).
      await expect(page.getByTestId('live-own')).toContainText(/left out as the server's own \S.* \(its process-context work\)/, { timeout: 10_000 });
      const first = await eventCount((await figures.textContent()) ?? '');
      await expect.poll(async () => eventCount((await figures.textContent()) ?? ''), { timeout: 10_000 }).toBeGreaterThan(first);
      await expect(page.getByTestId('live-caches').locator('tbody tr').first()).toBeVisible();
      await expect(page.locator('.trace-overview canvas').first()).toBeVisible();
      await expect(page.getByTestId('live-sites')).toContainText('+0x');
      await page.getByTestId('live-pick-filp').click();
      await expect(page).toHaveURL(/cache=filp/);
      await expect(page.getByTestId('kernel-detail')).toContainText('filp', { timeout: 20_000 });
      const agreement = page.getByTestId('live-agreement');
      await expect(agreement).toContainText(/% of \d+ slabs agree/, { timeout: 30_000 });
      // Pause freezes the figures (and axe-core looks at a still page); the slider scrubs.
      await page.getByTestId('live-pause').click();
      const frozen = await figures.textContent();
      await page.waitForTimeout(1200);
      expect(await figures.textContent()).toBe(frozen);
      expect(await axeProblems(page)).toEqual([]);
      await page.getByTestId('live-scrub').fill('100');
      await expect(page.getByTestId('live-scrub-text')).toContainText('s ago');
    } finally {
      stop();
    }
  });

  test('a killed server shows "Disconnected", and the page recovers when it is back', async ({ page }) => {
    const token = randomBytes(16).toString('hex');
    const s = await startServe(['--port', '0', '--caches', 'filp'], token);
    await page.goto(s.url);
    await expect(page.getByTestId('live-connection')).toContainText('Connected to Linux', { timeout: 20_000 });
    const exited = new Promise((r) => s.child.on('exit', r));
    s.child.kill('SIGKILL');
    await exited;
    await expect(page.getByTestId('live-connection')).toContainText('Disconnected', { timeout: 15_000 });
    await expect(page.getByTestId('live-connection')).toContainText('sudo slablab serve');
    await startServe(['--port', String(s.port), '--caches', 'filp'], token);
    await expect(page.getByTestId('live-connection')).toContainText('Connected to Linux', { timeout: 20_000 });
  });
});

test.describe('live view against slablab serve --from (a recording: no root, no BPF)', () => {
  const CAPTURE = new URL('../wasm-core/tests/fixtures/check/filp.slabcap.gz', import.meta.url).pathname;
  test.skip(!existsSync(BIN), `no slablab binary at ${BIN} (node scripts/test.mjs native builds it)`);
  test.skip(!existsSync(`${SITE}/index.html`), 'no built site (npx vite build)');

  test('says it is a recording, draws it, picks filp and shows the agreement', async ({ page }) => {
    test.setTimeout(120_000);
    // No --loop: picking filp (the URL's cache) plays the recording again from its start, so its
    // agreement begins at the start snapshot however late the page's pick came.
    const s = await startServe(['--port', '0', '--from', CAPTURE], randomBytes(16).toString('hex'), []);
    await page.goto(`${s.url}&cache=filp`);
    const c = page.getByTestId('live-connection');
    await expect(c).toContainText('Connected to a recording of Linux 6.18.44-fc-v657 (2 CPUs)', { timeout: 20_000 });
    await expect(c).toContainText('filp.slabcap.gz');
    await expect(c).toContainText('played at its recorded pace.');
    await expect(c).toContainText("Not this machine's kernel");
    const figures = page.getByTestId('live-figures');
    await expect(figures).toContainText('events', { timeout: 10_000 });
    const first = await eventCount((await figures.textContent()) ?? '');
    await expect.poll(async () => eventCount((await figures.textContent()) ?? ''), { timeout: 10_000 }).toBeGreaterThan(first);
    // The recorded call sites, by the names the capture recorded.
    await expect(page.getByTestId('live-sites')).toContainText('__x64_sys_close+0x39');
    await expect(page.getByTestId('kernel-detail')).toContainText('filp', { timeout: 20_000 });
    await expect(page.getByTestId('live-picked')).toContainText("The recording's snapshots");
    await expect(page.getByTestId('live-agreement')).toContainText(/% of \d+ slabs agree/, { timeout: 40_000 });
    await page.getByTestId('live-pause').click();
    expect(await axeProblems(page)).toEqual([]);
  });
});

test('served by a plain static server, the live page says nothing is connected and how to start it', async ({ page }) => {
  await page.goto(`${PLAIN_URL}?mode=live`);
  const c = page.getByTestId('live-connection');
  await expect(c).toContainText('Disconnected', { timeout: 20_000 });
  await expect(c).toContainText('not served by slablab serve');
  await expect(c).toContainText('sudo slablab serve');
});
