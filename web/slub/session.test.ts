// The snapshot decoder, the event merge, the stops and the replay, against the
// real core (the slablab-node build of the same C sources).
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind } from '../core/events.generated';
import type { WorldConfig } from './protocol';
import { SCENARIOS, scenarioConfig } from './scenarios';
import { detachedGroups, PreemptPoint, type AnyRef, type Script } from './script';
import { computeStops, mergeRings, SlubSession } from './session';
import { loadNodeCore } from '../test/node-core';
import { SlubApi, type SlubModule } from './slub-api';
import { cpuPartialSlabs, decodeSnapshot, ObjState, SlabList, SnapshotError, stat } from './snapshot';

let api: SlubApi;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
});

const config: WorldConfig = { cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 };

describe('snapshot decoder', () => {
  it('decodes a fresh world and one with objects on every list', () => {
    const w = api.createWorld(config);
    try {
      const empty = decodeSnapshot(api.snapshot(w));
      expect(empty.ncpus).toBe(2);
      expect(empty.nslabs).toBe(0);
      expect(empty.geometry.objectSize).toBe(512);
      expect(empty.geometry.objects).toBe(api.geometry(512, 2)[7]);
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
  });
});

/** A ring of `ops` operations (OP_BEGIN, `inner` events, OP_END each), after `lead` events outside any. */
function syntheticRing(cpu: number, ops: number[], inner: number, lead: number): Uint8Array {
  const recs: [number, number][] = [];
  for (let i = 0; i < lead; i++) recs.push([0, EventKind.PAGE_ALLOC]);
  for (const op of ops) {
    recs.push([op, EventKind.OP_BEGIN]);
    for (let i = 0; i < inner; i++) recs.push([op, EventKind.SLUB_ALLOC_FASTPATH]);
    recs.push([op, EventKind.OP_END]);
  }
  const b = new Uint8Array(recs.length * 32);
  const v = new DataView(b.buffer);
  recs.forEach(([op, kind], i) => {
    v.setUint32(32 * i, op, true);
    v.setUint16(32 * i + 4, cpu, true);
    v.setUint16(32 * i + 6, kind, true);
    v.setUint32(32 * i + 20, i, true);
  });
  return b;
}

describe('events and stops', () => {
  it('merges rings into (outermost op, CPU, ring position) order', () => {
    // Op numbers dealt to three CPUs in a shuffled but per-CPU increasing way.
    let seed = 12345;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / (1 << 24);
    const per: number[][] = [[], [], []];
    for (let op = 1; op <= 300; op++) per[Math.floor(rnd() * 3)]?.push(op);
    const rings = per.map((ops, cpu) => syntheticRing(cpu, ops, cpu, 2));
    const { events, topOps } = mergeRings(rings);
    const got = decodeEvents(events).map((e) => `${e.op}/${e.cpu}/${e.arg0}`);
    const want = rings
      .flatMap((r, cpu) => decodeEvents(r).map((e) => ({ e, cpu })))
      .sort((a, b) => a.e.op - b.e.op || a.cpu - b.cpu || a.e.arg0 - b.e.arg0)
      .map(({ e }) => `${e.op}/${e.cpu}/${e.arg0}`);
    expect(got).toEqual(want);
    expect(topOps).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
  });


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
    const session = new SlubSession(api);
    const script: Script<AnyRef> = {
      ops: [{ kind: 'alloc', cpu: 0 }, { kind: 'alloc', cpu: 0 }, { kind: 'alloc', cpu: 0 }],
      irqs: [{ atOp: 2, point: PreemptPoint.ALLOC_BEFORE_CAS, nth: 0, handler: { kind: 'alloc' } }],
    };
    const good = session.load(config, script);
    const last = good.stops.length - 1;
    expect(session.at(last).check?.rc).toBe(0);
    // cmpxchg: the handler changed the tid, the interrupted alloc retried.
    const cpuFail = decodeEvents(good.events).filter((e) => e.kind === 104);
    expect(cpuFail.length).toBe(1);
    for (let i = 0; i <= last; i++) expect(() => decodeSnapshot(session.at(i).snapshot)).not.toThrow();

    const bad = session.load({ ...config, fastpath: 'plain' }, script);
    const check = session.at(bad.stops.length - 1).check;
    expect(check?.rc).toBeLessThan(0);
    expect(check?.message).not.toBe('');
  });

  it('resolves symbolic objects and replays the detached freelist groups the C side builds', () => {
    const session = new SlubSession(api);
    const n = api.geometry(512, 2)[7] ?? 16;
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
    const r = session.load(config, script);
    const p = r.script.ops[1]?.refs ?? [];
    const groups = detachedGroups(p);
    const built = decodeEvents(r.events).filter((e) => e.kind === 121);
    expect(built.map((e) => [e.slab, e.obj, e.arg0])).toEqual(
      groups.map((g) => [g.chain[0]?.pfn, g.chain[0]?.index, g.chain.length]),
    );
    // One cmpxchg per group against one per object for the fallback.
    expect(r.ops[1]?.result).toBe(groups.length);
    expect(r.otherBulkForm.results[1]).toBe(p.length);
  });

  it('plays every scenario to its end on 2, 4 and 8 CPUs with a clean checker', async () => {
    const session = new SlubSession(api);
    for (const cpus of [2, 4, 8])
      for (const sc of SCENARIOS) {
        const cfg = scenarioConfig(sc, cpus, sc.defaultFastpath, sc.defaultBulk);
        const objects = api.geometry(cfg.objectSize, cpus)[7] ?? 16;
        const story = sc.build({ cpus, objects });
        expect(story.captions).toHaveLength(story.script.ops.length);
        const r = session.load(cfg, story.script);
        const end = session.at(r.stops.length - 1);
        expect(end.check?.rc, `${sc.id} on ${cpus} CPUs: ${end.check?.message}`).toBe(0);
        expect(r.ops.every((o) => o.result >= 0), `${sc.id} on ${cpus} CPUs`).toBe(true);
      }
  });
});
