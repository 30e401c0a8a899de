// bench_cli_test.mjs - runs every `slablab` experiment subcommand with tiny
// parameters and checks what it prints: JSON that matches
// docs/bench-schema.json (checked by the small validator below, which covers
// the keywords the schema uses), CSV and table output, and a usage error
// with exit status 2 for bad arguments.
//
//   node bench_cli_test.mjs SLABLAB_BINARY SCHEMA_JSON
//
// Exit status 0 when every check passed; each failure is printed.
import { spawnSync } from 'node:child_process';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [bin, schemaPath] = process.argv.slice(2);
if (!bin || !schemaPath) {
  console.error('usage: node bench_cli_test.mjs SLABLAB_BINARY SCHEMA_JSON');
  process.exit(2);
}
const schema = JSON.parse(readFileSync(schemaPath, 'utf8'));

// The experiment subcommands; `all` runs each of them.
export const EXPERIMENTS = ['fastpath', 'bulk', 'kmalloc', 'compare', 'scale', 'sheaves'];
// `all` also runs the percpu experiment (the `percpu` command itself is the percpu model's), not sheaves.
const ALL_EXPERIMENTS = [...EXPERIMENTS.filter((e) => e !== 'sheaves'), 'percpu'];
const QUICK = ['--quick', '--reps', '1'];

let failures = 0;
function fail(msg) {
  failures++;
  console.error(`FAIL ${msg}`);
}

// ---- a JSON Schema (draft-07) subset: the keywords bench-schema.json uses
function typeOf(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}
function resolve(s) {
  if (!s.$ref) return s;
  const path = s.$ref.replace(/^#\//, '').split('/');
  return path.reduce((o, k) => o[k], schema);
}
export function validate(v, s, at = '$', errs = []) {
  s = resolve(s);
  if (s.type) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    const t = typeOf(v);
    if (!types.includes(t) && !(t === 'integer' && types.includes('number'))) {
      errs.push(`${at}: ${t}, expected ${types.join('|')}`);
      return errs;
    }
  }
  if ('const' in s && v !== s.const) errs.push(`${at}: ${JSON.stringify(v)} is not ${JSON.stringify(s.const)}`);
  if (s.enum && !s.enum.includes(v)) errs.push(`${at}: ${JSON.stringify(v)} not in ${s.enum.join(',')}`);
  if (typeof s.minimum === 'number' && typeof v === 'number' && v < s.minimum) errs.push(`${at}: ${v} < ${s.minimum}`);
  if (typeOf(v) === 'object') {
    for (const k of s.required || []) if (!(k in v)) errs.push(`${at}: missing ${k}`);
    for (const [k, x] of Object.entries(v)) {
      if (s.properties && k in s.properties) validate(x, s.properties[k], `${at}.${k}`, errs);
      else if (s.additionalProperties === false) errs.push(`${at}: unexpected ${k}`);
      else if (typeof s.additionalProperties === 'object') validate(x, s.additionalProperties, `${at}.${k}`, errs);
    }
  }
  if (typeOf(v) === 'array' && s.items) v.forEach((x, i) => validate(x, s.items, `${at}[${i}]`, errs));
  if (s.if) {
    const cond = validate(v, s.if, at, []).length === 0;
    const branch = cond ? s.then : s.else;
    if (branch) validate(v, branch, at, errs);
  }
  return errs;
}

// ---- checks
function run(args) {
  return spawnSync(bin, args, { encoding: 'utf8', timeout: 120000 });
}

// Sanity of the validator itself: it must reject what the schema forbids.
{
  const bad = { schema: 'slablab-bench/1', machine: {}, options: {}, experiments: [{ name: 'nope' }] };
  if (validate(bad, schema).length < 3) fail('validator accepted a broken document');
}

function checkDoc(doc, names, what) {
  const errs = validate(doc, schema);
  if (errs.length) fail(`${what}: schema: ${errs.slice(0, 5).join('; ')}`);
  const got = (doc.experiments || []).map((e) => e.name);
  for (const n of names) if (!got.includes(n)) fail(`${what}: no experiment ${n} (got ${got.join(',')})`);
  for (const e of doc.experiments || []) {
    const ok = (e.measurements || []).filter((m) => m.available);
    if (ok.length === 0) fail(`${what}: ${e.name} has no available measurement`);
    for (const m of ok) {
      if (!(m.ops > 0) || !(m.cycles.median > 0) || m.cycles.min > m.cycles.median || m.cycles.median > m.cycles.max)
        fail(`${what}: ${e.name} ${m.group}/${m.row}/${m.variant}: implausible ${JSON.stringify(m.cycles)} ops=${m.ops}`);
    }
    for (const q of e.ratios || []) {
      const a = ok.find((m) => m.group === q.group && m.row === q.row && m.variant === q.a && m.phase === q.phase);
      const b = ok.find((m) => m.group === q.group && m.row === q.row && m.variant === q.b && m.phase === q.phase);
      if (!a || !b) fail(`${what}: ratio ${q.a}/${q.b} of ${q.group}/${q.row} names a missing measurement`);
    }
  }
}

