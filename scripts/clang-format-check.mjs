#!/usr/bin/env node
// clang-format-check.mjs - runs clang-format (.clang-format, the C core's style)
// in --dry-run mode over the C sources under wasm-core/ and reports which files
// it would change.  `--strict` (the lint suite) exits 1 when one would change,
// or when clang-format is not installed; without it, it only reports.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(import.meta.url), '..', '..');
const strict = process.argv.includes('--strict');
const formatter = ['clang-format-14', 'clang-format'].find((c) => spawnSync(c, ['--version']).status === 0);
if (!formatter) {
  console.log('clang-format: not installed (apt-get install clang-format-14): skipped');
  process.exit(strict ? 1 : 0);
}

function cFiles(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'build' ? [] : cFiles(path);
    return /\.[ch]$/.test(name) ? [path] : [];
  });
}

const files = cFiles(join(root, 'wasm-core')).sort();
const changed = [];
for (const f of files) {
  const r = spawnSync(formatter, ['--dry-run', '--style=file', f], { cwd: root, encoding: 'utf8' });
  const lines = (r.stderr.match(/warning: code should be clang-formatted/g) ?? []).length;
  if (lines > 0 || r.status !== 0) changed.push(`${relative(root, f)} (${lines} places)`);
}
for (const c of changed) console.log(`clang-format would change ${c}`);
console.log(`clang-format: ${changed.length} of ${files.length} C files would change${strict ? '' : ' (report-only)'}`);
process.exit(strict && changed.length ? 1 : 0);
