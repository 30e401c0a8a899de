#!/usr/bin/env node
// wasm-bench.mjs - the WebAssembly benchmark flavour against native, per
// operation, in one run: `node scripts/wasm-bench.mjs [--quick] [--reps N]
// [--browser] [--json FILE]`.
//
// Native: the benchmark CLI (`slablab fastpath|bulk|percpu --format json`,
// built Release with SLABLAB_BENCH by setup.mjs).  WebAssembly: the same
// experiments in node/slablab-bench.js (SLABLAB_BENCH, -O3, threads; the
// module the Benchmarks page loads, linked for Node) through the bindings
// the page calls (sl_api_bench_fastpath, _bulk, _percpu), on this thread.
// Each fastpath/bulk row is calibrated to about 2 ms per call, variants
// interleaved, median of the repetitions (15; many short calls, as the
// native harness, so that the median comes from calls no other task
// interrupted); percpu rows (timed by the workload itself) run up to 5
// times on each side, median.  Prints ns per operation both sides and
// wasm/native per row, then the median and worst ratio per experiment.  Ratios near 1 want a quiet machine: both sides run on the
// same core one after the other, not at once.
//
// --browser also runs the Benchmarks page (the built site, `npx vite build`
// first, under `vite preview` in headless Chromium: cross-origin isolated,
// so the page loads the same flavour) with its own plan (a Run of fastpath,
// bulk and percpu) and adds its figures as a third column.

import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { withBenchPage } from './browser-bench.mjs';
import { cmakeBuild, core, setup } from './setup.mjs';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const repsAt = args.indexOf('--reps');
const REPS = repsAt >= 0 ? Number(args[repsAt + 1]) : quick ? 5 : 15;
const jsonAt = args.indexOf('--json');
const jsonOut = jsonAt >= 0 ? args[jsonAt + 1] : undefined;
const browser = args.includes('--browser');
if (!(REPS >= 1) || (jsonAt >= 0 && !jsonOut)) {
  console.error('usage: node scripts/wasm-bench.mjs [--quick] [--reps N] [--browser] [--json FILE]');
  process.exit(2);
}

const FASTPATHS = ['cmpxchg', 'locked', 'plain', 'rt']; // sl_slub_fastpath
const BULK_FORMS = ['detached', 'generic']; // sl_slub_bulk_free
const BULK_SIZES = quick ? [1, 30, 158] : [1, 2, 3, 4, 8, 16, 30, 32, 34, 48, 64, 128, 158, 250];
const PCPU_KINDS = ['areamap', 'bitmap', 'scanhint'];
const PCPU_ORDERS = ['inorder', 'alternate', 'reverse'];
const PCPU_SIZES = quick ? [4, 1024] : [4, 16, 64, 256, 1024];
const PCPU_OBJECTS = 32768; // the Benchmarks page's FULL_PLAN (web/percpu/bench.ts)
const TARGET_MS = 2;
/** percpu rows are whole workload runs (1-30 ms each): fewer repetitions do. */
const PCPU_REPS = Math.min(REPS, 5);

function build() {
  setup('bench');
  cmakeBuild('wasm', { emscripten: true, targets: ['slablab-node', 'slablab-bench-node'] });
}

