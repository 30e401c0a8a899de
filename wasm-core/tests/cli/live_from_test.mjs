// live_from_test.mjs - `slablab serve --from CAPTURE`: a recorded capture served as the live stream,
// one check group per invocation (test_live_from.c runs each as its own named test).  No root, no
// BPF: when the test runs as root, the streaming server runs as nobody (setpriv) to prove it.
//
//   node live_from_test.mjs SLABLAB_BINARY GROUP
//
//   stream   the filp capture (tests/fixtures/check/filp.slabcap.gz) at its recorded pace: the
//            client receives exactly the trace's events, in order (kind, CPU, object, cache, call
//            site as recorded), their stamps as far apart as the recorded times, the capture's two
//            snapshots byte for byte, the start one before the first event and the end one after
//            the last, the recorded kernel in HELLO with "source":"recording"; nothing dropped
//   errors   a missing file, a file that is no capture, a truncated .gz, a trace without events:
//            exit 1 with the reason, nothing served; --rate/--loop without --from, --from with
//            --caches, a bad --rate: exit 2; /api/snapshot on a recording: 503 saying why
//   rate     --rate R --loop: passes follow each other in the capture's order, a start snapshot
//            before each pass (marked "restart", so the page seeds from it); never more events than R a second allow (plus one bucket) in the
//            time the client was connected; --rate max delivers more in the same time
//   pick     a page picks a cache halfway (/api/watch): the recording plays again from its start,
//            the start snapshot marked "restart", every event, the end snapshot
//   lag      a client that does not read, --rate max --loop, --queue-mb 1: its events are dropped
//            and counted (server_dropped > 0), and at every status frame the events it received
//            are exactly `sent`, and sent + server_dropped = events_in; with the filp capture's
//            snapshots, some are dropped for it too (snapshots_dropped), and it is not cut off
//
// Every server listens on 127.0.0.1, on a port the kernel picks, and stops by itself (--exit-after).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startServe } from './serve_child.mjs';

