#!/usr/bin/env node
// bench.mjs - `npm run bench -- ARGS`: builds the native benchmark CLI
// (Release, -DSLABLAB_BENCH=ON: no tracing, no preemption hooks, no asserts)
// in wasm-core/build/native-bench when stale, then runs `slablab ARGS`.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { buildCore, buildDir } from './lib.mjs';
import { setup } from './setup.mjs';

setup('bench');
const status = buildCore('native-bench', ['-DCMAKE_BUILD_TYPE=Release', '-DSLABLAB_BENCH=ON']);
if (status !== 0) process.exit(status);
const r = spawnSync(join(buildDir('native-bench'), 'slablab'), process.argv.slice(2), { stdio: 'inherit' });
process.exit(r.status ?? 1);
