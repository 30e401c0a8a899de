#!/usr/bin/env node
// wasm-ab.mjs - two (or more) builds of the WebAssembly benchmark flavour
// against each other, in one process: `node scripts/wasm-ab.mjs DIR DIR...
// [--reps N] [--only fastpath|bulk|percpu]`.
//
// Each DIR holds a copy of web/core/generated/node/slablab-bench.{js,wasm}
// (and its package.json and worker), say before and after a change to the
// C.  The builds are loaded side by side and called in turn through the
// same bindings wasm-bench.mjs calls, the order reversed every repetition,
// so that both see the same load: on a shared machine single figures move
// by up to 30% between runs, which hides a 5% change between two runs of
// wasm-bench.mjs.  Prints ns per operation for each build and the last
// build over the first, per row (fastpath and bulk calibrated to about 2 ms
// per call, median of N; percpu whole workload runs of 32,768 objects at 4
// and 16 B, median of min(N, 9), after an untimed run of each).

import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const REPS = Number(opt('--reps') ?? 21);
const only = opt('--only');
const dirs = args.filter((a, i) => !a.startsWith('--') && !['--reps', '--only'].includes(args[i - 1]));
if (dirs.length < 2 || !(REPS >= 1) || (only && !['fastpath', 'bulk', 'percpu'].includes(only))) {
  console.error('usage: node scripts/wasm-ab.mjs DIR DIR... [--reps N] [--only fastpath|bulk|percpu]');
  process.exit(2);
}

const builds = [];
for (const d of dirs) {
  const create = createRequire(import.meta.url)(resolve(d, 'slablab-bench.js'));
  builds.push(await create({ wasmBinary: readFileSync(join(d, 'slablab-bench.wasm')) }));
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const want = (e) => !only || only === e;

/** Calibrated rows: name, operations per loop, call(build, loops) -> ns per operation. */
const rows = [];
if (want('fastpath'))
  for (const [i, v] of ['cmpxchg', 'locked', 'plain', 'rt'].entries())
    rows.push({ name: `fastpath ${v}`, ops: 1, call: (m, loops) => m._sl_api_bench_fastpath(i, loops, 0) });
if (want('bulk'))
  for (const b of [1, 2, 16, 30, 48, 158, 250])
    for (const [i, v] of ['detached', 'generic'].entries())
      rows.push({ name: `bulk ${b} ${v}`, ops: b, call: (m, loops) => m._sl_api_bench_bulk(i, b, loops, 0) });

const KINDS = ['areamap', 'bitmap', 'scanhint'];
const ORDERS = ['inorder', 'alternate', 'reverse'];
/** One percpu workload run: [alloc ns, free ns] per object. */
function percpu(m, kind, order, size) {
  const out = m._malloc(11 * 8); // sl_api_bench_percpu writes 11 doubles
  try {
    const rc = m._sl_api_bench_percpu(kind, size, 4, 32768, order, 0, 2, 0, 0, 0, out);
    if (rc !== 0) throw new Error(`sl_api_bench_percpu failed (${rc})`);
    const [allocMs, freeMs, allocated, freed] = new Float64Array(m.HEAPU8.buffer, out, 6);
    return [(allocMs * 1e6) / allocated, (freeMs * 1e6) / freed];
  } finally {
    m._free(out);
  }
}
const prows = want('percpu') ? KINDS.flatMap((_, k) => ORDERS.flatMap((_, o) => [4, 16].map((s) => [k, o, s]))) : [];

const loops = rows.map((r) =>
  builds.map((m) => {
    const probe = Math.max(1, Math.round(20000 / r.ops));
    r.call(m, probe); // warm-up: the JIT's optimising tier
    return Math.max(1, Math.round(2e6 / (r.call(m, probe) * r.ops)));
  }),
);
for (const m of builds) for (const p of prows) percpu(m, ...p);
const samples = rows.map(() => builds.map(() => []));
const psamples = prows.map(() => builds.map(() => [[], []]));
for (let r = 0; r < REPS; r++) {
  const order = r % 2 ? [...builds.keys()].reverse() : [...builds.keys()];
  rows.forEach((row, i) => order.forEach((j) => samples[i][j].push(row.call(builds[j], loops[i][j]))));
  if (r < Math.min(REPS, 9))
    prows.forEach((p, i) =>
      order.forEach((j) => percpu(builds[j], ...p).forEach((ns, phase) => psamples[i][j][phase].push(ns))),
    );
}
const line = (name, meds) =>
  console.log(`${name.padEnd(36)} ${meds.map((x) => x.toFixed(2).padStart(9)).join(' ')}   last/first ${(meds.at(-1) / meds[0]).toFixed(3)}`);
console.log(`${'row (ns per operation)'.padEnd(36)} ${dirs.map((_, i) => `build ${i + 1}`.padStart(9)).join(' ')}`);
rows.forEach((row, i) => line(row.name, samples[i].map(median)));
prows.forEach(([k, o, s], i) =>
  ['alloc', 'free'].forEach((phase, ph) => line(`percpu ${KINDS[k]} ${ORDERS[o]} ${s} B ${phase}`, psamples[i].map((x) => median(x[ph])))),
);
console.log(`# ${dirs.map((d, i) => `build ${i + 1}: ${d}`).join('; ')}; ${REPS} repetitions, Node ${process.version}`);
