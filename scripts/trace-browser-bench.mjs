#!/usr/bin/env node
// trace-browser-bench.mjs - the trace replay in the browser against the native CLI on the same
// file (docs/replay.md, "In the browser").
//
//   node scripts/trace-browser-bench.mjs [--bytes 200] [--runs 3] [--port 4391]
//
// Generates --bytes MiB of trace text from the capture recorded on Linux 6.18 with
// `slablab trace-gen` (the benchmark build) into a temporary file, replays it natively
// (`slablab replay FILE`, --runs times), then opens the built site (dist/, built first when
// missing) in headless Chromium on `vite preview` (cross-origin isolated: the threads build) and
// opens the same file in ?mode=trace --runs times in that page, each after the one before has
// finished.  The first replay in a page is cold: V8 starts WebAssembly in its baseline compiler
// and moves hot functions to its optimizing one while they run; the later ones are warm, as
// the native code always is.  Prints events/s of each (the replay's own time inside feed/finish,
// as the CLI measures it), the page's end-to-end rate (the page reading the file, the requests,
// the report), the medians' ratios, the native peak RSS, the page's peak JS heap (sampled every
// 250 ms) and what Chromium says the page and its bridge worker hold after the last replay
// (performance.measureUserAgentSpecificMemory, cross-origin isolated pages only).
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, linkSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { launchChromium, numberArg, servePreview } from './browser-bench.mjs';
import { buildBenchCli, root } from './setup.mjs';

const SCRIPT = 'trace-browser-bench';
const mib = numberArg(SCRIPT, 'bytes', 200);
const port = numberArg(SCRIPT, 'port', 4391);
const runs = numberArg(SCRIPT, 'runs', 3);

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

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const M = (x) => `${(x / 1e6).toFixed(2)} M events/s`;
const list = (xs) => xs.map((x) => (x / 1e6).toFixed(2)).join(', ');

const natives = Array.from({ length: runs }, () => JSON.parse(spawnSync(cli, ['replay', file, '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 26 }).stdout));
const events = natives[0].events.parsed;
const nativeRate = median(natives.map((n) => n.events_per_s));
console.log(`trace: ${mib} MiB generated from ${fixture.replace(`${root}/`, '')}, ${events.toLocaleString('en-US')} events`);
console.log(`native (slablab replay FILE):  median ${M(nativeRate)} of ${runs} runs (${list(natives.map((n) => n.events_per_s))}), peak RSS ${(Math.max(...natives.map((n) => n.peak_rss_kb)) / 1024).toFixed(1)} MiB`);

// The page replays a file again when it is picked again: a second name for the same bytes.
const again = join(tmp, 'trace-again.txt');
linkSync(file, again);

await servePreview(SCRIPT, port);
const browser = await launchChromium();
try {
  const page = await browser.newPage();
  await page.goto(`http://localhost:${port}/?mode=trace`);
  await page.getByTestId('trace-open').waitFor();
  await page.waitForFunction(() => !document.querySelector('[data-testid="trace-open"]')?.hasAttribute('disabled'));
  let heap = 0;
  const sample = setInterval(async () => {
    heap = Math.max(heap, await page.evaluate(() => performance.memory?.usedJSHeapSize ?? 0).catch(() => 0));
  }, 250);
  const summary = page.getByTestId('trace-summary');
  const replays = [];
  for (let i = 0; i < runs; i++) {
    const before = i ? await summary.getAttribute('data-wall-s') : null;
    await page.getByTestId('trace-file-input').setInputFiles(i % 2 ? again : file);
    await page.waitForFunction((prev) => {
      const s = document.querySelector('[data-testid="trace-summary"]');
      return s && s.getAttribute('data-wall-s') !== prev;
    }, before, { timeout: 30 * 60_000 });
    const n = Number(await summary.getAttribute('data-events'));
    const errors = await page.getByTestId('trace-error').count();
    if (n !== events || errors) throw new Error(`the page replayed ${n} events (native: ${events})${errors ? ', with an error' : ''}`);
    replays.push({ rate: Number(await summary.getAttribute('data-events-per-s')), endToEnd: events / Number(await summary.getAttribute('data-wall-s')) });
  }
  clearInterval(sample);
  const warm = replays.slice(1);
  const ratio = (x) => (x / nativeRate).toFixed(2);
  console.log(`browser (?mode=trace, worker): cold ${M(replays[0].rate)} in the replay, ${M(replays[0].endToEnd)} end to end on the page`);
  if (warm.length) {
    console.log(`                               warm median ${M(median(warm.map((r) => r.rate)))} in the replay (${list(warm.map((r) => r.rate))}), ${M(median(warm.map((r) => r.endToEnd)))} end to end (${list(warm.map((r) => r.endToEnd))})`);
  }
  console.log(`ratio browser / native:        cold ${ratio(replays[0].rate)} (replay), ${ratio(replays[0].endToEnd)} (end to end)`);
  if (warm.length) console.log(`                               warm ${ratio(median(warm.map((r) => r.rate)))} (replay), ${ratio(median(warm.map((r) => r.endToEnd)))} (end to end)`);
  const MiB = (b) => `${(b / 1048576).toFixed(1)} MiB`;
  const held = await page.evaluate(async () => {
    if (!performance.measureUserAgentSpecificMemory) return null;
    const r = await performance.measureUserAgentSpecificMemory();
    const of = (match) => r.breakdown.filter((b) => b.attribution.some((a) => match(a))).reduce((t, b) => t + b.bytes, 0);
    return { page: of((a) => a.scope === 'Window'), bridge: of((a) => (a.url ?? '').includes('/bridge.worker')) };
  });
  console.log(`browser memory: peak JS heap ${MiB(heap)} on the page; after the last replay ${held ? `the page holds ${MiB(held.page)}, the bridge worker ${MiB(held.bridge)}, of which 256 MiB are the core's WebAssembly memory (INITIAL_MEMORY, fixed, shared with its CPU threads)` : 'not reported (no measureUserAgentSpecificMemory)'}`);
} finally {
  await browser.close();
}
process.exit(0);
