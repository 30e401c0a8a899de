// replay-api.test.ts - the trace replay bindings through the Node build of the core: the
// .slabcap recorded on Linux 6.18 fed in chunks as the worker will feed it, the result
// document, op records against the accounting, pausing and stepping, a model snapshot read
// by the SLUB view's decoder, a pointer lookup, a percpu chunk map, the Perfetto export
// parsed back, and the refusals a user sees for bad files.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeSnapshot, ObjState } from '../slub/snapshot';
import { loadNodeCore } from '../test/node-core';
import {
  decodeOps,
  exportPerfetto,
  kernelOptionError,
  OpFlag,
  OpKind,
  opLayout,
  ReplayError,
  type ReplayModule,
  type ReplayOp,
  ReplaySession,
} from './replay-api';

const fixtures = fileURLToPath(new URL('../../wasm-core/tests/fixtures/replay/', import.meta.url));
const capture = readFileSync(`${fixtures}capture-6.18.slabcap.gz`);

let m: ReplayModule;
beforeAll(async () => {
  m = await loadNodeCore<ReplayModule>();
});

/** Feeds the whole file in 64 KiB chunks, draining op records after each, as the worker does. */
function replay(bytes: Uint8Array, opts = {}) {
  const s = ReplaySession.create(m, { collectOps: true, ...opts });
  const batches: ArrayBuffer[] = [];
  for (let off = 0; off < bytes.length; off += 65536) {
    const r = s.feed(bytes.subarray(off, off + 65536));
    batches.push(s.drainOpBytes());
    if (r.status !== 'ok') return { s, batches, status: r.status };
  }
  const status = s.finish();
  batches.push(s.drainOpBytes());
  return { s, batches, status };
}

