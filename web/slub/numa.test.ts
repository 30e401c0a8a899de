// NUMA nodes in the SLUB view: the URL's nodes, memoryless and cpu_nodes
// (each read alone, then checked together), the worker's trailer on the
// snapshot, the layout that groups CPUs under their node with each node's
// barn and partial list, and the memoryless-barn story's captions against
// the counters of 7.0 and 7.1.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseParams } from '../lab/params';
import { replaySessions, type Session } from '../lab/session';
import { loadNodeCore } from '../test/node-core';
import { describeSlab } from './describe';
import { layoutSnapshot, nodePartialOf } from './layout';
import { decodeNuma, encodeNuma, type NumaState } from './numa';
import type { WorldConfig } from './protocol';
import { MEMORYLESS_MACHINE, scenarioById, scenarioConfig } from './scenarios';
import { parseKernelVersion, SlubApi, type SlubModule } from './slub-api';
import { decodeSnapshot, SheafPlace, slabIndexOf, stat, type StatName, type SlubSnapshot } from './snapshot';
import { numaOf, SLUB_PARAMS, slubStepView, spreadNode } from './view';
import { slubSessions } from './worker';

const read = (query: string) => {
  const q = new URLSearchParams(query);
  return parseParams(SLUB_PARAMS, (k) => q.get(k));
};

describe('the nodes parameters', () => {
  it('default to one node, and one node asks the core for no topology', () => {
    const { values, problems } = read('');
    expect(problems).toEqual([]);
    expect(values.nodes).toBe(1);
    expect(numaOf(values)).toBeUndefined();
    for (const pane of slubStepView.panes(values)) expect(pane.world.numa).toBeUndefined();
  });

  it('spread the CPUs evenly over the nodes, and say which node has no memory', () => {
    const { values, problems } = read('nodes=2&memoryless=1&cpus=4');
    expect(problems).toEqual([]);
    expect(numaOf(values)).toEqual({ nodes: 2, cpuNode: [0, 0, 1, 1], memoryless: 0b10 });
    expect(Array.from({ length: 3 }, (_, c) => spreadNode(c, 3, 2))).toEqual([0, 0, 1]);
    expect(numaOf(read('nodes=3&cpus=2&cpu_nodes=2,0').values)).toEqual({ nodes: 3, cpuNode: [2, 0], memoryless: 0 });
    expect(slubStepView.panes(read('nodes=2&memoryless=1&kernel=7.1&scenario=sheaf-hit').values)[0]?.world.numa?.memoryless).toBe(2);
  });

  it('give each bad value a message naming the parameter and what it accepts', () => {
    expect(read('nodes=9').problems).toEqual(['URL parameter nodes="9" is not valid: expected a whole number from 1 to 4. Using 1.']);
    expect(read('nodes=two').values.nodes).toBe(1);
    expect(read('memoryless=1,1').problems[0]).toMatch(/memoryless="1,1" is not valid: expected the nodes with CPUs and no memory: .* each once/);
    expect(read('cpu_nodes=0,x').problems[0]).toMatch(/cpu_nodes="0,x" is not valid/);
  });

  it('refuse values that do not fit together, saying which', () => {
    const bad = (q: string) => () => numaOf(read(q).values);
    expect(bad('nodes=2&memoryless=2')).toThrow('memoryless=2 names node 2, but nodes=2 has nodes 0, 1');
    expect(bad('nodes=2&memoryless=0,1')).toThrow('memoryless=0,1 leaves no node with memory');
    expect(bad('nodes=2&cpus=4&cpu_nodes=0,1')).toThrow('cpu_nodes=0,1 gives 2 CPUs a node, but there are 4 (cpus=4)');
    expect(bad('nodes=2&cpus=2&cpu_nodes=0,3')).toThrow('cpu_nodes=0,3 names node 3, but nodes=2 has nodes 0, 1');
    expect(bad('memoryless=1')).toThrow(/need more than one node/);
    // The panes never throw (the page lays out from them): one node, and the story says why.
    const v = read('nodes=2&memoryless=0,1&kernel=7.1').values;
    expect(slubStepView.panes(v)[0]?.world.numa).toBeUndefined();
    return expect(slubStepView.story(v, () => Promise.resolve({ objects: 8, order: 0, size: 512, fallbackOrder: 0, fallbackObjects: 8 }))).rejects.toThrow('leaves no node with memory');
  });
});

