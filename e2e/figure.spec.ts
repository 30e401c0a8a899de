// The picture first (issue #19, sections 1 and 2): the figure's size, names,
// motion and fit on a page, measured in Chromium.
//
//   - motion: every SLUB, SLAB and percpu story walked step by step; a step
//     whose picture differs from the one before must have moved (LabCanvas's
//     transition: data-motion-frames frames composited, data-motion-count
//     counting transitions), slabs moving between lists and canvases that
//     change height included;
//   - size: SLUB object slots >= 24 px at 1440 px and text >= 12 px (every
//     font the canvases set is recorded), lanes only for the story's CPUs
//     (the rest one click away);
//   - embeds: a <slab-lab> in a 760 px column, embed.html in the README's
//     900x640 iframe, every docs.html figure at 1440 and 375 px;
//   - focus: a click anywhere in a figure gives it ←/→;
//   - fallbacks: print hides the buttons and keeps the canvas; without
//     JavaScript docs.html shows its images and its <noscript> note.
// SCREENSHOTS=1 writes the figures' screenshots to docs/screenshots/ and the
// docs page's fallback images to public/figures/.
import { expect, test, type Locator, type Page } from '@playwright/test';
import { figureState, loadFigures, settled } from './figures';
import { ISOLATED_URL, PLAIN_URL } from './servers';
import { drawnTexts, recordTexts } from './lab';
import { SCENARIOS as SLUB_STORIES } from '../web/slub/scenarios';
import { SCENARIOS as SLAB_STORIES } from '../web/slab/scenarios';
import { SCENARIOS as PERCPU_STORIES } from '../web/percpu/scenarios';

const SHOTS = process.env.SCREENSHOTS === '1';

/** Records the smallest font size (px) any canvas sets, from before the page loads. */
async function recordFonts(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const w = window as unknown as { __minFont: number; __fonts: string[] };
    w.__minFont = Infinity;
    w.__fonts = [];
    const d = Object.getOwnPropertyDescriptor(CanvasRenderingContext2D.prototype, 'font');
    if (!d?.set || !d.get) return;
    const set = d.set;
    Object.defineProperty(CanvasRenderingContext2D.prototype, 'font', {
      get: d.get,
      set(this: CanvasRenderingContext2D, v: string) {
        const px = /(\d+(?:\.\d+)?)px/.exec(v);
        if (px) {
          const n = Number(px[1]);
          if (n < w.__minFont) w.__minFont = n;
          if (n < 12 && w.__fonts.length < 20) w.__fonts.push(v);
        }
        set.call(this, v);
      },
    });
  });
}

/**
 * The things a caption names that the picture must label too, each with the test of the drawn
 * texts that finds it: slabs and objects by letter (A, B, C; X, Y: a capital letter alone,
 * not the article opening a sentence), the sheaves (main, spare), the barn; SLAB's caches by name
 * and its shared array; percpu's chunks and area map.
 */
function captionNames(view: 'slub' | 'slab' | 'percpu', caption: string): { name: string; found: (texts: readonly string[]) => boolean }[] {
  const words = (re: RegExp) => (texts: readonly string[]) => texts.some((t) => re.test(t));
  const out = new Map<string, (texts: readonly string[]) => boolean>();
  if (view === 'slub') {
    for (const m of caption.matchAll(/(?<![.:!?] |^)\b([A-Z])\b/g)) {
      const letter = m[1] ?? '';
      out.set(letter, words(new RegExp(`(^|[^\\w#])${letter}($|[^\\w])`)));
    }
    for (const w of ['sheaf', 'barn', 'main', 'spare'] as const) if (new RegExp(`\\b${w}`, 'i').test(caption)) out.set(w, words(new RegExp(`\\b${w}`, 'i')));
  }
  if (view === 'slab') {
    for (const m of caption.matchAll(/\b((?!order-)[a-z][a-z_]*-\d+)\b/g)) out.set(m[1] ?? '', words(new RegExp(`\\b${m[1]}\\b`)));
    if (/shared array/.test(caption)) out.set('shared array', words(/\bshared\b/));
    for (const m of caption.matchAll(/\bCPU (\d+)/g)) out.set(`CPU ${m[1]}`, words(new RegExp(`\\bCPU ${m[1]}\\b`)));
  }
  if (view === 'percpu') {
    if (/\bchunk/.test(caption)) out.set('chunk', words(/\bchunk/i));
    if (/area map/.test(caption)) out.set('area map', words(/area map/i));
  }
  return [...out].map(([name, found]) => ({ name, found }));
}

