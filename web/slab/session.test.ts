// The SLAB view's sessions through its model adapter (worker.ts) against the
// real core (the slablab-node build): every scenario under both rule sets
// ends in the state of a fresh world that ran the same steps, passes
// validate(), and does what its captions say (the refill and flush amounts,
// the shared array, the reap, the OBJFREELIST array moving, the kmalloc
// test's counters); the moves each step animates; the engine's requests
// with the SLAB model (queries, bad requests, benchmark rows).
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind, type SlEvent } from '../core/events.generated';
import { parseParams } from '../lab/params';
import { replaySessions } from '../lab/session';
import { labHandlers } from '../lab/worker-host';
import { loadNodeBridgeCore, loadNodeCore } from '../test/node-core';
import { movesOf } from './moves';
import type { SlabWorldInfo, WorldConfig } from './protocol';
import { SCENARIOS, SEED_ROUND, kmallocFacts, type SlabScenario } from './scenarios';
import type { Script } from './script';
import { SlabApi, type SlabModule, type SlabTypesReport } from './slab-api';
import { decodeSlabSnapshot, type SlabCacheState, type SlabSnapshot } from './snapshot';
import { SLAB_PARAMS, worldOf } from './view';
import { slabModel, slabSessions, worldInfo } from './worker';

let api: SlabApi;

beforeAll(async () => {
  api = new SlabApi(await loadNodeCore<SlabModule>());
});

const values = (query: string) => parseParams(SLAB_PARAMS, (k) => new URLSearchParams(query).get(k)).values;

interface Run {
  world: WorldConfig;
  info: SlabWorldInfo;
  script: Script;
  /** Events per step. */
  steps: SlEvent[][];
  results: number[];
  end: SlabSnapshot;
  endBytes: Uint8Array;
}

/** Loads a scenario's story in a session, as the view does, and reads its last stop. */
function run(s: SlabScenario, query: string, rules: 'before' | 'after'): Run {
  const v = values(`scenario=${s.id}&${query}`);
  const world = worldOf(v, rules);
  const info = worldInfo(api, world);
  const story = s.build({ cpus: v.cpus, size: v.size, caches: world.caches, info });
  expect(story.captions).toHaveLength(story.script.ops.length);
  const session = replaySessions(slabSessions(api))(world, story.script);
  try {
    const loaded = session.load();
    const events = decodeEvents(loaded.events.buffer as ArrayBuffer);
    const steps = loaded.stops.slice(1).map((stop, i) => events.slice(loaded.stops[i]?.eventCount ?? 0, stop.eventCount));
    expect(loaded.stops).toHaveLength(1 + story.script.ops.length);
    const last = session.at(loaded.stops.length - 1);
    expect(last.check).toEqual({ rc: 0, message: '' });
    const endBytes = new Uint8Array(last.snapshot);
    return { world, info, script: story.script, steps, results: loaded.ops.map((o) => o.result), end: decodeSlabSnapshot(endBytes), endBytes };
  } finally {
    session.dispose();
  }
}

/** The state of a fresh world that ran the same steps in one go. */
function fresh(world: WorldConfig, script: Script): Uint8Array {
  const w = slabSessions(api).create(world);
  try {
    w.run(script, 0, script.ops.length, 0);
    return w.snapshot();
  } finally {
    w.destroy();
  }
}

const cacheNamed = (s: SlabSnapshot, name: string): SlabCacheState => {
  const c = s.caches.find((k) => k.name === name);
  if (!c) throw new Error(`no cache ${name}`);
  return c;
};
const ofKind = (evs: readonly SlEvent[], kind: number) => evs.filter((e) => e.kind === kind);

describe('every scenario', () => {
  for (const s of SCENARIOS)
    for (const rules of ['before', 'after'] as const)
      it(`${s.id}, ${rules} OBJFREELIST: ends as a fresh world that ran the same steps, and valid`, () => {
        const r = run(s, 'cpus=2', rules);
        expect(r.results.every((x) => x >= 0)).toBe(true);
        expect(r.endBytes).toEqual(fresh(r.world, r.script));
      });
});

