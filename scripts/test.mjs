#!/usr/bin/env node
// test.mjs - every suite, after `node scripts/setup.mjs test` (which `npm test` runs first).
//
//   native     the C tests, gcc, debug build (ctest)
//   asan       the C tests under ASan + UBSan (clang-14)
//   tsan       the stress tests under TSan (ctest -L stress)
//   fuzz       ub_canary (a UBSan report must stop a run), then each libFuzzer target for
//              SLABLAB_FUZZ_SECONDS (default 20) from its corpus in wasm-core/fuzz/corpus/; the long
//              campaign is scripts/fuzz-campaign.mjs (docs/security.md)
//   wasm       the C tests as WebAssembly with threads, under Node
//   typecheck  tsc over the web code (tsconfig.json) and its tests and configs (tsconfig.node.json)
//   vitest     the TypeScript unit tests (web/**/*.test.ts)
//   lint       ESLint over the web code, tests and scripts (eslint.config.mjs); and
//              clang-format --dry-run over the C (.clang-format): a C file it would change fails
//   e2e        Playwright in headless system Chromium against the built site,
//              served with (vite preview) and without (python http.server) COOP/COEP
//   release    the one-file slablab (scripts/build-release.mjs, after vite build) copied alone
//              into an empty directory: no shared libbpf/libelf/libmicrohttpd, the site served
//              from inside it byte for byte, events streamed and every program detached (root)
//
// `node scripts/test.mjs SUITE...` runs only those.  Every suite runs even
// when an earlier one fails; the exit status is non-zero if any failed.  The
// last line counts the tests of all suites: "total: N passed, N failed".
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { buildRelease } from './build-release.mjs';
import { buildEnv, cmakeBuild, root } from './setup.mjs';

/** Runs a command, echoing its output and keeping it for the summary parsers. */
function exec(cmd, args, opts = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: root, env: { ...buildEnv, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const keep = (sink) => (chunk) => {
      out += chunk;
      if (!opts.quiet) sink.write(chunk);
    };
    child.stdout.on('data', keep(process.stdout));
    child.stderr.on('data', keep(process.stderr));
    child.on('error', (e) => resolve({ status: 127, out: `${cmd}: ${e.message}` }));
    // Counts are parsed from the text without colour codes (ESC [ ... m).
    // eslint-disable-next-line no-control-regex -- the escape character is what the pattern matches
    const plain = () => out.replace(/\x1b\[[0-9;]*m/g, '');
    child.on('close', (status, signal) => resolve({ status: status ?? (signal ? 128 : 1), out: plain() }));
  });
}

/** ctest's "N% tests passed, F tests failed out of T". */
function ctestCounts(out) {
  const m = out.match(/tests passed, (\d+) tests? failed out of (\d+)/);
  return m ? { failed: Number(m[1]), passed: Number(m[2]) - Number(m[1]) } : null;
}

