#!/usr/bin/env node
// live-bench.mjs - figures of `slablab serve` and the live page (docs/live.md), printed, not
// asserted.  Needs root (BPF), the native slablab (wasm-core/build/native) and the built site
// (npx vite build).  Every server listens on 127.0.0.1 on a free port and stops by itself.
//
//   node scripts/live-bench.mjs [--rates 2000,5000,...] [--level-s 8] [--minutes 3] [--caches 6]
//                               [--record-s 10] [--reps 5] [--rounds 3] [--save FILE] [--phases 1,2,3,4]
//   SLABLAB_BIN=wasm-core/build/release/slablab node scripts/live-bench.mjs ...   (the release binary)
//   node scripts/live-bench.mjs --from CAPTURE [--from-rates 50000,100000,...] [--level-s 8]
//                               (no root: a recording, `serve --from`, instead of the kernel)
//
// 1. Throughput and latency: one live page in headless Chromium on an unfiltered serve; at each
//    level, /dev/null opened and closed --rates times a second (paced every 10 ms) for --level-s
//    seconds.  Per level: events per second that reached the page (the whole machine's, since the
//    stream is unfiltered), what the kernel ring lost, the server dropped and the page dropped,
//    and event-to-pixel latency (the newest event a drawn summary carried, on the kernel's clock,
//    against the frame that drew it; Node's CLOCK_MONOTONIC and wall clock relate the two)
//    p50/p95; then the highest rate at which nothing was dropped.
// 2. Memory: the page left on the stream for --minutes minutes under a moderate load (one churning
//    process); sampled about ten times: the server's RSS, this browser's renderer processes (not
//    other browsers on the machine), the page's and the worker's JS heaps (and the worker's after
//    a full GC), and the events and losses so far.
// 3. Agreement: --snapshot-interval 10, one page per busy cache (the busiest --caches after a
//    5-s look, and filp), each on a server streaming only it, a mixed workload running (files,
//    directory walks, forks); per cache over a 10-s window between two snapshots: the
//    events in the window, slabs and objects agreeing, and each class of disagreement.
// 4. The page's replay against a native replay of the same recorded stream (replayPhase below).
// --from CAPTURE, instead of 1-4: the ceiling of capture -> server -> page (fromPhase below): a
//    recording played by `serve --from CAPTURE --loop` at rising --from-rates and then as fast as the
//    server goes (--rate max), one fresh server and page per level.  Per level: what the server
//    played (events_in, its /api/status), what reached the drawn page, what the server dropped for
//    the page and the page dropped, event-to-pixel p50/p95 (the events are stamped on
//    CLOCK_MONOTONIC when they are due, as the kernel's are); then the highest rate at which nothing
//    was dropped.  Needs no root and no BPF: the kernel side is not in these figures.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { loadavg, tmpdir } from 'node:os';
import { build as viteBuild } from 'vite';
import { join } from 'node:path';
import { launchChromium, pct } from './browser-bench.mjs';
import { root } from './setup.mjs';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : process.argv[i + 1];
};
const RATES = String(arg('rates', '2000,5000,10000,20000,40000')).split(',').map(Number);
const LEVEL_S = Number(arg('level-s', 8));
const MINUTES = Number(arg('minutes', 3));
const CACHES = Number(arg('caches', 6));
const PHASES = String(arg('phases', '1,2,3,4')).split(',').map(Number);
const RECORD_S = Number(arg('record-s', 10));
const REPS = Number(arg('reps', 5));
/** Phase 4: rounds of (native, page) on the same recording, one page/native ratio each. */
const ROUNDS = Number(arg('rounds', 3));
/** Phase 4: keep the recorded stream in this file (to profile the replays on the same bytes). */
const SAVE = arg('save', null);
const MAX_RECORDING = 48 << 20;
/** A capture to play instead of the kernel (fromPhase), and the rates (events a second) to ask of it. */
const FROM = arg('from', null);
const FROM_RATES = String(arg('from-rates', '50000,100000,200000,400000,800000,1600000,max')).split(',');
const BIN = process.env.SLABLAB_BIN ?? join(root, 'wasm-core/build/native/slablab');
const SITE = join(root, 'dist');
if (process.getuid() !== 0 && !FROM) {
  console.error('live-bench: needs root (BPF), or --from CAPTURE');
  process.exit(2);
}
if (!existsSync(BIN) || !existsSync(join(SITE, 'index.html'))) {
  console.error(`live-bench: needs ${BIN} (node scripts/test.mjs native) and dist/ (npx vite build)`);
  process.exit(2);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const children = new Set();
process.on('exit', () => children.forEach((c) => c.kill('SIGKILL')));

function serve(extra) {
  const child = spawn(BIN, ['serve', '--port', '0', '--site', SITE, '--exit-after', String(MINUTES * 60 + 300), ...extra], { stdio: ['ignore', 'pipe', 'ignore'] });
  children.add(child);
  let out = '';
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /(http:\/\/127\.0\.0\.1:\d+\/\?mode=live&token=[0-9a-f]+)/.exec(out);
      if (m) resolve({ child, url: m[1] });
    });
    child.on('exit', (code) => reject(new Error(`serve exited ${code}`)));
  });
}
const stop = async (child) => {
  const done = new Promise((r) => child.on('exit', r));
  child.kill('SIGTERM');
  await done;
  children.delete(child);
};

