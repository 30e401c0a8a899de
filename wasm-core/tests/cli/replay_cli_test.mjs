// replay_cli_test.mjs - `slablab replay`, `slablab slabinfo` and `slablab capture` as a user runs them:
// tables, JSON, the Perfetto file, standard input, the refusals with their messages and exit
// statuses; and, where this runs as root with tracefs, a real capture (replayed with no model
// error), one stopped by Ctrl-C, and the tracing state left as it was found.
//
//   node replay_cli_test.mjs SLABLAB_BINARY FIXTURES_DIR
//
// Exit status 0 when every check passed; each failure is printed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [bin, fixtures] = process.argv.slice(2);
if (!bin || !fixtures) {
  console.error('usage: node replay_cli_test.mjs SLABLAB_BINARY FIXTURES_DIR');
  process.exit(2);
}
const capture = join(fixtures, 'capture-6.18.slabcap.gz');
const tmp = mkdtempSync(join(tmpdir(), 'slablab-replay-cli-'));
let failures = 0;
function check(ok, what) {
  if (!ok) {
    failures++;
    console.error(`FAIL: ${what}`);
  }
}
function run(args, opts = {}) {
  const r = spawnSync(opts.cmd ?? bin, opts.cmd ? args : args, { encoding: 'utf8', input: opts.input, maxBuffer: 1 << 28 });
  return { status: r.status, out: r.stdout ?? '', err: r.stderr ?? '' };
}
function json(r, what) {
  try {
    return JSON.parse(r.out);
  } catch (e) {
    check(false, `${what}: output is not JSON (${e.message}); stderr: ${r.err.slice(0, 300)}`);
    return null;
  }
}

// ---- replay -------------------------------------------------------------------
{
  const r = run(['replay', capture, '--format', 'json']);
  check(r.status === 0, `replay json exits 0 (got ${r.status}: ${r.err})`);
  const j = json(r, 'replay json');
  if (j) {
    check(j.status === 'ok' && j.error === null, 'status ok');
    check(j.model.errors === 0, `model.errors = 0 (got ${j.model.errors})`);
    check(j.model.kernel === '6.18' && j.model.kernel_source === 'capture', 'kernel from the capture');
    check(j.events.parsed > 10000 && j.events.lines === j.events.parsed + j.events.skipped, 'parse accounting');
    check(typeof j.peak_rss_kb === 'number' && j.peak_rss_kb > 0, 'peak_rss_kb');
    check(j.events_per_s > 0 && j.elapsed_s > 0, 'events_per_s and elapsed_s');
    check(Array.isArray(j.caches) && j.caches.some((c) => c.name === 'dentry'), 'caches[] has dentry');
    check(Array.isArray(j.callsites) && j.callsites.length > 10, 'callsites[]');
    check(j.percpu.chunks.length >= 1, 'percpu chunks');
    for (const key of ['lines', 'parsed', 'skipped', 'by_kind', 'bad_lines'])
      check(key in j.events, `events.${key}`);
    for (const key of ['matched', 'live_at_end', 'freed_unknown']) check(key in j.pairs, `pairs.${key}`);
  }
  // The same through standard input, and the table.
  const raw = readFileSync(capture);
  const s = spawnSync(bin, ['replay', '-', '--format', 'json'], { input: raw, maxBuffer: 1 << 28 });
  check(s.status === 0 && JSON.parse(s.stdout.toString()).events.parsed === j?.events.parsed, 'replay - (stdin)');
  const t = run(['replay', capture, '--top', '5']);
  check(t.status === 0, 'replay table exits 0');
  for (const needle of ['Caches (by allocations', 'Callsite', 'Total_alloc/Per', 'Ping-pong', 'percpu chunks',
    'model: kernel 6.18, SLUB rules of 6.18 (6.18: opt-in sheaves over the per-CPU slab), 2 CPUs', 'events/s'])
    check(t.out.includes(needle), `table shows '${needle}'`);
}
{
  const out = join(tmp, 'trace.perfetto.json');
  const r = run(['replay', capture, '--perfetto', out, '--top', '1']);
  check(r.status === 0 && r.out.includes(`Perfetto trace: ${out}`), 'replay --perfetto');
  const p = JSON.parse(readFileSync(out, 'utf8'));
  check(Array.isArray(p.traceEvents) && p.traceEvents.filter((e) => e.ph === 'X').length > 1000, 'export has slices');
  check(p.traceEvents.some((e) => e.ph === 's') && p.traceEvents.some((e) => e.ph === 'C'), 'export has flows and counters');
}
{
  const r = run(['replay', capture, '--cache', 'dentry', '--kernel', '4.4,6.18', '--format', 'json']);
  const j = json(r, '--cache --kernel');
  check(j && j.model.caches_modelled === 1 && j.models.length === 2 && j.models[0].kernel === '4.4', '--cache, two kernels');
  // Two versions side by side: a model section each in the table, the per-CPU slab against sheaves.
  const t = run(['replay', capture, '--kernel', '6.17,7.0', '--top', '3']);
  check(t.status === 0, 'replay --kernel 6.17,7.0 exits 0');
  const sections = t.out.split('\nmodel: kernel ').slice(1);
  check(sections.length === 2, `two model sections (${sections.length})`);
  check(sections[0]?.startsWith('6.17, SLUB rules of 6.17') && !sections[0].includes('sheaves:'), 'the 6.17 section, no sheaves');
  check(sections[1]?.startsWith('7.0, SLUB rules of 7.0') && /sheaves: [1-9]\d* allocs/.test(sections[1]), 'the 7.0 section with its sheaves');
}
// Refusals and usage errors.
{
  const r = run(['replay', join(fixtures, 'trace-cmd-6.18.dat.head')]);
  check(r.status === 1 && r.err.includes('run `trace-cmd report -i FILE > trace.txt` first'), `trace.dat refused (${r.err})`);
  const bad = run(['replay', capture, '--kernel', '6.18.44']);
  check(bad.status === 2 && bad.err.includes('--kernel takes X.Y or X.Y,X.Y'), 'bad --kernel is a usage error');
  const none = run(['replay']);
  check(none.status === 2 && none.err.includes('usage:'), 'no file is a usage error');
  const missing = run(['replay', join(tmp, 'nope.txt')]);
  check(missing.status === 1 && missing.err.includes('cannot open'), 'missing file');
  const trunc = join(tmp, 'cut.gz');
  writeFileSync(trunc, readFileSync(capture).subarray(0, 100000));
  const t = run(['replay', trunc, '--format', 'json']);
  const j = json(t, 'truncated gzip json');
  check(t.status === 1 && t.err.includes('truncated gzip') && j?.status === 'refused', 'truncated gzip refused');
}

