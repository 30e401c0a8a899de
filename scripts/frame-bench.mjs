#!/usr/bin/env node
// frame-bench.mjs - frame times of the SLUB view in free-running mode with
// 8 CPUs, 512 background slabs and 16k objects, in headless Chromium, from the
// browser's performance timeline.
//
//   npx vite build && node scripts/frame-bench.mjs [--seconds 8] [--cpus 8] [--slabs 512] [--rate 10000] [--full-speed]
//
// Serves dist/ with `vite preview` (COOP/COEP, so the threads build runs the
// CPUs on CPU workers), opens ?mode=free, starts the workload, then records
// for --seconds: every animation frame's interval (requestAnimationFrame
// timestamps), the canvas paint of each frame ('slub-draw' measures made by
// SlabCanvas), the time to apply a frame's drained events to the view's copy
// of the state ('slub-mirror' measures, FreeRunView), and long tasks.
// --rate caps each CPU at that many operations per second (0: no cap, the
// rings overflow and the view re-anchors on snapshots).  Prints p50/p95/max; the target is a frame-time
// p95 under 16.7 ms (60 Hz).  A benchmark, not a test: it prints figures.
// By default the page paces the CPU workers when there are more simulated CPUs
// than host cores (FreeRunView); --full-speed measures them unpaced.
import { launchChromium, ms2 as f, numberArg, pct, servePreview } from './browser-bench.mjs';

const arg = (name, dflt) => numberArg('frame-bench', name, dflt);
const seconds = arg('seconds', 8);
const cpus = arg('cpus', 8);
const slabs = arg('slabs', 512);
const port = arg('port', 4390);
const unpaced = process.argv.includes('--full-speed');
const rateAt = process.argv.indexOf('--rate');
const rate = rateAt < 0 ? 10000 : Number(process.argv[rateAt + 1]);
if (!Number.isInteger(rate) || rate < 0 || rate > 1_000_000) {
  console.error(`frame-bench: --rate needs a whole number from 0 to 1000000, got ${process.argv[rateAt + 1]}`);
  process.exit(2);
}

const stopServer = await servePreview('frame-bench', port);

const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  // Unpaced workers can starve the page entirely on a small host: fail rather than wait forever.
  page.setDefaultTimeout(60_000);
  await page.addInitScript(() => {
    window.__slablabPerfMarks = true;
  });
  await page.goto(`http://localhost:${port}/?mode=free&cpus=${cpus}&slabs=${slabs}&workload=local&rate=${rate}`);
  if (unpaced) await page.getByLabel('pace the workers to leave the page a core').uncheck();
  await page.getByRole('button', { name: 'Start' }).click();
  await page.waitForFunction(() => (window.__slablabFreeRun?.samples ?? 0) >= 10, undefined, { timeout: 60_000 });
  const r = await page.evaluate(async (ms) => {
    performance.clearMeasures('slub-draw');
    performance.clearMeasures('slub-mirror');
    const longTasks = [];
    const obs = new PerformanceObserver((l) => longTasks.push(...l.getEntries().map((e) => e.duration)));
    try {
      obs.observe({ type: 'longtask', buffered: false });
    } catch {
      /* not supported */
    }
    const frames = [];
    const s0 = window.__slablabFreeRun?.samples ?? 0;
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
    const h = window.__slablabFreeRun;
    return {
      frames,
      draws: performance.getEntriesByName('slub-draw').map((e) => e.duration),
      mirror: performance.getEntriesByName('slub-mirror').map((e) => e.duration),
      longTasks,
      samples: (h?.samples ?? 0) - s0,
      slabs: h?.slabs ?? 0,
      objects: h?.objects ?? 0,
      mode: h?.mode ?? '',
      workers: new Set((h?.threadIds ?? []).filter((t) => t !== 0)).size,
    };
  }, seconds * 1000).catch((e) => {
    throw new Error(`no measurement (the page did not get to run: ${e.message.split('\n')[0]})`);
  });
  await page.getByRole('button', { name: 'Stop' }).click();
  const caption = await page.getByTestId('freerun-table').locator('caption').textContent();
  const events = await page.getByTestId('freerun-events').textContent();
  console.log(`frame-bench: ${cpus} CPUs (${r.mode}, ${r.workers} CPU workers), ${r.slabs} slabs, ${r.objects} object slots, ${seconds} s`);
  console.log(`  ${caption?.trim()}; rate ${rate ? `${rate} ops/s per CPU` : 'uncapped'}`);
  console.log(`  ${events?.trim()}`);
  console.log(`  frame time   p50 ${f(pct(r.frames, 50))} ms  p95 ${f(pct(r.frames, 95))} ms  max ${f(Math.max(...r.frames))} ms  (${r.frames.length} frames; target p95 < 16.7 ms)`);
  console.log(`  canvas paint p50 ${f(pct(r.draws, 50))} ms  p95 ${f(pct(r.draws, 95))} ms  (${r.draws.length} paints)`);
  console.log(`  apply events p50 ${f(pct(r.mirror, 50))} ms  p95 ${f(pct(r.mirror, 95))} ms  (${r.mirror.length} drains)`);
  console.log(`  state updates ${(r.samples / seconds).toFixed(1)}/s; long tasks ${r.longTasks.length}${r.longTasks.length ? ` (max ${f(Math.max(...r.longTasks))} ms)` : ''}`);
} finally {
  await browser.close();
  stopServer();
}
