#!/usr/bin/env node
// setup.mjs - installs only what is missing, then builds what is stale.
// Run first by `npm start` (goal: start), `npm test` (test), `npm run build`
// (build) and `npm run bench` (bench); `npm run setup` alone means start.
//
//  1. Debian packages each goal needs, checked with dpkg-query; when some
//     are missing and we are root: `apt-get update` once, then
//     `apt-get install -y ...`; when not root: stop with the exact command.
//  2. npm packages: `npm ci` when node_modules is missing or older than
//     package-lock.json (Playwright's own browser download is skipped: the
//     tests use the system Chromium).
//  3. The WebAssembly core (wasm-core/build/wasm -> web/core/generated/):
//     configured once, then ninja rebuilds what changed.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT, buildCore, mustRun, say } from './lib.mjs';

const BASE = ['cmake', 'ninja-build', 'emscripten'];
export const PACKAGES = {
  start: BASE,
  build: BASE,
  test: [...BASE, 'chromium', 'clang-14', 'libclang-rt-14-dev', 'python3'],
  bench: ['cmake', 'ninja-build', 'gcc', 'libjemalloc-dev', 'libmimalloc-dev', 'libgoogle-perftools-dev'],
};

function installed(pkg) {
  const r = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes('install ok installed');
}

export function ensurePackages(goal) {
  const want = PACKAGES[goal];
  const missing = want.filter((p) => !installed(p));
  if (missing.length === 0) return;
  const install = `apt-get install -y ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) {
    console.error(`[slablab] missing Debian packages: ${missing.join(' ')}`);
    console.error(`[slablab] install them, then run this again:\n    sudo apt-get update && sudo ${install}`);
    process.exit(1);
  }
  say(`installing missing Debian packages: ${missing.join(' ')}`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  mustRun('apt-get', ['update'], { env });
  mustRun('apt-get', ['install', '-y', '--no-install-recommends', ...missing], { env });
}

function ensureNodeModules() {
  const lock = join(ROOT, 'package-lock.json');
  const stamp = join(ROOT, 'node_modules', '.package-lock.json');
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= statSync(lock).mtimeMs) return;
  say(existsSync(stamp) ? 'package-lock.json changed: reinstalling npm packages' : 'installing npm packages');
  mustRun('npm', ['ci', '--no-audit', '--no-fund'], {
    env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
}

function ensureWasm() {
  say('building the WebAssembly core (wasm-core/build/wasm -> web/core/generated/)');
  const status = buildCore('wasm', [], { emscripten: true });
  if (status !== 0) process.exit(status);
}

export function setup(goal) {
  if (!PACKAGES[goal]) {
    console.error(`[slablab] setup: unknown goal '${goal}' (start, build, test or bench)`);
    process.exit(2);
  }
  ensurePackages(goal);
  if (goal !== 'bench') {
    ensureNodeModules();
    ensureWasm();
  }
  say(`setup for ${goal}: done`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) setup(process.argv[2] ?? 'start');
