// lab-shell-measure.mjs - the lab shell's figures (issue 19, section 3) measured in headless
// Chromium against a served build: node scripts/lab-shell-measure.mjs BASE_URL (e.g. after
// `npx vite build`, `python3 -m http.server 8000 -d dist` and http://127.0.0.1:8000/).  Prints
// the Benchmarks page's width at 375 px, the code line off screen over the slow path's stops,
// whether the caption is in view after Alloc with the page scrolled, a sandbox link's
// operations after one Alloc, and the progress counters the view shows.
import { chromium } from '@playwright/test';
const base = process.argv[2];
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
const out = {};
const hookReady = (page) => page.waitForFunction(() => window.__slablabSlub?.ready && window.__slablabSlub.stops > 0, null, { timeout: 60000 });
{
  // Benchmarks page width at 375 px, native fixture loaded.
  const page = await browser.newPage({ viewport: { width: 375, height: 740 } });
  await page.goto(`${base}?page=benchmarks`);
  await page.getByLabel(/Native result/).setInputFiles(new URL('../e2e/bench-native.fixture.json', import.meta.url).pathname);
  await page.waitForTimeout(1500);
  out.benchWidth375 = await page.evaluate(() => document.documentElement.scrollWidth);
  await page.close();
}
{
  // Code line in view over the slow path's stops.
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}?scenario=slow-path&cpus=2`);
  await hookReady(page);
  let off = 0, total = 0;
  for (;;) {
    const h = await page.evaluate(() => window.__slablabSlub);
    if (h.stop >= h.stops - 1) break;
    await page.getByRole('button', { name: 'Micro-step', exact: true }).click();
    await page.waitForFunction((s) => window.__slablabSlub?.ready && window.__slablabSlub.stop > s, h.stop);
    await page.waitForTimeout(150);
    const r = await page.evaluate(() => {
      const pre = document.querySelector('[data-testid=slub-code] pre');
      const row = pre?.querySelector('.now');
      if (!pre || !row) return null;
      const p = pre.getBoundingClientRect(), q = row.getBoundingClientRect();
      return q.top >= p.top - 1 && q.bottom <= p.bottom + 1;
    });
    if (r === null) continue;
    total++;
    if (!r) off++;
  }
  out.codeLineOffScreen = `${off} of ${total} stops`;
  await page.close();
}
for (const width of [1440, 375]) {
  // Alloc clicked with the page scrolled to the timeline: is the caption in view?
  const page = await browser.newPage({ viewport: { width, height: width === 375 ? 740 : 900 } });
  await page.goto(`${base}?scenario=fast-path&step=1000000`);
  await hookReady(page);
  await page.getByTestId('timeline').scrollIntoViewIfNeeded();
  const alloc = page.getByRole('button', { name: 'Alloc on CPU 0', exact: true });
  const allocInView = await alloc.evaluate((b) => { const r = b.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; });
  await alloc.click();
  await page.waitForTimeout(2500);
  const cap = await page.getByTestId('slub-caption').evaluate((c) => { const r = c.getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; });
  out[`alloc${width}`] = { allocButtonInViewWhenScrolled: allocInView, captionInViewAfter: cap };
  await page.close();
}
{
  // A sandbox link opened at its start: operations before and after one Alloc.
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}?scenario=sandbox&ops=a0.a0.a0.f0-0-1`);
  await hookReady(page);
  const before = await page.evaluate(() => window.__slablabSlub.opResults.length);
  await page.getByRole('button', { name: 'Alloc on CPU 0', exact: true }).click();
  await page.waitForTimeout(2500);
  await hookReady(page);
  const after = await page.evaluate(() => window.__slablabSlub.opResults.length);
  out.sandboxOps = `${before} -> ${after} after one Alloc; ops=${new URL(page.url()).searchParams.get('ops')}`;
  await page.close();
}
{
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(`${base}?scenario=slow-path&cpus=2&step=3`);
  await hookReady(page);
  out.counters = (await page.getByTestId('slub-view').innerText()).match(/\b(Step|stop) \d+ of \d+[^\n.:]*/g);
  await page.close();
}
console.log(JSON.stringify(out, null, 1));
await browser.close();