function native(cmd, extra) {
  const cli = join(core, 'build', 'native-bench', 'slablab');
  const r = spawnSync(cli, [cmd, '--format', 'json', ...extra], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`slablab ${cmd} exited with ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

async function loadWasm() {
  const dir = join(import.meta.dirname, '..', 'web', 'core', 'generated', 'node');
  const create = createRequire(import.meta.url)(join(dir, 'slablab-bench.js'));
  return create({ wasmBinary: readFileSync(join(dir, 'slablab-bench.wasm')) });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Calibrated, interleaved wasm timing of one row: variant -> median ns per operation. */
function wasmRow(variants, call, opsPerLoop) {
  const loops = new Map();
  for (const v of variants) {
    const probe = Math.max(1, Math.round(20000 / opsPerLoop));
    call(v, probe); // warm-up: the JIT's optimising tier
    const ns = call(v, probe);
    if (ns < 0) throw new Error(`the wasm loop failed (${ns}) for ${v}`);
    loops.set(v, Math.max(1, Math.round((TARGET_MS * 1e6) / (ns * opsPerLoop))));
  }
  const samples = new Map(variants.map((v) => [v, []]));
  for (let r = 0; r < REPS; r++)
    for (const v of r % 2 ? [...variants].reverse() : variants) samples.get(v).push(call(v, loops.get(v)));
  return new Map(variants.map((v) => [v, median(samples.get(v))]));
}

/** Native medians of one experiment's measurements: "group|row|variant" -> ns. */
function nativeNs(doc, name) {
  const e = doc.experiments.find((x) => x.name === name);
  return new Map(e.measurements.filter((m) => m.available).map((m) => [`${m.group}|${m.row}|${m.variant}`, m.ns.median]));
}

function fastpathRows(m) {
  const n = nativeNs(native('fastpath', ['--reps', String(quick ? 5 : 15)]), 'fastpath');
  const w = wasmRow(FASTPATHS, (v, loops) => m._sl_api_bench_fastpath(FASTPATHS.indexOf(v), loops, 0), 1);
  return FASTPATHS.map((v) => ({ experiment: 'fastpath', row: 'alloc+free', variant: v, native: n.get(`slub alloc+free|256|${v}`), wasm: w.get(v) }));
}

function bulkRows(m) {
  const n = nativeNs(native('bulk', ['--reps', String(quick ? 5 : 15), ...(quick ? ['--quick'] : [])]), 'bulk');
  return BULK_SIZES.flatMap((b) => {
    const w = wasmRow(BULK_FORMS, (v, loops) => m._sl_api_bench_bulk(BULK_FORMS.indexOf(v), b, loops, 0), b);
    return ['generic', 'detached'].map((v) => ({ experiment: 'bulk', row: `bulk ${b}`, variant: v, native: n.get(`bulk|${b}|${v}`), wasm: w.get(v) }));
  });
}

/** One wasm percpu row: [alloc ns, free ns] per object. */
function wasmPercpu(m, kind, order, size) {
  const out = m._malloc(11 * 8); // sl_api_bench_percpu writes 11 doubles
  try {
    const rc = m._sl_api_bench_percpu(PCPU_KINDS.indexOf(kind), size, 4, PCPU_OBJECTS, PCPU_ORDERS.indexOf(order), 0, 2, 0, 0, 0, out);
    if (rc !== 0) throw new Error(`sl_api_bench_percpu failed (${rc}) for ${kind}/${order}/${size}`);
    const [allocMs, freeMs, allocated, freed, status] = new Float64Array(m.HEAPU8.buffer, out, 6);
    if (status !== 0) throw new Error(`the wasm percpu row ${kind}/${order}/${size} did not finish (status ${status})`);
    return [(allocMs * 1e6) / allocated, (freeMs * 1e6) / freed];
  } finally {
    m._free(out);
  }
}

function percpuRows(m) {
  // Warm-up: every allocator's code through the JIT's optimising tier before a row is timed.
  for (const k of PCPU_KINDS) for (const o of PCPU_ORDERS) wasmPercpu(m, k, o, 4);
  const key = (k, o, s) => `${k}|${o}|${s}`;
  const nat = new Map();
  const wasm = new Map();
  const push = (map, k, v) => map.set(k, [...(map.get(k) ?? []), v]);
  for (let r = 0; r < PCPU_REPS; r++) {
    const doc = native('percpu', ['--objects', String(PCPU_OBJECTS), '--sizes', PCPU_SIZES.join(',')]);
    for (const x of doc.runs) if (x.status === 'ok') push(nat, key(x.allocator, x.free_order, x.size), [(x.alloc_ms * 1e6) / x.allocated, (x.free_ms * 1e6) / x.freed]);
    for (const k of PCPU_KINDS) for (const o of PCPU_ORDERS) for (const s of PCPU_SIZES) push(wasm, key(k, o, s), wasmPercpu(m, k, o, s));
  }
  const rows = [];
  for (const k of PCPU_KINDS)
    for (const o of PCPU_ORDERS)
      for (const s of PCPU_SIZES)
        for (const [i, phase] of ['alloc', 'free'].entries()) {
          const n = nat.get(key(k, o, s));
          const w = wasm.get(key(k, o, s));
          rows.push({ experiment: 'percpu', row: `${s} B ${o}`, variant: `${k} ${phase}`, native: n ? median(n.map((x) => x[i])) : undefined, wasm: median(w.map((x) => x[i])) });
        }
  return rows;
}

/**
 * The Benchmarks page's own run in headless Chromium: "row|variant" keys as
 * the rows above name them -> ns per operation.
 */
async function browserRun() {
  const port = 4394;
  const out = new Map();
  await withBenchPage('wasm-bench', port, 1400, 600_000, async (page) => {
    await page.goto(`http://localhost:${port}/?page=benchmarks`);
    await page.getByRole('checkbox', { name: /^kmalloc/ }).uncheck();
    await page.getByTestId('bench-build').filter({ hasText: 'WebAssembly benchmark build' }).waitFor();
    await page.getByRole('button', { name: 'Run', exact: true }).click();
    await page.getByTestId('bench-status').filter({ hasText: /^(Finished|Cancelled|The run failed)/ }).waitFor();
    const h = await page.evaluate(() => window.__slablabBench);
    for (const p of h?.points ?? []) out.set(p.experiment === 'bulk' ? `bulk ${p.row}|${p.variant}` : `alloc+free|${p.variant}`, p.ns);
    for (const r of h?.percpu ?? []) {
      const base = `${r.params.size} B ${r.params.order}|${r.params.allocator}`;
      out.set(`${base} alloc`, (r.result.allocMs * 1e6) / r.result.allocated);
      out.set(`${base} free`, (r.result.freeMs * 1e6) / r.result.freed);
    }
  });
  return out;
}