/** The events of a scenario's first step under the rules before OBJFREELIST. */
const before0 = (s: SlabScenario) => run(s, 'size=256', 'before').steps[0] ?? [];

describe('what the stories say happens', () => {
  it('types: four caches, one per management type after OBJFREELIST; the array of the full slab is nowhere, then moves into an object', () => {
    const after = run(SCENARIOS[0] as SlabScenario, 'size=256', 'after');
    const mgmt = (name: string) => after.info.after.find((c) => c.name === name)?.mgmt;
    expect(['plain-256', 'ctor-256', 'ctor-192', 'plain-48'].map(mgmt)).toEqual(['OBJFREELIST', 'OFF', 'NORMAL(leftover)', 'NORMAL']);
    expect(after.info.before.find((c) => c.name === 'plain-256')?.mgmt).toBe('OFF');
    expect(after.info.before.find((c) => c.name === 'plain-256')?.waste).toBe(32);
    expect(after.info.after.find((c) => c.name === 'plain-256')?.waste).toBe(0);
    // The first alloc took all 16 objects: the slab is full and its array went out with the last one.
    const grown = ofKind(after.steps[0] ?? [], EventKind.SLAB_GET_OBJ);
    expect(grown).toHaveLength(16);
    // Before, kmalloc-32's refill also hands an object out: the array of the new slab, named by its GROW.
    const hosted = movesOf(before0(SCENARIOS[0] as SlabScenario)).filter((m) => m.what === 'pop');
    expect(hosted.map((m) => m.cacheId).sort()).toEqual([0, 20]);
    // drain: the first object back into that slab becomes the array's home.
    const moved = ofKind(after.steps[4] ?? [], EventKind.SLAB_PUT_OBJ).filter((e) => e.arg1 === 1);
    expect(moved).toHaveLength(1);
    // ... at the array's last position: the next refill hands it out last, and the full slab's array is nowhere again.
    const gets = ofKind(after.steps[5] ?? [], EventKind.SLAB_GET_OBJ);
    expect([gets.at(-1)?.slab, gets.at(-1)?.obj]).toEqual([moved[0]?.slab, moved[0]?.obj]);
    expect(cacheNamed(after.end, 'plain-256').slabs.map((x) => x.freelist.kind)).toEqual(['none']);
    const before = run(SCENARIOS[0] as SlabScenario, 'size=256', 'before');
    // Before the commit the same slab keeps its array in a kmalloc-32 object: that cache has slabs too.
    const off = cacheNamed(before.end, 'plain-256').slabs[0]?.freelist;
    expect(off?.kind).toBe('off-slab');
    expect(cacheNamed(before.end, 'kmalloc-32').slabs.length).toBeGreaterThan(0);
  });

  it('refill-flush: an untouched refill takes 16, a touched one batchcount; a full array flushes the bottom batchcount to the shared array', () => {
    const r = run(SCENARIOS[1] as SlabScenario, 'size=256&cpus=2', 'after');
    const f = kmallocFacts(r.info.after, 256);
    expect(f?.name).toBe('kmalloc-256');
    const refills = (i: number) => ofKind(r.steps[i] ?? [], EventKind.SLAB_REFILL).map((e) => e.arg0);
    expect(refills(0)).toEqual([16]);
    // The refill's 16 go to slots 0..15, and the top one is handed out (it has no event of its own).
    const first = movesOf(r.steps[0] ?? []);
    expect(first.map((m) => m.what)).toEqual([...new Array<string>(16).fill('refill'), 'pop']);
    expect(first.at(-1)).toMatchObject({ from: { kind: 'slot', owner: 0, slot: 15 }, to: { kind: 'object', pfn: first[15]?.pfn, index: first[15]?.index } });
    expect(new Set(refills(1))).toEqual(new Set([f?.batchcount]));
    const flushes = ofKind(r.steps[2] ?? [], EventKind.SLAB_FLUSH);
    expect(flushes.length).toBeGreaterThan(0);
    for (const e of flushes) expect([e.arg0, e.arg1]).toEqual([f?.batchcount, 1]);
    // The flush's moves take the bottom slots, in order, to the shared array.
    const flushMoves = movesOf(r.steps[2] ?? []).filter((m) => m.what === 'flush');
    expect(flushMoves.slice(0, 3).map((m) => (m.from.kind === 'slot' ? [m.from.owner, m.from.slot] : null))).toEqual([
      [0, 0],
      [0, 1],
      [0, 2],
    ]);
    expect(flushMoves[0]?.to).toMatchObject({ kind: 'slot', owner: -1 });
    // LIFO: step 4 pops the object step 3 freed last (step 1's).
    const freedLast = ofKind(r.steps[2] ?? [], EventKind.SLAB_FREE_HIT).at(-1);
    const popped = ofKind(r.steps[3] ?? [], EventKind.SLAB_ALLOC_HIT)[0];
    expect([popped?.slab, popped?.obj]).toEqual([freedLast?.slab, freedLast?.obj]);
    // The drain empties CPU 0's array.
    expect(cacheNamed(r.end, 'kmalloc-256').cpus[0]?.avail).toBeLessThan(f?.batchcount ?? 0);
  });

  it('shared: CPU 1 refills from the objects CPU 0 flushed to the shared array', () => {
    const r = run(SCENARIOS[2] as SlabScenario, 'size=256&cpus=2', 'after');
    const fromShared = ofKind(r.steps[2] ?? [], EventKind.SLAB_REFILL_SHARED);
    expect(fromShared.map((e) => [e.cpu, e.arg0])).toEqual([[1, 16]]);
    expect(ofKind(r.steps[2] ?? [], EventKind.SLAB_GET_OBJ)).toHaveLength(0);
    const moves = movesOf(r.steps[2] ?? []).filter((m) => m.what === 'refill');
    expect(moves).toHaveLength(16);
    expect(moves[0]).toMatchObject({ from: { kind: 'slot', owner: -1 }, to: { kind: 'slot', owner: 1, slot: 0 } });
  });

  it('reap: touched is cleared first, then a fifth of the limit is drained, and the node part runs when due', () => {
    const r = run(SCENARIOS[3] as SlabScenario, 'size=256', 'after');
    const f = kmallocFacts(r.info.after, 256);
    expect(ofKind(r.steps[2] ?? [], EventKind.SLAB_DRAIN)).toHaveLength(0);
    expect(ofKind(r.steps[3] ?? [], EventKind.SLAB_DRAIN).map((e) => e.arg0)).toEqual([Math.floor(((f?.limit ?? 0) + 4) / 5)]);
    const firstNode = r.steps.findIndex((evs) => evs.some((e) => e.kind === EventKind.SLAB_REAP_NODE && e.cache === f?.id));
    expect(r.script.ops[firstNode]).toMatchObject({ kind: 'reap' });
    const at = r.script.ops[firstNode];
    expect(at?.kind === 'reap' ? at.ms : -1).toBeGreaterThanOrEqual(f?.nextReap ?? 0);
  });

  it("kmalloc-test: 10,000 kmallocs then 10,000 kfrees move the counters, and shrink gives every slab back", () => {
    for (const rules of ['before', 'after'] as const) {
      const r = run(SCENARIOS[4] as SlabScenario, 'size=256', rules);
      expect(r.results.slice(0, 2)).toEqual([SEED_ROUND, 0]);
      const c = cacheNamed(r.end, 'kmalloc-256');
      const sum = (k: 'allocHit' | 'allocMiss' | 'freeHit' | 'freeMiss') => c.cpus.reduce((n, a) => n + a[k], 0);
      expect(sum('allocHit') + sum('allocMiss')).toBe(SEED_ROUND);
      expect(sum('freeHit') + sum('freeMiss')).toBe(SEED_ROUND);
      expect(c.grown).toBeGreaterThanOrEqual(SEED_ROUND / c.num);
      expect(c.slabs).toHaveLength(0);
      expect(c.destroyed).toBe(c.grown);
      // The batches record only their own brackets.
      expect(r.steps[0]?.map((e) => e.kind)).toEqual([EventKind.OP_BEGIN, EventKind.OP_END]);
    }
  });

  it('refuses a kmalloc test of more than 4096 bytes', () => {
    const v = values('scenario=kmalloc-test&size=8192');
    expect(SCENARIOS[4]?.sizeProblem?.(v.size)).toMatch(/sizes 1 to 4096/);
  });
});

