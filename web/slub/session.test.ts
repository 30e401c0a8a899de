// The snapshot decoder, the event merge, the stops and the engine's replay
// of SLUB sessions (the model adapter, worker.ts), against the real core
// (the slablab-node build of the same C sources).
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind } from '../core/events.generated';
import { BadRequest } from '../core/requests';
import { replaySessions, type Session } from '../lab/session';
import { computeStops, mergeRings } from '../lab/stops';
import type { SlubLoadExtra, SlubWorldInfo, WorldConfig } from './protocol';
import { misfit, SCENARIOS, scenarioConfig } from './scenarios';
import { detachedGroups, PreemptPoint, type AnyRef, type Script } from './script';
import { loadNodeCore } from '../test/node-core';
import { parseKernelVersion, SlubApi, type SlubModule } from './slub-api';
import { cpuPartialSlabs, decodeSnapshot, ObjState, SlabList, SnapshotError, stat } from './snapshot';
import { parseParams } from '../lab/params';
import { alignStops } from '../lab/stops';
import { labHandlers } from '../lab/worker-host';
import { loadNodeBridgeCore } from '../test/node-core';
import { kernelOf, SLUB_PARAMS, slubStepView } from './view';
import { slubModel, slubSessions } from './worker';

let api: SlubApi;
let open: (world: unknown, script: unknown) => Session;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
  open = replaySessions(slubSessions(api));
});

/** Opens and loads a session, as the bridge's `load` does. */
function load(world: WorldConfig, script: Script<AnyRef>) {
  const session = open(world, script);
  return { session, r: session.load() };
}

const config: WorldConfig = { cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 };

describe('snapshot decoder', () => {
  it('decodes a fresh world and one with objects on every list', () => {
    const w = api.createWorld(config);
    try {
      const empty = decodeSnapshot(api.snapshot(w));
      expect(empty.ncpus).toBe(2);
      expect(empty.nslabs).toBe(0);
      expect(empty.geometry.objectSize).toBe(512);
      expect(empty.geometry.objects).toBe(api.geometry(512, 2).objects);
      expect(empty.cpus.map((c) => c.tid)).toEqual([0, 1]);

      const n = empty.geometry.objects;
      // CPU 0 fills one slab and starts a second; CPU 1 frees one object of the first (remote free).
      const script: Script = { ops: Array.from({ length: n + 2 }, () => ({ kind: 'alloc' as const, cpu: 0 })), irqs: [] };
      api.run(w, script, script.ops.length, 0);
      let s = decodeSnapshot(api.snapshot(w));
      expect(s.nslabs).toBe(2);
      const cpuSlab = s.cpus[0]?.slabPfn;
      const full = [0, 1].find((i) => s.slab.pfn[i] !== cpuSlab) ?? -1;
      expect(s.slab.list[full]).toBe(SlabList.NONE);
      expect(s.slab.inuse[full]).toBe(n);
      const pfn = s.slab.pfn[full] ?? 0;
      expect(api.m._sl_api_slub_free(w, 1, pfn, 3)).toBe(0);
      s = decodeSnapshot(api.snapshot(w));
      // 6.8+: a full slab's first free puts it on the freeing CPU's partial list.
      expect(s.slab.list[full]).toBe(SlabList.CPU_PARTIAL);
      expect(s.slab.cpu[full]).toBe(1);
      expect(cpuPartialSlabs(s, 1)).toEqual([full]);
      expect(s.obj.state[(s.slab.firstObj[full] ?? 0) + 3]).toBe(ObjState.SLAB_FREE);
      expect(s.obj.freeCpu[(s.slab.firstObj[full] ?? 0) + 3]).toBe(1);
      expect(s.cpus[0]?.freelistLength).toBe(n - 2);
      expect(stat(s, 'ALLOC_FASTPATH', 0)).toBe(n);
      expect(stat(s, 'FREE_SLOWPATH')).toBe(1);
      // CPU 0's freelist is a chain through its CPU slab.
      const cs = [0, 1].find((i) => s.slab.pfn[i] === cpuSlab) ?? -1;
      let at = s.cpus[0]?.freelistIndex ?? 0;
      let len = 0;
      while (at !== 0xffffffff && len < 100) {
        expect(s.obj.state[(s.slab.firstObj[cs] ?? 0) + at]).toBe(ObjState.CPU_FREE);
        at = s.obj.next[(s.slab.firstObj[cs] ?? 0) + at] ?? 0xffffffff;
        len++;
      }
      expect(len).toBe(n - 2);
    } finally {
      api.destroyWorld(w);
    }
  });

  it('refuses bytes that are not a snapshot', () => {
    expect(() => decodeSnapshot(new Uint8Array(10))).toThrow(SnapshotError);
    const w = api.createWorld(config);
    const bytes = api.snapshot(w);
    api.destroyWorld(w);
    const bad = bytes.slice();
    bad[0] = 0;
    expect(() => decodeSnapshot(bad)).toThrow(/magic/);
    expect(() => decodeSnapshot(bytes.subarray(0, bytes.byteLength - 8))).toThrow(/past the end|says/);
    // A slab claiming more objects than a slab has records (the drawing indexes records by the slab's own count).
    const w2 = api.createWorld(config);
    api.m._sl_api_slub_alloc(w2, 0);
    const one = api.snapshot(w2);
    api.destroyWorld(w2);
    const v = new DataView(one.buffer, one.byteOffset);
    const slabAt = v.getUint32(44, true);
    expect(decodeSnapshot(one).nslabs).toBe(1);
    v.setUint16(slabAt + 8, decodeSnapshot(one).geometry.objects + 1, true);
    expect(() => decodeSnapshot(one)).toThrow(/has 17 objects, more than the 16 records per slab/);
  });
});