describe('the snapshot trailer', () => {
  it('round-trips, with unknown counts at a stop', () => {
    const n: NumaState = {
      nodes: [
        { nid: 0, hasMemory: true, hasBarn: true, nrPartial: 2, nrSlabs: 3, totalObjects: 24, barnFull: 1, barnEmpty: 0 },
        { nid: 1, hasMemory: false, hasBarn: false, nrPartial: null, nrSlabs: null, totalObjects: null, barnFull: null, barnEmpty: null },
      ],
      exact: false,
      onlineCpus: 0b0111,
      cpuNode: [0, 0, 0, 1, 0, 0, 0, 0],
      cpuMemNode: [0, 0, 0, 0, 0, 0, 0, 0],
      cpuBarnNode: [0, 0, 0, 0, 0, 0, 0, 0],
      barnSheafNode: new Map([[5, 0]]),
    };
    const bytes = encodeNuma(n);
    const padded = new Uint8Array(12 + bytes.byteLength);
    padded.set(bytes, 12);
    expect(decodeNuma(padded, 12)).toEqual(n);
    expect(decodeNuma(padded, 0)).toBeUndefined();
    expect(() => decodeNuma(padded.subarray(0, padded.byteLength - 4), 12)).toThrow('the NUMA trailer is cut short');
  });
});

let api: SlubApi;
let open: (world: unknown, script: unknown) => Session;
const live = new Set<Session>();
beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
  const raw = replaySessions(slubSessions(api));
  open = (world, script) => {
    const s = raw(world, script);
    live.add(s);
    return s;
  };
});
afterEach(() => {
  for (const s of live) s.dispose();
  live.clear();
});

/** The memoryless-barn story on `version`: the state after each of its operations. */
function story(version: string, cpus = 4) {
  const sc = scenarioById('memoryless-barn');
  if (!sc) throw new Error('no memoryless-barn story');
  const v = parseKernelVersion(version);
  const cfg: WorldConfig = scenarioConfig(sc, cpus, sc.defaultFastpath, sc.defaultBulk, undefined, v);
  const st = sc.build({ cpus, objects: api.geometryAt(cfg.objectSize, cpus, v).objects });
  const session = open(cfg, st.script);
  const r = session.load();
  // After the story's operation i (its set-up operations first).
  const after = (i: number): SlubSnapshot => decodeSnapshot(session.at(r.stops.findIndex((s) => s.micro === 0 && s.ops === (st.setup ?? 0) + i + 1)).snapshot);
  return { cfg, st, session, r, after };
}