describe('replay bindings', () => {
  it('replays two kernel versions side by side: the per-CPU slab of 6.17 and the sheaves of 7.0', () => {
    const { s, status } = replay(capture, { kernel: '6.17,7.0' });
    expect(status).toBe('ok');
    const r = s.result();
    expect(r.models.map((x) => [x.kernel, x.slub_kernel, x.errors])).toEqual([
      ['6.17', '6.17', 0],
      ['7.0', '7.0', 0],
    ]);
    expect(r.models[0]?.sheaves.caches).toBe(0);
    expect(r.models[1]?.sheaves.caches).toBe(r.models[1]?.caches_modelled);
    expect(r.models[1]?.sheaves.sheaf_refill).toBeGreaterThan(0);
    s.dispose();
  });

  it('replays the 6.18 capture with no model error and ops that add up', () => {
    const { s, batches, status } = replay(capture);
    expect(status).toBe('ok');
    const r = s.result();
    expect(r.status).toBe('ok');
    expect(r.model.errors).toBe(0);
    expect(r.model.kernel).toBe('6.18');
    // The capture's 6.18 rules: sheaves for the two caches that opt in.
    expect(r.model.kernel_switch).toBe(true);
    expect(r.model.slub_kernel).toBe('6.18');
    expect(r.model.sheaves.caches).toBe(2);
    expect(r.caches.filter((c) => c.modelled && c.sheaf_capacity > 0).map((c) => c.name).sort()).toEqual(['maple_node', 'vm_area_struct']);
    expect(r.capture?.cpus_possible).toBe(2);
    expect(r.capture?.preemption).toBe('preempt'); // uname -v: #1 SMP PREEMPT_DYNAMIC
    expect(r.events.lines).toBe(r.events.parsed + r.events.skipped);
    const ops: ReplayOp[] = batches.flatMap((b) => decodeOps(b, s.layout));
    const count = (k: number) => ops.filter((o) => o.kind === k).length;
    const kinds = r.events.by_kind;
    // Every allocation with a pointer and a size is an ALLOC op; every free of a non-NULL pointer is a FREE op.
    expect(count(OpKind.alloc)).toBe((kinds.kmalloc ?? 0) + (kinds.kmem_cache_alloc ?? 0) - r.pairs.alloc_failed - r.pairs.zero_size);
    expect(count(OpKind.free)).toBe(r.pairs.matched);
    expect(count(OpKind.freeUnknown)).toBe(r.pairs.freed_unknown);
    // Every such allocation has its gfp context (the capture prints gfp_flags= by name): GFP_ATOMIC ones among them.
    const ctx = r.alloc_contexts;
    expect(ctx.blocking + ctx.nonblocking + ctx.no_reclaim + ctx.unknown).toBe(count(OpKind.alloc));
    expect(ctx.unknown).toBe(0);
    expect(ctx.nonblocking).toBeGreaterThan(0);
    expect(count(OpKind.pcpuAlloc)).toBe(r.percpu.allocs);
    const remote = ops.filter((o) => o.kind === OpKind.free && o.flags & OpFlag.crossCpu);
    expect(remote.length).toBe(r.caches.reduce((n, c) => n + c.cross_cpu_frees, 0));
    // The last op of a cache carries its live count at the end.
    const dentry = r.caches.find((c) => c.name === 'dentry')!;
    const lastDentry = ops.filter((o) => o.cache === dentry.index && o.kind <= OpKind.free).at(-1)!;
    expect(lastDentry.live).toBe(dentry.live_at_end);
    expect(lastDentry.slabs).toBe(dentry.slabs_at_end);
    const p = s.progress();
    expect(p.finished).toBe(true);
    expect(p.events).toBe(r.events.parsed);
    expect(p.eventsPerS).toBeGreaterThan(0);
    s.dispose();
  });

  it('maps a live pointer to its model object and snapshots that cache', () => {
    const { s, batches } = replay(capture);
    const r = s.result();
    const ops = batches.flatMap((b) => decodeOps(b, s.layout));
    const freed = new Set(ops.filter((o) => o.kind === OpKind.free).map((o) => o.ptr));
    const live = ops.find((o) => o.kind === OpKind.alloc && !freed.has(o.ptr) && o.objPfn !== 0xffffffff)!;
    const hit = s.lookup(live.ptr);
    expect(hit).not.toBeNull();
    expect(hit!.cache).toBe(live.cache);
    const snap = s.cacheSnapshot(live.cache);
    expect(snap).not.toBeNull();
    // The SLUB view's own decoder reads it: the slabs the result counts, each with its own
    // object count (a fallback slab holds fewer), and the looked-up object allocated there.
    const d = decodeSnapshot(snap!);
    const cache = r.caches.find((c) => c.index === live.cache)!;
    expect(d.nslabs).toBe(cache.slabs_at_end);
    expect(d.geometry.objects).toBe(cache.geometry!.objs_per_slab);
    expect(d.slab.objects.reduce((a, n) => a + n, 0)).toBe(d.node.totalObjects);
    const slab = d.slab.pfn.indexOf(hit!.pfn);
    expect(slab).toBeGreaterThanOrEqual(0);
    expect(hit!.index).toBeLessThan(d.slab.objects[slab]!);
    expect(d.obj.state[d.slab.firstObj[slab]! + hit!.index]).toBe(ObjState.ALLOCATED);
    expect(s.lookup(0x1234n)).toBeNull();
    const large = r.caches.find((c) => !c.modelled);
    if (large) expect(s.cacheSnapshot(large.index)).toBeNull();
    // The percpu chunk the trace used: its areas in the model's granule map.
    const chunk = r.percpu.chunks.findIndex((c) => c.live > 0);
    const granules = s.chunkGranules(chunk, r.percpu.unit_size!);
    expect(granules).not.toBeNull();
    expect(granules!.filter((g) => g === 1).length).toBe(r.percpu.chunks[chunk]!.live);
    s.dispose();
  });

  it('pauses at the event limit and steps one event at a time', () => {
    const whole = replay(capture);
    const want = whole.s.result();
    whole.s.dispose();
    const s = ReplaySession.create(m);
    s.setLimit(100);
    let off = 0;
    let limit = 100;
    let pauses = 0;
    while (off < capture.length) {
      const r = s.feed(capture.subarray(off, off + 65536));
      off += r.consumed;
      if (r.status === 'paused') {
        pauses++;
        expect(s.progress().events).toBe(limit);
        limit += pauses < 5 ? 1 : 10000;
        s.setLimit(limit);
      } else {
        expect(r.status).toBe('ok');
      }
    }
    s.setLimit(Infinity);
    expect(s.finish()).toBe('ok');
    expect(pauses).toBeGreaterThan(5);
    const got = s.result();
    expect(got.pairs).toEqual(want.pairs);
    expect(got.caches.map((c) => [c.name, c.allocs, c.slabs_at_end])).toEqual(want.caches.map((c) => [c.name, c.allocs, c.slabs_at_end]));
    s.dispose();
  });

  it('exports op records to a Perfetto trace that parses back', () => {
    const { s, batches } = replay(capture);
    const r = s.result();
    const names: string[] = [];
    for (const c of r.caches) names[c.index] = c.name;
    const json = exportPerfetto(m, batches, names, 0);
    const doc = JSON.parse(json) as { traceEvents: { ph: string; name: string; tid?: number; args?: Record<string, number> }[] };
    const ops = batches.flatMap((b) => decodeOps(b, s.layout));
    expect(doc.traceEvents.filter((e) => e.ph === 'X')).toHaveLength(ops.length);
    const flows = doc.traceEvents.filter((e) => e.ph === 's').length;
    expect(flows).toBe(ops.filter((o) => o.kind === OpKind.free && o.allocCpu !== o.cpu).length);
    const dentry = r.caches.find((c) => c.name === 'dentry')!;
    const last = doc.traceEvents.filter((e) => e.ph === 'C' && e.name === 'dentry').at(-1);
    expect(last?.args?.live).toBe(dentry.live_at_end);
    expect(opLayout(m).size).toBe(64);
    s.dispose();
  });

  it('refuses bad files and options with the message a user needs', () => {
    const dat = readFileSync(`${fixtures}trace-cmd-6.18.dat.head`);
    const a = replay(dat);
    expect(a.s.finish()).toBe('refused');
    expect(a.s.error()).toContain('run `trace-cmd report -i FILE > trace.txt` first');
    expect(a.s.result().status).toBe('refused');
    a.s.dispose();
    const b = replay(capture.subarray(0, 200000));
    expect(b.status).toBe('refused');
    expect(b.s.error()).toMatch(/^truncated gzip/);
    b.s.dispose();
    const c = replay(new TextEncoder().encode('this is\nnot a trace\n'));
    expect(c.status).toBe('refused');
    expect(c.s.error()).toContain('not an ftrace trace');
    c.s.dispose();
    // The core's one version reader takes 6.18.2 as 6.18; text that is no version is refused with the forms it takes.
    expect(() => ReplaySession.create(m, { kernel: '6.18.2' }).dispose()).not.toThrow();
    expect(() => ReplaySession.create(m, { kernel: 'six' })).toThrow(ReplayError);
    expect(() => ReplaySession.create(m, { kernel: 'six' })).toThrow(/--kernel takes one version or two/);
    expect(kernelOptionError(m, '4.4,6.18')).toBeNull();
    expect(kernelOptionError(m, '4.4,5.4,6.18')).toContain('at most two');
    const d = ReplaySession.create(m);
    d.feed(capture.subarray(0, 1000));
    d.cancel();
    expect(d.feed(capture.subarray(1000, 2000)).status).toBe('refused');
    expect(d.error()).toBe('cancelled');
    d.dispose();
    expect(() => d.progress()).toThrow(/disposed/);
  });
});