/** A hash of the canvas's pixels (to tell whether a step changed the picture). */
function pixels(canvas: Locator): Promise<string> {
  return canvas.evaluate((c: HTMLCanvasElement) => {
    const d = c.getContext('2d')?.getImageData(0, 0, c.width, c.height).data;
    if (!d) return '';
    let h = 2166136261;
    for (let i = 0; i < d.length; i += 4) h = Math.imul(h ^ (d[i]! + 7 * d[i + 1]! + 13 * d[i + 2]!), 16777619);
    return `${c.width}x${c.height}:${h >>> 0}`;
  });
}

const motion = (canvas: Locator) => canvas.evaluate((c: HTMLCanvasElement) => ({ count: Number(c.dataset.motionCount ?? 0), frames: Number(c.dataset.motionFrames ?? 0), moving: c.dataset.motion === 'on', ms: Number(c.dataset.motionMs ?? 0) }));

/**
 * Steps the lab on the page to its end with the Step button; after each step waits for the
 * transition to end and checks that a step that changed the picture moved (>= 3 frames).
 * Returns the steps walked and how many of them changed the picture.
 */
async function walk(page: Page, prefix: string, what: string): Promise<{ steps: number; changed: number; minFrames: number }> {
  const canvas = page.getByTestId(`${prefix}-canvas`).first();
  const position = page.getByTestId(`${prefix}-position`);
  await expect(position).toContainText(/Start \(\d+ steps?\)/);
  await expect(canvas).toBeVisible();
  await page.waitForFunction((id) => document.querySelector(`[data-testid=${id}]`)?.getAttribute('data-motion') !== 'on', `${prefix}-canvas`);
  let before = await pixels(canvas);
  await drawnTexts(page);
  const step = page.getByRole('button', { name: 'Step', exact: true });
  let steps = 0;
  let changed = 0;
  let minFrames = Infinity;
  while (await step.isEnabled()) {
    const m0 = await motion(canvas);
    const pos = await position.textContent();
    await step.click();
    await expect(position).not.toHaveText(pos ?? '');
    steps++;
    // The transition of this step ends (a new state always starts one), then the picture is compared.
    await expect.poll(async () => (await motion(canvas)).count, { message: `${what}, step ${steps}: no transition ended`, timeout: 5000 }).toBeGreaterThan(m0.count);
    await page.waitForFunction((id) => document.querySelector(`[data-testid=${id}]`)?.getAttribute('data-motion') !== 'on', `${prefix}-canvas`);
    const m = await motion(canvas);
    const after = await pixels(canvas);
    {
      // Whatever the caption names is labelled on the picture (the texts the canvases drew for this step).
      const texts = await drawnTexts(page);
      const caption = (await page.getByTestId(`${prefix}-caption`).first().textContent()) ?? '';
      for (const n of captionNames(prefix as 'slub' | 'slab' | 'percpu', caption)) expect(n.found(texts), `${what}, step ${steps}: the caption names "${n.name}", the canvas does not (it drew: ${texts.join(' | ').slice(0, 600)})`).toBe(true);
    }
    if (after !== before) {
      changed++;
      minFrames = Math.min(minFrames, m.frames);
      expect(m.frames, `${what}, step ${steps} changed the picture without moving it`).toBeGreaterThanOrEqual(3);
    }
    before = after;
  }
  return { steps, changed, minFrames };
}

