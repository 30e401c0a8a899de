// Layout and hit-testing over a real snapshot (the Node build of the core).
import { beforeAll, expect, it } from 'vitest';
import { describeObject, describeSlab } from './describe';
import { hitTest, layoutSnapshot } from './layout';
import type { Script } from './script';
import { loadNodeCore } from '../test/node-core';
import { SlubApi, type SlubModule } from './slub-api';
import { decodeSnapshot, SlabList, type SlubSnapshot } from './snapshot';

let snap: SlubSnapshot;
beforeAll(async () => {
  const api = new SlubApi(await loadNodeCore<SlubModule>());
  const w = api.createWorld({ cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 });
  const n = api.geometry(512, 2)[7] ?? 16;
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
