// <slab-lab> end to end: the element as a third-party page loads it
// (dist/slab-lab.js by its name), in a plain page (single-threaded) and in an
// isolated one (threads); several at once, attribute changes, removal,
// keys scoped to the element, loading only once on screen, and its API.
// The host pages are served by the test itself (route.fulfill) at the
// servers' origins, so the script and the files beside it come from the
// built site exactly as they would for a docs page.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import type { SlabLabElement } from '../web/embed/slab-lab';
import type { LabState } from '../web/lab/host';
import { figureState } from './figures';
import { ISOLATED_URL, PLAIN_URL } from './servers';

/** Serves `body` as the page at `url` (with COOP/COEP when `isolated`) and opens it. */
async function hostPage(page: Page, url: string, body: string, isolated = false): Promise<void> {
  await page.route(url, (route) =>
    route.fulfill({
      contentType: 'text/html',
      headers: isolated ? { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' } : {},
      body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>host</title><link rel="icon" href="data:,"><script type="module" src="./slab-lab.js"></script></head><body>${body}</body></html>`,
    }),
  );
  await page.goto(url);
}

/** Serves the built site (dist/) at `origin` (a made-up public host) as a static host would, with `headers` added. */
async function serveDist(page: Page, origin: string, headers: Record<string, string> = {}): Promise<void> {
  const TYPES: Record<string, string> = { html: 'text/html', js: 'text/javascript', wasm: 'application/wasm', css: 'text/css', svg: 'image/svg+xml' };
  await page.context().route(`${origin}**`, (route) => {
    const path = new URL(route.request().url()).pathname;
    const file = join('dist', path);
    if (!existsSync(file)) return route.fulfill({ status: 404, body: 'Not Found' });
    return route.fulfill({ body: readFileSync(file), headers: { 'Content-Type': TYPES[path.split('.').pop() ?? ''] ?? 'application/octet-stream', ...headers } });
  });
}

/** Logs what the page sends its workers (requests) into window.__requests. */
async function logWorkerRequests(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const log: { type: string; params: unknown }[] = [];
    (window as unknown as { __requests: typeof log }).__requests = log;
    const post = Worker.prototype.postMessage;
    Worker.prototype.postMessage = function (this: Worker, message: unknown, ...rest: unknown[]) {
      const m = message as { type?: unknown; params?: unknown } | null;
      if (m && typeof m.type === 'string') log.push({ type: m.type, params: m.params });
      return (post as (...a: unknown[]) => void).call(this, message, ...rest);
    } as typeof post;
  });
}

const requests = (page: Page) => page.evaluate(() => (window as unknown as { __requests: { type: string; params: { session?: number } }[] }).__requests);

test.describe('<slab-lab> in a plain page', () => {
  test.use({ viewport: { width: 1100, height: 900 } });

  test('two elements render, step on their own, follow attribute changes, and a removed one frees its session', async ({ page }) => {
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await logWorkerRequests(page);
    await hostPage(
      page,
      `${PLAIN_URL}two.html`,
      `<h1>Two figures</h1>
       <slab-lab id="a" view="slub" scenario="fast-path" cpus="2"></slab-lab>
       <slab-lab id="b" view="slub" scenario="why-tid" cpus="2" step="2"></slab-lab>`,
    );
    expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(false);
    const a = page.locator('#a');
    const b = page.locator('#b');
    await expect(a.getByTestId('core-mode')).toHaveText('single-threaded', { timeout: 30_000 });
    const a0 = await figureState(page, 'a', 0);
    const b2 = await figureState(page, 'b', 2);
    expect(a0.caption).toContain('One CPU allocating');
    expect(b2.stops).toBeGreaterThan(a0.stops - 100); // both loaded their own story
    // Each element's test hook is its own (a's start: after the fast path's set-up alloc, CPU 0's tid one TID_STEP on).
    const tids = await page.evaluate(() => (document.getElementById('a') as unknown as { __slablabSlub: { cpus: { tid: number }[] } }).__slablabSlub.cpus.map((c) => c.tid));
    expect(tids).toEqual([2, 1]);

    // Stepping one leaves the other where it was; the step is written back to the attribute.
    await a.getByRole('button', { name: 'Step', exact: true }).click();
    // Step goes an operation at a time: past the first step's micro-step to its end.
    await expect.poll(async () => (await figureState(page, 'a')).step).toBeGreaterThan(a0.step);
    const a1 = await figureState(page, 'a');
    await expect(a).toHaveAttribute('step', String(a1.step));
    expect((await figureState(page, 'b')).step).toBe(2);

    // An attribute change is a new story; a bad value is named in the element.
    await page.evaluate(() => document.getElementById('a')?.setAttribute('scenario', 'slow-path'));
    await expect(a.getByTestId('slub-caption')).toContainText(/full slab A|new slab|slow path/i); // the slow path at the step the element keeps
    await page.evaluate(() => document.getElementById('a')?.setAttribute('cpus', '99'));
    await expect(a.getByTestId('url-problems')).toContainText('attribute cpus="99" is not valid: expected a whole number from 2 to 8.');
    await page.evaluate(() => document.getElementById('a')?.setAttribute('cpus', '2'));
    await expect(a.getByTestId('url-problems')).toHaveCount(0);
    await figureState(page, 'a');

    // Removal disposes the element's session; the other one keeps working.
    const loadsBefore = (await requests(page)).filter((r) => r.type === 'load').length;
    const disposesBefore = (await requests(page)).filter((r) => r.type === 'dispose').length;
    expect(loadsBefore).toBeGreaterThanOrEqual(2);
    await page.evaluate(() => document.getElementById('a')?.remove());
    await expect.poll(async () => (await requests(page)).filter((r) => r.type === 'dispose').length).toBe(disposesBefore + 1);
    await b.getByRole('button', { name: 'Micro-step', exact: true }).click();
    expect((await figureState(page, 'b', 3)).step).toBe(3);
    expect(errors).toEqual([]);
  });

  test('keys reach only the element that has the focus; Space elsewhere scrolls the page', async ({ page }) => {
    await hostPage(
      page,
      `${PLAIN_URL}keys.html`,
      `<p>prose</p><slab-lab id="a" scenario="fast-path" cpus="2"></slab-lab><slab-lab id="b" scenario="fast-path" cpus="2"></slab-lab><div style="height:3000px"></div>`,
    );
    await figureState(page, 'a', 0);
    await figureState(page, 'b', 0);
    await page.locator('#b').getByRole('button', { name: 'Step', exact: true }).focus();
    await page.keyboard.press('ArrowRight');
    await expect.poll(async () => (await figureState(page, 'b')).step).toBeGreaterThan(0);
    const b = await figureState(page, 'b');
    expect((await figureState(page, 'a')).step).toBe(0);
    // Focus on the page body: no element takes the keys.
    await page.getByText('prose', { exact: true }).click();
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press(' ');
    await expect.poll(() => page.evaluate(() => window.scrollY)).toBeGreaterThan(0);
    expect((await figureState(page, 'a')).step).toBe(0);
    expect((await figureState(page, 'b')).step).toBe(b.step);
    expect((await figureState(page, 'b')).playing).toBe(false);
  });

  test('an element loads nothing until it is scrolled into view', async ({ page }) => {
    await logWorkerRequests(page);
    await hostPage(
      page,
      `${PLAIN_URL}below.html`,
      `<slab-lab id="early" scenario="fast-path" cpus="2" style="aspect-ratio:auto"></slab-lab><div style="height:4000px">prose</div><slab-lab id="late" scenario="why-tid" cpus="2"></slab-lab>`,
    );
    // Once the figure on screen has loaded, the one below the fold still has not asked for anything.
    await figureState(page, 'early', 0);
    await expect(page.locator('#late')).toContainText('loads when it is scrolled into view');
    expect((await requests(page)).filter((r) => r.type === 'load')).toHaveLength(1);
    expect(await page.evaluate(() => (document.getElementById('late') as SlabLabElement | null)?.state ?? null)).toBeNull();
    await page.locator('#late').scrollIntoViewIfNeeded();
    await figureState(page, 'late', 0);
    expect((await requests(page)).filter((r) => r.type === 'load')).toHaveLength(2);
  });

  test('the element API: go, play to the end, pause, load, with events', async ({ page }) => {
    await hostPage(page, `${PLAIN_URL}api.html`, `<slab-lab id="a" scenario="fast-path" cpus="2" controls="none"></slab-lab>`);
    await figureState(page, 'a', 0);
    // controls="none": the caption and the drawing only.
    await expect(page.locator('#a').getByRole('toolbar', { name: 'Playback' })).toHaveCount(0);
    await expect(page.locator('#a').getByTestId('slub-canvas')).toBeVisible();
    const stepEvent = page.evaluate(
      () => new Promise<number>((resolve) => document.getElementById('a')?.addEventListener('slab-lab-step', (e) => resolve(e.detail.step), { once: true })),
    );
    await page.evaluate(() => (document.getElementById('a') as SlabLabElement | null)?.go(3));
    expect(await stepEvent).toBe(3);
    await expect(page.locator('#a')).toHaveAttribute('step', '3');
    const finished = page.evaluate(
      () => new Promise<LabState>((resolve) => document.addEventListener('slab-lab-finished', (e) => resolve((e as CustomEvent<LabState>).detail), { once: true })),
    );
    await page.evaluate(() => (document.getElementById('a') as SlabLabElement | null)?.play());
    const end = await finished;
    expect(end.atEnd).toBe(true);
    expect(end.step).toBe(end.stops - 1);
    // A bad load changes nothing and says why; a good one replaces the story.
    const bad = await page.evaluate(() => {
      try {
        (document.getElementById('a') as SlabLabElement | null)?.load({ scenario: 'nope' });
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    });
    expect(bad).toContain('load: scenario="nope" is not valid: expected one of');
    await expect(page.locator('#a')).toHaveAttribute('scenario', 'fast-path');
    await page.evaluate(() => (document.getElementById('a') as SlabLabElement | null)?.load({ scenario: 'why-tid', cpus: '2' }));
    await expect(page.locator('#a')).toHaveAttribute('scenario', 'why-tid');
    await expect(page.locator('#a')).not.toHaveAttribute('step', /./);
    const loaded = await figureState(page, 'a', 0);
    expect(loaded.caption).not.toBe(end.caption);
    await page.evaluate(() => (document.getElementById('a') as SlabLabElement | null)?.play());
    await page.evaluate(() => (document.getElementById('a') as SlabLabElement | null)?.pause());
    await expect.poll(async () => (await figureState(page, 'a')).playing).toBe(false);
  });
});

test('<slab-lab> pauses its Play while scrolled off screen and goes on when back', async ({ page }) => {
  // Fake timers: Play's ticks run only when the test advances the clock, so "nothing moved" is a fact, not a wait.
  await page.clock.install();
  await hostPage(page, `${PLAIN_URL}offscreen.html`, `<slab-lab id="a" scenario="fast-path" cpus="2" controls="none"></slab-lab><div style="height:4000px">prose</div><p id="end">end</p>`);
  await figureState(page, 'a', 0);
  await page.evaluate(() => (document.getElementById('a') as SlabLabElement | null)?.play());
  await page.clock.runFor(5_000);
  const onScreen = await figureState(page, 'a');
  expect(onScreen.playing).toBe(true);
  expect(onScreen.step).toBeGreaterThan(0);

  await page.locator('#end').scrollIntoViewIfNeeded();
  await expect.poll(() => page.evaluate(() => document.getElementById('a')!.getBoundingClientRect().bottom < 0)).toBe(true);
  const leaving = (await page.evaluate(() => (document.getElementById('a') as SlabLabElement | null)?.state))!.step;
  // Ten ticks' worth of time, each followed by React's render and effects (tasks of the page's real
  // MessageChannel queue, behind which the probe's own messages run): on screen, ten more stops.
  for (let i = 0; i < 10; i++) {
    await page.clock.runFor(1_000);
    await page.evaluate(async () => {
      for (let hop = 0; hop < 8; hop++)
        await new Promise<void>((resolve) => {
          const c = new MessageChannel();
          c.port1.onmessage = () => resolve();
          c.port2.postMessage(0);
        });
    });
  }
  const away = (await page.evaluate(() => (document.getElementById('a') as SlabLabElement | null)?.state))!;
  expect(away.step).toBeLessThanOrEqual(leaving + 1); // at most the tick already queued when it left
  expect(away.atEnd).toBe(false);
  expect(away.playing).toBe(true); // paused by the page, not by the reader: it goes on when seen

  await page.locator('#a').scrollIntoViewIfNeeded();
  const finished = page.evaluate(
    () => new Promise<LabState>((resolve) => document.getElementById('a')?.addEventListener('slab-lab-finished', (e) => resolve((e as CustomEvent<LabState>).detail), { once: true })),
  );
  await expect.poll(async () => {
    await page.clock.runFor(1_000);
    return (await figureState(page, 'a')).step;
  }).toBeGreaterThan(away.step);
  await page.clock.runFor(60_000);
  expect((await finished).atEnd).toBe(true);
});

test('<slab-lab autoplay> plays its story to the end by itself once on screen', async ({ page }) => {
  await hostPage(page, `${PLAIN_URL}autoplay.html`, `<slab-lab id="a" scenario="fast-path" cpus="2" autoplay controls="none"></slab-lab>`);
  const end = await page.evaluate(
    () => new Promise<LabState>((resolve) => document.getElementById('a')?.addEventListener('slab-lab-finished', (e) => resolve((e as CustomEvent<LabState>).detail), { once: true })),
  );
  expect(end.step).toBe(end.stops - 1);
  expect(end.atEnd).toBe(true);
});

test('<slab-lab> from another origin (a CDN with CORS): the worker starts from a same-origin shim and the figure steps', async ({ page }) => {
  const CDN = 'http://cdn.slablab.test/';
  await serveDist(page, CDN, { 'Access-Control-Allow-Origin': '*' });
  await page.route(`${PLAIN_URL}cdn.html`, (route) =>
    route.fulfill({ contentType: 'text/html', body: `<!doctype html><html lang="en"><head><title>cdn</title><script type="module" src="${CDN}slab-lab.js"></script></head><body><slab-lab id="a" scenario="fast-path" cpus="2"></slab-lab></body></html>` }),
  );
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${PLAIN_URL}cdn.html`);
  const a0 = await figureState(page, 'a', 0);
  await page.locator('#a').getByRole('button', { name: 'Step', exact: true }).click();
  await expect.poll(async () => (await figureState(page, 'a')).step).toBeGreaterThan(a0.step);
  await expect(page.locator('#a').getByRole('link', { name: 'Open in slablab' })).toHaveAttribute('href', new RegExp(`^${CDN}\\?`));
  expect(errors).toEqual([]);
});

test('<slab-lab> in a cross-origin isolated page runs the threads build', async ({ page }) => {
  await hostPage(page, `${ISOLATED_URL}isolated.html`, `<slab-lab id="a" scenario="why-tid" cpus="2"></slab-lab>`, true);
  expect(await page.evaluate(() => window.crossOriginIsolated)).toBe(true);
  await expect(page.locator('#a').getByTestId('core-mode')).toHaveText(/threads/, { timeout: 30_000 });
  await figureState(page, 'a', 0);
  await page.locator('#a').getByRole('button', { name: 'Step', exact: true }).click();
  expect((await figureState(page, 'a')).step).toBeGreaterThan(0);
});

test.describe('the iframe embed API (postMessage)', () => {
  test.use({ viewport: { width: 1100, height: 900 } });

  /**
   * A page at `host` holding `lab`'s embed.html in an iframe, sending to it with `target` as the
   * origin; by default both on the plain server (Chromium's local-network checks block a frame from
   * the other loopback server).
   */
  async function framePage(page: Page, host = PLAIN_URL, lab = PLAIN_URL, target = '*'): Promise<void> {
    await page.route(`${host}frame.html`, (route) =>
      route.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>frame host</title><link rel="icon" href="data:,"></head><body>
          <iframe id="lab" title="slablab" src="${lab}embed.html?view=slub&scenario=fast-path&cpus=2" width="1000" height="700"></iframe>
          <script>
            window.received = [];
            window.addEventListener('message', (e) => { if (e.data && e.data.slablab) window.received.push({ origin: e.origin, ...e.data.slablab }); });
            window.send = (m) => document.getElementById('lab').contentWindow.postMessage({ slablab: m }, '${target}');
          </script></body></html>`,
      }),
    );
    await page.goto(`${host}frame.html`);
  }

  type Received = { origin: string; type: string; version?: number; message?: string; state?: LabState };
  const received = (page: Page) => page.evaluate(() => (window as unknown as { received: Received[] }).received);
  const send = (page: Page, m: object) => page.evaluate((m) => (window as unknown as { send: (m: object) => void }).send(m), m);
  /** Waits for a message of `type` from the frame that matches `pred`, after the first `after` received. */
  async function waitFor(page: Page, type: string, pred: (m: Received) => boolean = () => true, after = 0): Promise<Received> {
    await expect.poll(async () => (await received(page)).slice(after).some((m) => m.type === type && pred(m)), { timeout: 30_000 }).toBe(true);
    return (await received(page)).slice(after).find((m) => m.type === type && pred(m)) as Received;
  }

  test('PING/PONG, go, play to the end, load; refusals say why; the events go to the origin that said PING', async ({ page }) => {
    await framePage(page);
    const frame = page.frameLocator('#lab');
    await expect(frame.getByTestId('slub-caption')).toContainText('One CPU allocating', { timeout: 30_000 });
    // Before PING, a command is refused and nothing is posted on its own.
    await send(page, { type: 'go', step: 2 });
    const refused = await waitFor(page, 'error');
    expect(refused.message).toContain('say PING first');
    expect((await received(page)).filter((m) => m.type === 'step')).toEqual([]);

    await send(page, { type: 'PING' });
    const pong = await waitFor(page, 'PONG');
    expect(pong.version).toBe(1);
    expect(pong.origin).toBe(new URL(PLAIN_URL).origin);
    await waitFor(page, 'step', (m) => m.state?.step === 0);

    let n = (await received(page)).length;
    await send(page, { type: 'go', step: 3 });
    const at3 = await waitFor(page, 'step', (m) => m.state?.step === 3, n);
    expect(at3.state?.position).toMatch(/^Step \d+ of \d+/);
    await expect(frame.getByTestId('slub-position')).toHaveText(at3.state?.position ?? '');

    n = (await received(page)).length;
    await send(page, { type: 'play' });
    const done = await waitFor(page, 'finished', () => true, n);
    expect(done.state?.atEnd).toBe(true);

    n = (await received(page)).length;
    await send(page, { type: 'go', step: 'three' });
    expect((await waitFor(page, 'error', () => true, n)).message).toBe('go needs a whole number step >= 0, got "three"');
    await send(page, { type: 'load', params: { scenario: 'why-tid', cpus: '9' } });
    expect((await waitFor(page, 'error', (m) => m.message?.includes('cpus') === true, n)).message).toContain('load: cpus="9" is not valid');

    n = (await received(page)).length;
    await send(page, { type: 'load', params: { scenario: 'why-tid', cpus: '2' } });
    const loaded = await waitFor(page, 'step', (m) => m.state?.step === 0, n);
    expect(loaded.state?.caption).toContain('interrupt');
    await expect(frame.getByTestId('slub-caption')).toContainText('interrupt');
  });

  test('messages from anything but the parent window are ignored', async ({ page }) => {
    await framePage(page);
    const frame = page.frameLocator('#lab');
    await expect(frame.getByTestId('slub-caption')).toContainText('One CPU allocating', { timeout: 30_000 });
    await send(page, { type: 'PING' });
    await waitFor(page, 'step', (m) => m.state?.step === 0);
    // The frame posting to itself (source: its own window) moves nothing; the parent's next command does.
    await page.frame({ url: /embed\.html/ })?.evaluate(() => window.postMessage({ slablab: { type: 'go', step: 4 } }, '*'));
    await send(page, { type: 'go', step: 2 });
    await waitFor(page, 'step', (m) => m.state?.step === 2);
    expect((await received(page)).filter((m) => m.type === 'step').map((m) => m.state?.step)).toEqual([0, 2]);
  });
  test('across origins: a docs site drives a lab served from another host, and hears it back', async ({ page }) => {
    const DOCS = 'http://docs.slablab.test/';
    const LAB = 'http://lab.slablab.test/';
    await serveDist(page, LAB);
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await framePage(page, DOCS, LAB, LAB.slice(0, -1));
    const frame = page.frameLocator('#lab');
    await expect(frame.getByTestId('slub-caption')).toContainText('One CPU allocating', { timeout: 30_000 });
    await send(page, { type: 'PING' });
    await waitFor(page, 'PONG');
    await waitFor(page, 'step', (m) => m.state?.step === 0);
    // Every answer comes from the lab's origin, posted to the docs origin that said PING (never '*').
    expect(new Set((await received(page)).map((m) => m.origin))).toEqual(new Set([LAB.slice(0, -1)]));
    const n = (await received(page)).length;
    await send(page, { type: 'go', step: 3 });
    const at3 = await waitFor(page, 'step', (m) => m.state?.step === 3, n);
    await expect(frame.getByTestId('slub-position')).toHaveText(at3.state?.position ?? 'no position');
    await send(page, { type: 'load', params: { scenario: 'why-tid', cpus: '2' } });
    await expect(frame.getByTestId('slub-caption')).toContainText('interrupt');
    expect(errors).toEqual([]);
  });
});

test.describe('themes', () => {
  /** The colour of the canvas's top-left pixel in figure `id`, once drawn (r, g, b). */
  async function canvasCorner(page: Page, id: string): Promise<number[]> {
    await figureState(page, id);
    const h = await page.waitForFunction((id) => {
      const c = document.getElementById(id)?.shadowRoot?.querySelector('canvas');
      if (!c || c.width === 0) return null;
      const px = c.getContext('2d')?.getImageData(1, 1, 1, 1).data;
      return px && px[3] === 255 ? [px[0], px[1], px[2]] : null;
    }, id);
    return (await h.jsonValue()) as number[];
  }
  const luminance = (rgb: number[]) => (rgb.reduce((a, b) => a + b, 0) / 3);

  test('theme="dark", "light" and "auto" (the system): page colours and the canvas follow, per element', async ({ page }) => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await hostPage(
      page,
      `${PLAIN_URL}themes.html`,
      `<slab-lab id="d" scenario="fast-path" cpus="2" theme="dark"></slab-lab><slab-lab id="l" scenario="fast-path" cpus="2" theme="light"></slab-lab><slab-lab id="a" scenario="fast-path" cpus="2"></slab-lab>`,
    );
    const bg = async (id: string) => {
      await page.locator(`#${id}`).scrollIntoViewIfNeeded();
      return page.locator(`#${id} .embed`).evaluate((el) => [el.getAttribute('data-theme'), getComputedStyle(el).backgroundColor]);
    };
    expect(await bg('d')).toEqual(['dark', 'rgb(17, 21, 29)']);
    expect(await bg('l')).toEqual(['light', 'rgb(246, 247, 249)']);
    expect((await bg('a'))[0]).toBe('dark'); // auto, and the system is dark
    expect(luminance(await canvasCorner(page, 'd'))).toBeLessThan(40);
    expect(luminance(await canvasCorner(page, 'l'))).toBeGreaterThan(220);
    // The system turns light: the auto element follows, the others keep their choice.
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(async () => (await bg('a'))[0]).toBe('light');
    expect((await bg('d'))[0]).toBe('dark');
    // An attribute change switches one element, canvas included.
    await page.evaluate(() => document.getElementById('d')?.setAttribute('theme', 'light'));
    await expect.poll(async () => luminance(await canvasCorner(page, 'd'))).toBeGreaterThan(220);
  });

  test("the lab's theme toggle: light, dark, back to the system, remembered across loads", async ({ page }) => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(`${PLAIN_URL}?scenario=fast-path&cpus=2`);
    const html = page.locator('html');
    await expect(html).toHaveAttribute('data-theme', 'light');
    const toggle = page.getByTestId('theme-toggle');
    await expect(toggle).toHaveAccessibleName('Theme: auto (light)');
    await toggle.click(); // light
    await toggle.click(); // dark
    await expect(html).toHaveAttribute('data-theme', 'dark');
    await expect(toggle).toHaveAccessibleName('Theme: dark');
    const canvasBg = () =>
      page.getByTestId('slub-canvas').evaluate((c: HTMLCanvasElement) => {
        const px = c.getContext('2d')?.getImageData(1, 1, 1, 1).data;
        return px ? Array.from(px.subarray(0, 3)).reduce((a, b) => a + b, 0) / 3 : -1;
      });
    await expect.poll(canvasBg).toBeLessThan(40);
    await page.reload();
    await expect(html).toHaveAttribute('data-theme', 'dark');
    await page.getByTestId('theme-toggle').click(); // auto: the system is light
    await expect(html).toHaveAttribute('data-theme', 'light');
    await expect.poll(canvasBg).toBeGreaterThan(220);
  });
});
