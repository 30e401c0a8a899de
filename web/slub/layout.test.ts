// Layout and hit-testing over a real snapshot (the Node build of the core).
import { beforeAll, describe, expect, it } from 'vitest';
import { describeObject, describeSheaf, describeSlab } from './describe';
import { hitTest, keyOrder, layoutSnapshot, type KeyStop } from './layout';
import type { ObjRef, Script } from './script';
import { loadNodeCore } from '../test/node-core';
import { parseKernelVersion, SlubApi, type SlubModule } from './slub-api';
import { decodeSnapshot, ObjState, SheafPlace, slabIndexOf, SlabList, type SlubSnapshot } from './snapshot';

let snap: SlubSnapshot;
beforeAll(async () => {
  const api = new SlubApi(await loadNodeCore<SlubModule>());
  const w = api.createWorld({ cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 });
  const n = api.geometry(512, 2).objects;
  // CPU 0: one full slab and a CPU slab; CPU 1 flushed with a slab on the node list.
  const script: Script = {
    ops: [{ kind: 'allocBulk', cpu: 0, count: n + 3 }, { kind: 'alloc', cpu: 1 }, { kind: 'flush', cpu: 1 }],
    irqs: [],
  };
  api.run(w, script, 3, 0);
  snap = decodeSnapshot(api.snapshot(w));
  api.destroyWorld(w);
});

it('places every slab in its section and finds each slot under the pointer', () => {
  const l = layoutSnapshot(snap, { width: 1000, showFull: true });
  expect(l.compact).toBe(false);
  expect(l.boxes).toHaveLength(snap.nslabs);
  expect(l.sections.map((s) => s.title)).toEqual(['CPU 0', 'CPU 1', 'Node partial', 'Full (no list)']);
  for (const b of l.boxes) {
    const sec = l.sections.find((s) => b.y >= s.y && b.y < s.y + s.h);
    const list = snap.slab.list[b.slab];
    expect(sec?.title).toBe(list === SlabList.NODE_PARTIAL ? 'Node partial' : list === SlabList.NONE ? 'Full (no list)' : `CPU ${snap.slab.cpu[b.slab]}`);
    const hit = hitTest(l, snap, b.x + 5.5 * b.slotW, b.stripY + 2);
    expect(hit).toEqual({ slab: b.slab, index: 5 });
  }
  expect(hitTest(l, snap, 2, 2)).toBeNull();
  // Hidden full slabs are counted, not drawn.
  const hidden = layoutSnapshot(snap, { width: 1000, showFull: false });
  expect(hidden.hiddenFull).toBe(1);
  expect(hidden.boxes).toHaveLength(snap.nslabs - 1);
});

it('describes a node-partial slab and an object on a CPU freelist in words', () => {
  const node = snap.nodePartial[0] ?? -1;
  expect(describeSlab(snap, node)).toContain('the node partial list (position 1)');
  const cpuSlab = [...Array(snap.nslabs).keys()].find((i) => snap.slab.list[i] === SlabList.CPU_SLAB && snap.slab.cpu[i] === 0) ?? -1;
  const head = snap.cpus[0]?.freelistIndex ?? 0;
  const text = describeObject(snap, cpuSlab, head, null);
  expect(text).toContain("It is number 1 on CPU 0's freelist: previous none (the head)");
  expect(text).toContain('Never allocated.');
});

