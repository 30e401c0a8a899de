// The free-running engine and the mirror its view keeps from the drained
// event rings, against the real core (the slablab-node build): applied in
// the order the interleaved engine runs the operations, the events must
// reproduce every snapshot exactly.
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EVENT_SIZE, EventKind, eventKindInfo } from '../core/events.generated';
import { BadRequest } from '../core/requests';
import { FreeRunHost } from '../lab/freerun-host';
import { replaySessions } from '../lab/session';
import { mergeRings } from '../lab/stops';
import { LiveMirror } from './live-mirror';
import { WORKLOADS, type FreerunStartParams } from './protocol';
import { misfit, SCENARIOS, scenarioConfig } from './scenarios';
import type { AnyRef, Script } from './script';
import { loadNodeCore } from '../test/node-core';
import { parseKernelVersion, SlubApi, type SlubModule } from './slub-api';
import { cpuPartialSlabs, decodeSnapshot, NONE32, ObjState, type SlubSnapshot } from './snapshot';
import { slubSessions, startFreeRun } from './worker';

let api: SlubApi;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
});

/** What the live view draws, as plain data, so two states compare with toEqual. */
function drawn(s: SlubSnapshot) {
  const slabs = Array.from({ length: s.nslabs }, (_, i) => {
    const first = s.slab.firstObj[i] ?? 0;
    // Every record of the slab: a fallback slab's past its own objects are NO_OBJECT in both.
    // Allocated objects' debug states are not the mirror's; where a sheaf holds an object is.
    const state = Array.from(s.obj.state.subarray(first, first + s.geometry.objects), (x) =>
      x === ObjState.SLAB_FREE || x === ObjState.CPU_FREE || x === ObjState.NO_OBJECT || x >= ObjState.CPU_SHEAF ? x : ObjState.ALLOCATED,
    );
    return {
      pfn: s.slab.pfn[i],
      order: s.slab.order[i],
      objects: s.slab.objects[i],
      list: s.slab.list[i],
      cpu: s.slab.cpu[i],
      frozen: s.slab.frozen[i],
      inuse: s.slab.inuse[i],
      state: state.join(''),
    };
  });
  return {
    slabs,
    cpus: s.cpus.map((c) => ({ slab: c.slabPfn, free: c.freelistLength, partial: cpuPartialSlabs(s, c.cpu).map((i) => s.slab.pfn[i]) })),
    node: s.nodePartial.map((i) => s.slab.pfn[i]),
    nrPartial: s.node.nrPartial,
    nrSlabs: s.node.nrSlabs,
    totalObjects: s.node.totalObjects,
    sheaves: sheavesDrawn(s),
  };
}

/** Each CPU's sheaves, the barn and the prefilled sheaves: ids, places, positions and the objects in slot order. */
function sheavesDrawn(s: SlubSnapshot) {
  const sh = s.sheaves;
  const idOf = (rec: number) => (rec < 0 ? 0 : (sh.sheaf.id[rec] ?? -1));
  return {
    pcs: sh.pcs.map((p) => [idOf(p.main), idOf(p.spare), idOf(p.rcuFree)]),
    barn: [sh.barnFull, sh.barnEmpty],
    sheaves: Array.from({ length: sh.nsheaves }, (_, i) => {
      const first = sh.sheaf.first[i] ?? 0;
      const objects = Array.from({ length: sh.sheaf.size[i] ?? 0 }, (_, j) => `${sh.entryPfn[first + j]}:${sh.entryIndex[first + j]}`);
      return `#${sh.sheaf.id[i]} place ${sh.sheaf.place[i]} cpu ${sh.sheaf.cpu[i]} at ${sh.sheaf.position[i]} of ${sh.sheaf.capacity[i]}${sh.sheaf.rcuFlush[i] ? ' flush' : ''}: ${objects.join(' ')}`;
    }).sort(),
  };
}

const params = (over: Partial<FreerunStartParams>): FreerunStartParams => ({
  cpus: 3, objectSize: 256, workload: 'prodcons', prefillSlabs: 6, seed: 7, duty: 100, rate: 0, ...over,
});
/** A free run on this worker, the CPUs interleaved (as the single-threaded build runs them). */
const freeRun = (p: FreerunStartParams) => new FreeRunHost(startFreeRun(api, p, false));