/** n processes opening and closing /dev/null in a tight loop (or `script`), until killed. */
function load(n, script = "const f=require('fs');for(;;){f.closeSync(f.openSync('/dev/null','r'))}") {
  const ps = [];
  for (let i = 0; i < n; i++) {
    const c = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
    children.add(c);
    ps.push(c);
  }
  return () => ps.forEach((c) => (c.kill('SIGKILL'), children.delete(c)));
}

/** The page's counters from its figures line. */
async function figures(page) {
  const t = (await page.getByTestId('live-figures').textContent()) ?? '';
  const num = (re) => Number((re.exec(t)?.[1] ?? '0').replace(/,/g, ''));
  return { events: num(/^([\d,]+) events/), kernel: num(/kernel ring ([\d,]+)/), server: num(/server ([\d,]+)/), page: num(/page ([\d,]+)/) };
}

/** Wall ms minus monotonic ms, from Node (the page's wall clock is the same machine's). */
function wallMinusMonoMs() {
  const xs = [];
  for (let i = 0; i < 5; i++) xs.push(performance.timeOrigin + performance.now() - Number(process.hrtime.bigint()) / 1e6);
  return xs.sort((a, b) => a - b)[2];
}

const rss = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
/** This process's descendants (pid -> command line): our browser's processes, not another's on the machine. */
function descendants() {
  const parent = new Map();
  const cmd = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      parent.set(d, /PPid:\s+(\d+)/.exec(readFileSync(`/proc/${d}/status`, 'utf8'))?.[1]);
      cmd.set(d, readFileSync(`/proc/${d}/cmdline`, 'utf8'));
    } catch {
      /* gone */
    }
  }
  const ours = new Map();
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, pp] of parent)
      if (!ours.has(pid) && (pp === String(process.pid) || ours.has(pp))) {
        ours.set(pid, cmd.get(pid) ?? '');
        grew = true;
      }
  }
  return ours;
}
const pss = (pid) => Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0) / 1024;

/**
 * Our browser's renderer processes (descendants of this process only: other engineers' browsers
 * on the machine are not counted), MiB: RSS each, and the proportional set size (shared pages
 * split among the processes sharing them) of all of the browser's processes.
 */
function rendererRss() {
  const each = [];
  let browserPss = 0;
  for (const [pid, cmd] of descendants()) {
    try {
      if (!cmd.includes('chrom')) continue;
      browserPss += pss(pid);
      if (cmd.includes('--type=renderer')) each.push(rss(pid));
    } catch {
      /* gone */
    }
  }
  return { total: each.reduce((a, b) => a + b, 0), each: each.sort((a, b) => b - a), browserPss };
}

/**
 * The page's and its live worker's JS heaps (CDP Runtime.getHeapUsage, on the page and on the
 * worker's target), and the worker's after a full collection (HeapProfiler.collectGarbage): what
 * is live against what is garbage not yet collected.
 */