build();
const m = await loadWasm();
const measured = [...fastpathRows(m), ...bulkRows(m), ...percpuRows(m)];
const page = browser ? await browserRun() : undefined;
const rows = measured.map((r) => {
  const chromium = page?.get(`${r.row}|${r.variant}`);
  return { ...r, ratio: r.native ? r.wasm / r.native : undefined, ...(page ? { chromium, chromiumRatio: r.native && chromium ? chromium / r.native : undefined } : {}) };
});
const f = (x, d = 2) => (x === undefined ? '-' : x.toFixed(d));
const extra = (r) => (page ? ` ${f(r.chromium).padStart(11)} ${f(r.chromiumRatio).padStart(15)}` : '');
console.log(`${'experiment'.padEnd(10)} ${'row'.padEnd(16)} ${'variant'.padEnd(16)} ${'native ns'.padStart(10)} ${'wasm ns'.padStart(10)} ${'wasm/native'.padStart(11)}${page ? ` ${'chromium ns'.padStart(11)} ${'chromium/native'.padStart(15)}` : ''}`);
for (const r of rows) console.log(`${r.experiment.padEnd(10)} ${r.row.padEnd(16)} ${r.variant.padEnd(16)} ${f(r.native).padStart(10)} ${f(r.wasm).padStart(10)} ${f(r.ratio).padStart(11)}${extra(r)}`);
console.log('');
const summary = ['fastpath', 'bulk', 'percpu'].map((e) => {
  const rs = rows.filter((r) => r.experiment === e && r.ratio !== undefined).map((r) => r.ratio);
  return { experiment: e, rows: rs.length, median: median(rs), worst: Math.max(...rs), within: rs.filter((x) => x <= 1.5).length };
});
for (const s of summary) console.log(`${s.experiment}: wasm/native median ${f(s.median)}, worst ${f(s.worst)}, ${s.within} of ${s.rows} rows within 1.5x`);
if (page)
  for (const e of ['fastpath', 'bulk', 'percpu']) {
    const rs = rows.filter((r) => r.experiment === e && r.chromiumRatio !== undefined).map((r) => r.chromiumRatio);
    if (rs.length) console.log(`${e} in Chromium (the page's own plan): chromium/native median ${f(median(rs))}, worst ${f(Math.max(...rs))}, ${rs.filter((x) => x <= 1.5).length} of ${rs.length} rows within 1.5x`);
  }
console.log(`# wasm: node/slablab-bench.js (SLABLAB_BENCH, -O3) under Node ${process.version}; native: wasm-core/build/native-bench/slablab; ${REPS} repetitions`);
if (jsonOut) writeFileSync(jsonOut, `${JSON.stringify({ node: process.version, reps: REPS, quick, rows, summary }, null, 1)}\n`);