test.describe('motion: every step that changes the picture moves it; what each caption names is on the picture', () => {
  test.use({ viewport: { width: 1440, height: 900 } });
  test.beforeEach(async ({ page }) => recordTexts(page));

  test('SLUB: every story, every step', async ({ page }) => {
    test.setTimeout(600_000);
    for (const s of SLUB_STORIES) {
      const kernel = s.eras.includes('cpu-slab') ? '' : '&kernel=7.0';
      await page.goto(`${ISOLATED_URL}?scenario=${s.id}&cpus=2${kernel}`);
      const r = await walk(page, 'slub', `SLUB ${s.id}`);
      expect(r.changed, `SLUB ${s.id}: the story changed the picture`).toBeGreaterThan(0);
    }
  });

  test('SLAB: every story, every step', async ({ page }) => {
    test.setTimeout(600_000);
    for (const s of SLAB_STORIES) {
      await page.goto(`${ISOLATED_URL}?mode=slab&scenario=${s.id}`);
      const r = await walk(page, 'slab', `SLAB ${s.id}`);
      expect(r.changed, `SLAB ${s.id}: the story changed the picture`).toBeGreaterThan(0);
    }
  });

  test('percpu: every story, every step', async ({ page }) => {
    test.setTimeout(600_000);
    for (const s of PERCPU_STORIES) {
      await page.goto(`${ISOLATED_URL}?mode=percpu&scenario=${s.id}`);
      const r = await walk(page, 'percpu', `percpu ${s.id}`);
      expect(r.changed, `percpu ${s.id}: the story changed the picture`).toBeGreaterThan(0);
    }
  });

  test('a slab moving between lists glides, across a change of the canvas height; reduced motion is a short plain fade', async ({ page }) => {
    await page.goto(`${ISOLATED_URL}?scenario=remote-frees&cpus=2`);
    const canvas = page.getByTestId('slub-canvas');
    await expect(page.getByTestId('slub-position')).toContainText('Start (');
    // Every step that changes the drawing's height moves (the old code skipped them); on one of them a slab glides between lists.
    let glided = 0;
    let resized = 0;
    for (let i = 0; i < 14; i++) {
      await page.waitForFunction(() => document.querySelector('[data-testid=slub-canvas]')?.getAttribute('data-motion') !== 'on');
      const h0 = (await canvas.boundingBox())?.height ?? 0;
      const m0 = await motion(canvas);
      const step = page.getByRole('button', { name: 'Step', exact: true });
      if (!(await step.isEnabled())) break;
      await step.click();
      await expect.poll(async () => (await motion(canvas)).count).toBeGreaterThan(m0.count);
      const m = await canvas.evaluate((c: HTMLCanvasElement) => ({ frames: Number(c.dataset.motionFrames), moved: Number(c.dataset.motionMoved), ms: Number(c.dataset.motionMs), resized: Number(c.dataset.motionResized) }));
      if ((await canvas.boundingBox())?.height === h0) continue;
      resized++;
      expect(m.frames, `step ${i + 1} changed the height`).toBeGreaterThanOrEqual(5);
      // The height itself eased: frames drawn at heights between the old and the new one.
      expect(m.resized, `step ${i + 1}: the canvas height animated`).toBeGreaterThanOrEqual(3);
      expect(m.ms).toBeGreaterThanOrEqual(400);
      if (m.moved >= 1) glided++;
    }
    expect(resized).toBeGreaterThan(0);
    expect(glided, 'a slab glided on a step that changed the height').toBeGreaterThan(0);

    // Mid-transition the element's height is between the old and the new one (sampled every frame in the page).
    await page.waitForFunction(() => document.querySelector('[data-testid=slub-canvas]')?.getAttribute('data-motion') !== 'on');
    const sample = () =>
      canvas.evaluate(
        (c: HTMLCanvasElement) =>
          new Promise<number[]>((done) => {
            const hs: number[] = [];
            const t0 = performance.now();
            const f = () => {
              hs.push(c.getBoundingClientRect().height);
              if (performance.now() - t0 < 900) requestAnimationFrame(f);
              else done(hs);
            };
            requestAnimationFrame(f);
          }),
      );
    const back = page.getByRole('button', { name: 'Back', exact: true });
    // Back over the steps until one changes the height.
    let between = 0;
    for (let i = 0; i < 14 && !between; i++) {
      const h0 = (await canvas.boundingBox())?.height ?? 0;
      const seen = sample();
      await back.click();
      const hs = await seen;
      const h1 = hs[hs.length - 1] ?? h0;
      if (h1 !== h0) between = hs.filter((h) => h > Math.min(h0, h1) + 0.5 && h < Math.max(h0, h1) - 0.5).length;
    }
    expect(between, 'frames at a height between the old and the new').toBeGreaterThanOrEqual(3);

    // Reduced motion: the step forward again (the height changes back) is a short fade, the height set at once.
    await page.emulateMedia({ reducedMotion: 'reduce' });
    const m1 = await motion(canvas);
    const h0 = (await canvas.boundingBox())?.height ?? 0;
    const seen = sample();
    await page.getByRole('button', { name: 'Step', exact: true }).click();
    const hs = await seen;
    const h1 = hs[hs.length - 1] ?? h0;
    expect(h1, 'the step changes the height').not.toBe(h0);
    expect(hs.filter((h) => h > Math.min(h0, h1) + 0.5 && h < Math.max(h0, h1) - 0.5), 'no height in between under reduced motion').toEqual([]);
    await expect.poll(async () => (await motion(canvas)).count).toBeGreaterThan(m1.count);
    expect((await motion(canvas)).ms).toBeLessThanOrEqual(200);
    expect(await canvas.getAttribute('data-motion-resized')).toBe('0');
  });
});