describe('sheaves (7.0)', () => {
  let s7: SlubSnapshot;
  beforeAll(async () => {
    const api = new SlubApi(await loadNodeCore<SlubModule>());
    const w = api.createWorldAt(
      { cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 },
      { version: parseKernelVersion('7.0'), sheafCapacity: 4, exactCapacity: true },
    );
    // CPU 0 bulk-allocates 12 and frees them one by one: main fills, swaps with the empty spare, fills again and goes to the barn full.
    const script: Script = { ops: [{ kind: 'allocBulk', cpu: 0, count: 12 }], irqs: [] };
    api.run(w, script, 1, 0);
    const taken = decodeSnapshot(api.snapshot(w));
    const refs: ObjRef[] = [];
    for (let i = 0; i < taken.nslabs; i++)
      for (let j = 0; j < (taken.slab.objects[i] ?? 0); j++) if (taken.obj.state[(taken.slab.firstObj[i] ?? 0) + j] === ObjState.ALLOCATED) refs.push({ pfn: taken.slab.pfn[i] ?? 0, index: j });
    api.run(w, { ops: refs.map((r) => ({ kind: 'free', cpu: 0, refs: [r] })), irqs: [] }, refs.length, 0);
    s7 = decodeSnapshot(api.snapshot(w));
    api.destroyWorld(w);
  });

  it('stacks each CPU\'s sheaves in its lane and the barn\'s beside the node list; 7.0 lanes have no freelist or tid', () => {
    for (const width of [375, 1280]) {
      const l = layoutSnapshot(s7, { width, showFull: true });
      expect(l.sections.map((x) => x.title)).toEqual(['CPU 0', 'CPU 1', 'Barn', 'Node partial', 'Full (no list)']);
      const cpu0 = l.sections[0];
      expect(cpu0?.lines.join(' ')).not.toMatch(/tid|freelist/);
      expect(cpu0?.lines[0]).toMatch(/^main: \d+\/4$/);
      // Every sheaf is drawn once, inside the canvas, in the section of its place.
      expect(l.sheaves).toHaveLength(s7.sheaves.nsheaves);
      for (const b of l.sheaves) {
        expect(b.x + b.slots * b.slotW).toBeLessThanOrEqual(width);
        const sec = l.sections.find((x) => b.y >= x.y && b.y < x.y + x.h);
        const place = s7.sheaves.sheaf.place[b.sheaf];
        expect(sec?.title).toBe(place === SheafPlace.BARN_FULL || place === SheafPlace.BARN_EMPTY ? 'Barn' : `CPU ${s7.sheaves.sheaf.cpu[b.sheaf]}`);
      }
    }
  });

  it('hits a sheaf slot (its object), an empty slot and the label, and says where the object is', () => {
    const l = layoutSnapshot(s7, { width: 1280, showFull: true });
    const main = s7.sheaves.pcs[0]?.main ?? -1;
    const b = l.sheaves.find((x) => x.sheaf === main);
    if (!b) throw new Error('main not drawn');
    const size = s7.sheaves.sheaf.size[main] ?? 0;
    expect(size).toBeGreaterThan(0);
    const hit = hitTest(l, s7, b.x + 0.5 * b.slotW, b.stripY + 2);
    expect(hit?.sheaf).toBe(main);
    expect(hit?.slot).toBe(0);
    expect(hit?.slab).toBe(slabIndexOf(s7, s7.sheaves.entryPfn[s7.sheaves.sheaf.first[main] ?? 0] ?? 0));
    expect(describeObject(s7, hit?.slab ?? -1, hit?.index ?? -1, null)).toMatch(/in a CPU sheaf \(main or spare\).*slot 0 of CPU 0's main sheaf #\d+ \(\d of 4 objects\)/);
    expect(hitTest(l, s7, b.x + 2, b.y + 2)).toEqual({ slab: -1, index: -1, sheaf: main, slot: -1 });
    expect(describeSheaf(s7, main)).toMatch(/^CPU 0's main sheaf #\d+ \(\d of 4 objects\)\. alloc_from_pcs pops slot/);
    if (size < 4) expect(hitTest(l, s7, b.x + (size + 0.5) * b.slotW, b.stripY + 2)).toMatchObject({ slab: -1, sheaf: main, slot: size });
    const barn = l.sheaves.find((x) => s7.sheaves.sheaf.place[x.sheaf] === SheafPlace.BARN_FULL);
    if (!barn) throw new Error('no full sheaf in the barn');
    expect(describeSheaf(s7, barn.sheaf)).toMatch(/^A full sheaf in the barn #\d+ \(4 of 4 objects\)/);
  });

  it('steps the arrow keys through sheaves and slabs as drawn: a lane\'s sheaves before its slabs, the barn before the node list', () => {
    const l = layoutSnapshot(s7, { width: 1280, showFull: true });
    const order = keyOrder(s7, l);
    expect(order).toHaveLength(s7.sheaves.nsheaves + l.boxes.length);
    const sectionOf = (k: KeyStop) => {
      const b = k.sheaf !== undefined ? l.sheaves.find((x) => x.sheaf === k.sheaf) : l.boxes.find((x) => x.slab === k.slab);
      return l.sections.findIndex((x) => (b?.y ?? -1) >= x.y && (b?.y ?? -1) < x.y + x.h);
    };
    // Section by section, top to bottom; within a section, sheaves first.
    const sections = order.map(sectionOf);
    expect(sections).toEqual([...sections].sort((a, b) => a - b));
    for (let i = 1; i < order.length; i++)
      if (sections[i] === sections[i - 1]) expect(order[i - 1]?.slab !== undefined && order[i]?.sheaf !== undefined, `stop ${i}`).toBe(false);
    expect(order[0]).toEqual({ sheaf: s7.sheaves.pcs[0]?.main });
    const barn = order.findIndex((k) => k.sheaf !== undefined && s7.sheaves.sheaf.place[k.sheaf] === SheafPlace.BARN_FULL);
    const node = order.findIndex((k) => k.slab !== undefined && s7.slab.list[k.slab] === SlabList.NODE_PARTIAL);
    expect(barn).toBeGreaterThan(0);
    if (node >= 0) expect(barn).toBeLessThan(node);
    // Away from the canvas: every sheaf record, then every slab.
    expect(keyOrder(s7).slice(0, 2)).toEqual([{ sheaf: 0 }, { sheaf: 1 }]);
  });
});
