#!/usr/bin/env node
// trace-browser-bench.mjs - the trace replay in the browser against the native CLI on the same
// file (docs/replay.md, "In the browser").
//
//   node scripts/trace-browser-bench.mjs [--bytes 200] [--port 4391]
//
// Generates --bytes MiB of trace text from the capture recorded on Linux 6.18 with
// `slablab trace-gen` (the benchmark build) into a temporary file, replays it natively
// (`slablab replay FILE`), then opens the built site (dist/, built first when missing) in
// headless Chromium on `vite preview` (cross-origin isolated: the threads build), opens the
// same file in ?mode=trace and waits for the report.  Prints events/s of both (the replay's own
// time inside feed/finish, as the CLI measures it), the page's end-to-end rate (file reading,
// the requests, the overview's bins), their ratio, the native peak RSS, and the page's peak JS
// heap (main thread and bridge worker, sampled every 250 ms) beside the core's fixed memory.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { launchChromium, numberArg, servePreview } from './browser-bench.mjs';
import { buildBenchCli, root } from './setup.mjs';

const SCRIPT = 'trace-browser-bench';
const mib = numberArg(SCRIPT, 'bytes', 200);
const port = numberArg(SCRIPT, 'port', 4391);

const cli = join(buildBenchCli(), 'slablab');
if (!existsSync(join(root, 'dist/index.html'))) {
  for (const [cmd, args] of [['node', ['scripts/setup.mjs', 'build']], ['npx', ['vite', 'build']]]) {
    const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed`);
  }
}

const tmp = mkdtempSync(join(tmpdir(), 'slablab-trace-bench-'));
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }));
const base = join(tmp, 'base.txt');
const fixture = join(root, 'wasm-core/tests/fixtures/replay/capture-6.18.slabcap.gz');
if (spawnSync('sh', ['-c', `tar xzOf '${fixture}' trace.txt > '${base}'`]).status !== 0) throw new Error('could not extract trace.txt from the fixture (tar, gzip)');
const file = join(tmp, 'trace.txt');
await new Promise((resolve, reject) => {
  const g = spawn(cli, ['trace-gen', base, '--bytes', `${mib}M`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const out = createWriteStream(file);
  g.stdout.pipe(out);
  out.on('finish', resolve);
  g.on('error', reject);
});

const native = JSON.parse(spawnSync(cli, ['replay', file, '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 26 }).stdout);
console.log(`trace: ${mib} MiB generated from ${fixture.replace(`${root}/`, '')}, ${native.events.parsed.toLocaleString('en-US')} events`);
const M = (x) => `${(x / 1e6).toFixed(2)} M events/s`;
console.log(`native (slablab replay FILE):     ${M(native.events_per_s)} (${native.elapsed_s.toFixed(2)} s; ${M(native.events_per_cpu_s)} per CPU-s), peak RSS ${(native.peak_rss_kb / 1024).toFixed(1)} MiB`);

await servePreview(SCRIPT, port);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(`http://localhost:${port}/?mode=trace`);
  await page.getByTestId('trace-open').waitFor();
  await page.waitForFunction(() => !document.querySelector('[data-testid="trace-open"]')?.hasAttribute('disabled'));
  const heap = { main: 0, worker: 0 };
  const heapOf = (scope) => scope.evaluate(() => performance.memory?.usedJSHeapSize ?? 0).catch(() => 0);
  const sample = setInterval(async () => {
    heap.main = Math.max(heap.main, await heapOf(page));
    for (const w of page.workers()) heap.worker = Math.max(heap.worker, await heapOf(w));
  }, 250);
  await page.getByTestId('trace-file-input').setInputFiles(file);
  const summary = page.getByTestId('trace-summary');
  await summary.waitFor({ timeout: 30 * 60_000 });
  clearInterval(sample);
  const events = Number(await summary.getAttribute('data-events'));
  const rate = Number(await summary.getAttribute('data-events-per-s'));
  const wall = Number(await summary.getAttribute('data-wall-s'));
  const errors = await page.getByTestId('trace-error').count();
  if (events !== native.events.parsed || errors) throw new Error(`the page replayed ${events} events (native: ${native.events.parsed})${errors ? ', with an error' : ''}`);
  console.log(`browser (?mode=trace, worker):    ${M(rate)} in the replay; ${M(events / wall)} end to end on the page (${wall.toFixed(2)} s)`);
  console.log(`ratio browser / native:           ${(rate / native.events_per_s).toFixed(2)} (replay), ${(events / wall / native.events_per_s).toFixed(2)} (end to end)`);
  const MiB = (b) => (b ? `${(b / 1048576).toFixed(1)} MiB` : 'not reported');
  console.log(`browser memory: peak JS heap ${MiB(heap.main)} on the page, ${MiB(heap.worker)} in the worker; the core's WebAssembly memory is fixed at 256 MiB (INITIAL_MEMORY, no growth)`);
} finally {
  await browser.close();
}
process.exit(0);