describe('the memoryless-barn story, 7.0 against 7.1', () => {
  it('runs on the story\'s own machine: node 1 memoryless, the last CPU alone on it and offline at first', () => {
    expect(MEMORYLESS_MACHINE(4)).toEqual({ nodes: 2, cpuNode: [0, 0, 0, 1], memoryless: 2, offline: 8 });
    const { r, after, session } = story('7.1');
    expect(r.ops.every((o) => o.result >= 0), JSON.stringify(r.ops)).toBe(true);
    const start = decodeSnapshot(session.at(0).snapshot);
    expect(start.numa?.onlineCpus).toBe(0b0111);
    expect(start.numa?.nodes.map((n) => n.hasBarn)).toEqual([true, false]);
    expect(after(0).numa?.onlineCpus).toBe(0b1111);
  });

  for (const version of ['7.0', '7.1']) {
    const ownBarn = version === '7.1';
    it(`on ${version}: ${ownBarn ? 'CPU 3 coming online gives node 1 a barn; the full sheaf goes there' : 'node 1 gets no barn; CPU 3 uses node 0\'s, where CPU 0 finds the full sheaf'}`, () => {
      const { after, session, r } = story(version);
      const online = after(0);
      expect(online.numa?.nodes.map((n) => n.hasBarn)).toEqual([true, ownBarn]);
      expect(online.numa?.cpuBarnNode[3]).toBe(ownBarn ? 1 : 0);
      // "new ones on node 0": every slab CPU 3 allocated is node 0's.
      const bulk = after(1);
      expect(bulk.numa?.nodes[0]?.nrSlabs).toBeGreaterThan(0);
      expect(bulk.numa?.nodes[1]?.nrSlabs).toBe(0);
      // "puts the full main into the barn": barn_put on CPU 3, into node 0's barn (7.0) or node 1's (7.1).
      const put = after(5);
      expect(stat(put, 'BARN_PUT', 3)).toBe(1);
      expect(put.numa?.nodes.map((n) => n.barnFull)).toEqual(ownBarn ? [0, 1] : [1, 0]);
      // The figure: each node with memory has its partial list, each barn its section, and 7.0's CPU 3 a link to node 0's barn.
      const l = layoutSnapshot(put, { width: 1000, showFull: false });
      const titles = l.sections.map((s) => s.title);
      expect(titles).toEqual(expect.arrayContaining(['Node 0', 'Node 1 (memoryless)', 'Barn · node 0', 'Node 0 partial']));
      expect(l.sections.find((s) => s.title === 'Barn · node 1')?.lines).toEqual(ownBarn ? ['1 full, 0 empty', 'sheaf capacity 4'] : ['none', "its CPUs use node 0's"]);
      expect(l.figure?.barns).toBe(ownBarn ? 2 : 1);
      expect(titles.includes('Node 1 partial')).toBe(false);
      expect(l.links).toEqual(ownBarn ? [] : [expect.objectContaining({ cpu: 3, node: 0 })]);
      const barnSec = l.sections.find((s) => s.title === `Barn · node ${ownBarn ? 1 : 0}`);
      const fullBox = l.sheaves.find((b) => put.sheaves.sheaf.place[b.sheaf] === SheafPlace.BARN_FULL);
      expect(fullBox && barnSec && fullBox.y >= barnSec.y && fullBox.y < barnSec.y + barnSec.h).toBe(true);
      // "barn_get hands it over" (7.0) against "barn_get fails and a sheaf is refilled" (7.1): CPU 0's counters over the last operation.
      const end = decodeSnapshot(session.at(r.stops.length - 1).snapshot);
      const flushed = after(6);
      const moved = (item: StatName) => stat(end, item, 0) - stat(flushed, item, 0);
      expect(moved('BARN_GET')).toBe(ownBarn ? 0 : 1);
      expect(moved('BARN_GET_FAIL')).toBe(ownBarn ? 1 : 0);
      expect(moved('SHEAF_REFILL') > 0).toBe(ownBarn);
    });
  }

  it('splits the partial list by node and tags the slabs, on a machine with memory on both nodes', () => {
    const cfg: WorldConfig = { ...scenarioConfig(undefined, 2, 'cmpxchg', 'detached', undefined, parseKernelVersion('7.1')), numa: { nodes: 2, cpuNode: [0, 1], memoryless: 0 } };
    const n = api.geometryAt(cfg.objectSize, 2, parseKernelVersion('7.1')).objects;
    // CPU 1 (node 1) bulk-allocates two slabs of node 1, CPU 0 frees one object of each: remote frees, to node 1's list.
    const script = { ops: [{ kind: 'allocBulk', cpu: 1, count: 2 * n }, { kind: 'freeBulk', cpu: 0, refs: [{ allocOf: 0, nth: 0 }, { allocOf: 0, nth: n }] }], irqs: [] };
    const session = open(cfg, script);
    const r = session.load();
    const end = decodeSnapshot(session.at(r.stops.length - 1).snapshot);
    expect(end.numa?.nodes.map((x) => x.nrPartial)).toEqual([0, 2]);
    expect(nodePartialOf(end, 1)).toHaveLength(2);
    expect(nodePartialOf(end, 0)).toEqual([]);
    for (const slab of nodePartialOf(end, 1)) expect(end.slab.nid[slab]).toBe(1);
    const l = layoutSnapshot(end, { width: 1000, showFull: false });
    const sec = l.sections.find((s) => s.title === 'Node 1 partial');
    expect(l.boxes.filter((b) => sec && b.y >= sec.y && b.y < sec.y + sec.h)).toHaveLength(2);
    const [first] = nodePartialOf(end, 1);
    expect(describeSlab(end, first ?? -1)).toMatch(/is on node 1's partial list \(position 1\)\..*Its memory is node 1's \(slab_nid\)\./);
  });

  it('reads every slab\'s node from its record (slab_nid): a CPU slab is its CPU\'s memory node\'s', () => {
    const v = parseKernelVersion('6.17');
    const cpuSlabNode = (memoryless: number) => {
      const cfg: WorldConfig = { ...scenarioConfig(undefined, 2, 'cmpxchg', 'detached', undefined, v), numa: { nodes: 2, cpuNode: [0, 1], memoryless } };
      const n = api.geometryAt(cfg.objectSize, 2, v).objects;
      // CPU 1 fills one slab (full, on no list) and takes a second as its CPU slab.
      const session = open(cfg, { ops: [{ kind: 'allocBulk', cpu: 1, count: n + 1 }], irqs: [] });
      const end = decodeSnapshot(session.at(session.load().stops.length - 1).snapshot);
      const own = slabIndexOf(end, end.cpus[1]?.slabPfn ?? 0);
      const full = Array.from({ length: end.nslabs }, (_, i) => i).filter((i) => i !== own);
      expect(full).toHaveLength(1);
      return { cpu: end.slab.nid[own], full: end.slab.nid[full[0] ?? 0], text: describeSlab(end, own) };
    };
    expect(cpuSlabNode(0)).toEqual({ cpu: 1, full: 1, text: expect.stringMatching(/CPU 1's CPU slab.*Its memory is node 1's \(slab_nid\)\./) });
    // Node 1 without memory: CPU 1's slabs come from node 0 (numa_mem_id).
    expect(cpuSlabNode(2)).toMatchObject({ cpu: 0, full: 0 });
  });

  it('steps through CPU hotplug: D<cpu> stops at its flush\'s slab frees, O<cpu> is one step that makes the barn', () => {
    const v = parseKernelVersion('7.1');
    const cfg: WorldConfig = { ...scenarioConfig(undefined, 2, 'cmpxchg', 'detached', undefined, v), numa: { nodes: 2, cpuNode: [0, 1], memoryless: 2 } };
    const frees = Array.from({ length: 6 }, (_, nth) => ({ allocOf: 0, nth }));
    // CPU 1 (memoryless node 1) fills its sheaves, goes offline (flushing them), and comes back (7.1: node 1 keeps its barn).
    const script = { ops: [{ kind: 'allocBulk', cpu: 1, count: 6 }, { kind: 'freeBulk', cpu: 1, refs: frees }, { kind: 'cpuDead', cpu: 1 }, { kind: 'cpuOnline', cpu: 1 }], irqs: [] };
    const session = open(cfg, script);
    const r = session.load();
    const inside = (op: number) => r.stops.filter((st) => st.opIndex === op && st.micro > 0);
    // The bulk alloc's 6, and slub_cpu_dead's result: the 6 objects the bulk free left in CPU 1's sheaves, flushed.
    expect(r.ops.map((o) => o.result)).toEqual([6, 0, 6, 0]);
    expect(inside(2).length).toBeGreaterThan(0);
    expect(inside(3)).toEqual([]);
    // Every micro-step of the flush shows CPU 1 already offline, its sheaves emptying.
    const first = decodeSnapshot(session.at(r.stops.indexOf(inside(2)[0] ?? r.stops[0]!)).snapshot);
    expect(first.numa?.onlineCpus).toBe(0b01);
    expect(stat(first, 'SHEAF_FLUSH', 1)).toBeGreaterThan(0);
    const end = decodeSnapshot(session.at(r.stops.length - 1).snapshot);
    expect(end.numa?.onlineCpus).toBe(0b11);
  });

  it('draws nodes before sheaves too (6.17): each node its CPUs and list, no barn', () => {
    const v = parseKernelVersion('6.17');
    const cfg: WorldConfig = { ...scenarioConfig(scenarioById('slow-path'), 4, 'cmpxchg', 'detached', undefined, v), numa: { nodes: 2, cpuNode: [0, 0, 1, 1], memoryless: 0 } };
    const session = open(cfg, { ops: [{ kind: 'alloc', cpu: 0 }, { kind: 'alloc', cpu: 2 }, { kind: 'flush', cpu: 2 }], irqs: [] });
    const r = session.load();
    const end = decodeSnapshot(session.at(r.stops.length - 1).snapshot);
    const l = layoutSnapshot(end, { width: 1000, showFull: true });
    expect(l.sections.map((s) => s.title)).toEqual(['Node 0', 'CPU 0', 'CPU 1', 'Node 0 partial', 'Node 1', 'CPU 2', 'CPU 3', 'Node 1 partial', 'Full (no list)']);
    // The CPUs a story does not use fold under their own node (shown: the row to fold them follows their lanes).
    const folded = layoutSnapshot(end, { width: 1000, showFull: true, cpus: [0, 2] });
    expect(folded.sections.map((s) => s.title)).toEqual(['Node 0', 'CPU 0', '+ CPU 1', 'Node 0 partial', 'Node 1', 'CPU 2', '+ CPU 3', 'Node 1 partial', 'Full (no list)']);
    const shown = layoutSnapshot(end, { width: 1000, showFull: true, cpus: [0, 2], allCpus: true });
    expect(shown.sections.map((s) => s.title).slice(0, 5)).toEqual(['Node 0', 'CPU 0', 'CPU 1', '− fold CPU 1', 'Node 0 partial']);
    // CPU 2's slab, flushed, is node 1's: on node 1's list.
    expect(nodePartialOf(end, 1)).toHaveLength(1);
    expect(l.figure).toMatchObject({ nodes: 2, barns: 0, links: 0 });
  });
});