describe('the SLAB model through the engine', () => {
  it('answers the slab-types query and refuses a bad one', async () => {
    const h = labHandlers([slabModel]);
    const core = await loadNodeBridgeCore();
    const text = 'a-256 256\nb-48 48 ctor\n';
    const r = h.query({ model: 'slab', query: { kind: 'types', text, format: 'caches', kernel: '6.7', cpus: 2, source: 'x' } }, core).result as SlabTypesReport;
    expect(r.caches.map((c) => [c.name, c.before?.type, c.after?.type])).toEqual([
      ['a-256', 'OFF', 'OBJFREELIST'],
      ['b-48', 'NORMAL', 'NORMAL'],
    ]);
    expect(() => h.query({ model: 'slab', query: { kind: 'types', text, format: 'caches', kernel: '6.8', cpus: 2, source: 'x' } }, core)).toThrow(/kernel must be a version from 4.10 to 6.7/);
    expect(() => h.query({ model: 'slab', query: { kind: 'types', text: 'slabinfo - version: 2.1\nbad line\n', format: 'slabinfo', kernel: '6.7', cpus: 2, source: 'x' } }, core)).toThrow(/line 2/);
  });

  it('checks worlds and scripts, and a free of nothing is a failed step, not a lost one', async () => {
    const h = labHandlers([slabModel]);
    const core = await loadNodeBridgeCore();
    const world: WorldConfig = { cpus: 2, rules: 'after', kernel: '6.7', arenaMb: 8, caches: [] };
    expect(() => h.load({ model: 'slab', world: { ...world, cpus: 9 }, script: { ops: [] } }, core)).toThrow(/cpus must be a whole number from 1 to 8/);
    expect(() => h.load({ model: 'slab', world, script: { ops: [{ kind: 'alloc', cpu: 0, cache: 0, count: 1 }] } }, core)).toThrow(/creates no cache/);
    const script: Script = {
      ops: [
        { kind: 'kmalloc', cpu: 0, size: 100, count: 2 },
        { kind: 'free', cpu: 1, refs: [{ cache: 3, pfn: 999, index: 0 }] },
        { kind: 'free', cpu: 1, refs: [{ op: 0, first: 0, count: 2 }] },
        { kind: 'free', cpu: 1, refs: [{ op: 0, first: 1, count: 1 }] },
      ],
    };
    const r = h.load({ model: 'slab', world, script }, core).result;
    expect(r.stops).toHaveLength(5);
    // SL_EFOREIGN for a place that is no object, SL_EDOUBLEFREE for an object freed before.
    expect(r.ops.map((o) => o.result)).toEqual([2, -5, 0, -4]);
    expect(r.ops[1]?.error).toMatch(/foreign/i);
    expect(r.ops[3]?.error).toMatch(/double/i);
  });

  it('times kmalloc rows of both rule sets and phases, and refuses other variants', async () => {
    const h = labHandlers([slabModel]);
    const core = await loadNodeBridgeCore();
    for (const variant of ['slab-before:alloc', 'slab-after:free']) {
      const r = h.benchRow({ model: 'slab', experiment: 'kmalloc', variant, row: 64, loops: 1 }, core).result;
      expect(r.nsPerOp).toBeGreaterThan(0);
      expect(r.ops).toBe(10_000);
    }
    expect(() => h.benchRow({ model: 'slab', experiment: 'kmalloc', variant: 'slub:alloc', row: 64, loops: 1 }, core)).toThrow(/variant must be one of slab-before:alloc/);
    expect(() => h.benchRow({ model: 'slab', experiment: 'kmalloc', variant: 'slab-after:alloc', row: 8192, loops: 1 }, core)).toThrow(/row must be a whole number from 1 to 4096/);
  });
});