async function heaps(page) {
  const mib = (x) => `${(x / 1048576).toFixed(1)} MiB`;
  const out = { page: '?', worker: '?', workerAfterGc: '?' };
  const cdp = await page.context().newCDPSession(page);
  out.page = mib((await cdp.send('Runtime.getHeapUsage')).usedSize);
  await cdp.detach();
  const browserCdp = await browser.newBrowserCDPSession();
  const { targetInfos } = await browserCdp.send('Target.getTargets');
  const w = targetInfos.find((t) => t.type === 'worker' && t.url.includes('live.worker'));
  if (w) {
    const { sessionId } = await browserCdp.send('Target.attachToTarget', { targetId: w.targetId, flatten: false });
    const call = (method, params = {}) =>
      new Promise((resolve) => {
        const id = Math.floor(Math.random() * 1e9);
        const onMsg = (m) => {
          const msg = JSON.parse(m.message);
          if (msg.id === id) {
            browserCdp.off('Target.receivedMessageFromTarget', onMsg);
            resolve(msg.result ?? {});
          }
        };
        browserCdp.on('Target.receivedMessageFromTarget', onMsg);
        void browserCdp.send('Target.sendMessageToTarget', { sessionId, message: JSON.stringify({ id, method, params }) });
      });
    const h = await call('Runtime.getHeapUsage');
    // backingStorageSize: ArrayBuffers' memory outside the JS heap (the owner tables, the stream's chunks).
    out.worker = `${mib(h.usedSize ?? 0)}${h.backingStorageSize !== undefined ? ` + ${mib(h.backingStorageSize)} ArrayBuffers` : ''}`;
    await call('HeapProfiler.collectGarbage');
    out.workerAfterGc = mib((await call('Runtime.getHeapUsage')).usedSize ?? 0);
    await browserCdp.send('Target.detachFromTarget', { sessionId });
  }
  await browserCdp.detach();
  return out;
}

/**
 * 4. The page's replay against the native replay, on the same recorded events: a stream recorded
 * from serve for --record-s seconds under load (two processes opening and closing /dev/null), then
 * counted (at most 48 MiB of it, 2 million events) --reps times by (a) the page's own code
 * (web/live/live-state.ts's LiveState.push, bundled by Vite) in a dedicated worker in Chromium,
 * fed in 64-KiB chunks as fetch delivers them, each copied into the module's memory once: the
 * frames are cut and the events counted by the core's C (src/replay/live_count.c) as WebAssembly
 * (slablab-live.wasm, emcc -O3), and (b) the same C natively, fed the same 64-KiB chunks
 * (wasm-core/tests/tools/live_replay_native.c, a driver of live_count.c, gcc -O2).  Best of the
 * reps for each; --rounds rounds of both, one after the other, each printing its page/native
 * (the machine's load moves between minutes; within a round both sides see about the same).
 */