const [bin, group] = process.argv.slice(2);
if (!bin || !group) {
  console.error('usage: node live_from_test.mjs SLABLAB_BINARY GROUP');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const FILP = resolve(here, '../fixtures/check/filp.slabcap.gz');
const MIXED = resolve(here, '../fixtures/replay/capture-6.18.slabcap.gz');
const tmp = mkdtempSync(join(tmpdir(), 'slablab-live-from-'));
chmodSync(tmp, 0o755); // the server may run as nobody
const site = join(tmp, 'site');
mkdirSync(site);
writeFileSync(join(site, 'index.html'), '<!doctype html><title>lab</title>');

let failures = 0;
function check(ok, what) {
  if (!ok) {
    failures++;
    if (failures <= 40) console.error(`FAIL: ${what}`);
  }
}
const children = [];
function finish() {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
}
function skip(why) {
  finish();
  console.log(why);
  process.exit(77);
}
const help = spawnSync(bin, ['serve', '--bogus'], { encoding: 'utf8' });
if (/built without libmicrohttpd/.test(help.stderr)) skip('this slablab was built without libmicrohttpd');

/** Runs serve as nobody when we are root (a recording needs no privilege), else as we are. */
const asNobody = process.getuid() === 0 && spawnSync('setpriv', ['--version']).status === 0;
const serveBin = asNobody ? join(tmp, 'serve-as-nobody.sh') : bin;
if (asNobody) writeFileSync(serveBin, `#!/bin/sh\nexec setpriv --reuid=65534 --regid=65534 --clear-groups -- ${JSON.stringify(resolve(bin))} "$@"\n`, { mode: 0o755 });
const startFrom = (capture, extra = [], exitAfter = 60) =>
  startServe(serveBin, ['--from', capture, '--port', '0', '--site', site, '--exit-after', String(exitAfter), ...extra], children);

/** The members of a .slabcap.gz, by name (tar reads it). */
function member(capture, name) {
  const r = spawnSync('tar', ['-xzOf', capture, name], { maxBuffer: 1 << 30 });
  if (r.status !== 0) throw new Error(`tar ${name}: ${r.stderr}`);
  return r.stdout;
}

/** The trace's events as the stream must carry them (kmem and percpu allocations and frees; kfree(NULL) aside). */
function traceEvents(capture) {
  const kinds = { kmem_cache_alloc: 1, kmem_cache_free: 2, kmalloc: 3, kfree: 4, percpu_alloc_percpu: 5, percpu_free_percpu: 6 };
  const out = [];
  for (const line of member(capture, 'trace.txt').toString('latin1').split('\n')) {
    const m = /\[(\d+)\]\s+\S+\s+(\d+)\.(\d+):\s+(\w+):\s+(.*)$/.exec(line);
    if (!m || !(m[4] in kinds)) continue;
    const f = Object.fromEntries([...m[5].matchAll(/(\w+)=(\S+)/g)].map((x) => [x[1], x[2]]));
    if (m[4] === 'kfree' && /^0+$/.test(f.ptr)) continue;
    out.push({
      kind: kinds[m[4]],
      cpu: Number(m[1]),
      ns: BigInt(m[2]) * 1000000000n + BigInt(m[3].padEnd(9, '0')),
      obj: BigInt(`0x${f.ptr}`),
      cache: f.name ?? null,
      site: f.call_site ? f.call_site.replace(/\/0x[0-9a-f]+$/, '') : '',
    });
  }
  return out;
}

/**
 * Reads the live stream; returns a reader with .st (hello, caches, sites, events [{kind, cpu,
 * cache, site, obj, ns}], snapshots [{at: events before it, taken, text}], status [{at, ...}],
 * slabinfo, bad), .done (resolves when until(st) holds, ms pass or the stream ends), and
 * .res (the response, to pause it).
 */
function readStream(port, token, { ms = 15000, until = () => false, path = '/api/live' } = {}) {
  const st = { hello: null, caches: new Map(), sites: new Map(), events: [], snapshots: [], status: [], slabinfo: [], bad: [] };
  const reader = { st, res: null };
  reader.done = new Promise((resolvePromise, reject) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const end = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      req.destroy();
      resolvePromise(st);
    };
    const req = http.request({ host: '127.0.0.1', port, path: `${path}?token=${token}`, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
      reader.res = res;
      if (res.statusCode !== 200) return reject(new Error(`live stream answered ${res.statusCode}`));
      res.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 8) {
          const len = buf.readUInt32LE(0);
          const type = buf[4];
          if (buf.length < 8 + len) break;
          const p = buf.subarray(8, 8 + len);
          buf = buf.subarray(8 + len);
          if (type === 1) st.hello = JSON.parse(p.toString('utf8'));
          else if (type === 2) st.caches.set(p.readUInt16LE(0), p.subarray(24).toString('utf8'));
          else if (type === 3) st.sites.set(p.readUInt32LE(0), p.subarray(16).toString('utf8'));
          else if (type === 4) {
            const n = p.readUInt32LE(0);
            const base = p.readBigUInt64LE(8);
            if (24 + n * 24 !== p.length) st.bad.push(`events frame of ${p.length} bytes for ${n} events`);
            for (let i = 0; i < n; i++) {
              const o = 24 + i * 24;
              const cache = p.readUInt16LE(o + 2);
              const site = p.readUInt32LE(o + 4);
              if (cache && !st.caches.has(cache)) st.bad.push(`event of cache id ${cache} before its name`);
              if (site && !st.sites.has(site)) st.bad.push(`event of site id ${site} before its name`);
              st.events.push({
                kind: p[o],
                cpu: p[o + 1],
                cache: cache ? st.caches.get(cache) : null,
                site: site ? st.sites.get(site) : '',
                ns: base + BigInt(p.readUInt32LE(o + 8)) * 1000n,
                obj: (BigInt(p.readUInt32LE(o + 20)) << 32n) | BigInt(p.readUInt32LE(o + 16)),
              });
            }
          } else if (type === 5) st.status.push({ at: st.events.length, ...JSON.parse(p.toString('utf8')) });
          else if (type === 6) {
            const text = p.toString('utf8');
            const m = /^\{"taken_ns":\[(\d+),(\d+)\],("restart":true,)?"snapshot":/.exec(text);
            if (!m || !text.endsWith('}')) st.bad.push('snapshot frame without its taken_ns wrapper');
            else st.snapshots.push({ at: st.events.length, taken: [BigInt(m[1]), BigInt(m[2])], restart: m[3] !== undefined, text: text.slice(m[0].length, -1) });
          } else if (type === 8) st.slabinfo.push({ at: st.events.length, ...JSON.parse(p.toString('utf8')) });
          else if (type === 7) st.bad.push(`error frame ${p.toString('utf8')}`);
          else st.bad.push(`frame type ${type}`);
          if (until(st)) return end();
        }
      });
      res.on('end', end);
    });
    req.on('error', (e) => (e.code === 'ECONNRESET' ? end() : !done && reject(e)));
    const timer = setTimeout(end, ms);
    req.end();
  });
  return reader;
}

