#!/usr/bin/env node
// test.mjs - `npm test` (after setup.mjs test): runs every suite, even after
// one fails, prints each suite's result and a final plain line
// `N passed, N failed` counting suites.  Exits 1 if any suite failed.
//
//   native   C tests, gcc Debug build            (wasm-core/build/native, ctest)
//   asan     C tests under ASan+UBSan, clang-14  (build/asan)
//   tsan     `stress`-labelled C tests, TSan     (build/tsan, ctest -L stress)
//   fuzz     each fuzz/fuzz_*.c for SLABLAB_FUZZ_SECONDS (default 20) each (build/fuzz)
//   wasm     C tests as WebAssembly with threads under Node (build/wasm, ctest)
//   types    tsc over the browser code and the Node-side code
//   vitest   unit tests (web/**/*.test.ts)
//   e2e      vite build, then Playwright in headless system Chromium
// `node scripts/test.mjs NAME...` runs only the named suites.
import { readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { CORE, EMSCRIPTEN_ENV, buildCore, buildDir, run, say } from './lib.mjs';

const FUZZ_SECONDS = Number(process.env.SLABLAB_FUZZ_SECONDS ?? 20);
const CLANG = ['-DCMAKE_C_COMPILER=clang-14'];

function ctest(name, extra = [], env = process.env) {
  return run('ctest', ['--test-dir', buildDir(name), '--output-on-failure', '--no-tests=error', ...extra], { env });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const SUITES = {
  native: () => buildCore('native', ['-DCMAKE_BUILD_TYPE=Debug']) || ctest('native'),
  asan: () => buildCore('asan', [...CLANG, '-DSLABLAB_SANITIZE=address']) || ctest('asan'),
  tsan: () => {
    const status = buildCore('tsan', [...CLANG, '-DSLABLAB_SANITIZE=thread']);
    if (status) return status;
    const list = run('ctest', ['--test-dir', buildDir('tsan'), '-N', '-L', 'stress']);
    if (list) return list;
    // No stress test yet is not a failure of this suite: ctest then exits 0.
    return run('ctest', ['--test-dir', buildDir('tsan'), '--output-on-failure', '-L', 'stress']);
  },
  fuzz: () => {
    let targets = [];
    try {
      targets = readdirSync(join(CORE, 'fuzz')).filter((f) => /^fuzz_\w+\.c$/.test(f));
    } catch {
      targets = [];
    }
    if (targets.length === 0) {
      say('no fuzz targets (wasm-core/fuzz/fuzz_*.c) yet');
      return 0;
    }
    const status = buildCore('fuzz', [...CLANG, '-DSLABLAB_FUZZ=ON']);
    if (status) return status;
    let failed = 0;
    for (const t of targets) {
      const name = t.replace(/\.c$/, '');
      const corpus = join(buildDir('fuzz'), `${name}.corpus`);
      run('mkdir', ['-p', corpus]);
      if (run(join(buildDir('fuzz'), name), [`-max_total_time=${FUZZ_SECONDS}`, '-print_final_stats=1', corpus]) !== 0)
        failed++;
    }
    return failed ? 1 : 0;
  },
  wasm: () => buildCore('wasm', [], { emscripten: true }) || ctest('wasm', [], EMSCRIPTEN_ENV),
  types: () => run('npx', ['tsc', '-p', 'tsconfig.json']) || run('npx', ['tsc', '-p', 'tsconfig.node.json']),
  vitest: () => run('npx', ['vitest', 'run']),
  e2e: async () => {
    const status = run('npx', ['vite', 'build', '--logLevel', 'warn']);
    if (status) return status;
    const env = {
      ...process.env,
      E2E_ISOLATED_PORT: String(await freePort()),
      E2E_PLAIN_PORT: String(await freePort()),
    };
    return run('npx', ['playwright', 'test'], { env });
  },
};

const only = process.argv.slice(2);
for (const name of only)
  if (!(name in SUITES)) {
    console.error(`test.mjs: unknown suite '${name}' (known: ${Object.keys(SUITES).join(', ')})`);
    process.exit(2);
  }

const results = [];
for (const [name, suite] of Object.entries(SUITES)) {
  if (only.length && !only.includes(name)) continue;
  say(`=== suite ${name}`);
  const t0 = Date.now();
  const status = await suite();
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  results.push({ name, ok: status === 0, secs });
  say(`=== suite ${name}: ${status === 0 ? 'PASSED' : `FAILED (exit ${status})`} in ${secs} s`);
}

console.log('\nsuite results:');
for (const r of results) console.log(`  ${r.ok ? 'PASS' : 'FAIL'}  ${r.name.padEnd(7)} ${r.secs} s`);
const passed = results.filter((r) => r.ok).length;
console.log(`${passed} passed, ${results.length - passed} failed`);
process.exit(passed === results.length ? 0 : 1);
