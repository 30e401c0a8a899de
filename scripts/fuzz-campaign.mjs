#!/usr/bin/env node
// A long fuzzing campaign (docs/security.md): every libFuzzer target at once,
// each for SECONDS (default 3600), at `nice -n 19` so it only takes idle CPU.
//
//   node scripts/fuzz-campaign.mjs [SECONDS] [TARGET...]
//
// Each target fuzzes a copy of its binary (a rebuild during the campaign does
// not change the code under test) in fork mode, ignoring crashes, timeouts and
// out-of-memory runs so that one finding does not end the hour: every crashing
// input is kept in wasm-core/build/fuzz-campaign/TARGET/artifacts/.  The corpus
// starts from wasm-core/fuzz/corpus/TARGET/ (the checked-in seeds and past
// crashes) and grows in wasm-core/build/fuzz-campaign/TARGET/corpus/.
//
// At the end it prints, per target, executions, CPU seconds (user + system of
// the fuzzing processes), libFuzzer's coverage (cov: edges, ft: features),
// the corpus size and the crashes, timeouts and OOMs, as a Markdown table for
// docs/security.md, and writes the same as JSON to .../summary.json.
// SIGINT/SIGTERM stop every fuzzer (their process groups) before it exits.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { cmakeBuild, root } from './setup.mjs';

const seconds = Number(process.argv[2] ?? 3600);
if (!(seconds > 0)) {
  console.error('usage: node scripts/fuzz-campaign.mjs [SECONDS] [TARGET...]');
  process.exit(2);
}
const build = cmakeBuild('fuzz', { defs: ['CMAKE_C_COMPILER=clang-14', 'SLABLAB_FUZZ=ON'] });
const wanted = process.argv.slice(3);
const targets = readdirSync(build)
  .filter((f) => /^fuzz_\w+$/.test(f) && (wanted.length === 0 || wanted.includes(f)))
  .sort();
if (targets.length === 0) {
  console.error('fuzz-campaign: no fuzz targets were built');
  process.exit(1);
}
const out = join(root, 'wasm-core', 'build', 'fuzz-campaign');
const children = new Set();

/** The CPU seconds (user + system) of a process and its reaped children, from /proc/PID/stat. */
function cpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime stime cutime cstime are fields 14..17 (1-based), 12..15 after the name.
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    return ticks / 100;
  } catch {
    return null;
  }
}

function runTarget(t) {
  const dir = join(out, t);
  const corpus = join(dir, 'corpus');
  const artifacts = join(dir, 'artifacts');
  mkdirSync(corpus, { recursive: true });
  mkdirSync(artifacts, { recursive: true });
  const bin = join(dir, t);
  copyFileSync(join(build, t), bin);
  const seeds = join(root, 'wasm-core', 'fuzz', 'corpus', t);
  const dirs = [corpus, ...(existsSync(seeds) ? [seeds] : [])];
  const args = [
    '-n', '19', bin,
    '-fork=1', '-ignore_crashes=1', '-ignore_timeouts=1', '-ignore_ooms=1',
    `-max_total_time=${seconds}`, '-timeout=10', '-rss_limit_mb=1024',
    `-artifact_prefix=${artifacts}/`, ...dirs,
  ];
  return new Promise((resolve) => {
    const child = spawn('nice', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.add(child);
    let last = '';
    let tail = '';
    let cpu = 0;
    // The fork-mode status lines: "#N: cov: C ft: F corp: K exec/s E oom/timeout/crash: O/T/X time: Ss ...".
    const onData = (chunk) => {
      tail = (tail + chunk).slice(-20000);
      for (const line of String(chunk).split('\n')) if (/^#\d+: cov: /.test(line)) last = line;
      const c = cpuSeconds(child.pid);
      if (c !== null) cpu = Math.max(cpu, c);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const poll = setInterval(() => {
      const c = cpuSeconds(child.pid);
      if (c !== null) cpu = Math.max(cpu, c);
    }, 5000);
    child.on('close', (status) => {
      clearInterval(poll);
      children.delete(child);
      const m = last.match(/^#(\d+): cov: (\d+) ft: (\d+) corp: (\d+).*?oom\/timeout\/crash: (\d+)\/(\d+)\/(\d+) time: (\d+)s/);
      const crashes = readdirSync(artifacts).filter((f) => /^(crash|leak|timeout|oom)-/.test(f));
      resolve({
        target: t, status, executions: m ? Number(m[1]) : null, cov: m ? Number(m[2]) : null,
        ft: m ? Number(m[3]) : null, corpus: m ? Number(m[4]) : null,
        ooms: m ? Number(m[5]) : null, timeouts: m ? Number(m[6]) : null, crashes: m ? Number(m[7]) : null,
        wall_s: m ? Number(m[8]) : null, cpu_s: Math.round(cpu), artifacts: crashes,
        last: last || tail.split('\n').slice(-5).join('\n'),
      });
    });
  });
}

function stopAll(sig) {
  for (const c of children) {
    try {
      process.kill(-c.pid, 'SIGTERM');
    } catch {
      // already gone
    }
  }
  if (sig) process.exit(130);
}
process.on('SIGINT', () => stopAll(true));
process.on('SIGTERM', () => stopAll(true));

console.log(`fuzz-campaign: ${targets.join(', ')} for ${seconds} s each, concurrently, at nice 19; output in ${out}`);
const started = new Date().toISOString();
const results = await Promise.all(targets.map(runTarget));
mkdirSync(out, { recursive: true });
writeFileSync(join(out, 'summary.json'), JSON.stringify({ started, seconds, results }, null, 2) + '\n');
console.log(`\nstarted ${started}, ${seconds} s per target\n`);
console.log('| target | executions | CPU s | cov | ft | corpus | crashes/timeouts/OOMs | artifacts |');
console.log('| --- | ---: | ---: | ---: | ---: | ---: | --- | --- |');
for (const r of results)
  console.log(
    `| ${r.target} | ${r.executions ?? '?'} | ${r.cpu_s} | ${r.cov ?? '?'} | ${r.ft ?? '?'} | ${r.corpus ?? '?'} | ` +
      `${r.crashes ?? '?'}/${r.timeouts ?? '?'}/${r.ooms ?? '?'} | ${r.artifacts.join(' ') || 'none'} |`,
  );
