// The kernel view's model on the recorded snapshots of this project's build
// machine (public/samples/snapshot-6.18*.json, written by `slablab snapshot`):
// the decoder (the good files, and each class of bad file with the message
// it must give), the memory accounting against the snapshot's own counts,
// the diff of the two, and the adapter to the SLUB drawing.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { hitTest, layoutSnapshot } from '../slub/layout';
import { NONE32, ObjState, SlabList, slabIndexOf } from '../slub/snapshot';
import { cacheMemory, HISTOGRAM_BINS, occupancyBin, snapshotMemory, sortMemory, totals } from './accounting';
import { anomalies } from './anomalies';
import { diffCaches, diffSlabs, listedSlabs } from './diff';
import { decodeKernelSnapshot, KernelSnapshotError, SNAPSHOT_FORMAT, type KCache, type KernelSnapshot } from './snapshot-file';
import { toSlub } from './to-slub';

const SAMPLES = new URL('../../public/samples/', import.meta.url);
const textA = readFileSync(new URL('snapshot-6.18.json', SAMPLES), 'utf8');
const textB = readFileSync(new URL('snapshot-6.18-b.json', SAMPLES), 'utf8');
const a = decodeKernelSnapshot(textA);
const b = decodeKernelSnapshot(textB);
type Raw = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- a JSON document edited to break it

/** The sample's JSON, changed by `edit`, as the bytes of a file. */
function broken(edit: (doc: Raw) => void): Uint8Array {
  const doc = JSON.parse(textA) as Raw;
  edit(doc);
  return new TextEncoder().encode(JSON.stringify(doc));
}

/** The first cache with a node partial slab that has free objects. */
function cacheWithPartial(s: KernelSnapshot): KCache {
  const c = s.caches.find((x) => x.nodes.some((n) => n.partial.some((p) => p.freelist.length > 1 && !p.freelistError)));
  if (!c) throw new Error('the sample has no cache with a partial slab');
  return c;
}
const rawIndex = (name: string) => (JSON.parse(textA) as Raw).caches.findIndex((c: Raw) => c.name === name) as number;

