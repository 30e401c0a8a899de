// release_cli_test.mjs - the one-file release `slablab` (scripts/build-release.mjs) copied alone
// into an empty directory, as it would be onto the machine under study:
//
//   node release_cli_test.mjs RELEASE_BINARY SITE_DIR
//
//   libraries  readelf/ldd: no shared libbpf, libelf, libz or libmicrohttpd (and whether it is
//              fully static: no dynamic section at all)
//   site       `serve` without --site, run from that directory: `/` and hashed assets (a script, a
//              stylesheet, the WebAssembly) answered with exactly SITE_DIR's bytes and their
//              content types; a path not in the site 404
//   stream     (root, BPF) the stream carries events, so the BPF objects are inside the binary;
//              SIGTERM exits 0 and leaves none of its programs loaded (bpftool prog list before
//              and after)
//
// One line per check group: "ok GROUP", "FAIL GROUP: why" or "skip GROUP: why"; exit status 1 if
// any failed.  Every server listens on 127.0.0.1 on a port the kernel picks and stops by itself
// (--exit-after) should the test die.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { startServe } from './serve_child.mjs';

const [src, site] = process.argv.slice(2);
if (!src || !site) {
  console.error('usage: node release_cli_test.mjs RELEASE_BINARY SITE_DIR');
  process.exit(2);
}
const dir = mkdtempSync(join(tmpdir(), 'slablab-release-test-'));
const bin = join(dir, 'slablab');
copyFileSync(src, bin);
const children = [];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let failed = 0;

/** Runs one group: its checks return a list of failures, or throw Skip. */
class Skip extends Error {}
async function group(name, fn) {
  try {
    const bad = await fn();
    if (bad.length) {
      failed++;
      console.log(`FAIL ${name}: ${bad.join('; ')}`);
    } else console.log(`ok ${name}`);
  } catch (e) {
    if (e instanceof Skip) console.log(`skip ${name}: ${e.message}`);
    else {
      failed++;
      console.log(`FAIL ${name}: ${e.stack ?? e}`);
    }
  }
}

/** Starts the copied binary's serve in its own directory; resolves once it printed its URL. */
const serve = (exitAfter = 60) =>
  startServe(bin, ['--port', '0', '--snapshot-interval', '0', '--exit-after', String(exitAfter)], children, dir);

/** GET path; resolves { status, type, body (Buffer) }; stops after maxMs (a stream) if given. */
function get(port, path, maxMs = 0) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
      const parts = [];
      const done = () => resolve({ status: res.statusCode, type: res.headers['content-type'] ?? '', body: Buffer.concat(parts) });
      res.on('data', (d) => parts.push(d));
      res.on('end', done);
      res.on('error', done);
      if (maxMs) setTimeout(() => (req.destroy(), done()), maxMs);
    });
    req.on('error', (e) => (maxMs ? undefined : reject(e)));
    req.setTimeout(15000, () => req.destroy(new Error(`timeout on ${path}`)));
  });
}