// ---- slabinfo -----------------------------------------------------------------
{
  const l = run(['slabinfo', capture]);
  check(l.status === 0 && l.out.startsWith('Name                   Objects Objsize           Space Slabs/Part/Cpu  O/S O %Fr %Ef Flg'),
    `slabinfo listing header (${l.err})`);
  check(/^dentry\s+\d+\s+192 /m.test(l.out), 'slabinfo lists dentry with its object size');
  const tot = run(['slabinfo', capture, '-T']);
  check(tot.status === 0 && tot.out.includes('Slabcache Totals') && tot.out.includes('Per Object'), 'slabinfo -T');
  const sz = run(['slabinfo', capture, '-S', '-N', '3']);
  const lines = sz.out.trim().split('\n').slice(1);
  const toBytes = (s) => parseFloat(s) * ({ K: 1e3, M: 1e6, G: 1e9 }[s.slice(-1)] ?? 1);
  const sizes = lines.map((x) => toBytes(x.trim().split(/\s+/)[3]));
  check(lines.length === 3 && sizes[0] >= sizes[1] && sizes[1] >= sizes[2], `slabinfo -S sorts by size (${sizes})`);
  const a = run(['slabinfo', capture, '-a']);
  check(a.status === 0 && a.out.includes(' <- '), 'slabinfo -a');
  const r = run(['slabinfo', capture, '-r', '^dentry$']);
  check(r.status === 0 && r.out.includes('Slabcache: dentry') && r.out.includes('SlabObj:     192'), 'slabinfo -r');
  const s = run(['slabinfo', capture, '-s']);
  check(s.status === 2 && s.err.includes('needs the running kernel'), 'slabinfo -s refused');
  const plain = run(['slabinfo', join(fixtures, 'percpu-chunks-6.18.trace.txt')]);
  check(plain.status === 1 && plain.err.includes('neither sys/kernel/slab nor proc/slabinfo'), 'slabinfo of a plain trace');
  if (existsSync('/proc/slabinfo') && process.getuid?.() === 0) {
    const p = run(['slabinfo', '/proc/slabinfo', '-L', '-N', '2']);
    check(p.status === 0 && p.out.includes('from /proc/slabinfo') && p.out.includes(' Loss '), 'slabinfo /proc/slabinfo -L');
  }
  if (existsSync('/sys/kernel/slab/dentry')) {
    const d = run(['slabinfo', '/sys/kernel/slab', 'dentry']);
    check(d.status === 0 && /^dentry /m.test(d.out), 'slabinfo of a sysfs directory with a pattern');
  }
}

