// browser-bench.mjs - what the frame benchmarks (frame-bench.mjs,
// percpu-frame-bench.mjs) share: numeric options, the built site served by
// `vite preview` (COOP/COEP, so the page gets the threads build), headless
// Chromium with a page that makes its performance marks, the recording of
// frames, paints and long tasks, and percentiles.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chromium } from '@playwright/test';

/** The positive number after --name on the command line, or `dflt`; exits with a message for anything else. */
export function numberArg(script, name, dflt) {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const v = Number(process.argv[i + 1]);
  if (!Number.isFinite(v) || v <= 0) {
    console.error(`${script}: --${name} needs a positive number, got ${process.argv[i + 1]}`);
    process.exit(2);
  }
  return v;
}

/** Serves dist/ on `port` until the process exits; resolves once it listens. */
export async function servePreview(script, port) {
  if (!existsSync('dist/index.html')) {
    console.error(`${script}: dist/ is missing: run \`npx vite build\` first`);
    process.exit(2);
  }
  // vite itself, not through npx: killing npx would leave its vite child serving the port.
  const server = spawn(process.execPath, ['node_modules/vite/bin/vite.js', 'preview', '--port', String(port), '--strictPort'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = () => server.kill('SIGTERM');
  process.on('exit', stop);
  for (const sig of ['SIGINT', 'SIGTERM'])
    process.on(sig, () => {
      stop();
      process.exit(130);
    });
  await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('vite preview did not start within 30 s')), 30_000);
    server.stdout.on('data', (d) => {
      if (String(d).includes(String(port))) {
        clearTimeout(t);
        resolve();
      }
    });
    server.on('exit', (code) => reject(new Error(`vite preview exited with ${code}`)));
  });
  return stop;
}

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The p-th percentile of xs (NaN for none). */
export function pct(xs, p) {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

export const ms2 = (x) => x.toFixed(2);

/**
 * Serves dist/ on `port`, launches headless Chromium and opens a page of
 * `width` px that makes the views' performance marks (window.__slablabPerfMarks);
 * run(page) does the rest, then browser and server stop.
 */
export async function withBenchPage(script, port, width, timeoutMs, run) {
  const stopServer = await servePreview(script, port);
  const browser = await launchChromium();
  try {
    const page = await browser.newPage({ viewport: { width, height: 1000 } });
    page.setDefaultTimeout(timeoutMs);
    await page.addInitScript(() => {
      window.__slablabPerfMarks = true;
    });
    await run(page);
  } finally {
    await browser.close();
    stopServer();
  }
}

/**
 * Records in the page for `seconds`: every animation frame's interval
 * (requestAnimationFrame timestamps), the durations of the performance
 * measures named in `measures` (cleared first), and long tasks.
 */
export async function recordFrames(page, seconds, measures) {
  return page.evaluate(
    async ({ ms, names }) => {
      for (const n of names) performance.clearMeasures(n);
      const longTasks = [];
      const obs = new PerformanceObserver((l) => longTasks.push(...l.getEntries().map((e) => e.duration)));
      try {
        obs.observe({ type: 'longtask', buffered: false });
      } catch {
        /* not supported */
      }
      const frames = [];
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
      return { frames, longTasks, measures: Object.fromEntries(names.map((n) => [n, performance.getEntriesByName(n).map((e) => e.duration)])) };
    },
    { ms: seconds * 1000, names: measures },
  );
}

/** The frame-time line both benchmarks print, against the 60 Hz target. */
export function frameTimeLine(frames) {
  return `  frame time   p50 ${ms2(pct(frames, 50))} ms  p95 ${ms2(pct(frames, 95))} ms  max ${ms2(Math.max(...frames))} ms  (${frames.length} frames; target p95 < 16.7 ms)`;
}

/** The long-task summary both benchmarks end their report with. */
export function longTaskText(longTasks) {
  return `long tasks ${longTasks.length}${longTasks.length ? ` (max ${ms2(Math.max(...longTasks))} ms)` : ''}`;
}