test.describe('the first frame', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('each story opens on the state its set-up built: slabs (and sheaves) on the SLUB canvas, chunks on percpu\'s, slabs or caches on SLAB\'s', async ({ page }) => {
    test.setTimeout(300_000);
    // Every SLUB story has set-up (the landing page's fast path too): none opens on empty lanes.
    const setUp = SLUB_STORIES.filter((s) => (s.build({ cpus: 2, objects: 8 }).setup ?? 0) > 0);
    expect(setUp.map((s) => s.id)).toEqual(SLUB_STORIES.map((s) => s.id));
    for (const s of setUp) {
      const sheaves = !s.eras.includes('cpu-slab');
      await page.goto(`${ISOLATED_URL}?scenario=${s.id}&cpus=2${sheaves ? '&kernel=7.0' : ''}`);
      await expect(page.getByTestId('slub-position')).toContainText('Start (');
      await expect(page.getByTestId('slub-caption')).toContainText('Already set up:');
      const canvas = page.getByTestId('slub-canvas').first();
      // Polled: the attribute is written once the canvas has its layout (absent before).
      await expect.poll(async () => Number((await canvas.getAttribute('data-figure-slabs')) ?? 0), { message: `${s.id}: slabs in the first frame` }).toBeGreaterThanOrEqual(1);
      // Before bootstrap_cache_sheaves a kmalloc cache has no sheaf to draw (the bootstrap sheaf holds nothing): that is its story.
      if (sheaves && s.id !== 'bootstrap') expect(Number(await canvas.getAttribute('data-figure-sheaves')), `${s.id}: sheaves in the first frame`).toBeGreaterThanOrEqual(1);
    }
    // The landing page (no scenario: the fast path) opens on CPU 0's slab too.
    await page.goto(ISOLATED_URL);
    await expect(page.getByTestId('slub-position')).toContainText('Start (');
    await expect.poll(() => page.getByTestId('slub-canvas').first().getAttribute('data-figure-slabs'), { message: 'the landing page' }).toBe('1');
    // SLAB's stories that allocate before what they teach: the slabs of their set-up, in each rule set's pane.
    const slabSetUp = ['refill-flush', 'shared', 'reap', 'kmalloc-test'];
    for (const id of slabSetUp) expect(SLAB_STORIES.map((s) => s.id), id).toContain(id);
    for (const id of slabSetUp) {
      await page.goto(`${ISOLATED_URL}?mode=slab&scenario=${id}&cpus=2`);
      await expect(page.getByTestId('slab-position')).toContainText('Start (');
      await expect(page.getByTestId('slab-caption')).toContainText('Already set up:');
      const panes = page.getByTestId('slab-canvas');
      await expect(panes).toHaveCount(2);
      for (const i of [0, 1]) {
        await expect.poll(async () => Number((await panes.nth(i).getAttribute('data-figure-slabs')) ?? 0), { message: `slab ${id}, pane ${i}: slabs in the first frame` }).toBeGreaterThanOrEqual(1);
      }
    }
    for (const s of PERCPU_STORIES) {
      await page.goto(`${ISOLATED_URL}?mode=percpu&scenario=${s.id}`);
      await expect(page.getByTestId('percpu-position')).toContainText('Start (');
      await expect.poll(() => page.getByTestId('percpu-canvas').first().getAttribute('data-figure-chunks'), { message: `percpu ${s.id}` }).not.toBeNull();
      expect(Number(await page.getByTestId('percpu-canvas').first().getAttribute('data-figure-chunks'))).toBeGreaterThanOrEqual(2);
    }
    await page.goto(`${ISOLATED_URL}?mode=slab&scenario=types`);
    await expect(page.getByTestId('slab-position')).toContainText('Start (');
    await expect.poll(() => page.getByTestId('slab-canvas').first().getAttribute('data-figure-caches')).toBe('4');
  });
});