// ---- capture --------------------------------------------------------------------
{
  const u = run(['capture', '--seconds', '1']);
  check(u.status === 2 && u.err.includes('-o FILE.slabcap'), 'capture without -o');
  const both = run(['capture', '--seconds', '1', '-o', join(tmp, 'x'), '--', 'true']);
  check(both.status === 2 && both.err.includes('either --seconds N or -- COMMAND'), 'capture with both');
  const isRoot = process.getuid?.() === 0;
  const setpriv = spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }).stdout.trim();
  if (isRoot && setpriv) {
    const nobody = run(['--reuid=65534', '--regid=65534', '--clear-groups', bin, 'capture', '--seconds', '1', '-o',
      join(tmp, 'n.slabcap')], { cmd: setpriv });
    check(nobody.status === 1 && nobody.err.includes('needs root: run `sudo slablab capture'), `not root (${nobody.err})`);
  } else if (!isRoot) {
    const nr = run(['capture', '--seconds', '1', '-o', join(tmp, 'n.slabcap')]);
    check(nr.status === 1 && nr.err.includes('needs root'), 'not root');
  }
  const mounts = () => readFileSync('/proc/mounts', 'utf8').split('\n').filter((l) => / (tracefs|debugfs) /.test(l)).sort().join('\n');
  const instances = () => {
    const dir = ['/sys/kernel/tracing/instances', '/sys/kernel/debug/tracing/instances'].find((d) => existsSync(d));
    return dir ? readdirSync(dir).filter((n) => n.startsWith('slablab-')) : [];
  };
  // Another capture running at the same time (another test run on this machine) has its own instance
  // and may mount tracefs: the checks below hold for this run's captures only.
  const alive = (pid) => existsSync(`/proc/${pid}`);
  const leftBehind = (before) => instances().filter((n) => !before.includes(n) && !alive(Number(n.slice(8))));
  const othersRunning = () => instances().some((n) => alive(Number(n.slice(8))));
  const canTrace = isRoot && spawnSync('sh', ['-c', 'grep -q tracefs /proc/filesystems'], {}).status === 0;
  if (canTrace) {
    const before = mounts();
    const had = instances();
    const out = join(tmp, 'real.slabcap');
    const c = run(['capture', '-o', out, '--', 'sh', '-c', 'for i in 1 2 3; do echo x > /dev/null; done']);
    check(c.status === 0 && c.out.includes('replay it with'), `real capture (${c.err})`);
    check(mounts() === before || othersRunning(), 'tracefs/debugfs mounts as they were');
    check(leftBehind(had).length === 0, `no tracing instance left behind (${leftBehind(had)})`);
    const r = run(['replay', out, '--format', 'json']);
    const j = json(r, 'replay of the real capture');
    check(j && j.status === 'ok' && j.model.errors === 0 && j.events.parsed > 0, 'the real capture replays with no model error');
    check(j && j.capture && j.capture.sysfs_caches > 50, 'the capture holds sysfs');
    const tar = spawnSync('tar', ['tf', out], { encoding: 'utf8' });
    check(tar.status === 0 && tar.stdout.startsWith('slabcap.meta\n') && tar.stdout.includes('trace.txt\nslabcap-end.meta'),
      'tar(1) reads the .slabcap, metadata first, trace last');

    // Ctrl-C: the capture's group gets SIGINT (the capture forwards it to the command, which runs in a
    // session of its own); the archive is complete and says so, and the status is 128 + SIGINT.
    const sig = join(tmp, 'sigint.slabcap');
    const child = spawn(bin, ['capture', '-o', sig, '--', 'sleep', '20'], { detached: true, stdio: 'ignore' });
    await new Promise((res) => setTimeout(res, 1500));
    process.kill(-child.pid, 'SIGINT');
    const status = await new Promise((res) => child.on('exit', (code) => res(code)));
    check(status === 130, `capture stopped by SIGINT exits 130 (got ${status})`);
    const end = spawnSync('tar', ['xOf', sig, 'slabcap-end.meta'], { encoding: 'utf8' }).stdout;
    check(end.includes('interrupted=1'), `the interrupted capture says so (${end})`);
    check(!instances().includes(`slablab-${child.pid}`), 'Ctrl-C: the capture removed its tracing instance');
    check(mounts() === before || othersRunning(), 'Ctrl-C: mounts as they were');
  } else {
    console.log('replay_cli_test: not root or no tracefs: the real captures are skipped');
  }
}

rmSync(tmp, { recursive: true, force: true });
if (failures) {
  console.error(`replay_cli_test: ${failures} failure(s)`);
  process.exit(1);
}
console.log('replay_cli_test: all checks passed');
