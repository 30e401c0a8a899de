// The snapshot decoder, the event merge, the stops and the replay, against the
// real core (the slablab-node build of the same C sources).
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EVENT_LAYOUT, EVENT_SIZE, EventKind } from '../core/events.generated';
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

describe('events and stops', () => {
  it('merges rings into emission order across a wrap of the sequence numbers', () => {
    // Three CPUs run operations at once; every event takes the next sequence number, from just below 2^32.
    let seed = 12345;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    const recs: { cpu: number; op: number; kind: number }[][] = [[], [], []];
    const emitted: string[] = [];
    const open: number[] = [0, 0, 0];
    const begun: number[] = [];
    let nextOp = 1;
    let seq = 0xffffffff - 40;
    const rings = [[], [], []] as number[][];
    for (let i = 0; i < 600; i++) {
      const cpu = rnd(3);
      let kind: number;
      if (!open[cpu]) {
        open[cpu] = nextOp++;
        begun.push(open[cpu] ?? 0);
        kind = EventKind.OP_BEGIN;
      } else if (rnd(4) === 0) kind = EventKind.OP_END;
      else kind = EventKind.SLUB_ALLOC_FASTPATH;
      const op = open[cpu] ?? 0;
      if (kind === EventKind.OP_END) open[cpu] = 0;
      recs[cpu]?.push({ cpu, op, kind });
      rings[cpu]?.push(seq >>> 0);
      emitted.push(`${cpu}/${op}/${kind}/${seq >>> 0}`);
      seq = (seq + 1) >>> 0;
    }
    const bytes = recs.map((list, cpu) => {
      const b = new Uint8Array(list.length * EVENT_SIZE);
      const v = new DataView(b.buffer);
      list.forEach((r, i) => {
        v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.op.offset, r.op, true);
        v.setUint16(i * EVENT_SIZE + EVENT_LAYOUT.cpu.offset, r.cpu, true);
        v.setUint16(i * EVENT_SIZE + EVENT_LAYOUT.kind.offset, r.kind, true);
        v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.seq.offset, rings[cpu]?.[i] ?? 0, true);
      });
      return b;
    });
    const { events, topOps } = mergeRings(bytes);
    expect(decodeEvents(events).map((e) => `${e.cpu}/${e.op}/${e.kind}/${e.seq}`)).toEqual(emitted);
    expect(topOps).toEqual(begun);
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
