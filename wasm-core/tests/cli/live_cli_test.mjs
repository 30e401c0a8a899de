// live_cli_test.mjs - `slablab serve` on the real kernel of this machine, one check group per
// invocation (test_live_cli.c runs each as its own named test):
//
//   node live_cli_test.mjs SLABLAB_BINARY GROUP
//
//   security  no token 401, wrong token 403, wrong Origin 403, a foreign Host 421, POST 405, paths
//             outside the site (../ and its encoded forms) 404 with nothing of the file in the
//             answer; the cookie set from ?token= lets the page's assets load; refusals carry
//             neither the token nor a file
//   bind      --bind to a non-loopback address without the explicit flag: exit 2, and it says why
//   stream    a page connects (with --caches filp), the test opens and closes N files: the stream
//             has at least N filp allocations and N filp frees, less what was counted as lost;
//             only filp is named; every frame is well formed
//   snapshot  a page watching filp gets real snapshots of it (slablab-snapshot/1 JSON, with the
//             times it was read on the events' clock) and /proc/slabinfo's counts
//   detach    the event program is attached while a page streams, detached when it leaves; SIGTERM
//             stops the server with exit 0; SIGKILL while streaming leaves nothing loaded either
//   ownwork   the program reads the preempt count (its per-CPU places checked on this kernel), and
//             every kmem event ftrace sees on serve's threads in interrupt context or with
//             preemption disabled (a fork loop and serve's own loopback traffic) is in the stream;
//             what is still left out as the server's own is counted (server_own)
//
// Every server listens on 127.0.0.1, on a port the kernel picks, and stops by itself (--exit-after)
// should the test die.  Exit status 0 when every check passed, 77 (the reason on the last line)
// when this machine cannot run the group.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from './serve_child.mjs';