const ourPrograms = () => {
  const r = spawnSync('bpftool', ['prog', 'list'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return null;
  return r.stdout.split('\n').filter((l) => /name (on_kmem_cache_|on_kmalloc|on_kfree|on_percpu_)/.test(l));
};

try {
  await group('libraries', () => {
    const bad = [];
    const re = spawnSync('readelf', ['-d', bin], { encoding: 'utf8' });
    if (re.error) throw new Skip('readelf is not installed (binutils)');
    const needed = [...re.stdout.matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
    const forbidden = needed.filter((l) => /^lib(bpf|elf|z|microhttpd|gnutls)\./.test(l));
    if (forbidden.length) bad.push(`needs ${forbidden.join(', ')}`);
    const ldd = spawnSync('ldd', [bin], { encoding: 'utf8' });
    const lddText = `${ldd.stdout}${ldd.stderr}`;
    if (/lib(bpf|elf|z|microhttpd)\.so/.test(lddText)) bad.push(`ldd lists ${lddText.trim()}`);
    console.log(`  ${basename(bin)}: ${/no dynamic section/i.test(`${re.stdout}${re.stderr}`) ? 'fully static (no dynamic section)' : `needs ${needed.join(', ') || 'nothing'}`}`);
    return bad;
  });

  await group('site', async () => {
    const bad = [];
    if (readdirSync(dir).join() !== 'slablab') bad.push(`the directory holds ${readdirSync(dir).join(', ')}`);
    const s = await serve();
    if (!/from inside this binary/.test(s.banner)) bad.push(`the banner does not say the site is inside the binary: ${s.banner.trim()}`);
    const q = `token=${s.token}`;
    const index = await get(s.port, `/?mode=live&${q}`);
    if (index.status !== 200 || !index.body.equals(readFileSync(join(site, 'index.html')))) bad.push(`/ answered ${index.status}, not index.html's bytes`);
    if (!index.type.startsWith('text/html')) bad.push(`/ is ${index.type}`);
    // A hashed asset of each kind the page loads, with the type the browser needs (a module script, a stylesheet, WebAssembly).
    const assets = readdirSync(join(site, 'assets'));
    const types = { js: 'text/javascript', css: 'text/css', wasm: 'application/wasm' };
    for (const [ext, type] of Object.entries(types)) {
      const name = assets.find((a) => a.endsWith(`.${ext}`) && /-[A-Za-z0-9_-]{6,}\./.test(a));
      if (!name) {
        bad.push(`the site has no hashed .${ext} asset`);
        continue;
      }
      const r = await get(s.port, `/assets/${name}?${q}`);
      if (r.status !== 200 || !r.body.equals(readFileSync(join(site, 'assets', name)))) bad.push(`/assets/${name} answered ${r.status}, not the file's ${r.body.length} bytes`);
      if (!r.type.startsWith(type)) bad.push(`/assets/${name} is ${r.type}, not ${type}`);
    }
    const missing = await get(s.port, `/assets/not-in-the-site.js?${q}`);
    if (missing.status !== 404) bad.push(`a path not in the site answered ${missing.status}`);
    const exited = new Promise((r) => s.child.on('exit', r));
    s.child.kill('SIGTERM');
    await exited;
    return bad;
  });

  await group('stream', async () => {
    if (process.getuid() !== 0) throw new Skip('needs root (BPF)');
    if (ourPrograms() === null) throw new Skip('bpftool is not installed: cannot see which programs are loaded');
    const bad = [];
    const before = ourPrograms();
    if (before.length) throw new Skip(`another slablab serve has its programs loaded (${before.length}): cannot tell ours apart`);
    const s = await serve();
    const live = await get(s.port, `/api/live?token=${s.token}`, 2500);
    let off = 0;
    let events = 0;
    while (off + 8 <= live.body.length) {
      const n = live.body.readUInt32LE(off);
      if (off + 8 + n > live.body.length) break;
      if (live.body[off + 4] === 4) events += live.body.readUInt32LE(off + 8);
      off += 8 + n;
    }
    if (events === 0) {
      if (/BTF|CAP_BPF|permitted|not supported/.test(s.stderr())) throw new Skip(`this kernel cannot stream events: ${s.stderr().trim().split('\n')[0]}`);
      bad.push(`no events in 2.5 s (${live.body.length} bytes; ${s.stderr().trim()})`);
    }
    const exited = new Promise((r) => s.child.on('exit', (code) => r(code)));
    s.child.kill('SIGTERM');
    const code = await exited;
    if (code !== 0) bad.push(`SIGTERM: exit ${code}`);
    let left = ourPrograms();
    for (let i = 0; i < 50 && left.length; i++) {
      await sleep(100);
      left = ourPrograms();
    }
    if (left.length) bad.push(`programs left loaded: ${left.join(' | ')}`);
    console.log(`  ${events} events in 2.5 s; programs loaded after SIGTERM: ${left.length}`);
    return bad;
  });
} finally {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