function request(port, path) {
  return new Promise((resolvePromise, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolvePromise({ status: res.statusCode, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const sameEvent = (a, b) => a.kind === b.kind && a.cpu === b.cpu && a.obj === b.obj && a.site === b.site && (b.cache === null || a.cache === b.cache);
const show = (e) => e && `${e.kind} cpu ${e.cpu} ${e.cache} ${e.obj.toString(16)} ${e.site}`;

const groups = {
  async stream() {
    const want = traceEvents(FILP);
    check(want.length > 30000, `the fixture's trace has its ~31,900 filp events (parsed ${want.length})`);
    const s = await startFrom(FILP);
    check(/a recording of Linux 6\.18\.44-fc-v657/.test(s.banner), `the banner says it is a recording of the recorded kernel: ${s.banner}`);
    const r = readStream(s.port, s.token, { until: (st) => st.snapshots.length === 2, ms: 30000 });
    const st = await r.done;
    check(st.hello?.source === 'recording', `HELLO says source recording (${JSON.stringify(st.hello)})`);
    check(st.hello?.release === '6.18.44-fc-v657' && st.hello?.nr_cpus === 2, 'HELLO carries the recorded kernel and CPUs');
    check(st.hello?.recording?.file === 'filp.slabcap.gz' && st.hello?.recording?.events === want.length && st.hello?.recording?.snapshots === 2, `HELLO's recording: ${JSON.stringify(st.hello?.recording)}`);
    check(st.hello?.recording?.pace === 'recorded' && st.hello?.recording?.loop === false, 'HELLO: recorded pace, no loop');
    check(st.bad.length === 0, `every frame well formed (${st.bad.slice(0, 3).join('; ')})`);
    check(st.events.length === want.length, `exactly the trace's ${want.length} events (got ${st.events.length})`);
    let firstBad = -1;
    for (let i = 0; i < Math.min(want.length, st.events.length) && firstBad < 0; i++) if (!sameEvent(st.events[i], want[i])) firstBad = i;
    check(firstBad < 0, `the events in the trace's order, as recorded (first difference at ${firstBad}: ${show(st.events[firstBad])} against ${show(want[firstBad])})`);
    check([...st.caches.values()].every((n) => n === 'filp'), `only filp named (${[...st.caches.values()]})`);
    // At the recorded pace each event is stamped when it was due: the pass's start plus its recorded
    // offset, so the stamps are as far apart as the recorded times (to the wire's microsecond).
    let offBy = 0n;
    for (let i = 1; i < Math.min(want.length, st.events.length); i++) {
      const d = st.events[i].ns - st.events[0].ns - (want[i].ns - want[0].ns);
      if (d > offBy || -d > offBy) offBy = d < 0n ? -d : d;
    }
    check(offBy < 2000n, `stamps as far apart as recorded (largest difference ${offBy} ns)`);
    // The snapshots: the capture's own, byte for byte, the start one before the first event, the end one after the last.
    const [a, b] = st.snapshots;
    check(a?.text === member(FILP, 'snapshot-start.json').toString('utf8'), 'the first snapshot is snapshot-start.json');
    check(b?.text === member(FILP, 'snapshot-end.json').toString('utf8'), 'the second snapshot is snapshot-end.json');
    check(a?.at === 0 && b?.at === want.length, `snapshots at their places (before event ${a?.at}, ${b?.at})`);
    check(a?.restart === true && b?.restart === false, 'the start snapshot is marked restart, the end one not');
    check(a && b && a.taken[1] <= st.events[0].ns && b.taken[0] >= st.events[st.events.length - 1].ns, 'taken_ns: the start before the first event, the end after the last');
    check(st.slabinfo.length === 1 && st.slabinfo[0].at === 0 && st.slabinfo[0].caches.some((c) => c[0] === 'filp' && c[4] === 21), `the capture's slabinfo at the start (filp, 21 a slab): ${JSON.stringify(st.slabinfo.map((x) => x.caches.find((c) => c[0] === 'filp')))}`);
    const last = st.status.at(-1);
    check(!last || last.server_dropped === 0, 'nothing dropped');
    s.child.kill('SIGTERM');
    const code = await new Promise((r2) => (s.child.exitCode !== null ? r2(s.child.exitCode) : s.child.on('exit', r2)));
    check(code === 0, `SIGTERM: exit 0 (got ${code})`);
  },

  async errors() {
    const run = (args) => spawnSync(bin, ['serve', '--port', '0', '--site', site, '--exit-after', '5', ...args], { encoding: 'utf8', timeout: 30000 });
    const expect = (args, status, re, what) => {
      const r = run(args);
      check(r.status === status && re.test(r.stderr), `${what}: exit ${status} saying ${re} (got ${r.status}: ${r.stderr.split('\n')[0]})`);
      check(!/token=/.test(r.stdout), `${what}: nothing served`);
    };
    expect(['--from', join(tmp, 'missing.slabcap')], 1, /--from: cannot open .*missing\.slabcap: No such file/, 'a missing capture');
    expect(['--from', tmp], 1, /--from: .*directory/, 'a directory');
    writeFileSync(join(tmp, 'noise.slabcap'), 'this is not a capture\n'.repeat(10));
    expect(['--from', join(tmp, 'noise.slabcap')], 1, /not a capture serve can play: not an ftrace trace/, 'a file that is no capture');
    const gz = spawnSync('cat', [FILP]).stdout;
    writeFileSync(join(tmp, 'cut.slabcap.gz'), gz.subarray(0, gz.length >> 1));
    expect(['--from', join(tmp, 'cut.slabcap.gz')], 1, /not a capture serve can play: truncated gzip/, 'a truncated capture');
    writeFileSync(join(tmp, 'pages.txt'), '  cat-1 [000] ..... 10.000001: mm_page_alloc: page=0x1 pfn=0x1 order=0 migratetype=0 gfp_flags=GFP_KERNEL\n');
    expect(['--from', join(tmp, 'pages.txt')], 1, /has no slab or percpu allocation or free to play/, 'a trace without slab events');
    expect(['--rate', '1000'], 2, /--rate and --loop play a recording: they need --from/, '--rate without --from');
    expect(['--loop'], 2, /need --from/, '--loop without --from');
    expect(['--from', FILP, '--caches', 'filp'], 2, /not with --from/, '--from with --caches');
    expect(['--from', FILP, '--rate', '0'], 2, /--rate needs events a second/, '--rate 0');
    expect(['--from', FILP, '--rate', 'fast'], 2, /--rate needs events a second/, '--rate fast');
    const s = await startFrom(FILP);
    const r = await request(s.port, `/api/snapshot?cache=filp&token=${s.token}`);
    check(r.status === 503 && /plays a recording/.test(r.body), `/api/snapshot on a recording: 503 saying why (got ${r.status} ${r.body})`);
    const t = await request(s.port, '/api/live');
    check(t.status === 401, `the token is still needed (got ${t.status})`);
  },

  async rate() {
    const want = traceEvents(FILP);
    const R = 20000;
    const s = await startFrom(FILP, ['--rate', String(R), '--loop']);
    const t0 = process.hrtime.bigint();
    const r = readStream(s.port, s.token, { until: (st) => st.events.length >= want.length + 5000, ms: 20000 });
    const st = await r.done;
    const waitedS = Number(process.hrtime.bigint() - t0) / 1e9;
    check(st.hello?.recording?.pace === R && st.hello?.recording?.loop === true, `HELLO: pace ${R}, loop (${JSON.stringify(st.hello?.recording)})`);
    check(st.events.length >= want.length + 5000, `a second pass began (${st.events.length} events in ${waitedS.toFixed(1)} s)`);
    // A token bucket of R a second and 20 ms of burst: never more than that in the time we were connected.
    check(st.events.length <= R * waitedS + R / 50 + 1, `at most ${R}/s: ${st.events.length} events in ${waitedS.toFixed(2)} s`);
    let firstBad = -1;
    for (let i = 0; i < st.events.length && firstBad < 0; i++) if (!sameEvent(st.events[i], want[i % want.length])) firstBad = i;
    check(firstBad < 0, `passes follow each other in the capture's order (first difference at ${firstBad})`);
    check(st.snapshots.map((x) => x.at).join(',') === `0,${want.length},${want.length}`, `start, end, start snapshots at the passes' edges (at ${st.snapshots.map((x) => x.at)})`);
    check(st.snapshots.map((x) => x.restart).join(',') === 'true,false,true', `each pass's start is marked "restart" (${st.snapshots.map((x) => x.restart)})`);
    check(st.snapshots[2]?.text === st.snapshots[0]?.text, 'the second pass starts from the start snapshot again');
    for (let i = 1; i < st.events.length; i++)
      if (st.events[i].ns < st.events[i - 1].ns) {
        check(false, `stamps never go back, across passes too (event ${i})`);
        break;
      }
    s.child.kill('SIGTERM');
    // As fast as it goes: many more in the same time (a pass of 31,900 events takes 1.6 s at 20,000/s).
    const m = await startFrom(FILP, ['--rate', 'max', '--loop']);
    const rm = readStream(m.port, m.token, { ms: waitedS * 1000 });
    const sm = await rm.done;
    check(sm.events.length > 2 * st.events.length, `--rate max: more than twice the events in the same time (${sm.events.length} against ${st.events.length})`);
  },

  async pick() {
    // A page picks a cache halfway through: the recording plays again from its start, the start
    // snapshot first (marked "restart"), then every event, then the end snapshot.
    const want = traceEvents(FILP);
    const s = await startFrom(FILP, ['--rate', '20000']);
    let asked = null;
    const r = readStream(s.port, s.token, {
      ms: 30000,
      until: (st) => {
        if (!asked && st.events.length >= 5000) asked = request(s.port, `/api/watch?client=${st.hello.client}&cache=filp&token=${s.token}`);
        return st.snapshots.length >= 3;
      },
    });
    const st = await r.done;
    check((await asked)?.status === 204, 'the watch was taken');
    const [first, again, end] = st.snapshots;
    check(first?.at === 0 && first.restart, 'the first playback began with the start snapshot');
    check(again?.restart === true && again.text === first?.text, `after the pick, the start snapshot again, marked restart (${again?.restart})`);
    check(end && !end.restart && end.text === member(FILP, 'snapshot-end.json').toString('utf8'), 'then the end snapshot');
    const after = st.events.slice(again?.at ?? 0, end?.at ?? 0);
    check(after.length === want.length, `between them, the whole capture (${after.length} of ${want.length} events)`);
    let firstBad = -1;
    for (let i = 0; i < Math.min(after.length, want.length) && firstBad < 0; i++) if (!sameEvent(after[i], want[i])) firstBad = i;
    check(firstBad < 0, `in order (first difference at ${firstBad})`);
    check((again?.at ?? 0) >= 5000 && (again?.at ?? 0) < want.length, `the first playback was cut where the pick came (event ${again?.at})`);
  },

  async lag() {
    const s = await startFrom(MIXED, ['--rate', 'max', '--loop', '--queue-mb', '1']);
    const r = readStream(s.port, s.token, { ms: 30000, until: (st) => st.status.some((x) => x.server_dropped > 0) && st.status.length >= 4 });
    // Do not read for 3 s: the server's queue for us fills and it drops.
    await new Promise((ok) => {
      const wait = () => (r.res ? (r.res.pause(), ok()) : setTimeout(wait, 5));
      wait();
    });
    await new Promise((ok) => setTimeout(ok, 3000));
    r.res.resume();
    const st = await r.done;
    const lastDrop = st.status.filter((x) => x.server_dropped > 0);
    check(lastDrop.length > 0, `a lagging client's events are dropped and counted (status: ${JSON.stringify(st.status.at(-1))})`);
    for (const x of st.status) {
      check(x.sent === x.at, `at each status frame, the events received are what it says was sent (${x.at} against ${x.sent})`);
      check(x.sent + x.server_dropped === x.events_in, `sent + dropped = events in (${x.sent} + ${x.server_dropped} against ${x.events_in})`);
    }
    check(st.bad.length === 0, `every frame well formed (${st.bad.slice(0, 3)})`);
    check(st.hello?.recording?.snapshots === 0 && st.hello?.release === '6.18', `a capture without snapshots: its release from the metadata (${JSON.stringify(st.hello)})`);
    // With snapshots (two a pass, many a second at --rate max), a lagging client loses some of them,
    // counted, rather than being cut off: the stream goes on after the pause.
    const f = await startFrom(FILP, ['--rate', 'max', '--loop', '--queue-mb', '1']);
    const rf = readStream(f.port, f.token, { ms: 30000, until: (x) => x.status.some((y) => y.snapshots_dropped > 0) && x.status.length >= 6 });
    await new Promise((ok) => {
      const wait = () => (rf.res ? (rf.res.pause(), ok()) : setTimeout(wait, 5));
      wait();
    });
    await new Promise((ok) => setTimeout(ok, 3000));
    rf.res.resume();
    const sf = await rf.done;
    const lastF = sf.status.at(-1);
    check(lastF?.snapshots_dropped > 0 && lastF?.server_dropped > 0, `snapshots and events dropped for it, counted (${JSON.stringify(lastF)})`);
    check(sf.status.length >= 6 && sf.snapshots.length > 0, `not cut off: ${sf.status.length} status frames and ${sf.snapshots.length} snapshots came`);
  },
};

if (!groups[group]) {
  console.error(`unknown group '${group}' (${Object.keys(groups).join(', ')})`);
  process.exit(2);
}
try {
  await groups[group]();
} catch (e) {
  failures++;
  console.error(`FAIL: ${e.stack ?? e}`);
} finally {
  finish();
}
if (failures) {
  console.error(`${failures} check(s) failed`);
  process.exit(1);
}
console.log(`live --from ${group}: every check passed${asNobody ? ' (serve ran as nobody)' : ''}`);