test.describe('the figure: size, names, lanes', () => {
  test('SLUB at 1440 px: slots of 24 px or more, text of 12 px or more, lanes only for the story\'s CPUs (the rest one click away)', async ({ page }) => {
    await recordFonts(page);
    await page.setViewportSize({ width: 1440, height: 900 });
    for (const id of ['fast-path', 'why-tid', 'slow-path', 'remote-frees', 'bulk-free']) {
      await page.goto(`${ISOLATED_URL}?scenario=${id}&cpus=4&step=99`);
      const canvas = page.getByTestId('slub-canvas');
      await expect(page.getByTestId('slub-position')).toContainText(/Step (\d+) of \1(?!\d)/);
      await expect.poll(() => canvas.getAttribute('data-figure-slot')).not.toBeNull();
      expect(Number(await canvas.getAttribute('data-figure-slot')), id).toBeGreaterThanOrEqual(24);
      // The canvas fills the width it is given.
      const box = await canvas.boundingBox();
      const pane = await page.locator('.lab-pane').first().boundingBox();
      expect(Math.abs((box?.width ?? 0) - (pane?.width ?? 0))).toBeLessThanOrEqual(2);
    }
    const fonts = await page.evaluate(() => {
      const w = window as unknown as { __minFont: number; __fonts: string[] };
      return { min: w.__minFont, small: w.__fonts };
    });
    expect(fonts.small, 'fonts under 12 px').toEqual([]);
    expect(fonts.min).toBeGreaterThanOrEqual(12);

    // The fast path uses CPU 0 only: one lane, CPUs 1-3 folded into a row that opens with a click.
    await page.goto(`${ISOLATED_URL}?scenario=fast-path&cpus=4&step=1`);
    const canvas = page.getByTestId('slub-canvas');
    await expect.poll(() => canvas.getAttribute('data-figure-lanes')).toBe('1');
    const folded = Number(await canvas.getAttribute('data-figure-folded'));
    expect(folded).toBeGreaterThan(0);
    await canvas.click({ position: { x: 40, y: folded + 12 } });
    await expect.poll(() => canvas.getAttribute('data-figure-lanes')).toBe('4');
  });

  test('the objects a caption names keep their names at 375 px, where the slots are too small for indices', async ({ page }) => {
    await recordTexts(page);
    await page.setViewportSize({ width: 375, height: 800 });
    // Eight CPUs: a slab of 32 objects (calculate_order), whose slots wrap small on a phone.
    await page.goto(`${ISOLATED_URL}?scenario=why-tid&cpus=8&step=99`);
    const canvas = page.getByTestId('slub-canvas');
    await expect(page.getByTestId('slub-position')).toContainText(/Step (\d+) of \1(?!\d)/);
    await expect.poll(() => canvas.getAttribute('data-figure-slot')).not.toBeNull();
    // The settled figure's slots (the start, drawn first, is laid out before the page has its final width).
    await settled(page);
    expect(Number(await canvas.getAttribute('data-figure-slot')), 'slots too small for their indices').toBeLessThan(18);
    // What the settled figure draws: the texts of a repaint at this width (a selection repaints it).
    await drawnTexts(page);
    await canvas.focus();
    await page.keyboard.press('ArrowDown');
    await expect
      .poll(async () => {
        const t = await drawnTexts(page);
        return t.length ? ['X', 'Y'].filter((n) => t.includes(n)) : null;
      })
      .toEqual(['X', 'Y']);
  });

  test('at 375 px the SLUB, SLAB and percpu figures fit the width with text of 12 px or more', async ({ page }) => {
    await recordFonts(page);
    await page.setViewportSize({ width: 375, height: 800 });
    for (const q of ['scenario=slow-path&cpus=2&step=99', 'mode=slab&scenario=types&step=99', 'mode=percpu&scenario=in-order&step=99']) {
      await page.goto(`${ISOLATED_URL}?${q}`);
      const canvas = page.locator('canvas[data-testid$="-canvas"]').first();
      await expect(canvas).toBeVisible({ timeout: 30_000 }); // the core loads first
      await page.waitForTimeout(300);
      const box = await canvas.boundingBox();
      expect(box?.x ?? -1, q).toBeGreaterThanOrEqual(0);
      expect((box?.x ?? 0) + (box?.width ?? 999), q).toBeLessThanOrEqual(375);
    }
    const fonts = await page.evaluate(() => (window as unknown as { __fonts: string[] }).__fonts);
    expect(fonts, 'fonts under 12 px').toEqual([]);
  });
});

