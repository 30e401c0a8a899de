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
import { frameTimeLine, longTaskText, ms2 as f, numberArg, pct, recordFrames, withBenchPage } from './browser-bench.mjs';

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

await withBenchPage('percpu-frame-bench', port, width, 120_000, async (page) => {
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
  const stop = () => page.evaluate(() => window.__slablabPercpu?.stop ?? 0);
  const stop0 = await stop();
  const r = await recordFrames(page, seconds, ['percpu-draw']);
  const steps = (await stop()) - stop0;
  // (A short script may have played to its end.)
  const pause = page.getByRole('button', { name: 'Pause' });
  if (await pause.isVisible()) await pause.click();
  const draws = r.measures['percpu-draw'];
  console.log(`percpu-frame-bench: 3 allocators side by side, ${world}; ${areas} areas of 1 KiB, then single frees; playing at ${speed} steps/s for ${seconds} s, ${width} px wide`);
  console.log(frameTimeLine(r.frames));
  console.log(`  canvas paint p50 ${f(pct(draws, 50))} ms  p95 ${f(pct(draws, 95))} ms  max ${f(Math.max(...draws))} ms  (${draws.length} paints, one per pane per change)`);
  console.log(`  host load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} (other work on the machine shows in these figures)`);
  console.log(`  steps shown ${(steps / seconds).toFixed(1)}/s; ${longTaskText(r.longTasks)}`);
});