const [bin, group] = process.argv.slice(2);
if (!bin || !group) {
  console.error('usage: node live_cli_test.mjs SLABLAB_BINARY GROUP');
  process.exit(2);
}
const tmp = mkdtempSync(join(tmpdir(), 'slablab-live-test-'));
const site = join(tmp, 'site');
mkdirSync(join(site, 'assets'), { recursive: true });
writeFileSync(join(site, 'index.html'), '<!doctype html><title>lab</title>INDEX-MARKER');
writeFileSync(join(site, 'assets', 'app.js'), 'export const ASSET_MARKER = 1;');
writeFileSync(join(tmp, 'secret.txt'), 'SECRET-OUTSIDE-THE-SITE');

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
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ourPrograms = () => {
  const r = spawnSync('bpftool', ['prog', 'list'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  return r.stdout.split('\n').filter((l) => /name (on_kmem_cache_|on_kmalloc|on_kfree|on_percpu_)/.test(l));
};

/** Starts serve; resolves with { child, base, token, port, stderr() } once it printed its URL. */
const startServer = (extra = [], exitAfter = 60) =>
  startServe(bin, ['--port', '0', '--site', site, '--exit-after', String(exitAfter), ...extra], children);

/** One raw request (path sent as given); resolves with { status, headers, body }. */
function request(port, path, { method = 'GET', headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, path, method, headers: { Host: `127.0.0.1:${port}`, ...headers } },
      (res) => {
        let body = '';
        res.setEncoding('latin1');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.setTimeout(10000, () => req.destroy(new Error(`timeout on ${path}`)));
    req.end();
  });
}

/**
 * Reads the live stream until until(state) is true or ms pass; returns the decoded state:
 * hello, caches (id -> name), sites, events [{kind, cpu, cache, site, obj}], status frames,
 * snapshots, errors, and bad (malformed frames seen).
 */
function readStream(port, token, { path = '/api/live', ms = 10000, until = () => false, onOpen = () => {}, onEvent = null } = {}) {
  const st = { hello: null, caches: new Map(), sites: new Map(), counts: new Map(), status: [], snapshots: [], slabinfo: [], errors: [], bad: [], frames: 0 };
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    let done = false;
    const req = http.request({ host: '127.0.0.1', port, path: `${path}${path.includes('?') ? '&' : '?'}token=${token}`, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
      if (res.statusCode !== 200) {
        reject(new Error(`live stream answered ${res.statusCode}`));
        return;
      }
      onOpen(st);
      res.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 8) {
          const len = buf.readUInt32LE(0);
          const type = buf[4];
          if (buf.length < 8 + len) break;
          const p = buf.subarray(8, 8 + len);
          buf = buf.subarray(8 + len);
          st.frames++;
          if (type === 1) st.hello = JSON.parse(p.toString('utf8'));
          else if (type === 2) st.caches.set(p.readUInt16LE(0), p.subarray(24).toString('utf8'));
          else if (type === 3) st.sites.set(p.readUInt32LE(0), p.subarray(16).toString('utf8'));
          else if (type === 4) {
            const n = p.readUInt32LE(0);
            if (24 + n * 24 !== p.length) st.bad.push(`events frame of ${p.length} bytes for ${n} events`);
            for (let i = 0; i < n; i++) {
              const o = 24 + i * 24;
              const kind = p[o];
              const cache = p.readUInt16LE(o + 2);
              if (kind < 1 || kind > 6) st.bad.push(`event kind ${kind}`);
              if (cache && !st.caches.has(cache)) st.bad.push(`event of cache id ${cache} before its name`);
              const key = `${st.caches.get(cache) ?? ''}/${kind}`;
              st.counts.set(key, (st.counts.get(key) ?? 0) + 1);
              if (onEvent) onEvent({ kind, cpu: p[o + 1], cache: st.caches.get(cache) ?? '', obj: p.readBigUInt64LE(o + 16), ns: p.readBigUInt64LE(8) + BigInt(p.readUInt32LE(o + 8)) * 1000n });
            }
          } else if (type === 5) st.status.push(JSON.parse(p.toString('utf8')));
          else if (type === 6) {
            const w = JSON.parse(p.toString('utf8'));
            if (!Array.isArray(w.taken_ns) || w.taken_ns.length !== 2 || !(w.taken_ns[0] <= w.taken_ns[1])) st.bad.push('snapshot frame without taken_ns');
            st.snapshots.push(w.snapshot);
          } else if (type === 8) st.slabinfo.push(JSON.parse(p.toString('utf8')));
          else if (type === 7) st.errors.push(JSON.parse(p.toString('utf8')));
          else st.bad.push(`frame type ${type}`);
          if (!done && until(st)) {
            done = true;
            req.destroy();
            resolve(st);
          }
        }
      });
      res.on('end', () => !done && ((done = true), resolve(st)));
    });
    req.on('error', (e) => !done && ((done = true), e.code === 'ECONNRESET' ? resolve(st) : reject(e)));
    setTimeout(() => !done && ((done = true), req.destroy(), resolve(st)), ms);
    req.end();
  });
}

/** The tracefs and debugfs mounts (as one sorted line) and the tracing instances there are. */
function tracingState() {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8').split('\n').filter((l) => / - (tracefs|debugfs) /.test(l)).map((l) => l.split(' ')[4]).sort().join(' ');
  let instances = [];
  try {
    instances = readdirSync('/sys/kernel/tracing/instances');
  } catch {
    /* tracefs not mounted there */
  }
  return { mounts, instances };
}

function needRootAndBpf() {
  if (process.getuid() !== 0) skip('needs root (BPF): run the native suite as root');
  const help = spawnSync(bin, ['serve', '--bogus'], { encoding: 'utf8' });
  if (/built without libmicrohttpd/.test(help.stderr)) skip('this slablab was built without libmicrohttpd');
}