/**
 * Side-by-side panes line up row by row (as Perfetto's tracks): the canvases on one row, as tall
 * as each other, and every row they share (data-rows: key@y) at the same height in each.
 */
async function expectAligned(canvases: Locator, what: string): Promise<void> {
  await expect.poll(() => canvases.count()).toBeGreaterThan(1);
  await expect.poll(() => canvases.evaluateAll((cs) => cs.every((c) => c.getAttribute('data-rows') && c.getAttribute('data-motion') !== 'on'))).toBe(true);
  const panes = await canvases.evaluateAll((cs) =>
    cs.map((c) => ({ top: c.getBoundingClientRect().top, h: c.getBoundingClientRect().height, rows: Object.fromEntries((c.getAttribute('data-rows') ?? '').split('|').map((r) => [r.slice(0, r.lastIndexOf('@')), Number(r.slice(r.lastIndexOf('@') + 1))])) })),
  );
  const [first, ...rest] = panes;
  for (const p of rest) {
    expect(p.top, `${what}: the panes on one row`).toBe(first?.top);
    expect(p.h, `${what}: the panes as tall as each other`).toBe(first?.h);
    const shared = Object.keys(p.rows).filter((k) => k in (first?.rows ?? {}));
    expect(shared.length, `${what}: rows in common`).toBeGreaterThan(2);
    for (const k of shared) expect(p.rows[k], `${what}: row ${k}`).toBe(first?.rows[k]);
  }
}

/** A page of the plain server holding `html` in a column `width` px wide, with slab-lab.js. */
async function column(page: Page, html: string, width: number): Promise<void> {
  await page.goto(`${PLAIN_URL}docs.html`);
  await page.setContent(`<!doctype html><script type="module" src="${PLAIN_URL}slab-lab.js"></script><main style="width:${width}px;margin:0 auto">${html}</main>`);
}

