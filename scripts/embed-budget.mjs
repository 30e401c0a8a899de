#!/usr/bin/env node
// embed-budget.mjs - what a <slab-lab> costs a documentation page, from the
// built site (dist/), in headless Chromium:
//
//   npx vite build && node scripts/embed-budget.mjs [--runs 5]
//
// A page holding one <slab-lab> is served from a plain static server (no
// COOP/COEP: the single-threaded build, as on most docs sites), in a fresh
// browser context per run (a cold cache).  Printed:
//   - transfer: every script and WebAssembly file the page fetched until the
//     figure's first drawn frame, each gzipped (level 9, as a static host
//     would serve it) and summed; target under 400 KB;
//   - time to first drawn frame: navigation start to the first animation
//     frame in which the figure's canvas holds pixels (median, min, max of
//     --runs); target under 1.5 s;
//   - the lab's largest bundle in dist/assets (JavaScript, raw and gzipped),
//     and the largest file of any kind.
// The loading of the code panel's C (a separate chunk, fetched only when the
// panel is opened) is not part of the first frame.  A benchmark, not a test:
// it prints figures.
import { createServer } from 'node:http';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';

const DIST = 'dist';
const runsAt = process.argv.indexOf('--runs');
const runs = runsAt < 0 ? 5 : Number(process.argv[runsAt + 1]);
if (!Number.isInteger(runs) || runs < 1 || runs > 50) {
  console.error(`embed-budget: --runs needs a whole number from 1 to 50, got ${process.argv[runsAt + 1]}`);
  process.exit(2);
}
if (!existsSync(join(DIST, 'slab-lab.js'))) {
  console.error('embed-budget: dist/slab-lab.js is missing: run `npx vite build` first');
  process.exit(2);
}

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>budget</title><link rel="icon" href="data:,">
<script type="module" src="./slab-lab.js"></script></head><body>
<slab-lab id="fig" view="slub" scenario="why-tid" cpus="2"></slab-lab>
<script>
  // The first animation frame in which the figure's canvas holds pixels.
  const look = () => {
    const c = document.getElementById('fig').shadowRoot?.querySelector('canvas');
    const px = c && c.width > 0 ? c.getContext('2d').getImageData(1, 1, 1, 1).data : null;
    if (px && px[3] === 255) window.firstFrame = performance.now();
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
</script></body></html>`;
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.css': 'text/css', '.html': 'text/html', '.svg': 'image/svg+xml' };

const server = createServer((req, res) => {
  const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
  if (path === '/budget.html') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(PAGE);
  const file = normalize(join(DIST, path));
  if (!file.startsWith(DIST + sep) || !existsSync(file) || !statSync(file).isFile()) return res.writeHead(404).end();
  res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(readFileSync(file));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const gz = (bytes) => gzipSync(bytes, { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
});

const times = [];
let fetched = new Set();
try {
  for (let r = 0; r < runs; r++) {
    const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
    const page = await context.newPage();
    const files = new Set();
    const note = (url) => {
      const u = new URL(url);
      if (u.origin === origin && /\.(m?js|wasm)$/.test(u.pathname)) files.add(u.pathname);
    };
    page.on('request', (q) => note(q.url()));
    // Requests made by workers (the bridge worker's glue and .wasm) reach the context, not the page.
    context.on('request', (q) => note(q.url()));
    await page.goto(`${origin}/budget.html`);
    const mode = await page.evaluate(() => window.crossOriginIsolated);
    if (mode) throw new Error('the page is cross-origin isolated: this measures the single-threaded embed');
    await page.waitForFunction(() => typeof window.firstFrame === 'number', null, { timeout: 60_000 });
    times.push(await page.evaluate(() => window.firstFrame));
    if (r === 0) fetched = files;
    await context.close();
  }
} finally {
  await browser.close();
  server.close();
}

console.log('<slab-lab> embed budget (dist/, plain static server, single-threaded build, headless Chromium)\n');
console.log('transfer until the first drawn frame (gzip -9):');
let js = 0;
let wasm = 0;
for (const p of [...fetched].sort()) {
  const bytes = readFileSync(join(DIST, p));
  const z = gz(bytes);
  if (p.endsWith('.wasm')) wasm += z;
  else js += z;
  console.log(`  ${p.padEnd(48)} ${kb(bytes.length).padStart(10)} raw ${kb(z).padStart(10)} gzip`);
}
const total = js + wasm;
console.log(`  JavaScript ${kb(js)}, WebAssembly ${kb(wasm)}: total ${kb(total)} (target < 400 KB: ${total < 400 * 1024 ? 'met' : 'NOT met'})\n`);
const sorted = [...times].sort((a, b) => a - b);
const median = sorted[Math.floor(sorted.length / 2)];
console.log(`time to first drawn frame, ${runs} cold runs: median ${median.toFixed(0)} ms, min ${sorted[0].toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms (target < 1500 ms: ${median < 1500 ? 'met' : 'NOT met'})\n`);

const assets = readdirSync(join(DIST, 'assets')).map((f) => ({ f: `assets/${f}`, bytes: readFileSync(join(DIST, 'assets', f)) }));
const bigJs = assets.filter((a) => a.f.endsWith('.js')).sort((a, b) => b.bytes.length - a.bytes.length)[0];
const bigAny = assets.sort((a, b) => b.bytes.length - a.bytes.length)[0];
if (bigJs) console.log(`largest JavaScript bundle: ${bigJs.f} ${kb(bigJs.bytes.length)} raw, ${kb(gz(bigJs.bytes))} gzip`);
if (bigAny) console.log(`largest file: ${bigAny.f} ${kb(bigAny.bytes.length)} raw, ${kb(gz(bigAny.bytes))} gzip`);
