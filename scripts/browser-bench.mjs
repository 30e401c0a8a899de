// browser-bench.mjs - what the frame benchmarks (frame-bench.mjs,
// percpu-frame-bench.mjs) share: numeric options, the built site served by
// `vite preview` (COOP/COEP, so the page gets the threads build), headless
// Chromium, and percentiles.

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
