#!/usr/bin/env node
// replay-bench.mjs - the trace replay's speed and memory (docs/replay.md, "Speed and memory").
//
//   node scripts/replay-bench.mjs [--bytes 1G] [--wasm-bytes 200M]
//
// A trace of --bytes is generated from the capture recorded on Linux 6.18
// (wasm-core/tests/fixtures/replay) by `slablab trace-gen` (pointers shifted per
// repetition, leftovers freed: a bounded live set) and streamed, never stored as text:
//   1. native, plain text through a pipe: `trace-gen | slablab replay -` (the benchmark
//      build); events/s is over the replay's own time (parse + pair + model, one thread,
//      the generator runs on another core), events/CPU-s over the CPU time it used (what
//      one core does, whatever else shares the machine), peak RSS the replay process's;
//   2. native, the same trace gzip -1 compressed in a temporary file;
//   3. WebAssembly (the Node build of the core, single-threaded, as the bridge worker
//      runs it), --wasm-bytes of the same trace fed in 1 MiB chunks.
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { buildBenchCli, buildBrowserModules, root } from './setup.mjs';

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] ? args[i + 1] : dflt;
};
const bytes = opt('--bytes', '1G');
const wasmBytes = opt('--wasm-bytes', '200M');

const cli = join(buildBenchCli(), 'slablab');
buildBrowserModules();
const tmp = mkdtempSync(join(tmpdir(), 'slablab-replay-bench-'));
const base = join(tmp, 'base.txt');
const fixture = join(root, 'wasm-core/tests/fixtures/replay/capture-6.18.slabcap.gz');
const untar = spawnSync('sh', ['-c', `tar xzOf '${fixture}' trace.txt > '${base}'`]);
if (untar.status !== 0) throw new Error('could not extract trace.txt from the fixture (tar, gzip)');

/** Runs `gen | consumer`, resolves with the consumer's stdout. */
function pipeline(gen, consumer) {
  return new Promise((resolve, reject) => {
    const g = spawn(gen[0], gen.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    const c = spawn(consumer[0], consumer.slice(1), { stdio: ['pipe', 'pipe', 'inherit'] });
    g.stdout.pipe(c.stdin);
    let out = '';
    c.stdout.on('data', (d) => (out += d));
    c.on('error', reject);
    c.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${consumer.join(' ')} exited ${code}`))));
  });
}

function row(what, j) {
  const mb = (j.input.bytes / 1048576).toFixed(0);
  console.log(
    `${what.padEnd(34)} ${mb.padStart(6)} MiB ${String(j.events.parsed).padStart(10)} events ` +
      `${j.elapsed_s.toFixed(2).padStart(7)} s ${(j.events_per_s / 1e6).toFixed(2).padStart(6)} M events/s` +
      ` (CPU ${j.cpu_s.toFixed(2)} s: ${(j.events_per_cpu_s / 1e6).toFixed(2)} M/CPU-s)` +
      `  peak RSS ${j.peak_rss_kb ? (j.peak_rss_kb / 1024).toFixed(1) + ' MiB' : '-'}  model errors ${j.model.errors}`,
  );
}

console.log(`replay benchmark: ${bytes} generated from ${fixture.replace(root + '/', '')}`);
const gen = [cli, 'trace-gen', base, '--bytes', bytes];
row('native, plain text via a pipe', JSON.parse(await pipeline(gen, [cli, 'replay', '-', '--cpus', '2', '--format', 'json'])));

const gz = join(tmp, 'trace.txt.gz');
await new Promise((resolve, reject) => {
  const g = spawn(gen[0], gen.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  const z = spawn('gzip', ['-1'], { stdio: ['pipe', 'pipe', 'inherit'] });
  g.stdout.pipe(z.stdin);
  const out = createWriteStream(gz);
  z.stdout.pipe(out);
  out.on('finish', resolve);
  z.on('error', reject);
});
const r = spawnSync(cli, ['replay', gz, '--cpus', '2', '--format', 'json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
row('native, gzip -1 file', JSON.parse(r.stdout));

// WebAssembly under Node: the Node build of the core, as the vitest tests load it.
const dir = join(root, 'web/core/generated/node');
const create = createRequire(import.meta.url)(join(dir, 'slablab-node.js'));
const m = await create({ wasmBinary: readFileSync(join(dir, 'slablab-node.wasm')) });
const h = m._sl_api_replay_create(0, 0, 2, 0, 0, 0);
const buf = m._sl_api_replay_buffer(h);
const size = m._sl_api_replay_buffer_size();
const consumed = m._malloc(4);
const wasmGen = spawn(cli, ['trace-gen', base, '--bytes', wasmBytes], { stdio: ['ignore', 'pipe', 'inherit'] });
let pending = Buffer.alloc(0);
let peakRss = 0;
for await (const chunk of wasmGen.stdout) {
  pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
  while (pending.length >= size) {
    m.HEAPU8.set(pending.subarray(0, size), buf);
    m._sl_api_replay_feed(h, size, consumed);
    pending = pending.subarray(size);
  }
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}
m.HEAPU8.set(pending, buf);
m._sl_api_replay_feed(h, pending.length, consumed);
m._sl_api_replay_finish(h);
const n = m._sl_api_replay_json(h);
const ptr = m._sl_api_replay_json_data(h);
const j = JSON.parse(Buffer.from(m.HEAPU8.subarray(ptr, ptr + n)).toString('utf8'));
j.peak_rss_kb = peakRss / 1024;
row('WebAssembly (Node, single-threaded)', j);
console.log(`(the WebAssembly heap is fixed at ${(m.HEAPU8.length / 1048576).toFixed(0)} MiB; RSS is Node's whole process;`);
console.log(' its CPU time is the wall clock: Emscripten has no process CPU clock)');
m._sl_api_replay_destroy(h);
rmSync(tmp, { recursive: true, force: true });
