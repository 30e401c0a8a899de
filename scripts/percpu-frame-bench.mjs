#!/usr/bin/env node
// percpu-frame-bench.mjs - frame times of the percpu view playing a script
// with the three allocators side by side on a 64-chunk world, in headless
// Chromium, from the browser's performance timeline.
//
//   npx vite build && node scripts/percpu-frame-bench.mjs [--seconds 10] [--chunks 64] [--speed 2] [--width 1400]
//
// Serves dist/ with `vite preview` (COOP/COEP: the threads build, as the lab
// runs), opens ?mode=percpu with a hand-made script (ops=): one step that
// allocates 1 KiB areas until the world has --chunks chunks (16 per chunk of
// the lab's 16 KiB units), then single-area frees spread over the chunks,
// and from the end of the first step plays at --speed steps per second (2,
// the Lab's default; the slider goes to 12).
// While it plays it records every animation frame's interval
// (requestAnimationFrame timestamps), each canvas paint ('percpu-draw'
// measures, LabCanvas), long tasks, and the steps actually shown per
// second.  Prints p50/p95/max; the target is a frame-time p95 under 16.7 ms
// (60 Hz).  A benchmark, not a test: it prints figures.
import { loadavg } from 'node:os';
import { launchChromium, ms2 as f, numberArg, pct, servePreview } from './browser-bench.mjs';

const arg = (name, dflt) => numberArg('percpu-frame-bench', name, dflt);
const seconds = arg('seconds', 10);
const chunks = arg('chunks', 64);
const speed = arg('speed', 2);
const width = arg('width', 1400);
const port = arg('port', 4392);

// 16 KiB units: the first chunk's 8 KiB dynamic region holds 8 areas of 1 KiB, every later chunk 16.
const areas = Math.min(4096, 8 + 16 * (chunks - 1));
const frees = Array.from({ length: Math.min(areas, 600) }, (_, k) => `f0-0-${(k * 17) % areas}-1`);
const ops = [`a0-1024-4-${areas}`, ...new Set(frees)].join('.');

const stopServer = await servePreview('percpu-frame-bench', port);

const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width, height: 1000 } });
  page.setDefaultTimeout(120_000);
  await page.addInitScript(() => {
    window.__slablabPerfMarks = true;
  });
  await page.goto(`http://localhost:${port}/?mode=percpu&scenario=sandbox&step=1&ops=${ops}`);
  await page.waitForFunction(() => window.__slablabPercpu?.ready && window.__slablabPercpu.stop === 1);
  const world = await page.evaluate(() => window.__slablabPercpu?.panes.map((p) => `${p.label}: ${p.chunks.length} chunks`).join(', '));
  // The speed slider to --speed steps per second (React listens to the input event), then Play.
  await page.getByLabel('Speed (steps per second)').evaluate((el, v) => {
    const set = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value')?.set;
    set?.call(el, String(v));
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, speed);
  await page.getByRole('button', { name: 'Play' }).click();
  const r = await page.evaluate(async (ms) => {
    performance.clearMeasures('percpu-draw');
    const longTasks = [];
    const obs = new PerformanceObserver((l) => longTasks.push(...l.getEntries().map((e) => e.duration)));
    try {
      obs.observe({ type: 'longtask', buffered: false });
    } catch {
      /* not supported */
    }
    const frames = [];
    const stop0 = window.__slablabPercpu?.stop ?? 0;
    await new Promise((done) => {
      let last = 0;
      const t0 = performance.now();
      const tick = (t) => {
        if (last) frames.push(t - last);
        last = t;
        if (t - t0 < ms) requestAnimationFrame(tick);
        else done();
      };
      requestAnimationFrame(tick);
    });
    obs.disconnect();
    return {
      frames,
      draws: performance.getEntriesByName('percpu-draw').map((e) => e.duration),
      longTasks,
      steps: (window.__slablabPercpu?.stop ?? 0) - stop0,
    };
  }, seconds * 1000);
  // (A short script may have played to its end.)
  const pause = page.getByRole('button', { name: 'Pause' });
  if (await pause.isVisible()) await pause.click();
  console.log(`percpu-frame-bench: 3 allocators side by side, ${world}; ${areas} areas of 1 KiB, then single frees; playing at ${speed} steps/s for ${seconds} s, ${width} px wide`);
  console.log(`  frame time   p50 ${f(pct(r.frames, 50))} ms  p95 ${f(pct(r.frames, 95))} ms  max ${f(Math.max(...r.frames))} ms  (${r.frames.length} frames; target p95 < 16.7 ms)`);
  console.log(`  canvas paint p50 ${f(pct(r.draws, 50))} ms  p95 ${f(pct(r.draws, 95))} ms  max ${f(Math.max(...r.draws))} ms  (${r.draws.length} paints, one per pane per change)`);
  console.log(`  host load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} (other work on the machine shows in these figures)`);
  console.log(`  steps shown ${(r.steps / seconds).toFixed(1)}/s; long tasks ${r.longTasks.length}${r.longTasks.length ? ` (max ${f(Math.max(...r.longTasks))} ms)` : ''}`);
} finally {
  await browser.close();
  stopServer();
}
