// lib.mjs - what setup.mjs, test.mjs and bench.mjs share: running commands
// visibly, and configuring a CMake build directory only when it is missing
// (ninja then rebuilds only what is stale).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CORE = join(ROOT, 'wasm-core');
/** emcc's JS optimizer needs Debian's node modules (acorn) on NODE_PATH. */
export const EMSCRIPTEN_ENV = {
  ...process.env,
  NODE_PATH: [process.env.NODE_PATH, '/usr/share/nodejs'].filter(Boolean).join(':'),
};

export function say(msg) {
  console.log(`[slablab] ${msg}`);
}

/** Runs a command with inherited output; returns its exit status (never throws). */
export function run(cmd, args, opts = {}) {
  say(`$ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', cwd: ROOT, ...opts });
  if (r.error) {
    console.error(`[slablab] could not run ${cmd}: ${r.error.message}`);
    return 127;
  }
  return r.status ?? 1;
}

/** Like run, but exits the process with the command's status when it fails. */
export function mustRun(cmd, args, opts = {}) {
  const status = run(cmd, args, opts);
  if (status !== 0) {
    console.error(`[slablab] failed (exit ${status}): ${cmd} ${args.join(' ')}`);
    process.exit(status || 1);
  }
}

/**
 * Builds wasm-core into wasm-core/build/<name>: configures it (cmake -G Ninja
 * plus `cmakeArgs`, through emcmake when `emscripten`) if it has never been
 * configured, then `ninja -j2`.  Returns the exit status.
 */
export function buildCore(name, cmakeArgs = [], { emscripten = false } = {}) {
  const dir = join(CORE, 'build', name);
  const env = emscripten ? EMSCRIPTEN_ENV : process.env;
  if (!existsSync(join(dir, 'build.ninja'))) {
    const cfg = ['-S', CORE, '-B', dir, '-G', 'Ninja', ...cmakeArgs];
    const status = emscripten ? run('emcmake', ['cmake', ...cfg], { env }) : run('cmake', cfg, { env });
    if (status !== 0) return status;
  }
  return run('ninja', ['-C', dir, '-j2'], { env });
}

export function buildDir(name) {
  return join(CORE, 'build', name);
}
