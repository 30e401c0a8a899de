// live_own_measure.mjs - what the event program leaves out as the server's own, measured (docs/live.md,
// "What is left out as the server's own"): for each binary, `slablab serve` streams every cache while
// a shell runs N /bin/true; printed per run: events streamed, server_own (when the server reports it),
// and of the objects allocated while the loop ran, how many the stream never saw freed within 3 s
// after it (all caches but maple_node, whose objects come back through kfree_rcu batches later),
// and those of the caches whose frees run in RCU callbacks or a context switch (task_struct, cred,
// pid, mm_struct, signal_cache).  Root and BPF needed.
//
//   node live_own_measure.mjs N ROUNDS BINARY [BINARY...]     (rounds alternate between the binaries)
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [nArg, roundsArg, ...bins] = process.argv.slice(2);
if (!bins.length) {
  console.error('usage: node live_own_measure.mjs N ROUNDS BINARY [BINARY...]');
  process.exit(2);
}
const N = Number(nArg);
const site = mkdtempSync(join(tmpdir(), 'slablab-own-measure-'));
mkdirSync(site, { recursive: true });
writeFileSync(join(site, 'index.html'), '<!doctype html><title>lab</title>');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const KERNEL_FREED = new Set(['task_struct', 'cred', 'pid', 'mm_struct', 'signal_cache']);

async function run(bin) {
  const child = spawn(bin, ['serve', '--port', '0', '--site', site, '--exit-after', '60', '--snapshot-interval', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const { port, token } = await new Promise((resolve, reject) => {
    child.stdout.on('data', (d) => {
      out += d;
      const m = /:(\d+)\/\?mode=live&token=([0-9a-f]+)/.exec(out);
      if (m) resolve({ port: Number(m[1]), token: m[2] });
    });
    child.on('exit', (c) => reject(new Error(`serve exited with ${c}`)));
  });
  const names = new Map();
  const live = new Map(); // cache -> Set of objects allocated while the loop ran, not yet freed
  let allocated = 0, kernelAllocated = 0, status = null, events = 0, phase = 0;
  await new Promise((resolve) => {
    let buf = Buffer.alloc(0);
    const req = http.request({ host: '127.0.0.1', port, path: `/api/live?token=${token}`, headers: { Host: `127.0.0.1:${port}` } }, (res) => {
      res.on('data', (c) => {
        buf = Buffer.concat([buf, c]);
        while (buf.length >= 8) {
          const len = buf.readUInt32LE(0), type = buf[4];
          if (buf.length < 8 + len) break;
          const p = buf.subarray(8, 8 + len);
          buf = buf.subarray(8 + len);
          if (type === 2) names.set(p.readUInt16LE(0), p.subarray(24).toString('utf8'));
          else if (type === 5) status = JSON.parse(p.toString('utf8'));
          else if (type === 4) {
            const n = p.readUInt32LE(0);
            for (let i = 0; i < n; i++) {
              const o = 24 + i * 24, kind = p[o], name = names.get(p.readUInt16LE(o + 2)) ?? '', obj = p.readBigUInt64LE(o + 16);
              events++;
              if (name === 'maple_node') continue;
              if ((kind === 1 || kind === 3) && phase === 1) {
                if (!live.has(name)) live.set(name, new Set());
                live.get(name).add(obj);
                allocated++;
                if (KERNEL_FREED.has(name)) kernelAllocated++;
              } else if ((kind === 2 || kind === 4) && phase >= 1) live.get(name)?.delete(obj);
            }
          }
        }
      });
      res.on('end', resolve);
    });
    req.on('error', resolve);
    req.end();
    (async () => {
      await sleep(1500);
      phase = 1;
      await new Promise((r) => spawn('sh', ['-c', `i=0; while [ $i -lt ${N} ]; do /bin/true; i=$((i+1)); done`]).on('exit', r));
      phase = 2;
      await sleep(3000);
      req.destroy();
      resolve();
    })();
  });
  child.kill('SIGTERM');
  await new Promise((r) => child.on('exit', r));
  let unmatched = 0, kernelUnmatched = 0;
  for (const [name, set] of live) {
    unmatched += set.size;
    if (KERNEL_FREED.has(name)) kernelUnmatched += set.size;
  }
  const pct = (a, b) => (b ? ((100 * a) / b).toFixed(2) : '-');
  console.log(`| ${bin} | ${events} | ${status?.server_own ?? '(not reported)'} | ${unmatched} of ${allocated} (${pct(unmatched, allocated)} %) | ${kernelUnmatched} of ${kernelAllocated} (${pct(kernelUnmatched, kernelAllocated)} %) | ${(status?.kernel_lost ?? 0) + (status?.server_dropped ?? 0)} |`);
}

console.log('| binary | events streamed | server_own | unmatched allocations | of them task_struct, cred, pid, mm_struct, signal_cache | lost |');
console.log('|---|---|---|---|---|---|');
for (let r = 0; r < Number(roundsArg); r++) for (const b of bins) await run(b);
rmSync(site, { recursive: true, force: true });