/** What a free run on `kernel` must have taken for the comparisons to cover each kind of move the mirror follows. */
const PATHS_TAKEN: Record<string, readonly string[]> = {
  '6.17': ['SLUB_ALLOC_FASTPATH', 'SLUB_FREE_FASTPATH', 'SLUB_FREE_SLOWPATH', 'SLUB_FREE_FROZEN', 'SLUB_NEW_SLAB',
    'SLUB_REFILL_FREELIST', 'SLUB_REFILL_CPU_PARTIAL', 'SLUB_REFILL_NODE_PARTIAL', 'SLUB_DEACTIVATE_BYPASS',
    'SLUB_CPU_PARTIAL_ADD', 'SLUB_CPU_PARTIAL_DRAIN', 'SLUB_CPU_PARTIAL_NODE', 'SLUB_NODE_PARTIAL_ADD',
    'SLUB_NODE_PARTIAL_REMOVE', 'SLUB_DISCARD_SLAB'],
  '4.4': ['SLUB_ALLOC_FASTPATH', 'SLUB_FREE_FASTPATH', 'SLUB_FREE_SLOWPATH', 'SLUB_NEW_SLAB', 'SLUB_CPU_PARTIAL_ADD',
    'SLUB_CPU_PARTIAL_DRAIN', 'SLUB_NODE_PARTIAL_ADD', 'SLUB_NODE_PARTIAL_REMOVE', 'SLUB_DISCARD_SLAB'],
  // Sheaves over the per-CPU slab: refills are its bulk allocations, flushes its bulk frees in groups.
  '6.18': ['SLUB_SHEAF_ALLOC', 'SLUB_SHEAF_FREE', 'SLUB_SHEAF_SWAP', 'SLUB_BARN_GET', 'SLUB_BARN_PUT', 'SLUB_BARN_GET_FAIL',
    'SLUB_SHEAF_REFILL', 'SLUB_SHEAF_FILL', 'SLUB_SHEAF_FLUSH', 'SLUB_SHEAF_NEW', 'SLUB_PCS_SHEAVES', 'SLUB_ALLOC_FASTPATH',
    'SLUB_FREE_SLOWPATH'],
  // No per-CPU slab: refills take node partial slabs' whole freelists and new slabs, flushes go to __slab_free.
  '7.0': ['SLUB_SHEAF_ALLOC', 'SLUB_SHEAF_FREE', 'SLUB_SHEAF_SWAP', 'SLUB_BARN_GET', 'SLUB_BARN_PUT', 'SLUB_BARN_GET_FAIL',
    'SLUB_SHEAF_REFILL', 'SLUB_SHEAF_FILL', 'SLUB_SHEAF_FLUSH', 'SLUB_SHEAF_NEW', 'SLUB_PCS_SHEAVES', 'SLUB_REFILL_NODE_PARTIAL',
    'SLUB_NEW_SLAB', 'SLUB_FREE_SLOWPATH', 'SLUB_NODE_PARTIAL_ADD', 'SLUB_NODE_PARTIAL_REMOVE'],
};