describe('events and stops', () => {
  it('merges the rings of ops on several CPUs into script order', () => {
    const w = api.createWorld(config);
    const script: Script = {
      ops: [{ kind: 'alloc', cpu: 1 }, { kind: 'alloc', cpu: 0 }, { kind: 'alloc', cpu: 1 }],
      irqs: [],
    };
    api.run(w, script, 3, 0);
    const { events, topOps } = mergeRings(api.drain(w, 2));
    api.destroyWorld(w);
    const begins = decodeEvents(events).filter((e) => e.kind === EventKind.OP_BEGIN);
    expect(begins.map((e) => e.cpu)).toEqual([1, 0, 1]);
    expect(topOps).toEqual(begins.map((e) => e.op));
    const stops = computeStops(events);
    // Every alloc reaches one preemption point (fast path) or none (slow path), then ends.
    expect(stops.filter((s) => s.micro === 0).map((s) => s.ops)).toEqual([0, 1, 2, 3]);
  });
});

describe('session', () => {
  it('replays to every stop, and an interrupted plain fast path is caught by the checker', () => {
    const script: Script<AnyRef> = {
      ops: [{ kind: 'alloc', cpu: 0 }, { kind: 'alloc', cpu: 0 }, { kind: 'alloc', cpu: 0 }],
      irqs: [{ atOp: 2, point: PreemptPoint.ALLOC_BEFORE_CAS, nth: 0, handler: { kind: 'alloc' } }],
    };
    const { session, r: good } = load(config, script);
    const last = good.stops.length - 1;
    expect(session.at(last).check?.rc).toBe(0);
    // cmpxchg: the handler changed the tid, the interrupted alloc retried.
    expect(decodeEvents(good.events).filter((e) => e.kind === EventKind.SLUB_CPU_CAS_FAIL)).toHaveLength(1);
    for (let i = 0; i <= last; i++) expect(() => decodeSnapshot(session.at(i).snapshot)).not.toThrow();
    session.dispose();

    const plain = load({ ...config, fastpath: 'plain' }, script);
    const check = plain.session.at(plain.r.stops.length - 1).check;
    expect(check?.rc).toBeLessThan(0);
    expect(check?.message).not.toBe('');
    plain.session.dispose();
  });

  it('gives the same state at every stop going forward (from its kept world), backward and from a fresh session', () => {
    const sc = SCENARIOS.find((x) => x.id === 'slow-path');
    if (!sc) throw new Error('no slow-path scenario');
    const cfg = scenarioConfig(sc, 2, 'cmpxchg', 'detached');
    const story = sc.build({ cpus: 2, objects: api.geometry(cfg.objectSize, 2).objects });
    const { session, r } = load(cfg, story.script);
    const bytes = (s: Session, i: number) => Array.from(new Uint8Array(s.at(i).snapshot));
    const forward = r.stops.map((_, i) => bytes(session, i));
    const backward = r.stops.map((_, i) => r.stops.length - 1 - i).map((i) => bytes(session, i)).reverse();
    expect(backward).toEqual(forward);
    const fresh = load(cfg, story.script).session;
    for (const i of [r.stops.length - 1, 0, 7, 3]) expect(bytes(fresh, i)).toEqual(forward[i]);
    session.dispose();
    fresh.dispose();
  });

  it('resolves symbolic objects and replays the detached freelist groups the C side builds', () => {
    const n = api.geometry(512, 2).objects;
    const script: Script<AnyRef> = {
      ops: [
        { kind: 'allocBulk', cpu: 0, count: n + 4 },
        {
          kind: 'freeBulk',
          cpu: 0,
          refs: [0, n, 1, n + 1, 2, 3, n + 2, 4, 5, 6, 7].map((k) => ({ allocOf: 0, nth: k })),
        },
      ],
      irqs: [],
    };
    const { r } = load(config, script);
    const p = (r.script as Script).ops[1]?.refs ?? [];
    const groups = detachedGroups(p);
    const built = decodeEvents(r.events).filter((e) => e.kind === EventKind.SLUB_DETACHED_FREELIST);
    expect(built.map((e) => [e.slab, e.obj, e.arg0])).toEqual(groups.map((g) => [g.chain[0]?.pfn, g.chain[0]?.index, g.chain.length]));
    // One cmpxchg per group against one per object for the generic loop.
    expect(r.ops[1]?.result).toBe(groups.length);
    expect((r.extra as SlubLoadExtra).otherBulkForm.results[1]).toBe(p.length);
  });

  it('plays every scenario to its end on 2, 4 and 8 CPUs with a clean checker', () => {
    for (const cpus of [2, 4, 8])
      for (const sc of SCENARIOS.filter((x) => !misfit(x, parseKernelVersion('6.17')))) {
        const cfg = scenarioConfig(sc, cpus, sc.defaultFastpath, sc.defaultBulk);
        const objects = api.geometry(cfg.objectSize, cpus).objects;
        const story = sc.build({ cpus, objects });
        expect(story.captions).toHaveLength(story.script.ops.length);
        const { session, r } = load(cfg, story.script);
        const end = session.at(r.stops.length - 1);
        expect(end.check?.rc, `${sc.id} on ${cpus} CPUs: ${end.check?.message}`).toBe(0);
        expect(r.ops.every((o) => o.result >= 0), `${sc.id} on ${cpus} CPUs`).toBe(true);
        session.dispose();
      }
  });

  it('refuses a bad world or script with what is wrong', () => {
    const bad = (world: unknown, script: unknown) => {
      try {
        open(world, script).load();
      } catch (e) {
        expect(e).toBeInstanceOf(BadRequest);
        return (e as Error).message;
      }
      return 'accepted';
    };
    const ok: Script<AnyRef> = { ops: [{ kind: 'alloc', cpu: 0 }], irqs: [] };
    expect(bad({ ...config, cpus: 9 }, ok)).toBe('cpus must be a whole number from 1 to 8, got 9');
    expect(bad({ ...config, fastpath: 'fast' }, ok)).toBe('fastpath must be one of cmpxchg, locked, plain, rt, got fast');
    expect(bad({ ...config, bulkFree: 'fallback' }, ok)).toBe('bulkFree must be one of detached, generic, got fallback');
    expect(bad({ ...config, kernel: { nrCpus: 1 } }, ok)).toBe("kernel.nrCpus (CONFIG_NR_CPUS, at least the world's 2 CPUs) must be a whole number from 2 to 8192, got 1");
    expect(bad({ ...config, kernel: { minOrder: 11 } }, ok)).toBe('kernel.minOrder (slub_min_order) must be a whole number from 0 to 10, got 11');
    expect(bad({ ...config, kernel: { noPreempt: 1 } }, ok)).toBe('kernel.noPreempt must be true or false, got 1');
    expect(bad(null, ok)).toBe('world must be an object, got null');
    expect(bad(config, { ops: [{ kind: 'alloc', cpu: 2 }], irqs: [] })).toBe("op 1's cpu must be a whole number from 0 to 1, got 2");
    expect(bad(config, { ops: [{ kind: 'steal', cpu: 0 }], irqs: [] })).toMatch(/op 1's kind must be one of alloc, free/);
    expect(bad(config, { ops: [{ kind: 'free', cpu: 0 }], irqs: [] })).toBe('op 1 must name one object in refs');
    expect(bad(config, { ops: [{ kind: 'free', cpu: 0, refs: [{ allocOf: 0, nth: 0 }] }], irqs: [] })).toBe('op 1 frees an object of op 1, which comes later');
    expect(bad(config, { ops: [{ kind: 'alloc', cpu: 0 }, { kind: 'free', cpu: 0, refs: [{ allocOf: 0, nth: 1 }] }], irqs: [] })).toBe(
      'op 2 frees object 2 of op 1, which has no such object',
    );
    expect(bad(config, { ops: [], irqs: [{ atOp: 0, point: 1, nth: 0, handler: { kind: 'alloc' } }] })).toBe('script has interrupts but no operation to interrupt');
    expect(bad(config, { ops: [{ kind: 'alloc', cpu: 0 }], irqs: [{ atOp: 1, point: 1, nth: 0, handler: { kind: 'alloc' } }] })).toBe(
      "interrupt 1's atOp must be a whole number from 0 to 0, got 1",
    );
    expect(bad(config, { ops: 'a0' })).toBe('script must hold an ops and an irqs array');
    expect(bad(config, ok)).toBe('accepted');
  });
});

describe('tuning operations', () => {
  /** The state at every stop, as bytes, visited forward or backward (each Back replays from a fresh world). */
  const states = (session: Session, n: number, backward = false) => {
    const order = Array.from({ length: n }, (_, i) => (backward ? n - 1 - i : i));
    const got = order.map((i) => Array.from(new Uint8Array(session.at(i).snapshot)));
    return backward ? got.reverse() : got;
  };

  it('run as steps of their own: shrink discards the empty slab the node list kept', () => {
    // CPU 0 takes one object of a new slab, is flushed (the slab goes to the node list), frees the object:
    // the slab is empty but stays (fewer than min_partial on the list); shrink discards it.
    const script: Script<AnyRef> = {
      ops: [{ kind: 'alloc', cpu: 0 }, { kind: 'flush', cpu: 0 }, { kind: 'free', cpu: 0, refs: [{ allocOf: 0, nth: 0 }] }, { kind: 'shrink', cpu: 0 }, { kind: 'alloc', cpu: 1 }],
      irqs: [],
    };
    const { session, r } = load(config, script);
    const ends = r.stops.filter((st) => st.micro === 0);
    expect(ends.map((st) => st.ops)).toEqual([0, 1, 2, 3, 4, 5]);
    // The shrink has an operation number of its own (its SLUB_TUNE's), named by the timeline's OP_BEGIN.
    const events = decodeEvents(r.events);
    const tune = events.filter((e) => e.kind === EventKind.SLUB_TUNE);
    expect(tune.map((e) => [e.arg0, e.arg1])).toEqual([[2, 1]]); // shrink, one slab discarded
    expect(r.ops[3]?.opNum).toBe(tune[0]?.op);
    expect(r.ops[3]?.result).toBe(0); // no slab left
    expect(events.filter((e) => e.kind === EventKind.OP_BEGIN)).toHaveLength(5);
    const at = (op: number) => decodeSnapshot(session.at(r.stops.findIndex((st) => st.micro === 0 && st.ops === op)).snapshot);
    expect(at(3).nslabs).toBe(1);
    expect(at(3).node.nrPartial).toBe(1);
    expect(at(4).nslabs).toBe(0);
    expect(at(5).nslabs).toBe(1);
    // Replayed backward and from a fresh session, every stop is the same state.
    const forward = states(session, r.stops.length);
    expect(states(session, r.stops.length, true)).toEqual(forward);
    const fresh = load(config, script).session;
    expect(states(fresh, r.stops.length, true)).toEqual(forward);
    session.dispose();
    fresh.dispose();
  });

  it('the page allocator running short makes new slabs fall back, min_partial and cpu_partial are written, and it all replays', () => {
    const g = api.geometry(512, 2);
    const { order, objects, fallbackOrder: fbOrder, fallbackObjects: fbObjects } = g;
    expect(fbOrder).toBeLessThan(order);
    const script: Script<AnyRef> = {
      ops: [
        { kind: 'zoneShort', cpu: 0, value: 1 },
        { kind: 'alloc', cpu: 0 },
        { kind: 'minPartial', cpu: 0, value: 0 },
        { kind: 'cpuPartial', cpu: 0, value: 0 },
        { kind: 'zoneShort', cpu: 0, value: 0 },
        { kind: 'allocBulk', cpu: 1, count: objects },
        { kind: 'free', cpu: 1, refs: [{ allocOf: 1, nth: 0 }] },
      ],
      irqs: [],
    };
    const { session, r } = load(config, script);
    expect(r.ops.map((o) => o.result >= 0)).toEqual(script.ops.map(() => true));
    expect(r.ops[0]?.result).toBeGreaterThan(0); // pages held
    expect(r.ops[4]?.result).toBe(0); // all given back
    // Every step has its own operation number, so the timeline names each one (the untraced page allocator's too).
    expect(new Set(r.ops.map((o) => o.opNum)).size).toBe(script.ops.length);
    const events = decodeEvents(r.events);
    const fb = events.filter((e) => e.kind === EventKind.SLUB_ORDER_FALLBACK);
    expect(fb.map((e) => [e.arg0, e.arg1, e.arg2])).toEqual([[order, fbOrder, fbObjects]]);
    const end = decodeSnapshot(session.at(r.stops.length - 1).snapshot);
    const small = slabIndexOfPfn(end, fb[0]?.slab ?? -1);
    expect(end.slab.order[small]).toBe(fbOrder);
    expect(end.slab.objects[small]).toBe(fbObjects);
    expect(end.obj.state[(end.slab.firstObj[small] ?? 0) + fbObjects]).toBe(ObjState.NO_OBJECT);
    // After the pages came back, CPU 1's new slab has the cache's order.
    const big = Array.from(end.slab.pfn).findIndex((_, i) => i !== small);
    expect([end.slab.order[big], end.slab.objects[big]]).toEqual([order, objects]);
    expect(stat(end, 'ORDER_FALLBACK')).toBe(1);
    expect([end.geometry.minPartial, end.geometry.cpuPartial, end.geometry.cpuPartialSlabs]).toEqual([0, 0, 0]);
    expect(events.filter((e) => e.kind === EventKind.SLUB_TUNE).map((e) => [e.arg0, e.arg1])).toEqual([[0, 0], [1, 0]]);
    // Writing cpu_partial flushed every CPU: CPU 0's small slab went to the node list, where CPU 1's free found it.
    const afterWrite = decodeSnapshot(session.at(r.stops.findIndex((st) => st.micro === 0 && st.ops === 4)).snapshot);
    expect(afterWrite.cpus[0]?.slabPfn).toBe(0xffffffff);
    expect(afterWrite.node.nrPartial).toBe(1);
    expect([stat(end, 'FREE_SLOWPATH'), stat(end, 'FREE_FROZEN')]).toEqual([1, 0]);
    expect(session.at(r.stops.length - 1).check?.rc).toBe(0);
    expect(states(session, r.stops.length, true)).toEqual(states(session, r.stops.length));
    session.dispose();
  });
});

/** Slab record index of a pfn, -1 if none. */
function slabIndexOfPfn(s: ReturnType<typeof decodeSnapshot>, pfn: number): number {
  return Array.from(s.slab.pfn).indexOf(pfn);
}

describe('URL parameters', () => {
  const values = (query: string) => parseParams(SLUB_PARAMS, (k) => new URLSearchParams(query).get(k));

  it('take rt as a fourth fast path, and name a bad list', () => {
    expect(values('variant=cmpxchg,plain,rt').values.variant).toEqual(['cmpxchg', 'plain', 'rt']);
    expect(values('variant=cmpxchg,locked,plain,rt').problems).toEqual([]);
    expect(values('variant=rt,fast').problems).toEqual([
      'URL parameter variant="rt,fast" is not valid: expected one of cmpxchg, locked, plain, rt, or a comma list of up to 4 different ones. Using cmpxchg.',
    ]);
  });

  it('name the bulk form "fallback" by its new name', () => {
    const r = values('bulk=detached,fallback');
    expect(r.values.bulk).toEqual(['detached']);
    expect(r.problems[0]).toMatch(/^URL parameter bulk="detached,fallback" is not valid: expected one of detached, generic, .*"fallback" is now called "generic".* Using detached\.$/);
    expect(values('bulk=generic').values.bulk).toEqual(['generic']);
  });

  it('give the kernel its boot parameters and options, which shape the geometry a story is written for', async () => {
    const core = await loadNodeBridgeCore();
    const h = labHandlers([slubModel]);
    const r = values('scenario=slow-path&cpus=2&slub_min_order=2&nr_cpus=64&preemption=off&slub_max_order=default');
    expect(r.problems).toEqual([]);
    expect(kernelOf(r.values)).toEqual({ minOrder: 2, nrCpus: 64, noPreempt: true });
    expect(kernelOf(values('cpus=2').values)).toBeUndefined();
    const [pane] = slubStepView.panes(r.values);
    const info = h.worldInfo({ model: 'slub', world: pane?.world }, core).result as SlubWorldInfo;
    expect([info.order, info.objects]).toEqual([2, 32]);
    expect([info.fallbackOrder, info.fallbackObjects]).toEqual([0, 8]);
    const story = await slubStepView.story(r.values, async () => info);
    const loaded = h.load({ model: 'slub', world: pane?.world, script: story.script }, core).result;
    const end = decodeSnapshot(h.at({ session: loaded.session, stop: loaded.stops.length - 1 }, core).result.snapshot);
    expect(end.geometry.order).toBe(2);
    expect(end.geometry.tidStep).toBe(1); // no preemption
    expect(stat(end, 'CPU_PARTIAL_ALLOC')).toBe(1); // the story still takes its three refill sources
    expect(values('slub_min_order=11').problems[0]).toBe('URL parameter slub_min_order="11" is not valid: expected a whole number from 0 to 10, or default. Using default.');
    expect(values('preemption=maybe').problems[0]).toMatch(/preemption="maybe" is not valid: expected one of on, off/);
  });
});

describe('side by side', () => {
  /** Loads a URL's panes through the engine's handlers, as the page does. */
  async function loadPanes(query: string) {
    const core = await loadNodeBridgeCore();
    const h = labHandlers([slubModel]);
    const q = new URLSearchParams(query);
    const values = parseParams(SLUB_PARAMS, (k) => q.get(k)).values;
    const panes = slubStepView.panes(values);
    const story = await slubStepView.story(values, async () => h.worldInfo({ model: 'slub', world: panes[0]?.world }, core).result as SlubWorldInfo);
    const loaded = panes.map((p) => h.load({ model: 'slub', world: p.world, script: story.script }, core).result);
    return { core, h, panes, story, loaded };
  }

  it('runs "why the tid" with cmpxchg and plain writes on one script: the same steps, each world its own counters', async () => {
    const { core, h, panes, story, loaded } = await loadPanes('scenario=why-tid&variant=cmpxchg,plain&cpus=2');
    expect(panes.map((p) => [p.label, p.world.fastpath])).toEqual([['cmpxchg', 'cmpxchg'], ['plain', 'plain']]);
    const aligned = alignStops(loaded.map((l) => l.stops));
    // cmpxchg retries (a second preemption point in the interrupted alloc): more stops than plain, stepped together.
    expect(loaded[0]?.stops.length).toBeGreaterThan(loaded[1]?.stops.length ?? 0);
    expect(aligned.filter((a) => a.micro === 0)).toHaveLength(story.script.ops.length + 1);
    const at = (step: number) => loaded.map((l, i) => h.at({ session: l.session, stop: aligned[step]?.panes[i] ?? 0 }, core).result);
    for (let step = 0; step < aligned.length; step++) {
      const a = aligned[step];
      if (!a || a.micro) continue;
      const snaps = at(step).map((r) => decodeSnapshot(r.snapshot));
      // Every operation end shows both worlds after the same operations.
      expect(snaps.map((s) => stat(s, 'ALLOC_FASTPATH') + stat(s, 'ALLOC_SLOWPATH'))).toEqual([a.opIndex + 1 + (a.opIndex >= 2 ? 1 : 0), a.opIndex + 1 + (a.opIndex >= 2 ? 1 : 0)]);
    }
    const [kernel, rfc] = at(aligned.length - 1);
    const [ks, rs] = [kernel, rfc].map((r) => decodeSnapshot(r?.snapshot ?? new ArrayBuffer(0)));
    expect(kernel?.check?.rc).toBe(0);
    expect(stat(ks as ReturnType<typeof decodeSnapshot>, 'CMPXCHG_DOUBLE_CPU_FAIL')).toBe(1);
    expect(rfc?.check?.rc).toBeLessThan(0);
    expect(stat(rs as ReturnType<typeof decodeSnapshot>, 'CMPXCHG_DOUBLE_CPU_FAIL')).toBe(0);
    expect(rs?.obj.state.some((st) => st === ObjState.DUP)).toBe(true);
    for (const l of loaded) expect(h.dispose({ session: l.session }, core).result.disposed).toBe(true);
  });

  it('runs "why the tid" with rt beside cmpxchg and plain: under local_lock the interrupted alloc neither retries nor hands out twice', async () => {
    const { core, h, panes, loaded } = await loadPanes('scenario=why-tid&variant=cmpxchg,plain,rt&cpus=2');
    expect(panes.map((p) => p.label)).toEqual(['cmpxchg', 'plain', 'rt']);
    const ends = loaded.map((l) => h.at({ session: l.session, stop: l.stops.length - 1 }, core).result);
    const [ks, ps, rs] = ends.map((e) => decodeSnapshot(e.snapshot));
    if (!ks || !ps || !rs) throw new Error('three panes');
    expect(ends.map((e) => e.check?.rc === 0)).toEqual([true, false, true]);
    expect([ks, ps, rs].map((s) => stat(s, 'CMPXCHG_DOUBLE_CPU_FAIL'))).toEqual([1, 0, 0]);
    expect([ks, ps, rs].map((s) => s.obj.state.some((st) => st === ObjState.DUP))).toEqual([false, true, false]);
    // rt: every allocation is ___slab_alloc under local_lock (the handler's too), counted as the slow path.
    expect([stat(rs, 'ALLOC_FASTPATH'), stat(rs, 'ALLOC_SLOWPATH')]).toEqual([0, 5]);
    expect(rs.geometry.fastpath).toBe('rt');
    // The interrupted alloc (step 3) reaches its preemption point again only where it retries: cmpxchg.
    expect(loaded.map((l) => l.stops.filter((st) => st.opIndex === 2 && st.micro > 0 && !st.inHandler).length)).toEqual([2, 1, 1]);
    for (const l of loaded) h.dispose({ session: l.session }, core);
  });
});