for (const cmd of EXPERIMENTS) {
  const r = run([cmd, ...QUICK, '--format', 'json']);
  if (r.status !== 0) {
    fail(`${cmd} --format json: exit ${r.status} ${r.error || ''} ${r.stderr}`);
    continue;
  }
  let doc;
  try {
    doc = JSON.parse(r.stdout);
  } catch (e) {
    fail(`${cmd}: output is not JSON: ${e.message}`);
    continue;
  }
  checkDoc(doc, [cmd], cmd);
}

// Table and CSV of one cheap experiment.
{
  const t = run(['fastpath', ...QUICK]);
  if (t.status !== 0 || !/cycles\(tsc\)/.test(t.stdout) || !/# CPU: /.test(t.stdout)) fail(`fastpath table: ${t.status} ${t.stdout.slice(0, 200)}`);
  const c = run(['fastpath', ...QUICK, '--format', 'csv']);
  const lines = c.stdout.split('\n').filter((l) => l && !l.startsWith('#'));
  const header = (lines[0] || '').split(',');
  if (c.status !== 0 || header[0] !== 'kind' || lines.length < 2 || lines.slice(1).some((l) => l.split(',').length < header.length))
    fail(`fastpath csv: ${c.status} ${c.stdout.slice(0, 300)}`);
}

// --format time_bench: prototype-kernel's time_bench line for every measurement, self-consistent.
{
  const t = run(['bulk', ...QUICK, '--format', 'time_bench']);
  const re =
    /^Type:bulk (\S+) Per elem: (\d+) cycles\(tsc\) (\d+)\.(\d{3}) ns \(step:(\d+)\) - \(measurement period time:(\d+)\.(\d{9}) sec time_interval:(\d+)\) - \(invoke count:(\d+) tsc_interval:(\d+)\)$/;
  const lines = t.stdout.split('\n').filter(Boolean);
  if (t.status !== 0 || lines.length !== 9) fail(`bulk time_bench: exit ${t.status}, ${lines.length} lines`);
  for (const l of lines) {
    const m = re.exec(l);
    if (!m) {
      fail(`bulk time_bench: not a time_bench line: ${l}`);
      continue;
    }
    const [, variant, cycles, nsq, nsd, step, sec, rem, interval, count, tsc] = m;
    const n = BigInt(count);
    if (!['generic', 'detached', 'irqoff'].includes(variant)) fail(`bulk time_bench: variant ${variant}`);
    if (!['1', '30', '158'].includes(step)) fail(`bulk time_bench: step ${step} is not a quick bulk size`);
    if (BigInt(cycles) !== BigInt(tsc) / n) fail(`bulk time_bench: cycles ${cycles} != ${tsc} / ${count}`);
    if (BigInt(nsq) !== BigInt(interval) / n || BigInt(nsd) !== ((BigInt(interval) % n) * 1000n) / n)
      fail(`bulk time_bench: ns ${nsq}.${nsd} != ${interval} / ${count}`);
    if (BigInt(sec) * 1000000000n + BigInt(rem) !== BigInt(interval)) fail(`bulk time_bench: period ${sec}.${rem} != ${interval} ns`);
  }
}

// sheaves: the names the issue fixes (variants, groups, rows, ratio sheaves over cpu-slab).
{
  const r = run(['sheaves', ...QUICK, '--format', 'json']);
  const e = r.status === 0 ? JSON.parse(r.stdout).experiments[0] : null;
  const ms = e ? e.measurements : [];
  const key = (m) => `${m.group}/${m.row}/${m.variant}`;
  const want = ['fifo/1', 'fifo/10', 'fifo/100', 'fifo/1000', 'shuffled/10', 'shuffled/100', 'shuffled/1000'].flatMap((gr) => [
    `${gr}/cpu-slab`,
    `${gr}/sheaves`,
  ]);
  if (!e || e.name !== 'sheaves' || JSON.stringify(ms.map(key)) !== JSON.stringify(want))
    fail(`sheaves: measurements ${ms.map(key).join(' ')}`);
  if (!e || e.ratios.length !== 7 || e.ratios.some((q) => q.a !== 'sheaves' || q.b !== 'cpu-slab'))
    fail('sheaves: every ratio is sheaves over cpu-slab');
  if (!e || e.params.kernel !== '6.18') fail(`sheaves: kernel ${e && e.params.kernel}`);
  const k = run(['sheaves', ...QUICK, '--max-batch', '10', '--kernel', '7.0', '--format', 'json']);
  const e7 = k.status === 0 ? JSON.parse(k.stdout).experiments[0] : null;
  if (!e7 || e7.params.kernel !== '7.0' || e7.params.sheaf_capacity !== 28 || e7.measurements.length !== 6)
    fail(`sheaves --kernel 7.0: ${k.status} ${k.stderr}`);
  if (run(['sheaves', ...QUICK, '--kernel', '6.17']).status !== 1) fail('sheaves --kernel 6.17 must refuse: no sheaves before 6.18');
}

// --kernel: 7.0's fast path is the sheaves; the variants 7.0 lacks are reported unavailable, with the reason.
{
  const r = run(['fastpath', ...QUICK, '--kernel', '7.0', '--format', 'json']);
  const e = r.status === 0 ? JSON.parse(r.stdout).experiments[0] : null;
  const row = e ? e.measurements.filter((m) => m.group === 'slub alloc+free') : [];
  const avail = row.filter((m) => m.available).map((m) => m.variant);
  if (!e || e.params.kernel !== '7.0' || JSON.stringify(avail) !== '["sheaves"]' || row.length !== 4)
    fail(`fastpath --kernel 7.0: ${JSON.stringify(row.map((m) => [m.variant, m.available]))}`);
  for (const cmd of ['bulk', 'scale', 'compare']) {
    const q = run([cmd, ...QUICK, '--kernel', '4.4', '--format', 'json']);
    const ex = q.status === 0 ? JSON.parse(q.stdout).experiments[0] : null;
    if (!ex || ex.params.kernel !== '4.4') fail(`${cmd} --kernel 4.4: ${q.status} ${q.stderr.slice(0, 200)}`);
  }
  if (run(['bulk', '--kernel', '4.2']).status !== 2) fail('bulk --kernel 4.2: a usage error');
}

// scale --nodes: the cache on NUMA nodes, the threads split among them; a bad count is a usage error.
{
  const r = run(['scale', ...QUICK, '--threads', '2', '--nodes', '2', '--kernel', '7.0', '--format', 'json']);
  const e = r.status === 0 ? JSON.parse(r.stdout).experiments[0] : null;
  if (!e || e.params.nodes !== 2 || e.measurements.filter((m) => m.available).length !== 3)
    fail(`scale --nodes 2: ${r.status} ${r.stderr.slice(0, 200)}`);
  if (run(['scale', '--nodes', '5']).status !== 2) fail('scale --nodes 5: a usage error');
}

// `all` writes one JSON file with every experiment.
{
  const dir = mkdtempSync(join(tmpdir(), 'slablab-bench-'));
  const out = join(dir, 'all.json');
  const r = run(['all', ...QUICK, '--out', out]);
  if (r.status !== 0) fail(`all: exit ${r.status} ${r.stderr}`);
  else {
    try {
      checkDoc(JSON.parse(readFileSync(out, 'utf8')), ALL_EXPERIMENTS, 'all');
    } catch (e) {
      fail(`all: ${e.message}`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

// The percpu command's counts: the same on every run (the times are not), and only the area map memmoves.
{
  const args = ['percpu', '--objects', '512', '--sizes', '4', '--free-order', 'inorder', '--allocator', 'areamap,bitmap'];
  const counts = (r) => JSON.parse(r.stdout).runs.map((x) => [x.allocator, x.entries_moved, x.memmoves, x.blocks_scanned, x.bits_searched, x.chunks_tried]);
  const [a, b] = [run([...args, '--format', 'json']), run([...args, '--format', 'json'])];
  if (a.status !== 0 || b.status !== 0) fail(`percpu --format json: exit ${a.status} ${a.stderr}`);
  else {
    const [ca, cb] = [counts(a), counts(b)];
    if (JSON.stringify(ca) !== JSON.stringify(cb)) fail(`percpu: two runs counted differently: ${JSON.stringify(ca)} / ${JSON.stringify(cb)}`);
    const [area, bitmap] = ca;
    if (!(area?.[1] > 512) || bitmap?.[1] !== 0 || !(bitmap?.[4] >= 512) || area?.[4] !== 0) fail(`percpu counts: ${JSON.stringify(ca)}`);
  }
  const c = run([...args, '--format', 'csv']);
  const header = c.stdout.split('\n')[0] ?? '';
  if (c.status !== 0 || !header.endsWith(',chunks,entries_moved,memmoves,blocks_scanned,bits_searched,chunks_tried')) fail(`percpu --format csv header: ${header}`);
}

// Bad arguments: a usage error on stderr, nothing on stdout, exit status 2.
const bad = [['--bogus'], ['--reps', '0'], ['--reps'], ['--format', 'xml'], ['--loops', '-3'], ['--cpu', '999'], ['--min-time-us', 'x']];
for (const cmd of [...EXPERIMENTS, 'all']) {
  for (const args of bad) {
    const r = run([cmd, ...args]);
    if (r.status !== 2 || !/usage:/.test(r.stderr) || r.stdout !== '')
      fail(`${cmd} ${args.join(' ')}: exit ${r.status}, stderr ${JSON.stringify(r.stderr.slice(0, 120))}`);
  }
}
{
  const r = run(['compare', '--workload', 'sideways']);
  if (r.status !== 2) fail(`compare --workload sideways: exit ${r.status}`);
  const s = run(['compare', '--max-size', '8']);
  if (s.status !== 2) fail(`compare --max-size 8: exit ${s.status}`);
}

console.log(failures ? `${failures} failed` : 'all bench CLI checks passed');
process.exit(failures ? 1 : 0);
