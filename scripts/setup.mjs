#!/usr/bin/env node
// setup.mjs - installs what is missing and builds what is stale, for one purpose:
//
//   node scripts/setup.mjs start   the lab: npm packages, Emscripten, the browser modules
//   node scripts/setup.mjs build   the same, for `vite build`
//   node scripts/setup.mjs test    also Chromium, clang-14 with its sanitizer and fuzzer
//                                  runtimes, the allocators `slablab compare` races, and
//                                  libbpf-dev, bpftool and pkg-config (`slablab snapshot`)
//   node scripts/setup.mjs bench   a C toolchain, those allocators and the BPF packages
//
// Debian packages are installed with apt-get when running as root (after one
// `apt-get update`); otherwise the script stops and names the exact command.
// Builds are incremental: a build directory is configured once, then ninja
// rebuilds only what changed.
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');
export const core = join(root, 'wasm-core');

/** Debian packages each purpose needs, with the file or command that proves each is there. */
const PACKAGES = {
  cmake: { probe: 'cmake' },
  'ninja-build': { probe: 'ninja' },
  gcc: { probe: 'gcc' },
  emscripten: { probe: 'emcc' },
  chromium: { probe: 'chromium' },
  'clang-14': { probe: 'clang-14' },
  'clang-format-14': { probe: 'clang-format-14' },
  'libclang-rt-14-dev': { file: '/usr/lib/llvm-14/lib/clang/14.0.6/lib/linux/libclang_rt.fuzzer-x86_64.a' },
  'libjemalloc-dev': { file: '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2' },
  'libmimalloc-dev': { file: '/usr/lib/x86_64-linux-gnu/libmimalloc.so.2' },
  'libgoogle-perftools-dev': { file: '/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4' },
  'python3': { probe: 'python3' },
  // `slablab snapshot`'s BPF program: libbpf, the skeleton generator, and pkg-config for CMake to find libbpf.
  'libbpf-dev': { file: '/usr/include/bpf/libbpf.h' },
  bpftool: { file: '/usr/sbin/bpftool' },
  'pkg-config': { probe: 'pkg-config' },
  // `slablab serve`'s HTTP server (without it the CLI builds and `serve` says what to install).
  'libmicrohttpd-dev': { file: '/usr/include/microhttpd.h' },
};
const BPF = ['libbpf-dev', 'bpftool', 'pkg-config', 'clang-14'];
const ALLOCATORS = ['libjemalloc-dev', 'libmimalloc-dev', 'libgoogle-perftools-dev'];
const NEEDS = {
  start: ['cmake', 'ninja-build', 'gcc', 'emscripten'],
  build: ['cmake', 'ninja-build', 'gcc', 'emscripten'],
  test: ['cmake', 'ninja-build', 'gcc', 'emscripten', 'chromium', 'clang-14', 'libclang-rt-14-dev', 'clang-format-14', 'python3', ...ALLOCATORS, ...BPF.filter((p) => p !== 'clang-14'), 'libmicrohttpd-dev'],
  bench: ['cmake', 'ninja-build', 'gcc', ...ALLOCATORS, ...BPF, 'libmicrohttpd-dev'],
};

/** Emscripten 3.1.6 from Debian needs Debian's node modules (acorn) on NODE_PATH. */
export const buildEnv = {
  ...process.env,
  NODE_PATH: [process.env.NODE_PATH, '/usr/share/nodejs'].filter(Boolean).join(':'),
};

// Setup reports on stderr, and so do the tools it runs, so that stdout stays
// the caller's (`npm run -s bench -- all --format json > out.json`).
function log(msg) {
  console.error(`setup: ${msg}`);
}

/** Runs a command, its output to stderr; throws with the command line if it fails. */
export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ['inherit', 2, 'inherit'], env: buildEnv, ...opts });
  if (r.error) throw new Error(`${cmd} could not start: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${[cmd, ...args].join(' ')} exited with ${r.status ?? r.signal}`);
}

function onPath(cmd) {
  return spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
}

function present(pkg) {
  const p = PACKAGES[pkg];
  return p.probe ? onPath(p.probe) : existsSync(p.file);
}

export function installPackages(purpose) {
  const missing = NEEDS[purpose].filter((pkg) => !present(pkg));
  if (missing.length === 0) return;
  const command = `apt-get update && apt-get install -y ${missing.join(' ')}`;
  if (process.getuid?.() !== 0) {
    console.error(`setup: missing Debian packages: ${missing.join(', ')}.\nsetup: install them with:\n  sudo sh -c '${command}'`);
    process.exit(1);
  }
  log(`installing ${missing.join(' ')} (apt-get)`);
  run('apt-get', ['update', '-qq']);
  run('apt-get', ['install', '-y', '-qq', ...missing], {
    env: { ...buildEnv, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const still = missing.filter((pkg) => !present(pkg));
  if (still.length) throw new Error(`apt-get ran but these are still missing: ${still.join(', ')}`);
}

function installNodeModules() {
  const stamp = join(root, 'node_modules', '.package-lock.json');
  const lock = join(root, 'package-lock.json');
  if (existsSync(stamp) && statSync(stamp).mtimeMs >= statSync(lock).mtimeMs) return;
  log('installing npm packages (npm ci)');
  run('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: root,
    env: { ...buildEnv, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
  });
}

/**
 * Configures wasm-core/build/<dir> once (with emcmake for Emscripten builds)
 * and builds `targets` (all when empty).  Returns the build directory.
 */
export function cmakeBuild(dir, { emscripten = false, defs = [], targets = [] } = {}) {
  const build = join(core, 'build', dir);
  if (!existsSync(join(build, 'build.ninja'))) {
    log(`configuring wasm-core/build/${dir}`);
    const args = ['-S', core, '-B', build, '-G', 'Ninja', ...defs.map((d) => `-D${d}`)];
    if (emscripten) run('emcmake', ['cmake', ...args]);
    else run('cmake', args);
  }
  run('ninja', ['-C', build, '-j2', ...targets]);
  return build;
}

export function buildBrowserModules() {
  cmakeBuild('wasm', { emscripten: true, targets: ['slablab-threads', 'slablab-single', 'slablab-node', 'slablab-bench', 'slablab-bench-node', 'slablab-live'] });
}

export function buildBenchCli() {
  return cmakeBuild('native-bench', { defs: ['CMAKE_BUILD_TYPE=Release', 'SLABLAB_BENCH=ON'], targets: ['slablab'] });
}

export function setup(purpose) {
  if (!NEEDS[purpose]) {
    console.error(`setup: unknown purpose '${purpose}' (start, build, test or bench)`);
    process.exit(2);
  }
  installPackages(purpose);
  if (purpose !== 'bench') {
    installNodeModules();
    buildBrowserModules();
  }
  if (purpose === 'bench') buildBenchCli();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    setup(process.argv[2] ?? 'start');
  } catch (e) {
    console.error(`setup: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