async function ctest(buildDir, extra = []) {
  const r = await exec('ctest', ['--test-dir', buildDir, '--output-on-failure', '-j2', ...extra]);
  const counts = ctestCounts(r.out);
  if (!counts || counts.passed + counts.failed === 0) return { ok: false, passed: 0, failed: 1, note: 'ran no test' };
  return { ok: r.status === 0 && counts.failed === 0, ...counts };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const SUITES = {
  async native() {
    return ctest(cmakeBuild('native', { defs: ['CMAKE_BUILD_TYPE=Debug'] }));
  },
  async asan() {
    return ctest(cmakeBuild('asan', { defs: ['CMAKE_C_COMPILER=clang-14', 'SLABLAB_SANITIZE=address'] }));
  },
  async tsan() {
    return ctest(cmakeBuild('tsan', { defs: ['CMAKE_C_COMPILER=clang-14', 'SLABLAB_SANITIZE=thread'] }), ['-L', 'stress']);
  },
  async fuzz() {
    const build = cmakeBuild('fuzz', { defs: ['CMAKE_C_COMPILER=clang-14', 'SLABLAB_FUZZ=ON'] });
    const seconds = process.env.SLABLAB_FUZZ_SECONDS ?? '20';
    const targets = readdirSync(build).filter((f) => /^fuzz_\w+$/.test(f)).sort();
    if (targets.length === 0) return { ok: false, passed: 0, failed: 1, note: 'no fuzz targets were built' };
    let passed = 0;
    let failed = 0;
    // The targets' flags must stop on undefined behaviour: the canary overflows a signed int on "UB".
    const canaryDir = mkdtempSync(join(tmpdir(), 'slablab-ub-canary-'));
    writeFileSync(join(canaryDir, 'ub'), 'UB');
    const canary = await exec(join(build, 'ub_canary'), [join(canaryDir, 'ub')], { quiet: true });
    rmSync(canaryDir, { recursive: true, force: true });
    if (canary.status !== 0 && canary.out.includes('runtime error')) {
      passed++;
      console.log('fuzz: ub_canary: a UBSan report stops the run');
    } else {
      failed++;
      console.log(`fuzz: ub_canary: undefined behaviour did not stop the run (exit ${canary.status})`);
    }
    for (const t of targets) {
      const corpus = mkdtempSync(join(tmpdir(), `slablab-${t}-`));
      console.log(`fuzz: ${t} for ${seconds} s`);
      // libFuzzer reports every new input; only a failure's tail is worth reading.
      // The checked-in corpus (seeds and every crash found so far) is read too; new inputs go to the temporary one.
      const seeds = join(root, 'wasm-core', 'fuzz', 'corpus', t);
      const dirs = existsSync(seeds) ? [corpus, seeds] : [corpus];
      const r = await exec(join(build, t), [`-max_total_time=${seconds}`, `-artifact_prefix=${corpus}/`, ...dirs], {
        quiet: true,
      });
      const runs = r.out.match(/Done (\d+) runs/)?.[1];
      if (r.status === 0) {
        passed++;
        console.log(`fuzz: ${t}: ${runs ?? '?'} runs, no failure`);
      } else {
        failed++;
        console.log(r.out.split('\n').slice(-40).join('\n'));
        console.log(`fuzz: ${t} FAILED (exit ${r.status}); its crash input is in ${corpus}`);
        continue;
      }
      rmSync(corpus, { recursive: true, force: true });
    }
    return { ok: failed === 0, passed, failed };
  },
  async wasm() {
    return ctest(cmakeBuild('wasm', { emscripten: true }));
  },
  async typecheck() {
    // The browser code, then the Node side (tests, e2e, configs, scripts' types).
    let passed = 0;
    for (const project of ['tsconfig.json', 'tsconfig.node.json']) {
      if ((await exec('npx', ['tsc', '-p', project])).status === 0) passed++;
    }
    return { ok: passed === 2, passed, failed: 2 - passed };
  },
  async vitest() {
    const r = await exec('npx', ['vitest', 'run']);
    const passed = Number(r.out.match(/Tests\s+(?:\d+ failed \| )?(\d+) passed/)?.[1] ?? 0);
    const failed = Number(r.out.match(/Tests\s+(\d+) failed/)?.[1] ?? 0);
    if (passed + failed === 0) return { ok: false, passed: 0, failed: 1, note: 'ran no test' };
    return { ok: r.status === 0 && failed === 0, passed, failed };
  },
  async lint() {
    // One test per file ESLint checked; a file with a finding fails.
    // A report of its own per run, so that an ESLint that did not run is never read from an earlier report.
    const dir = mkdtempSync(join(tmpdir(), 'slablab-eslint-'));
    const report = join(dir, 'report.json');
    const r = await exec('npx', ['eslint', '--format', 'json', '--output-file', report, '.']);
    if (!existsSync(report)) {
      rmSync(dir, { recursive: true, force: true });
      return { ok: false, passed: 0, failed: 1, note: 'eslint did not run' };
    }
    const files = JSON.parse(readFileSync(report, 'utf8'));
    rmSync(dir, { recursive: true, force: true });
    const failed = files.filter((f) => f.errorCount + f.warningCount > 0);
    for (const f of failed)
      for (const m of f.messages) console.log(`${f.filePath}:${m.line}:${m.column}: ${m.message} (${m.ruleId ?? 'parse'})`);
    console.log(`eslint: ${files.length} files, ${failed.length} with findings`);
    // The C formatter: every C file as .clang-format writes it (one test for the whole C core).
    const c = await exec('node', ['scripts/clang-format-check.mjs', '--strict'], { quiet: true });
    const cLines = c.out.trim().split('\n');
    for (const l of cLines.filter((x) => x.startsWith('clang-format would change'))) console.log(l);
    console.log(cLines.at(-1));
    const cOk = c.status === 0;
    if (files.length === 0) return { ok: false, passed: 0, failed: 1, note: 'eslint checked no file' };
    return {
      ok: r.status === 0 && failed.length === 0 && cOk,
      passed: files.length - failed.length + (cOk ? 1 : 0),
      failed: failed.length + (cOk ? 0 : 1),
    };
  },
  async e2e() {
    const build = await exec('npx', ['vite', 'build']);
    if (build.status !== 0) return { ok: false, passed: 0, failed: 1, note: 'vite build failed' };
    const env = { E2E_ISOLATED_PORT: String(await freePort()), E2E_PLAIN_PORT: String(await freePort()) };
    const r = await exec('npx', ['playwright', 'test'], { env });
    const passed = Number(r.out.match(/^\s*(\d+) passed/m)?.[1] ?? 0);
    const failed = Number(r.out.match(/^\s*(\d+) failed/m)?.[1] ?? 0);
    if (passed + failed === 0) return { ok: false, passed: 0, failed: 1, note: 'ran no test' };
    return { ok: r.status === 0 && failed === 0, passed, failed };
  },
  async release() {
    if (!existsSync(join(root, 'dist', 'index.html')) && (await exec('npx', ['vite', 'build'])).status !== 0)
      return { ok: false, passed: 0, failed: 1, note: 'vite build failed' };
    const bin = buildRelease();
    const r = await exec('node', [join(root, 'wasm-core/tests/cli/release_cli_test.mjs'), bin, join(root, 'dist')]);
    const passed = (r.out.match(/^ok /gm) ?? []).length;
    const failed = (r.out.match(/^FAIL /gm) ?? []).length;
    const skipped = (r.out.match(/^skip .*/gm) ?? []).join('; ');
    if (passed + failed === 0) return { ok: false, passed: 0, failed: 1, note: `ran no check${skipped ? ` (${skipped})` : ''}` };
    return { ok: r.status === 0 && failed === 0, passed, failed, note: skipped || undefined };
  },
};

const wanted = process.argv.slice(2);
for (const name of wanted) {
  if (!SUITES[name]) {
    console.error(`test: unknown suite '${name}' (${Object.keys(SUITES).join(', ')})`);
    process.exit(2);
  }
}
const results = [];
for (const name of wanted.length ? wanted : Object.keys(SUITES)) {
  console.log(`\n=== ${name} ===`);
  const started = Date.now();
  let r;
  try {
    r = await SUITES[name]();
  } catch (e) {
    r = { ok: false, passed: 0, failed: 1, note: e instanceof Error ? e.message : String(e) };
  }
  results.push({ name, seconds: Math.round((Date.now() - started) / 1000), ...r });
}

console.log('\n=== summary ===');
for (const r of results) {
  console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.name.padEnd(10)} ${r.passed} passed, ${r.failed} failed (${r.seconds} s)${r.note ? `: ${r.note}` : ''}`);
}
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
console.log(`total: ${passed} passed, ${failed} failed`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