test.describe('embeds that fit a page', () => {
  test.use({ viewport: { width: 1440, height: 900 } });

  test('a <slab-lab> in a 760 px column: at most ~600 px tall, compact, variants side by side', async ({ page }) => {
    await column(page, '<slab-lab id="a" view="slub" scenario="why-tid" variant="cmpxchg,plain" cpus="2"></slab-lab><slab-lab id="b" view="slub" scenario="slow-path" cpus="2" step="12"></slab-lab>', 760);
    for (const id of ['a', 'b']) {
      await figureState(page, id);
      await page.waitForTimeout(300);
      const h = (await page.locator(`#${id}`).boundingBox())?.height ?? 0;
      expect(h, `figure ${id} in a 760 px column`).toBeLessThanOrEqual(620);
    }
    const a = page.locator('#a');
    // Compact: the picture, its caption and the playback buttons; no code panel, inspector or timeline.
    await expect(a.getByTestId('slub-caption')).toBeVisible();
    await expect(a.getByRole('button', { name: 'Step', exact: true })).toBeVisible();
    await expect(a.getByTestId('timeline')).toHaveCount(0);
    await expect(a.getByTestId('inspector')).toHaveCount(0);
    await expect(a.locator('.lab-legend')).toHaveCount(0);
    // Side by side: the two panes' canvases on one row, the same height (aligned row by row).
    const c0 = await a.getByTestId('slub-pane-0').locator('canvas').boundingBox();
    const c1 = await a.getByTestId('slub-pane-1').locator('canvas').boundingBox();
    expect(c0?.y).toBe(c1?.y);
    expect(c0?.height).toBe(c1?.height);
    expect((c1?.x ?? 0) > (c0?.x ?? 0) + (c0?.width ?? 0) - 1).toBe(true);
    // controls="full" brings the rest back.
    await page.evaluate(() => document.getElementById('b')?.setAttribute('controls', 'full'));
    await expect(page.locator('#b').getByTestId('timeline')).toBeVisible();
  });

  test('the README\'s SLAB snippet in a 760 px column: the four-cache figure at its last step at most ~600 px tall, its panes aligned row by row', async ({ page }) => {
    await column(page, '<slab-lab id="s" view="slab" scenario="types" controls="none"></slab-lab>', 760);
    const last = (await figureState(page, 's')).stops - 1;
    await page.evaluate((step) => (document.getElementById('s') as unknown as { go(n: number): void }).go(step), last);
    await figureState(page, 's', last);
    await settled(page);
    const h = (await page.locator('#s').boundingBox())?.height ?? 0;
    console.log(`SLAB types in a 760 px column, last step: ${h} px`);
    expect(h).toBeLessThanOrEqual(620);
    await expectAligned(page.locator('#s [data-testid=slab-canvas]'), 'SLAB before/after');
  });

  test('in the full app too: side-by-side panes have heads of one height, so their drawings start level (percpu\'s three allocators aligned row by row)', async ({ page }) => {
    const heads = (panes: Locator) => panes.evaluateAll((ps) => ps.map((p) => Math.round((p.firstElementChild?.getBoundingClientRect().height ?? 0) * 10) / 10));
    await page.goto(`${ISOLATED_URL}?mode=percpu&scenario=second-half&step=99`);
    const percpu = page.getByTestId('percpu-canvas');
    await expect.poll(() => percpu.count(), { timeout: 30_000 }).toBe(3);
    const panes = page.locator('section.lab-pane').filter({ has: percpu });
    // The heads' own content differs (each allocator's figures wrap differently); their boxes do not.
    const hs = await heads(panes);
    expect(hs, 'percpu pane heads').toEqual([hs[0], hs[0], hs[0]]);
    await expectAligned(percpu, 'percpu allocators in the app');
    // SLUB's two fast paths side by side (a third wraps at this width): the canvases start level under heads of one height.
    await page.goto(`${ISOLATED_URL}?scenario=why-tid&cpus=2&variant=cmpxchg,plain&step=99`);
    const slub = page.getByTestId('slub-canvas');
    await expect.poll(() => slub.count(), { timeout: 30_000 }).toBe(2);
    await expect(page.getByTestId('slub-position')).toContainText(/Step (\d+) of \1(?!\d)/);
    const sh = await heads(page.locator('section.lab-pane').filter({ has: slub }));
    expect(sh, 'SLUB pane heads').toEqual([sh[0], sh[0]]);
    const tops = await slub.evaluateAll((cs) => cs.map((c) => Math.round(c.getBoundingClientRect().top)));
    expect(tops, 'SLUB canvases level').toEqual([tops[0], tops[0]]);
  });

  test('percpu\'s three allocators side by side in a page-wide figure: aligned row by row', async ({ page }) => {
    await column(page, '<slab-lab id="p" view="percpu" scenario="second-half" step="99"></slab-lab>', 1200);
    await figureState(page, 'p');
    await expectAligned(page.locator('#p [data-testid=percpu-canvas]'), 'percpu allocators');
  });

  test('embed.html in the README\'s 900x640 iframe does not scroll inside', async ({ page }) => {
    await page.goto(PLAIN_URL);
    await page.setContent(`<iframe title="slablab" src="${PLAIN_URL}embed.html?view=slub&scenario=why-tid&variant=plain&step=7&cpus=2" width="900" height="640" style="border:0"></iframe>`);
    const frame = page.frameLocator('iframe[title=slablab]');
    await expect(frame.getByTestId('slub-position')).toContainText(/Step (\d+) of \1(?!\d)/);
    await page.waitForTimeout(500);
    const inner = await page.frames()[1]?.evaluate(() => [document.documentElement.scrollHeight, document.documentElement.clientHeight, document.documentElement.scrollWidth, document.documentElement.clientWidth]);
    expect(inner?.[0]).toBeLessThanOrEqual(inner?.[1] ?? 0);
    expect(inner?.[2]).toBeLessThanOrEqual(inner?.[3] ?? 0);
  });

  for (const width of [1440, 375]) {
    test(`every docs.html figure at ${width} px: under 800 px tall at 1440, inside the width at 375`, async ({ page }) => {
      test.setTimeout(120_000);
      await recordFonts(page);
      await page.setViewportSize({ width, height: 900 });
      await page.goto(`${PLAIN_URL}docs.html`);
      const ids = await loadFigures(page);
      expect(ids.length).toBeGreaterThanOrEqual(8);
      for (const id of ids) {
        await figureState(page, id);
        const box = await page.locator(`#${id}`).boundingBox();
        if (width === 1440) expect(box?.height ?? 9999, `${id} at 1440 px`).toBeLessThan(800);
        else expect((box?.x ?? 0) + (box?.width ?? 9999), `${id} at 375 px`).toBeLessThanOrEqual(375);
        if (SHOTS && width === 1440) {
          // The fallback image: the figure at its last step, its panes.
          const last = (await figureState(page, id)).stops - 1;
          await page.evaluate(([id, step]) => (document.getElementById(id as string) as unknown as { go(n: number): void }).go(step as number), [id, last] as const);
          await figureState(page, id, last);
          await settled(page);
          await page.locator(`#${id}`).locator('.lab-panes').screenshot({ path: `public/figures/${id}.png` });
        }
      }
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      const fonts = await page.evaluate(() => (window as unknown as { __fonts: string[] }).__fonts);
      expect(fonts, 'canvas fonts under 12 px').toEqual([]);
      if (SHOTS) {
        await settled(page);
        await page.screenshot({ path: `docs/screenshots/${width === 1440 ? 'docs-page' : 'docs-375'}.png` });
      }
    });
  }

  test('a click anywhere in a figure gives it the keys: → steps it, ← goes back', async ({ page }) => {
    await column(page, '<p>prose</p><slab-lab id="a" scenario="fast-path" cpus="2"></slab-lab><slab-lab id="b" scenario="fast-path" cpus="2"></slab-lab>', 760);
    await figureState(page, 'a', 0);
    await figureState(page, 'b', 0);
    // On the caption (no control there).
    await page.locator('#b').getByTestId('slub-caption').click();
    await page.keyboard.press('ArrowRight');
    // An operation at a time: past the first step's micro-steps to its end.
    await expect.poll(async () => (await figureState(page, 'b')).step).toBeGreaterThan(0);
    const b1 = (await figureState(page, 'b')).step;
    expect((await figureState(page, 'a')).step).toBe(0);
    // On the canvas: the arrows step the figure (an operation at a time), not a selection.
    await page.locator('#a').getByTestId('slub-canvas').click({ position: { x: 5, y: 5 } });
    await page.keyboard.press('ArrowRight');
    await expect.poll(async () => (await figureState(page, 'a')).step).toBeGreaterThan(0);
    const one = (await figureState(page, 'a')).step;
    await page.keyboard.press('ArrowRight');
    await expect.poll(async () => (await figureState(page, 'a')).step).toBeGreaterThan(one);
    await page.keyboard.press('ArrowLeft');
    await expect.poll(async () => (await figureState(page, 'a')).step).toBe(one);
    expect((await figureState(page, 'b')).step).toBe(b1);
  });
});