async function replayPhase() {
  const tmp = mkdtempSync(join(tmpdir(), 'slablab-live-replay-'));
  try {
    console.log(`\n# 4. the page's replay against the native replay (the same ${RECORD_S}-s recording, best of ${REPS}, ${ROUNDS} rounds); load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
    const native = join(tmp, 'live_replay_native');
    const cc = spawnSync('cc', ['-O2', '-o', native, join(root, 'wasm-core/tests/tools/live_replay_native.c'), join(root, 'wasm-core/src/replay/live_count.c'), '-lm'], { encoding: 'utf8' });
    if (cc.status !== 0) throw new Error(`cc: ${cc.stderr}`);
    // Record.
    const s = await serve(['--snapshot-interval', '0']);
    const { port, token } = /:(?<port>\d+)\/\?mode=live&token=(?<token>[0-9a-f]+)/.exec(s.url).groups;
    const stopLoad = load(2);
    const parts = [];
    await new Promise((resolve) => {
      const req = http.get({ host: '127.0.0.1', port, path: `/api/live?token=${token}`, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
        let bytes = 0;
        res.on('data', (d) => {
          parts.push(d);
          bytes += d.length;
          if (bytes >= MAX_RECORDING) req.destroy(); // enough events; the replays hold it in memory
        });
        res.on('close', resolve);
        setTimeout(() => req.destroy(), RECORD_S * 1000);
      });
      req.on('error', resolve);
    });
    stopLoad();
    await stop(s.child);
    const stream = Buffer.concat(parts);
    const file = join(tmp, 'stream.bin');
    writeFileSync(file, stream);
    if (SAVE) writeFileSync(SAVE, stream);
    // The page's code, bundled for a worker.
    const entry = join(tmp, 'replay-entry.ts');
    writeFileSync(
      entry,
      `import { LiveState } from ${JSON.stringify(join(root, 'web/live/live-state.ts'))};
let all = null;
self.onmessage = (e) => {
  const { bytes, reps } = e.data;
  if (bytes) all = new Uint8Array(bytes);
  let best = Infinity, events = 0, remote = 0, handedBack = 0;
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    // As the worker reads: each chunk copied into the module once, cut and counted there.
    const state = new LiveState();
    handedBack = 0;
    for (let off = 0; off < all.length; off += 65536) handedBack += state.push(all.subarray(off, off + 65536)).length;
    best = Math.min(best, performance.now() - t0);
    events = state.events;
    remote = state.summary().caches.reduce((a, c) => a + c.remote.reduce((x, y) => x + y, 0), 0);
    state.dispose();
  }
  self.postMessage({ events, bestMs: best, remote, handedBack });
};
`,
    );
    const built = await viteBuild({ configFile: false, logLevel: 'silent', build: { write: false, minify: true, lib: { entry, formats: ['iife'], name: 'replay' } } });
    const code = (Array.isArray(built) ? built[0] : built).output[0].code;
    // The page fetches the recording (as the live page fetches its stream) and hands it to the worker.
    const page = await browser.newPage();
    await page.route('http://replay.bench/**', (route) => {
      const path = new URL(route.request().url()).pathname;
      if (path === '/stream.bin') return route.fulfill({ body: stream, contentType: 'application/octet-stream' });
      if (path === '/replay.js') return route.fulfill({ body: code, contentType: 'text/javascript' });
      return route.fulfill({ body: '<!doctype html><title>replay</title>', contentType: 'text/html' });
    });
    await page.goto('http://replay.bench/');
    await page.evaluate(async () => {
      const buf = await (await fetch('/stream.bin')).arrayBuffer();
      const src = await (await fetch('/replay.js')).text();
      const w = new Worker(URL.createObjectURL(new Blob([src], { type: 'text/javascript' })));
      window.replay = (reps, bytes) =>
        new Promise((resolve) => {
          w.onmessage = (e) => resolve(e.data);
          w.postMessage({ bytes, reps }, bytes ? [bytes] : []);
        });
      window.replayBytes = buf;
    });
    const fmt = (x) => Math.round(x).toLocaleString('en-US');
    console.log('| round | events | native (C, gcc -O2) | page worker (Chromium, the C as wasm) | page / native | load average |');
    console.log('|---|---|---|---|---|---|');
    const ratios = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const nat = spawnSync(native, [file, String(REPS)], { encoding: 'utf8' });
      const n = /events (\d+) best_s ([\d.]+) events_per_s (\d+) remote (\d+)/.exec(nat.stdout);
      if (!n) throw new Error(`live_replay_native: ${nat.stdout}${nat.stderr}`);
      const js = await page.evaluate(async (reps) => {
        const bytes = window.replayBytes;
        window.replayBytes = null;
        return window.replay(reps, bytes);
      }, REPS);
      if (js.events !== Number(n[1])) throw new Error(`the page counted ${js.events} events, the native replay ${n[1]}`);
      const nativeRate = Number(n[3]);
      const pageRate = js.events / (js.bestMs / 1000);
      ratios.push(pageRate / nativeRate);
      console.log(`| ${round} | ${fmt(js.events)} | ${fmt(nativeRate)} events/s (${(Number(n[2]) * 1000).toFixed(1)} ms; remote frees ${fmt(Number(n[4]))}) | ${fmt(pageRate)} events/s (${js.bestMs.toFixed(1)} ms; remote ${fmt(js.remote)} in the 64 busiest caches; ${js.handedBack} frames handed back) | ${(pageRate / nativeRate).toFixed(2)} | ${loadavg().map((x) => x.toFixed(1)).join(' ')} |`);
    }
    await page.close();
    console.log(`recording: ${(stream.length / 1048576).toFixed(1)} MiB; page / native per round ${ratios.map((r) => r.toFixed(2)).join(', ')} (goal: at least 0.6)`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** GET /api/status of a serve at url (its token in the URL): { events_in, ... }. */
function serverStatus(url) {
  const { port, token } = /:(?<port>\d+)\/\?mode=live&token=(?<token>[0-9a-f]+)/.exec(url).groups;
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: `/api/status?token=${token}`, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(JSON.parse(body)));
    });
    req.on('error', reject);
  });
}

/**
 * The server alone: `serve --from FROM --loop --rate max` read by a client that only walks the
 * frames (no page): events/s the server played and sent to it, and what it dropped for it, over
 * LEVEL_S seconds (from the status frames in the stream).
 */
async function serverAlone() {
  const s = await serve(['--from', FROM, '--loop', '--rate', 'max']);
  const { port, token } = /:(?<port>\d+)\/\?mode=live&token=(?<token>[0-9a-f]+)/.exec(s.url).groups;
  const statuses = [];
  await new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    const req = http.get({ host: '127.0.0.1', port, path: `/api/live?token=${token}`, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
      res.on('data', (d) => {
        buf = buf.length ? Buffer.concat([buf, d]) : d;
        let off = 0;
        while (buf.length - off >= 8) {
          const len = buf.readUInt32LE(off);
          if (buf.length - off < 8 + len) break;
          if (buf[off + 4] === 5) statuses.push({ t: performance.now(), ...JSON.parse(buf.subarray(off + 8, off + 8 + len).toString('utf8')) });
          off += 8 + len;
        }
        buf = buf.subarray(off);
      });
      res.on('close', resolve);
    });
    req.on('error', resolve);
    setTimeout(() => req.destroy(), (LEVEL_S + 2) * 1000);
  });
  await stop(s.child);
  const a = statuses.find((x) => x.t >= statuses[0].t + 2000) ?? statuses[0];
  const b = statuses.at(-1);
  const secs = (b.t - a.t) / 1000;
  return { played: (b.events_in - a.events_in) / secs, sent: (b.sent - a.sent) / secs, dropped: b.server_dropped - a.server_dropped };
}

/**
 * --from: the capture -> server -> page ceiling.  For each rate, a fresh `serve --from FROM --loop
 * --rate R` and a fresh page; after the page shows its figures and 2 s more, LEVEL_S seconds are
 * measured: events the server played (its events_in), events the page counted, the server's drops
 * for the page, the page's own, and event-to-pixel latency.
 */
async function fromPhase() {
  const fmt = (x) => Math.round(x).toLocaleString('en-US');
  console.log(`# the capture -> server -> page ceiling: ${FROM} played by serve --from --loop, ${LEVEL_S} s per level; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  console.log('| --rate | events/s the server played | events/s to the page | server dropped | page dropped | event-to-pixel p50 | p95 | of which event-to-worker p50 | p95 | load average |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  let clean = null;
  let firstDrop = null;
  for (const rate of FROM_RATES) {
    const s = await serve(['--from', FROM, '--loop', '--rate', rate]);
    const page = await browser.newPage();
    try {
      await page.goto(s.url);
      await page.getByTestId('live-figures').waitFor({ timeout: 30_000 });
      await sleep(2000);
      const offMs = wallMinusMonoMs();
      const before = await figures(page);
      const statusBefore = await serverStatus(s.url);
      const paintsBefore = await page.evaluate(() => window.__slablabLive?.paints.length ?? 0);
      const t0 = Date.now();
      await sleep(LEVEL_S * 1000);
      const after = await figures(page);
      const statusAfter = await serverStatus(s.url);
      const secs = (Date.now() - t0) / 1000;
      const paints = await page.evaluate((k) => (window.__slablabLive?.paints ?? []).slice(k), paintsBefore);
      const lat = paints.map((p) => p.paintWallMs - offMs - p.eventNs / 1e6).filter((x) => x > -50);
      const wlat = paints.map((p) => p.sentWallMs - offMs - p.eventNs / 1e6).filter((x) => x > -50);
      const played = (statusAfter.events_in - statusBefore.events_in) / secs;
      const toPage = (after.events - before.events) / secs;
      const server = after.server - before.server;
      const pageDropped = after.page - before.page;
      if (server === 0 && pageDropped === 0) clean = Math.max(clean ?? 0, toPage);
      else firstDrop ??= { rate, played, toPage };
      console.log(
        `| ${rate === 'max' ? 'max' : fmt(Number(rate))} | ${fmt(played)} | ${fmt(toPage)} | ${fmt(server)} | ${fmt(pageDropped)} | ${pct(lat, 50).toFixed(0)} ms | ${pct(lat, 95).toFixed(0)} ms | ${pct(wlat, 50).toFixed(0)} ms | ${pct(wlat, 95).toFixed(0)} ms | ${loadavg()[0].toFixed(1)} |`,
      );
    } finally {
      await page.close();
      await stop(s.child);
    }
  }
  console.log(clean === null ? 'every level dropped' : `the highest rate that reached the drawn page with nothing dropped: ${fmt(clean)} events/s`);
  if (firstDrop) console.log(`the first level that dropped: --rate ${firstDrop.rate} (the server played ${fmt(firstDrop.played)} events/s, ${fmt(firstDrop.toPage)} reached the page)`);
  const alone = await serverAlone();
  console.log(`the server alone (--rate max, a client that only walks the frames): played ${fmt(alone.played)} events/s, sent ${fmt(alone.sent)} events/s to the client, dropped ${fmt(alone.dropped)} for it; load average ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
}

const browser = await launchChromium();
if (FROM) {
  try {
    await fromPhase();
  } finally {
    await browser.close();
  }
  process.exit(0);
}
try {
  // 1. Throughput and latency.
  console.log(`# 1. events per second to the drawn page (Linux ${spawnSync('uname', ['-r'], { encoding: 'utf8' }).stdout.trim()}, ${LEVEL_S} s per level)`);
  console.log('| opens+closes/s asked | events/s to the page | kernel ring lost | server dropped | page dropped | event-to-pixel p50 | p95 | of which event-to-worker p50 | p95 | load average |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const s1 = await serve(['--snapshot-interval', '0']);
  const page = await browser.newPage();
  await page.goto(s1.url);
  await page.getByTestId('live-figures').waitFor({ timeout: 30_000 });
  await sleep(2000);
  const offMs = wallMinusMonoMs();
  let clean = null;
  let lastOk = false;
  for (const rate of PHASES.includes(1) ? RATES : []) {
    const before = await figures(page);
    const paintsBefore = await page.evaluate(() => window.__slablabLive?.paints.length ?? 0);
    const t0 = Date.now();
    // One process per 25,000 pairs a second, each opening and closing its share every 10 ms.
    const procs = Math.ceil(rate / 25_000);
    const per = Math.max(1, Math.round(rate / procs / 100));
    const stopLoad = load(procs, `const f=require('fs');setInterval(()=>{for(let i=0;i<${per};i++)f.closeSync(f.openSync('/dev/null','r'))},10)`);
    await sleep(LEVEL_S * 1000);
    stopLoad();
    const s = (Date.now() - t0) / 1000;
    await sleep(1500); // what was sent reaches the page
    const after = await figures(page);
    const paints = await page.evaluate((k) => (window.__slablabLive?.paints ?? []).slice(k), paintsBefore);
    const lat = paints.map((p) => p.paintWallMs - offMs - p.eventNs / 1e6).filter((x) => x > -50);
    const wlat = paints.map((p) => p.sentWallMs - offMs - p.eventNs / 1e6).filter((x) => x > -50);
    const perS = Math.round((after.events - before.events) / s);
    const dropped = after.kernel - before.kernel + after.server - before.server + after.page - before.page;
    const ok = dropped === 0 && pct(lat, 95) < 2000;
    if (ok) clean = Math.max(clean ?? 0, perS);
    lastOk = ok;
    console.log(
      `| ${rate.toLocaleString('en-US')} | ${perS.toLocaleString('en-US')} | ${after.kernel - before.kernel} | ${(after.server - before.server).toLocaleString('en-US')} | ${after.page - before.page} | ${pct(lat, 50).toFixed(0)} ms | ${pct(lat, 95).toFixed(0)} ms | ${pct(wlat, 50).toFixed(0)} ms | ${pct(wlat, 95).toFixed(0)} ms | ${loadavg()[0].toFixed(1)} |`,
    );
  }
  if (PHASES.includes(1))
    console.log(
      clean === null
        ? 'no level ran without a drop (or with event-to-pixel p95 under 2 s)'
        : `the highest rate with nothing dropped and event-to-pixel p95 under 2 s: ${clean.toLocaleString('en-US')} events/s${lastOk ? ' (the highest level too: a lower bound, the load could not make anything drop)' : ''}`,
    );
  // 2. Memory.
  if (PHASES.includes(2)) {
    console.log(`\n# 2. memory over ${MINUTES} min on the stream (one churning process); load average ${loadavg().map((x) => x.toFixed(1)).join(' ')} at the start`);
    console.log('| minute | server RSS | renderer processes RSS | browser PSS (all its processes) | page JS heap | worker JS heap | worker heap after a full GC | events received | lost (kernel) | dropped (server) | dropped (page) |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    const stopLoad = load(1, "const f=require('fs');setInterval(()=>{for(let i=0;i<500;i++)f.closeSync(f.openSync('/dev/null','r'))},10)");
    const sample = async (minute) => {
      const mem = await heaps(page);
      const f = await figures(page);
      const rend = rendererRss();
      console.log(`| ${minute} | ${rss(s1.child.pid).toFixed(1)} MiB | ${rend.total.toFixed(0)} MiB (${rend.each.map((x) => x.toFixed(0)).join(' + ')}) | ${rend.browserPss.toFixed(0)} MiB | ${mem.page} | ${mem.worker} | ${mem.workerAfterGc} | ${f.events.toLocaleString('en-US')} | ${f.kernel} | ${f.server.toLocaleString('en-US')} | ${f.page} |`);
    };
    await sample(0);
    const every = Math.max(1, Math.round(MINUTES / 10));
    for (let m = every; m <= MINUTES; m += every) {
      await sleep(every * 60_000);
      await sample(m);
    }
    stopLoad();
    console.log(`load average at the end ${loadavg().map((x) => x.toFixed(1)).join(' ')}`);
  }
  await page.close();
  await stop(s1.child);
  if (PHASES.includes(4)) await replayPhase();
  if (!PHASES.includes(3)) process.exit(0);

  // 3. Agreement per cache over a 10-s window: the busy caches found on an unfiltered server, then
  //    a server streaming only them (--caches), one page per cache.
  console.log('\n# 3. agreement per cache, 10-s windows (--snapshot-interval 10), a mixed workload');
  const work = [
    load(1, "const f=require('fs');setInterval(()=>{for(let i=0;i<300;i++)f.closeSync(f.openSync('/dev/null','r'))},10)"),
    load(1, "const {spawnSync}=require('child_process');for(;;)spawnSync('sh',['-c','ls -R /usr/share/doc >/dev/null; true'])"),
  ];
  const s2 = await serve(['--snapshot-interval', '0']);
  const look = await browser.newPage();
  await look.goto(s2.url);
  await sleep(5000);
  const names = await look.evaluate(() => [...document.querySelectorAll('[data-testid^="live-pick-"]')].map((b) => b.textContent ?? ''));
  await look.close();
  await stop(s2.child);
  const picked = [...new Set([...names.slice(0, CACHES), 'filp'])].slice(0, 7);
  // One cache at a time, on a server streaming only it: the page keeps up on a busy machine.
  const results = new Map();
  for (const name of picked) {
    const s3 = await serve(['--snapshot-interval', '10', '--caches', name]);
    const p = await browser.newPage();
    await p.goto(`${s3.url}&cache=${encodeURIComponent(name)}`);
    const deadline = Date.now() + 40_000;
    while (Date.now() < deadline && !results.has(name)) {
      await sleep(1000);
      const a = await p.evaluate(() => window.__slablabLive?.agreement ?? null);
      if (a && a.windowS >= 9) results.set(name, a);
    }
    await p.close();
    await stop(s3.child);
  }
  work.forEach((w) => w());
  console.log('| cache | window | events | slabs agreeing (list and inuse) | objects agreeing | allocations predicted | disagreeing objects by cause |');
  console.log('|---|---|---|---|---|---|---|');
  for (const name of picked) {
    const r = results.get(name);
    if (!r) {
      console.log(`| ${name} | — | — | no 10-s window in 40 s | | | |`);
      continue;
    }
    const { a } = r;
    const causes = Object.entries(a.causes).filter(([, v]) => v > 0).map(([k, v]) => `${k} ${v}`).join(', ') || '—';
    const p = (x, y) => (y ? `${((100 * x) / y).toFixed(1)} %` : '—');
    console.log(`| ${name} | ${r.windowS.toFixed(1)} s | ${r.events.toLocaleString('en-US')} | ${p(a.slabs_agreeing, a.slabs_compared)} of ${a.slabs_compared} | ${p(a.objects_agreeing, a.objects_compared)} of ${a.objects_compared} | ${p(a.hits, a.allocs)} of ${a.allocs} | ${causes} (lost ${r.lost}) |`);
  }
} finally {
  await browser.close();
}