const groups = {
  async security() {
    if (spawnSync(bin, ['serve', '--bogus'], { encoding: 'utf8' }).stderr.includes('without libmicrohttpd'))
      skip('this slablab was built without libmicrohttpd');
    const s = await startServer(['--snapshot-interval', '0']);
    const { port, token } = s;
    const noLeak = (r, what) => {
      check(!r.body.includes(token), `${what}: the answer does not carry the token`);
      check(!r.body.includes('INDEX-MARKER') && !r.body.includes('SECRET'), `${what}: the answer carries no file`);
    };
    let r = await request(port, '/');
    check(r.status === 401, `no token: 401 (got ${r.status})`);
    noLeak(r, 'no token');
    r = await request(port, '/api/live');
    check(r.status === 401, `live endpoint, no token: 401 (got ${r.status})`);
    r = await request(port, `/?token=${token.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))}`);
    check(r.status === 403 && /wrong token/.test(r.body), `wrong token: 403 (got ${r.status} ${r.body})`);
    noLeak(r, 'wrong token');
    r = await request(port, `/api/status?token=${token}x`);
    check(r.status === 403, `token with a character more: 403 (got ${r.status})`);
    r = await request(port, `/api/live?token=${token}`, { headers: { Origin: 'http://evil.example' } });
    check(r.status === 403 && /wrong Origin/.test(r.body), `live endpoint, wrong Origin: 403 (got ${r.status} ${r.body})`);
    noLeak(r, 'wrong Origin');
    r = await request(port, `/api/live?token=${token}`, { headers: { Origin: `http://localhost:${port}` } });
    check(r.status === 403, `live endpoint, Origin of another name of this host: 403 (got ${r.status})`);
    r = await request(port, `/api/status?token=${token}`, { headers: { 'Sec-Fetch-Site': 'cross-site' } });
    check(r.status === 403, `a cross-site fetch: 403 (got ${r.status})`);
    r = await request(port, `/api/status?token=${token}`, { headers: { Host: `rebound.example:${port}` } });
    check(r.status === 421, `a foreign Host (DNS rebinding): 421 (got ${r.status})`);
    noLeak(r, 'foreign Host');
    r = await request(port, `/api/status?token=${token}`, { method: 'POST' });
    check(r.status === 405, `POST: 405 (got ${r.status})`);
    r = await request(port, `/api/status?token=${token}`, { headers: { Origin: `http://127.0.0.1:${port}` } });
    check(r.status === 200 && JSON.parse(r.body).format === 'slablab-live/1', `right token and Origin: 200 (got ${r.status})`);
    for (const path of [
      '/../secret.txt', '/../../secret.txt', '/assets/../../secret.txt', '/%2e%2e/secret.txt',
      '/%2E%2E/secret.txt', '/assets/%2e%2e/%2e%2e/secret.txt', '/..%2fsecret.txt', '/%2e%2e%2fsecret.txt',
      '/%252e%252e/secret.txt', '/..%5csecret.txt', '/assets/..%5c..%5csecret.txt', '/%c0%ae%c0%ae/secret.txt',
      `/${tmp}/secret.txt`, '//etc/passwd', '/etc/passwd', '/.%2e/secret.txt',
    ]) {
      r = await request(port, `${path}?token=${token}`);
      check(r.status === 404, `${path}: 404 (got ${r.status})`);
      noLeak(r, path);
      check(!/root:/.test(r.body), `${path}: nothing of /etc/passwd`);
    }
    r = await request(port, `/?token=${token}`);
    check(r.status === 200 && r.body.includes('INDEX-MARKER'), `right token: the site's index (got ${r.status})`);
    const cookie = (r.headers['set-cookie'] ?? [])[0] ?? '';
    check(/HttpOnly/.test(cookie) && /SameSite=Strict/.test(cookie), `the token cookie is HttpOnly and SameSite=Strict (${cookie})`);
    const pair = cookie.split(';')[0];
    r = await request(port, '/assets/app.js', { headers: { Cookie: pair } });
    check(r.status === 200 && r.body.includes('ASSET_MARKER'), `an asset with the cookie alone: 200 (got ${r.status})`);
    check(/javascript/.test(r.headers['content-type'] ?? ''), `app.js is served as JavaScript (${r.headers['content-type']})`);
    r = await request(port, '/assets/app.js', { headers: { Cookie: pair.replace(/=.*/, '=0000') } });
    check(r.status === 403, `a wrong cookie: 403 (got ${r.status})`);
    r = await request(port, '/assets/app.js', { headers: { Cookie: `slablab_token_1=${token}` } });
    check(r.status === 401, `the cookie of another port is not this server's: 401 (got ${r.status})`);
    s.child.kill('SIGTERM');
  },

  async bind() {
    const r = spawnSync(bin, ['serve', '--port', '0', '--site', site, '--bind', '0.0.0.0', '--exit-after', '2'], { encoding: 'utf8', timeout: 10000 });
    check(r.status === 2, `--bind 0.0.0.0 without the flag: exit 2 (got ${r.status})`);
    check(/--i-understand-this-exposes-kernel-addresses/.test(r.stderr), `and it names the flag (${r.stderr.slice(0, 200)})`);
    check(!/http:\/\//.test(r.stdout), 'and prints no URL');
    const r2 = spawnSync(bin, ['serve', '--port', '0', '--site', site, '--bind', '10.255.255.1', '--exit-after', '2'], { encoding: 'utf8', timeout: 10000 });
    check(r2.status === 2, `--bind 10.255.255.1 without the flag: exit 2 (got ${r2.status})`);
    const r3 = spawnSync(bin, ['serve', '--port', '0', '--site', join(tmp, 'nothing-here')], { encoding: 'utf8', timeout: 10000 });
    check(r3.status === 1 && /npm run build/.test(r3.stderr), `a missing site: exit 1 and how to build it (${r3.status}: ${r3.stderr.slice(0, 200)})`);
  },
};

groups.stream = async () => {
  needRootAndBpf();
  const s = await startServer(['--caches', 'filp', '--snapshot-interval', '0']);
  const N = 3000;
  let finished = false;
  const attachedThenWork = async () => {
    let attached = false;
    for (let i = 0; i < 200 && !attached; i++) {
      const r = await request(s.port, `/api/status?token=${s.token}`);
      attached = JSON.parse(r.body).attached;
      if (!attached) await sleep(50);
    }
    check(attached, 'the event program is attached while a page streams');
    for (let i = 0; i < N; i++) closeSync(openSync('/dev/null', 'r'));
    await sleep(1500);
    finished = true;
  };
  let started = null;
  const st = await readStream(s.port, s.token, {
    ms: 30000,
    onOpen: () => (started = attachedThenWork()),
    until: () => finished,
  });
  await started;
  if (st.errors.length || (st.status.at(-1)?.error ?? '') !== '') {
    const why = st.status.at(-1)?.error || JSON.stringify(st.errors[0]);
    if (/BTF|root|built without BPF|tracepoints/.test(why)) skip(`this machine cannot stream events: ${why}`);
  }
  check(st.hello?.format === 'slablab-live/1' && st.hello.filtered === true, `HELLO names the format and the filter (${JSON.stringify(st.hello)})`);
  check(st.bad.length === 0, `every frame well formed (${st.bad.slice(0, 3).join('; ')})`);
  const names = [...st.caches.values()];
  check(names.length >= 1 && names.every((n) => n === 'filp'), `with --caches filp only filp is named (${names.join(',')})`);
  const allocs = st.counts.get('filp/1') ?? 0;
  const frees = st.counts.get('filp/2') ?? 0;
  const last = st.status.at(-1) ?? { kernel_lost: 0, server_dropped: 0 };
  const lost = last.kernel_lost + last.server_dropped;
  console.log(`filp: ${allocs} allocations, ${frees} frees for ${N} files opened and closed; lost ${last.kernel_lost} in the kernel ring, ${last.server_dropped} in the server`);
  check(allocs + lost >= N, `at least ${N} filp allocations, less what was lost (${allocs} + ${lost})`);
  check(frees + lost >= N, `at least ${N} filp frees, less what was lost (${frees} + ${lost})`);
  check(st.sites.size > 0 && [...st.sites.values()].some((n) => /^[A-Za-z_][\w.]*\+0x[0-9a-f]+$/.test(n)), `call sites are named function+0xoff (${[...st.sites.values()].slice(0, 3).join(', ')})`);
  check([...st.counts.keys()].every((k) => k.startsWith('filp/')), `no event of another cache or of percpu (${[...st.counts.keys()].join(',')})`);
  s.child.kill('SIGTERM');
};

groups.snapshot = async () => {
  needRootAndBpf();
  const s = await startServer(['--caches', 'filp', '--snapshot-interval', '2']);
  const st = await readStream(s.port, s.token, { path: '/api/live?watch=filp', ms: 20000, until: (st) => st.snapshots.length >= 2 || st.errors.length > 0 });
  if (st.errors.length && /BPF|root|6\.13|lockdown/.test(st.errors[0].snapshot_error ?? '')) skip(`this machine cannot take a snapshot: ${st.errors[0].snapshot_error}`);
  check(st.snapshots.length >= 2, `a page watching filp gets snapshots on connecting and every 2 s (got ${st.snapshots.length}, errors ${JSON.stringify(st.errors)})`);
  const snap = st.snapshots[0];
  check(snap?.format === 'slablab-snapshot/1', `the snapshot is slablab-snapshot/1 (${snap?.format})`);
  const filp = snap?.caches?.find((c) => c.name === 'filp');
  check(filp !== undefined && (snap?.caches?.length ?? 0) === 1, `it holds filp, and only filp (${snap?.caches?.map((c) => c.name).join(',')})`);
  check(st.bad.length === 0, `every frame well formed (${st.bad.slice(0, 3).join('; ')})`);
  const info = st.slabinfo[0]?.caches?.find((c) => c[0] === 'filp');
  check(info !== undefined && info[1] > 0 && info[2] >= info[1], `a slabinfo frame with filp's objects (${JSON.stringify(info)})`);
  const r = await request(s.port, `/api/snapshot?cache=filp&token=${s.token}`);
  check(r.status === 200 && JSON.parse(r.body).caches?.[0]?.name === 'filp', `/api/snapshot?cache=filp answers a snapshot (got ${r.status})`);
  const bad = await request(s.port, `/api/snapshot?cache=../../x&token=${s.token}`);
  check(bad.status === 400, `/api/snapshot with a bad name: 400 (got ${bad.status})`);
  s.child.kill('SIGTERM');
};

groups.detach = async () => {
  needRootAndBpf();
  if (ourPrograms() === null) skip('bpftool is not installed: cannot see which programs are loaded');
  check(ourPrograms().length === 0, `no event program loaded before the test (${ourPrograms().join(' | ')})`);
  const tracingBefore = tracingState();
  const s = await startServer(['--snapshot-interval', '0']);
  check(ourPrograms().length === 0, 'nothing attached while no page streams');
  let during = [];
  await readStream(s.port, s.token, {
    ms: 10000,
    until: (st) => {
      if (st.status.length >= 2) {
        during = ourPrograms();
        return true;
      }
      return false;
    },
  });
  check(during.length === 6, `six tracepoint programs attached while a page streams (got ${during.length})`);
  let after = ourPrograms();
  for (let i = 0; i < 60 && after.length; i++) {
    await sleep(100);
    after = ourPrograms();
  }
  check(after.length === 0, `the page gone, every program detached (${after.join(' | ')})`);
  const exited = new Promise((r) => s.child.on('exit', (code, sig) => r({ code, sig })));
  s.child.kill('SIGTERM');
  const e = await exited;
  check(e.code === 0, `SIGTERM: exit 0 (got ${e.code} ${e.sig})`);
  // A crash: SIGKILL while a page streams; the kernel closes the links with the process.
  const k = await startServer(['--snapshot-interval', '0']);
  const killed = new Promise((r) => k.child.on('exit', () => r()));
  await readStream(k.port, k.token, { ms: 10000, until: (st) => st.status.length >= 1 });
  const k2 = readStream(k.port, k.token, { ms: 10000, until: (st) => { if (st.status.length >= 1 && k.child.exitCode === null) k.child.kill('SIGKILL'); return false; } }).catch(() => null);
  await killed;
  await k2;
  let left = ourPrograms();
  for (let i = 0; i < 50 && left.length; i++) {
    await sleep(100);
    left = ourPrograms();
  }
  check(left.length === 0, `after SIGKILL nothing is left loaded (${left.join(' | ')})`);
  // serve mounts nothing and makes no tracing instance (other tools on the machine may: compare with before, and by pid).
  const tracing = tracingState();
  check(tracing.mounts === tracingBefore.mounts, `no tracefs or debugfs mounted while serve ran (before: ${tracingBefore.mounts}; after: ${tracing.mounts})`);
  const ours = tracing.instances.filter((i) => [s.child.pid, k.child.pid].some((pid) => i.includes(String(pid))));
  check(ours.length === 0, `no tracing instance of serve's (${ours.join(', ')})`);
};

/**
 * Traces the kmem events of the given threads that happen in interrupt context or with preemption
 * disabled beyond the tracepoint's own (ftrace's flags and preempt count: the capture's filter,
 * cmd_capture.c), in a tracing instance of a tracefs mounted in a private mount namespace (no host
 * mount changes; the instance is removed at the end).  Resolves once tracing runs with
 * stop(): a promise of the events [{ kind, cpu, obj, ns }] (kinds as the stream's).
 */
async function traceInterruptWork(tids) {
  const pids = tids.map((t) => `common_pid == ${t}`).join(' || ');
  const filter = `(${pids}) && (common_flags & 0x58 || common_preempt_count != 0)`;
  const script = [
    'set -e',
    'd=$(mktemp -d); mount -t tracefs nodev "$d"; i="$d/instances/slablab-live-test-$$"; mkdir "$i"',
    `trap 'echo 0 > "$i/tracing_on"; rmdir "$i"; umount "$d"; rmdir "$d"' EXIT`,
    'echo 0 > "$i/tracing_on"; echo mono > "$i/trace_clock"; echo 8192 > "$i/buffer_size_kb"; echo 0 > "$i/options/hash-ptr"',
    `for e in kmem_cache_alloc kmem_cache_free kmalloc kfree; do echo '${filter}' > "$i/events/kmem/$e/filter"; echo 1 > "$i/events/kmem/$e/enable"; done`,
    'echo 1 > "$i/tracing_on"; echo tracing; read _; echo 0 > "$i/tracing_on"; cat "$i/trace"',
  ].join('\n');
  const child = spawn('unshare', ['-m', 'sh', '-c', script], { stdio: ['pipe', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stderr.on('data', (d) => (err += d));
  const done = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      if (out.startsWith('tracing\n')) resolve();
    });
    done.then((code) => reject(new Error(`ftrace could not be set up (exit ${code}): ${err.trim()}`)));
  });
  return async () => {
    child.stdin.end('\n');
    const code = await done;
    if (code !== 0) throw new Error(`ftrace ended with ${code}: ${err.trim()}`);
    const kinds = { kmem_cache_alloc: 1, kmem_cache_free: 2, kmalloc: 3, kfree: 4 };
    const events = [];
    for (const line of out.split('\n')) {
      const m = /\[(\d+)\][^:]*\s(\d+)\.(\d+): (kmem_cache_alloc|kmem_cache_free|kmalloc|kfree): .*?ptr=([0-9a-fx]+)/.exec(line);
      if (!m) continue;
      const obj = BigInt(m[5].startsWith('0x') ? m[5] : `0x${m[5]}`);
      if (obj <= 16n) continue;
      events.push({ kind: kinds[m[4]], cpu: Number(m[1]), obj, ns: BigInt(m[2]) * 1_000_000_000n + BigInt(m[3].padEnd(9, '0')) });
    }
    return events;
  };
}