describe('free-run mirror', () => {
  for (const [kernel, paths] of Object.entries(PATHS_TAKEN))
  it(`follows every workload on ${kernel} exactly, frame after frame, from its events alone`, () => {
    const seen = new Set<string>();
    const version = parseKernelVersion(kernel);
    for (const workload of WORKLOADS) {
      const run = freeRun(params({ workload, version }));
      try {
        const mirror = new LiveMirror(decodeSnapshot(run.world.anchor));
        expect(mirror.view().kernel.hasSheaves).toBe(version.major >= 7 || kernel === '6.18');
        let ops = 0;
        for (let frame = 0; frame < 15; frame++) {
          const d = run.drain(true);
          ops = d.cpus.reduce((n, c) => n + c.ops, 0);
          expect(d.dropped).toBe(0);
          const events = new Uint8Array(d.events);
          expect(mirror.apply(events), mirror.firstMismatch).toBe(0);
          expect(drawn(mirror.view()), `${workload}, frame ${frame}`).toEqual(drawn(decodeSnapshot(d.snapshot as ArrayBuffer)));
          for (const e of decodeEvents(events)) seen.add(eventKindInfo(e.kind)?.name ?? '');
        }
        // Each operation has at least its OP_BEGIN and OP_END.
        expect(mirror.applied).toBeGreaterThanOrEqual(2 * ops);
      } finally {
        run.stop();
      }
    }
    // The runs took every path the mirror follows, so the comparisons covered each kind of move.
    for (const kind of paths) expect(seen, kind).toContain(kind);
    // Half a million operations: seconds on a loaded 2-core machine, more than vitest's 5 s default allows.
  }, 60_000);

  it('follows the scenarios with the kernel\'s fast path and rt\'s, interrupts and flushes included (bulk frees excepted: their events name only each group head)', () => {
    const open = replaySessions(slubSessions(api));
    let deactivations = 0;
    for (const sc of SCENARIOS.filter((x) => x.id !== 'bulk-free' && !misfit(x, parseKernelVersion('6.17'))))
    for (const fastpath of [sc.defaultFastpath, 'rt'] as const) {
      const cfg = scenarioConfig(sc, 2, fastpath, sc.defaultBulk);
      const story = sc.build({ cpus: 2, objects: api.geometry(cfg.objectSize, 2).objects });
      const w = api.createWorld(cfg);
      const empty = decodeSnapshot(api.snapshot(w));
      api.destroyWorld(w);
      const session = open(cfg, story.script);
      const r = session.load();
      const mirror = new LiveMirror(empty);
      const events = r.events;
      expect(mirror.apply(events), `${sc.id}, ${fastpath}: ${mirror.firstMismatch}`).toBe(0);
      expect(drawn(mirror.view()), `${sc.id}, ${fastpath}`).toEqual(drawn(decodeSnapshot(session.at(r.stops.length - 1).snapshot)));
      deactivations += decodeEvents(events).filter((e) => e.kind === EventKind.SLUB_DEACTIVATE).length;
      session.dispose();
    }
    expect(deactivations).toBeGreaterThan(0);
  });

  it('follows fallback slabs and tuning: the page allocator short, shrink, min_partial and cpu_partial, from an anchor holding fallback slabs', () => {
    const open = replaySessions(slubSessions(api));
    const cfg = scenarioConfig(undefined, 2, 'cmpxchg', 'detached');
    const n = api.geometry(cfg.objectSize, 2).objects;
    // Fallback slabs on both CPUs, a remote free, flushes by a cpu_partial write, an empty slab kept by
    // min_partial and then shrunk away, the pages back and a full-order slab after them.
    const script: Script<AnyRef> = {
      ops: [
        { kind: 'zoneShort', cpu: 0, value: 1 },
        { kind: 'allocBulk', cpu: 0, count: n },
        { kind: 'alloc', cpu: 1 },
        { kind: 'free', cpu: 1, refs: [{ allocOf: 1, nth: 0 }] },
        { kind: 'cpuPartial', cpu: 0, value: 4 },
        { kind: 'freeBulk', cpu: 0, refs: Array.from({ length: n }, (_, k) => ({ allocOf: 1, nth: k + 1 })).slice(0, n - 2) },
        { kind: 'minPartial', cpu: 0, value: 8 },
        { kind: 'free', cpu: 0, refs: [{ allocOf: 2, nth: 0 }] },
        { kind: 'flush', cpu: 1 },
        { kind: 'shrink', cpu: 0 },
        { kind: 'zoneShort', cpu: 0, value: 0 },
        { kind: 'allocBulk', cpu: 1, count: n + 1 },
        { kind: 'alloc', cpu: 0 },
      ],
      irqs: [],
    };
    const session = open(cfg, script);
    const r = session.load();
    expect(r.ops.every((o) => o.result >= 0)).toBe(true);
    const kinds = decodeEvents(r.events).map((e) => e.kind);
    for (const k of [EventKind.SLUB_ORDER_FALLBACK, EventKind.SLUB_TUNE, EventKind.SLUB_DISCARD_SLAB, EventKind.SLUB_FLUSH_CPU]) expect(kinds).toContain(k);
    const truth = decodeSnapshot(session.at(r.stops.length - 1).snapshot);
    // Slabs of both orders at the end: the comparison covers per-slab object counts.
    expect(new Set(truth.slab.order).size).toBe(2);
    // From the empty world (the bulk free excepted from the events: its groups name only their heads, so
    // the mirror is compared up to the op before it), and anchored after the fallback slabs were made.
    const before = r.stops.findIndex((st) => st.micro === 0 && st.ops === 5);
    const w = api.createWorld(cfg);
    const early = new LiveMirror(decodeSnapshot(api.snapshot(w)));
    api.destroyWorld(w);
    expect(early.apply(r.events.subarray(0, (r.stops[before]?.eventCount ?? 0) * EVENT_SIZE)), early.firstMismatch).toBe(0);
    expect(drawn(early.view())).toEqual(drawn(decodeSnapshot(session.at(before).snapshot)));
    const after = r.stops.findIndex((st) => st.micro === 0 && st.ops === 6);
    const anchor = decodeSnapshot(session.at(after).snapshot);
    expect(Array.from(anchor.slab.objects).some((k) => k < n)).toBe(true);
    const late = new LiveMirror(anchor);
    expect(late.apply(r.events), late.firstMismatch).toBe(0);
    expect(drawn(late.view())).toEqual(drawn(truth));
    session.dispose();
  });

  it('follows a debug cache, whose objects come from and go back to slabs under the list lock', () => {
    const STORE_USER = 0x10000;
    const w = api.m._sl_api_slub_world_create(4 << 20, 2, 256, 0, STORE_USER, 0, 0, 1, 1);
    expect(w).not.toBe(0);
    try {
      const mirror = new LiveMirror(decodeSnapshot(api.snapshot(w)));
      const held: [number, number][] = [];
      let seed = 99;
      const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
      for (let i = 0; i < 600; i++) {
        const cpu = rnd(2);
        if (held.length && rnd(3) === 0) {
          const [pfn, idx] = held.splice(rnd(held.length), 1)[0] as [number, number];
          expect(api.m._sl_api_slub_free(w, cpu, pfn, idx)).toBe(0);
        } else {
          expect(api.m._sl_api_slub_alloc(w, cpu)).toBe(0);
          const pair = new Uint32Array(api.copy(api.m._sl_api_slub_scratch(w, cpu), 8).buffer);
          held.push([pair[0] ?? 0, pair[1] ?? 0]);
        }
      }
      const events = mergeRings(api.drain(w, 2)).events;
      expect(mirror.apply(events), mirror.firstMismatch).toBe(0);
      const truth = decodeSnapshot(api.snapshot(w));
      expect(drawn(mirror.view())).toEqual(drawn(truth));
      expect(truth.cpus.every((c) => c.slabPfn === NONE32)).toBe(true);
      expect(decodeEvents(events).some((e) => e.kind === EventKind.SLUB_FREE_TO_PARTIAL)).toBe(true);
    } finally {
      api.destroyWorld(w);
    }
  });

  it('counts an event that contradicts it, and says which', () => {
    const run = freeRun(params({ workload: 'local', prefillSlabs: 1 }));
    try {
      const anchor = decodeSnapshot(run.world.anchor);
      const d = run.drain(false);
      const events = new Uint8Array(d.events);
      const late = new LiveMirror(anchor);
      late.apply(events);
      // The same events again: every fast-path alloc now finds its object already allocated.
      expect(late.apply(events)).toBeGreaterThan(0);
      expect(late.firstMismatch).toMatch(/was not on the CPU freelist|does not have|already in the mirror|gave \d+ objects/);
    } finally {
      run.stop();
    }
  });

  it('skips the events of operations its anchor already holds', () => {
    const run = freeRun(params({ workload: 'local', prefillSlabs: 2 }));
    try {
      const d = run.drain(true);
      const fresh = new LiveMirror(decodeSnapshot(d.snapshot as ArrayBuffer));
      expect(fresh.apply(new Uint8Array(d.events))).toBe(0);
      expect(fresh.applied).toBe(0);
    } finally {
      run.stop();
    }
  });

  it('rejects bad parameters with a specific message', () => {
    expect(() => freeRun(params({ cpus: 9 }))).toThrow(BadRequest);
    expect(() => freeRun(params({ rate: -1 }))).toThrow(/rate must be a whole number/);
    expect(() => freeRun(params({ workload: 'nope' as never }))).toThrow(/workload must be one of/);
  });
});