test.describe('static fallbacks', () => {
  test('print shows the figure at its step without the buttons', async ({ page }) => {
    await column(page, '<slab-lab id="a" scenario="fast-path" cpus="2" step="3"></slab-lab>', 760);
    await figureState(page, 'a', 3);
    const fig = page.locator('#a');
    await expect(fig.locator('.lab-controls')).toBeVisible();
    await page.emulateMedia({ media: 'print' });
    await expect(fig.locator('.lab-controls')).toBeHidden();
    await expect(fig.getByTestId('slub-canvas')).toBeVisible();
    await expect(fig.getByTestId('slub-caption')).toBeVisible();
  });

  test('without JavaScript docs.html says so and shows each figure as an image', async ({ browser }) => {
    const ctx = await browser.newContext({ javaScriptEnabled: false });
    const page = await ctx.newPage();
    await page.goto(`${PLAIN_URL}docs.html`);
    await expect(page.getByTestId('noscript-note')).toBeVisible();
    const images = page.locator('slab-lab > img');
    expect(await images.count()).toBe(await page.locator('slab-lab').count());
    for (const img of await images.all()) {
      await img.scrollIntoViewIfNeeded();
      await expect.poll(() => img.evaluate((i: HTMLImageElement) => i.complete && i.naturalWidth > 0)).toBe(true);
      await expect(img).toHaveAttribute('alt', /.+/);
    }
    await ctx.close();
  });
});