// The kernel's work that runs while the server is current (loopback receive of its own stream in
// softirq, RCU callbacks, a context switch's frees) is streamed: ftrace, filtered on serve's threads
// in interrupt context or with preemption disabled, names such events, and each must be in the
// stream (same kind, object and CPU, within 50 us).  The old program (every event of serve's
// process left out) streams none of them.
groups.ownwork = async () => {
  needRootAndBpf();
  if (spawnSync('unshare', ['--help']).error) skip('unshare (util-linux) is not installed: cannot trace the server by ftrace');
  const s = await startServer(['--snapshot-interval', '0']);
  const streamed = new Map();
  let stop = null;
  let traced = null;
  let ftraceError = null;
  let finished = false;
  const work = async (st) => {
    for (let i = 0; i < 100 && !st.status.length; i++) await sleep(50);
    const tids = readdirSync(`/proc/${s.child.pid}/task`);
    try {
      stop = await traceInterruptWork(tids);
    } catch (e) {
      ftraceError = e.message;
      finished = true;
      return;
    }
    // Forks and exits whose RCU and context-switch frees may run while serve is current, and serve
    // busy streaming what they allocate.
    await new Promise((r) => spawn('sh', ['-c', 'i=0; while [ $i -lt 400 ]; do /bin/true; i=$((i+1)); done']).on('exit', r));
    await sleep(1500);
    traced = await stop();
    await sleep(500);
    finished = true;
  };
  let started = null;
  const st = await readStream(s.port, s.token, {
    ms: 40000,
    onOpen: (st) => (started = work(st)),
    until: () => finished,
    onEvent: (e) => {
      const key = `${e.kind}/${e.obj}`;
      if (!streamed.has(key)) streamed.set(key, []);
      streamed.get(key).push(e);
    },
  });
  await started;
  const last = st.status.at(-1) ?? {};
  if ((last.error ?? '') !== '' && /BTF|root|built without BPF|tracepoints/.test(last.error)) skip(`this machine cannot stream events: ${last.error}`);
  if (ftraceError) skip(`ftrace cannot trace the server's threads here: ${ftraceError}`);
  // The per-CPU places are checked for x86_64's linking; elsewhere the program keeps the old rule and says why.
  if (last.own_by_context === false && process.arch !== 'x64') skip(`not x86_64: every event while serve is current is left out (${last.own_note})`);
  check(last.own_by_context === true, `the program tells the server's own process-context work by the preempt count (own_note: ${last.own_note})`);
  check(typeof last.server_own === 'number' && last.server_own > 0, `what is still left out as the server's own is counted (server_own ${last.server_own})`);
  const lost = (last.kernel_lost ?? 0) + (last.server_dropped ?? 0);
  let found = 0;
  for (const t of traced ?? []) {
    // Both probes run at the same tracepoint call, a few microseconds apart; each streamed event matches once.
    const same = streamed.get(`${t.kind}/${t.obj}`) ?? [];
    const at = same.findIndex((e) => e.cpu === t.cpu && (e.ns > t.ns ? e.ns - t.ns : t.ns - e.ns) < 50_000n);
    if (at >= 0) {
      same.splice(at, 1);
      found++;
    }
  }
  const n = traced?.length ?? 0;
  console.log(`interrupt or preempt-disabled events while serve was current: ${n} traced, ${found} of them streamed; server_own ${last.server_own}; lost ${lost}`);
  check(n >= 20, `the workload made the kernel work in serve's context (${n} events traced, at least 20 wanted)`);
  check(found + lost >= 0.95 * n, `each of them is in the stream (${found} of ${n}, ${lost} lost)`);
  // Stopped and gone before the next group looks for loaded programs.
  const exited = s.child.exitCode !== null ? Promise.resolve() : new Promise((r) => s.child.on('exit', r));
  s.child.kill('SIGTERM');
  await exited;
};

if (!groups[group]) {
  console.error(`unknown group ${group}`);
  process.exit(2);
}
try {
  await groups[group]();
} catch (e) {
  check(false, `${group}: ${e.stack ?? e}`);
}
finish();
console.log(`${group}: ${failures ? `${failures} failed` : 'passed'}`);
process.exit(failures ? 1 : 0);