describe('decodeKernelSnapshot', () => {
  it('reads the recorded samples', () => {
    for (const s of [a, b]) {
      expect(s.format).toBe(SNAPSHOT_FORMAT);
      expect(s.kernel.release).toMatch(/^\d+\.\d+/);
      expect(s.caches.length).toBeGreaterThan(50);
      expect(new Set(s.caches.map((c) => c.name)).size).toBe(s.caches.length);
    }
    // The bytes of the file read the same as its text.
    expect(decodeKernelSnapshot(new TextEncoder().encode(textA)).caches.length).toBe(a.caches.length);
  });

  const c0 = () => rawIndex(cacheWithPartial(a).name);
  const BAD: [string, Uint8Array | string, RegExp][] = [
    ['an empty file', new Uint8Array(0), /not a slablab snapshot: the file is empty/],
    ['a picture', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]), /binary data, not JSON \(it starts 89 50 4e 47/],
    ['a gzip file (a .slabcap)', new Uint8Array([0x1f, 0x8b, 8, 0, 0, 0, 0, 0]), /gzip-compressed/],
    ["the model's binary snapshot", new Uint8Array([0x53, 0x4c, 0x55, 0x42, 2, 0, 0, 0]), /SLUB model's binary snapshot/],
    ['text that is not JSON', 'slabinfo - version: 2.1\n', /the JSON does not parse/],
    ['a cut file', textA.slice(0, textA.length >> 1), /the JSON does not parse/],
    ['a JSON array', '[1, 2]', /the document is an array, not an object/],
    ['JSON without a format', '{"caches": []}', /no "format" field/],
    ['another tool\'s JSON', '{"format": "slablab-replay/1"}', /its format is "slablab-replay\/1", not "slablab-snapshot\/1"/],
    ['a later format version', broken((d) => (d.format = 'slablab-snapshot/2')), /snapshot format version 2: this page reads slablab-snapshot\/1/],
    ['a missing field', broken((d) => delete d.kernel.page_size), /^kernel: the field "page_size" is missing/],
    ['a string for a number', broken((d) => (d.caches[c0()].size = '64')), /^caches\[\d+\] \(.+\)\.size: expected a whole number, found the string "64"/],
    ['a number out of range', broken((d) => (d.caches[c0()].order = -1)), /\.order: -1 is outside 0\.\.20/],
    ['an address as a number', broken((d) => (d.caches[c0()].address = 12345)), /\.address: expected an address as a hex string/],
    ['an address that is not hex', broken((d) => (d.caches[c0()].nodes[0].partial[0].freelist[0] = '0xzz')), /\.nodes\[0\]\.partial\[0\]\.freelist\[0\]: expected an address as a hex string/],
    ['inuse above objects', broken((d) => (d.caches[c0()].nodes[0].partial[0].inuse = 70000)), /partial\[0\]\.inuse: 70000 is outside 0\.\.65535/],
    ['inuse above its objects', broken((d) => {
      const s = d.caches[c0()].nodes[0].partial[0];
      s.inuse = s.objects + 1;
    }), /partial\[0\]\.inuse: \d+ is more than the slab's \d+ objects/],
    ['a CPU past nr_cpus', broken((d) => (d.caches[c0()].cpus[0].cpu = d.kernel.nr_cpus)), /\.cpus\[0\]\.cpu: \d+ is outside 0\.\.\d+/],
    ['an object for an array', broken((d) => (d.caches[c0()].nodes = {})), /\.nodes: expected an array, found an object/],
    ['a cache twice', broken((d) => d.caches.push(d.caches[0])), /a second cache of this name/],
  ];
  for (const [what, bytes, says] of BAD)
    it(`refuses ${what} with a message naming what is wrong`, () => {
      let err: unknown = null;
      try {
        decodeKernelSnapshot(bytes);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(KernelSnapshotError);
      expect((err as Error).message).toMatch(says);
    });
});

describe('memory accounting', () => {
  const rows = snapshotMemory(a);

  it("splits every cache's objects into parts that add up to the snapshot's total_objects", () => {
    a.caches.forEach((c, i) => {
      const m = rows[i]!;
      const objects = c.nodes.reduce((s, n) => s + n.totalObjects, 0);
      expect(m.objects).toBe(objects);
      // In use is what is left: the free parts must not exceed the objects (no clamp hides an overcount).
      expect(m.partialFree + m.cpuFree + m.sheafObjects + m.unread).toBeLessThanOrEqual(objects);
      expect(m.inUse + m.partialFree + m.cpuFree + m.sheafObjects + m.unread).toBe(objects);
      expect(m.slabBytes).toBe(c.nodes.reduce((s, n) => s + n.nrSlabs, 0) * (a.kernel.pageSize << c.order));
      expect(m.tailBytes).toBe(m.slabBytes - objects * c.size);
    });
  });

  it("agrees with the snapshot's own totals: free objects on slab and CPU freelists, objects in sheaves", () => {
    let checked = 0;
    let sheaves = 0;
    for (const c of a.caches) {
      const t = c.totals;
      if (!t || anomalies(c, a.kernel.pageSize).length) continue;
      const m = cacheMemory(c, a.kernel.pageSize);
      expect(m.partialFree + m.cpuFree, c.name).toBe(t.freeOnSlabFreelists + t.onCpuFreelists);
      expect(m.sheafObjects, c.name).toBe(t.inSheaves);
      const listed = listedSlabs(c);
      expect(listed.size, c.name).toBe(t.listedSlabs);
      checked++;
      if (t.inSheaves) sheaves++;
    }
    expect(checked).toBeGreaterThan(a.caches.length / 2);
    expect(sheaves).toBeGreaterThan(0);
  });

  it('counts the free objects of the partial slabs as their freelists list them', () => {
    let checked = 0;
    for (const c of a.caches) {
      if (anomalies(c, a.kernel.pageSize).length) continue;
      const m = cacheMemory(c, a.kernel.pageSize);
      const listed = c.nodes.reduce((s, n) => s + n.partial.reduce((t, p) => t + p.freelist.length, 0), 0);
      expect(m.partialFree).toBe(listed);
      const cpuListed = c.cpus.reduce((s, k) => s + k.freelist.length + (k.slab?.freelist.length ?? 0) + k.partial.reduce((t, p) => t + p.freelist.length, 0), 0);
      expect(m.cpuFree).toBe(cpuListed);
      checked++;
    }
    expect(checked).toBeGreaterThan(a.caches.length / 2);
  });

  it('puts every partial slab read in one bin of the occupancy histogram', () => {
    for (const [i, c] of a.caches.entries()) {
      const m = rows[i]!;
      const partial = c.nodes.reduce((s, n) => s + n.partial.length, 0) + c.cpus.reduce((s, k) => s + k.partial.length, 0);
      expect(m.histogram.length).toBe(HISTOGRAM_BINS);
      expect(m.histogram.reduce((s, n) => s + n, 0)).toBe(partial);
    }
    expect([occupancyBin(0, 32), occupancyBin(3, 32), occupancyBin(31, 32), occupancyBin(32, 32)]).toEqual([0, 0, 9, 9]);
  });

  it('sorts by waste, fragmentation and size, and the other way round', () => {
    const waste = sortMemory(rows, 'waste').map((r) => r.wasteBytes);
    expect(waste).toEqual([...waste].sort((x, y) => y - x));
    const frag = sortMemory(rows, 'fragmentation').map((r) => r.fragmentation);
    expect(frag).toEqual([...frag].sort((x, y) => y - x));
    const mem = sortMemory(rows, 'memory', true).map((r) => r.slabBytes);
    expect(mem).toEqual([...mem].sort((x, y) => x - y));
    expect(sortMemory(rows, 'name').map((r) => r.name)).toEqual(rows.map((r) => r.name).sort((x, y) => x.localeCompare(y)));
    expect(totals(rows).slabBytes).toBe(rows.reduce((s, r) => s + r.slabBytes, 0));
  });
});

describe('diff', () => {
  it('finds no change between a snapshot and itself', () => {
    expect(diffCaches(a, a).every((d) => d.bytes === 0 && d.slabs === 0 && d.inUse === 0)).toBe(true);
    for (const c of a.caches.slice(0, 40)) expect(diffSlabs(c, c)).toEqual([]);
  });

  it("gives each cache's change between the two samples, adding up to the machine's", () => {
    const deltas = diffCaches(a, b);
    const sum = (s: KernelSnapshot) => totals(snapshotMemory(s)).slabBytes;
    expect(deltas.reduce((s, d) => s + d.bytes, 0)).toBe(sum(b) - sum(a));
    // Largest change first.
    const size = deltas.map((d) => Math.abs(d.bytes) + Math.abs(d.inUse));
    expect(size).toEqual([...size].sort((x, y) => y - x));
  });

  it('names the slabs that filled, emptied, appeared and left, by address', () => {
    const c = cacheWithPartial(a);
    const n = c.nodes[0]!;
    const [p0, p1, p2] = n.partial;
    expect(p0 && p1).toBeTruthy();
    // A copy where p0 filled by one, p1 left the lists, and a new slab appeared.
    const newSlab = { ...p1!, address: '0xffffea0000000040', inuse: 1 };
    const after: KCache = {
      ...c,
      nodes: [{ ...n, partial: [{ ...p0!, inuse: p0!.inuse + 1, freelist: p0!.freelist.slice(1) }, ...(p2 ? [p2] : []), newSlab, ...n.partial.slice(3)] }, ...c.nodes.slice(1)],
    };
    const changes = diffSlabs(c, after);
    expect(changes.find((x) => x.address === p0!.address)).toMatchObject({ kind: 'filled', before: { inuse: p0!.inuse }, after: { inuse: p0!.inuse + 1 } });
    expect(changes.find((x) => x.address === p1!.address)).toMatchObject({ kind: 'left', after: null });
    expect(changes.find((x) => x.address === newSlab.address)).toMatchObject({ kind: 'appeared', before: null, after: { inuse: 1 } });
    expect(changes.length).toBe(3);
    expect(listedSlabs(after).size).toBe(listedSlabs(c).size);
  });
});

describe('the adapter to the SLUB drawing', () => {
  it("holds a cache's listed slabs with their real objects free, in their real freelist order", () => {
    const c = cacheWithPartial(a);
    const ks = toSlub(a, c);
    const s = ks.snap;
    // Records sorted by "pfn", as the SLUB snapshot requires, and found by it.
    for (let i = 0; i < s.nslabs; i++) expect(slabIndexOf(s, s.slab.pfn[i]!)).toBe(i);
    const listed = listedSlabs(c);
    expect(ks.slabs.filter((w) => !w.inferred).length).toBe(listed.size);
    expect(s.node.nrPartial).toBe(c.nodes.reduce((x, n) => x + n.nrPartial, 0));
    for (const n of c.nodes)
      for (const p of n.partial) {
        const rec = ks.slabs.findIndex((w) => w.address === p.address);
        expect(rec).toBeGreaterThanOrEqual(0);
        expect(s.slab.list[rec]).toBe(SlabList.NODE_PARTIAL);
        expect(s.slab.inuse[rec]).toBe(p.inuse);
        // Walk the drawn freelist from its head: the same addresses in the same order.
        const walked: string[] = [];
        const first = s.slab.firstObj[rec]!;
        for (let at = s.slab.freelistHead[rec]!; at !== NONE32 && walked.length <= p.objects; at = s.obj.next[first + at]!) {
          expect(s.obj.state[first + at]).toBe(ObjState.SLAB_FREE);
          walked.push(ks.objectAddress(rec, at));
        }
        expect(walked).toEqual(p.freelist);
        let free = 0;
        for (let j = 0; j < p.objects; j++) if (s.obj.state[first + j] === ObjState.SLAB_FREE) free++;
        expect(free).toBe(p.freelist.length);
      }
    expect(ks.stray).toEqual([]);
  });

  it('finds the full slabs of the objects in sheaves, no more than the cache has', () => {
    let inferred = 0;
    for (const c of a.caches.filter((x) => x.sheafCapacity > 0)) {
      const ks = toSlub(a, c);
      const n = ks.slabs.filter((w) => w.inferred).length;
      const full = c.nodes.reduce((x, nd) => x + nd.nrSlabs - nd.nrPartial, 0) - c.cpus.reduce((x, k) => x + (k.slab ? 1 : 0) + k.partial.length, 0);
      expect(ks.snap.fullSlabs).toBe(full);
      // An object's slab the snapshot did not list is full, or one of the partial slabs it did not read.
      expect(n).toBeLessThanOrEqual(full + c.nodes.reduce((x, nd) => x + nd.partialLeftOut, 0));
      expect(ks.stray).toEqual([]);
      // Each inferred slab holds at least one object of a sheaf, at an object's boundary.
      for (const [rec, w] of ks.slabs.entries()) {
        if (!w.inferred) continue;
        const first = ks.snap.slab.firstObj[rec]!;
        const held = Array.from({ length: ks.snap.slab.objects[rec]! }, (_, j) => ks.snap.obj.state[first + j]).filter((st) => st === ObjState.CPU_SHEAF || st === ObjState.BARN || st === ObjState.RCU);
        expect(held.length).toBeGreaterThan(0);
      }
      inferred += n;
    }
    expect(inferred).toBeGreaterThan(0);
  });

  it("marks each CPU's freelist and sheaves, and finds objects by address", () => {
    let cpuChecked = 0;
    let sheafChecked = 0;
    for (const c of a.caches) {
      const ks = toSlub(a, c);
      const s = ks.snap;
      for (const [k, cpu] of c.cpus.entries()) {
        if (cpu.slab && cpu.freelist.length && !anomalies(c, a.kernel.pageSize).length) {
          const rec = slabIndexOf(s, s.cpus[k]!.slabPfn);
          expect(ks.slabs[rec]!.address).toBe(cpu.slab.address);
          expect(s.cpus[k]!.freelistLength).toBe(cpu.freelist.length);
          const head = ks.find(cpu.freelist[0]!);
          expect(head).toEqual({ slab: rec, index: s.cpus[k]!.freelistIndex });
          expect(s.obj.state[s.slab.firstObj[rec]! + head!.index]).toBe(ObjState.CPU_FREE);
          cpuChecked++;
        }
        for (const sh of [cpu.sheaves?.main, cpu.sheaves?.spare]) {
          if (!sh?.size) continue;
          for (const o of sh.objects) {
            const p = ks.find(o);
            expect(p, `${c.name}: sheaf object ${o}`).not.toBeNull();
            expect(s.obj.state[s.slab.firstObj[p!.slab]! + p!.index]).toBe(ObjState.CPU_SHEAF);
          }
          sheafChecked++;
        }
      }
      // The drawing lays it out and hits what it drew.
      const l = layoutSnapshot(s, { width: 900, showFull: false });
      expect(l.boxes.length).toBe(s.nslabs - ks.slabs.filter((w) => w.inferred).length - ks.notDrawn);
      const box = l.boxes[0];
      if (box) expect(hitTest(l, s, box.x + 1, box.stripY + 1)).toMatchObject({ slab: box.slab, index: 0 });
    }
    expect(cpuChecked).toBeGreaterThan(0);
    expect(sheafChecked).toBeGreaterThan(0);
  });

  it("gives the drawing the slabs' addresses and the count of full slabs no list holds", () => {
    const c = a.caches.find((x) => x.cpus.some((k) => k.slab && k.freelist.length))!;
    const k = c.cpus.find((x) => x.slab && x.freelist.length)!;
    const ks = toSlub(a, c);
    const l = layoutSnapshot(ks.snap, { width: 900, showFull: false });
    const lane = l.sections.find((sec) => sec.title === `CPU ${k.cpu}`)!;
    expect(lane.lines.some((line) => line.startsWith(`slab ${k.slab!.address} · `))).toBe(true);
    expect(lane.lines.some((line) => line.startsWith(`freelist → ${k.slab!.address}:`))).toBe(true);
    const full = l.sections.find((sec) => sec.title === 'Full (no list)')!;
    expect(full.lines).toEqual([`${ks.snap.fullSlabs} hidden`]);
    expect(ks.snap.fullSlabs).toBe(c.nodes.reduce((x, n) => x + n.nrSlabs - n.nrPartial, 0) - c.cpus.reduce((x, q) => x + (q.slab ? 1 : 0) + q.partial.length, 0));
  });

  it('draws at most maxSlabs node partial slabs and counts the rest', () => {
    const c = [...a.caches].sort((x, y) => y.nodes[0]!.partial.length - x.nodes[0]!.partial.length)[0]!;
    const read = c.nodes.reduce((x, n) => x + n.partial.length, 0);
    expect(read).toBeGreaterThan(3);
    const ks = toSlub(a, c, 2);
    expect(ks.notDrawn).toBe(read - 2);
    expect(ks.snap.nodePartial.length).toBe(2);
  });
});
