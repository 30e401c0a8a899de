#!/usr/bin/env node
// bench.mjs - `npm run bench -- ARGS`: builds the benchmark CLI if stale
// (Release, SLABLAB_BENCH: no tracing, no preemption hooks, no asserts) and
// runs `slablab ARGS`, passing its exit status through.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

import { setup } from './setup.mjs';

try {
  setup('bench');
} catch (e) {
  console.error(`bench: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
const cli = join(import.meta.dirname, '..', 'wasm-core', 'build', 'native-bench', 'slablab');
const args = process.argv.slice(2);
const r = spawnSync(cli, args.length ? args : ['--help'], { stdio: 'inherit' });
process.exit(r.status ?? 1);
