// to-slub.ts - one cache of a kernel snapshot as the SLUB view's decoded
// snapshot (web/slub/snapshot.ts SlubSnapshot), so the SLUB view's own
// layout and render draw a real cache: CPU lanes with their CPU slab, CPU
// partial slabs and sheaves, the barn, the node partial list, each slab a
// strip of its objects coloured by where they are, and the real freelists
// in their real order as arrows.
//
// The SLUB snapshot names slabs by pfn and objects by index in their slab.
// A real slab is named by its address: the slabs are numbered 1..n in the
// order of their memory (so the records are sorted by "pfn", as the SLUB
// snapshot requires) and `slabNames` gives the drawing their addresses;
// KernelSlubView keeps the way back (record -> address, object -> address).
//
// Objects held in sheaves mostly belong to full slabs, which no list holds
// and the snapshot does not read.  Such a slab is added as a full slab (on
// no list) found from the object's address: a slab's memory comes from the
// page allocator in a block of 2^order pages aligned to its size, so its base
// is the address rounded down to page_size << order; its objects other than
// those held in sheaves are in use (a slab on no list is full).  These
// records are marked inferred.  Of a long node partial list only the first
// `maxSlabs` are drawn (a canvas has a size limit); the rest are counted.

import { Era, NONE32, NO_CPU, ObjState, objectRecords, SheafPlace, slabRecords, type SheafPlaceValue, type SheavesState, type SlubSnapshot } from '../slub/snapshot';
import { SlabList } from '../slub/snapshot';
import type { KCache, KernelSnapshot, KSheaf, KSlab } from './snapshot-file';

/** Node partial slabs drawn at most, by default. */
export const MAX_DRAWN_SLABS = 400;

/** Where a drawn slab is, in words, and whether the snapshot read it or it was inferred. */
export interface SlabWhere {
  address: string | null;
  base: bigint;
  /** "CPU 1 slab", "CPU 0 partial #2", "node 0 partial #5", "no list (full; inferred ...)". */
  list: string;
  inferred: boolean;
}

export interface KernelSlub {
  snap: SlubSnapshot;
  /** Per slab record. */
  slabs: SlabWhere[];
  /** Node partial slabs read but not drawn (past maxSlabs). */
  notDrawn: number;
  /** Object addresses the adapter could place in no slab (a freelist or sheaf pointer outside every slab). */
  stray: string[];
  /** The address of object `index` of slab record `slab`. */
  objectAddress(slab: number, index: number): string;
  /** The slab record and index of an address, or null. */
  find(address: string): { slab: number; index: number } | null;
}

interface Rec {
  base: bigint;
  objects: number;
  inuse: number;
  frozen: boolean;
  list: number;
  cpu: number;
  position: number;
  where: SlabWhere;
  freelist: string[];
}

const hex = (v: bigint) => `0x${v.toString(16)}`;

/** Major and minor of a release string ("6.18.44-foo" -> [6, 18]); [0, 0] if it has none. */
export function releaseVersion(release: string): [number, number] {
  const m = /^(\d+)\.(\d+)/.exec(release);
  return m ? [Number(m[1]), Number(m[2])] : [0, 0];
}

/** Cache `c` of snapshot `k` as a SLUB snapshot. */
export function toSlub(k: KernelSnapshot, c: KCache, maxSlabs = MAX_DRAWN_SLABS): KernelSlub {
  const size = BigInt(c.size);
  const pad = BigInt(c.redLeftPad);
  const slabBytes = BigInt(k.kernel.pageSize << c.order);
  /** A slab's first byte: as the snapshot gives it, or (when it could not) its first free object's rounded down to the slab's size; -1: unknown. */
  const baseOf = (s: KSlab) => s.base ?? (s.freelist[0] ? BigInt(s.freelist[0]) - (BigInt(s.freelist[0]) % slabBytes) : -1n);
  const recs: Rec[] = [];
  const add = (s: KSlab, list: number, cpu: number, position: number, words: string) => {
    const base = baseOf(s);
    recs.push({ base, objects: s.objects, inuse: s.inuse, frozen: s.frozen, list, cpu, position, where: { address: s.address, base, list: words, inferred: false }, freelist: s.freelist });
  };
  for (const cpu of c.cpus) {
    if (cpu.slab) add(cpu.slab, SlabList.CPU_SLAB, cpu.cpu, 0, `CPU ${cpu.cpu} slab`);
    cpu.partial.forEach((s, i) => add(s, SlabList.CPU_PARTIAL, cpu.cpu, i, `CPU ${cpu.cpu} partial #${i + 1}`));
  }
  // Every node partial slab read is a record (a sheaf's object may be in any of them); the first maxSlabs are drawn.
  let position = 0;
  for (const n of c.nodes) n.partial.forEach((s, i) => add(s, SlabList.NODE_PARTIAL, NO_CPU, position++, `node ${n.node} partial #${i + 1}`));
  const notDrawn = Math.max(0, position - maxSlabs);

  // Sheaf objects of slabs on no list: their full slabs, found from the address.
  const byBase = () => [...recs].sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : 0));
  let sorted = byBase();
  const slabOf = (a: bigint): Rec | null => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((sorted[mid]?.base ?? 0n) <= a) lo = mid + 1;
      else hi = mid;
    }
    const r = sorted[lo - 1];
    return r && r.base >= 0n && a >= r.base + pad && a < r.base + pad + BigInt(r.objects) * size ? r : null;
  };
  const sheafLists: { sheaf: KSheaf; place: SheafPlaceValue; cpu: number }[] = [];
  for (const cpu of c.cpus) {
    const sh = cpu.sheaves;
    if (!sh) continue;
    if (sh.main) sheafLists.push({ sheaf: sh.main, place: SheafPlace.MAIN, cpu: cpu.cpu });
    if (sh.spare) sheafLists.push({ sheaf: sh.spare, place: SheafPlace.SPARE, cpu: cpu.cpu });
    if (sh.rcuFree) sheafLists.push({ sheaf: sh.rcuFree, place: SheafPlace.RCU_FREE, cpu: cpu.cpu });
  }
  for (const n of c.nodes) for (const sheaf of n.barn?.full ?? []) sheafLists.push({ sheaf, place: SheafPlace.BARN_FULL, cpu: NO_CPU });
  const inferred = new Map<bigint, Rec>();
  // With partial slabs left unread (--max-slabs), a slab the snapshot did not list may be one of them.
  const inferredWords = c.nodes.some((n) => n.partialLeftOut > 0)
    ? 'no list the snapshot read (full, or a partial slab past --max-slabs; inferred from an object in a sheaf)'
    : 'no list (full; inferred from an object in a sheaf)';
  for (const { sheaf } of sheafLists)
    for (const o of sheaf.objects) {
      const a = BigInt(o);
      if (slabOf(a)) continue;
      const base = a - (a % slabBytes);
      if (!inferred.has(base) && a >= base + pad && a < base + pad + BigInt(c.objectsPerSlab) * size)
        inferred.set(base, { base, objects: c.objectsPerSlab, inuse: c.objectsPerSlab, frozen: false, list: SlabList.NONE, cpu: NO_CPU, position: 0, where: { address: null, base, list: inferredWords, inferred: true }, freelist: [] });
    }
  if (inferred.size) {
    recs.push(...inferred.values());
    sorted = byBase();
  }

  const nslabs = sorted.length;
  const per = Math.max(1, c.objectsPerSlab, ...sorted.map((r) => r.objects));
  const slab = slabRecords(nslabs);
  const obj = objectRecords(nslabs * per);
  obj.state.fill(ObjState.ALLOCATED);
  obj.next.fill(NONE32);
  const recIndex = new Map<Rec, number>();
  sorted.forEach((r, i) => {
    recIndex.set(r, i);
    slab.pfn[i] = i + 1;
    slab.order[i] = c.order;
    slab.list[i] = r.list;
    slab.cpu[i] = r.cpu;
    slab.frozen[i] = r.frozen ? 1 : 0;
    slab.objects[i] = r.objects;
    slab.inuse[i] = r.inuse;
    slab.firstObj[i] = i * per;
    slab.freelistHead[i] = NONE32;
    slab.next[i] = NONE32;
    slab.position[i] = r.position;
    for (let j = r.objects; j < per; j++) obj.state[i * per + j] = ObjState.NO_OBJECT;
  });
  const stray: string[] = [];
  const place = (address: string): { slab: number; index: number } | null => {
    const a = BigInt(address);
    const r = slabOf(a);
    const off = r ? a - r.base - pad : -1n;
    if (!r || off % size !== 0n) {
      stray.push(address);
      return null;
    }
    return { slab: recIndex.get(r) ?? -1, index: Number(off / size) };
  };
  /** Marks a freelist's objects with `state`, chained in list order; returns its head's index (NONE32: empty) and length. */
  const chain = (list: string[], state: number): { slab: number; head: number; length: number } => {
    let prev = -1;
    let head = NONE32;
    let at = -1;
    for (const o of list) {
      const p = place(o);
      if (!p) continue;
      const rec = p.slab * per + p.index;
      obj.state[rec] = state;
      if (prev >= 0 && Math.floor(prev / per) === p.slab) obj.next[prev] = p.index;
      else if (head === NONE32) {
        head = p.index;
        at = p.slab;
      }
      prev = rec;
    }
    return { slab: at, head, length: list.length };
  };
  sorted.forEach((r, i) => {
    const { head, length } = chain(r.freelist, ObjState.SLAB_FREE);
    slab.freelistHead[i] = head;
    slab.slabFreeCount[i] = length;
  });

  const cpus: SlubSnapshot['cpus'] = c.cpus.map((cpu) => {
    const own = cpu.slab ? sorted.findIndex((r) => r.where.address === cpu.slab?.address) : -1;
    const fl = chain(cpu.freelist, ObjState.CPU_FREE);
    if (own >= 0) slab.cpuFreeCount[own] = cpu.freelist.length;
    const partial = cpu.partial.map((p) => sorted.findIndex((r) => r.where.address === p.address));
    partial.forEach((rec, i) => {
      const next = partial[i + 1];
      if (next !== undefined && rec >= 0) slab.next[rec] = next + 1;
    });
    const tid = cpu.tid ?? 0n;
    return {
      cpu: cpu.cpu,
      freelistPfn: fl.slab >= 0 ? fl.slab + 1 : NONE32,
      freelistIndex: fl.slab >= 0 ? fl.head : NONE32,
      tid: Number(tid & 0xffffffffn),
      tidHi: Number((tid >> 32n) & 0xffffffffn),
      slabPfn: own >= 0 ? own + 1 : NONE32,
      partialCount: cpu.partial.length,
      firstPartialPfn: partial[0] !== undefined && partial[0] >= 0 ? partial[0] + 1 : NONE32,
      freelistLength: cpu.freelist.length,
    };
  });

  // Sheaves: one record per sheaf, its objects as (pfn, index) entries.
  const sheafState: Record<number, number> = { [SheafPlace.MAIN]: ObjState.CPU_SHEAF, [SheafPlace.SPARE]: ObjState.CPU_SHEAF, [SheafPlace.RCU_FREE]: ObjState.RCU, [SheafPlace.BARN_FULL]: ObjState.BARN };
  const nsheaves = sheafLists.length;
  const nentries = sheafLists.reduce((a, s) => a + s.sheaf.size, 0);
  const sheaves: SheavesState = {
    taken: true,
    capacity: c.sheafCapacity,
    barnFull: c.nodes.reduce((a, n) => a + (n.barn?.nrFull ?? 0), 0),
    barnEmpty: c.nodes.reduce((a, n) => a + (n.barn?.nrEmpty ?? 0), 0),
    pcs: c.cpus.map(() => ({ main: -1, spare: -1, rcuFree: -1, locked: false })),
    nsheaves,
    sheaf: {
      id: new Uint32Array(nsheaves),
      place: new Uint8Array(nsheaves),
      cpu: new Uint8Array(nsheaves),
      rcuFlush: new Uint8Array(nsheaves),
      size: new Uint32Array(nsheaves),
      capacity: new Uint32Array(nsheaves),
      first: new Uint32Array(nsheaves),
      position: new Uint32Array(nsheaves),
    },
    entryPfn: new Uint32Array(nentries).fill(NONE32),
    entryIndex: new Uint32Array(nentries).fill(NONE32),
  };
  let entry = 0;
  sheafLists.forEach(({ sheaf, place: where, cpu }, i) => {
    const sh = sheaves.sheaf;
    sh.id[i] = i + 1;
    sh.place[i] = where;
    sh.cpu[i] = cpu;
    sh.size[i] = sheaf.size;
    sh.capacity[i] = Math.max(c.sheafCapacity, sheaf.size);
    sh.first[i] = entry;
    sh.position[i] = i;
    const pcs = cpu === NO_CPU ? undefined : sheaves.pcs[c.cpus.findIndex((x) => x.cpu === cpu)];
    if (pcs) {
      if (where === SheafPlace.MAIN) pcs.main = i;
      else if (where === SheafPlace.SPARE) pcs.spare = i;
      else pcs.rcuFree = i;
    }
    for (const o of sheaf.objects) {
      const p = place(o);
      if (p) {
        sheaves.entryPfn[entry] = p.slab + 1;
        sheaves.entryIndex[entry] = p.index;
        obj.state[p.slab * per + p.index] = sheafState[where] ?? ObjState.CPU_SHEAF;
      }
      entry++;
    }
  });

  const nodePartial: number[] = [];
  sorted.forEach((r, i) => r.list === SlabList.NODE_PARTIAL && r.position < maxSlabs && nodePartial.push(i));
  nodePartial.sort((a, b) => (slab.position[a] ?? 0) - (slab.position[b] ?? 0));
  const [major, minor] = releaseVersion(k.kernel.release);
  const hasSheaves = c.sheafCapacity > 0;
  const nrSlabs = c.nodes.reduce((a, n) => a + n.nrSlabs, 0);
  // Full slabs: nr_slabs less the partial ones (read or not) and the CPUs' slabs and partial slabs.
  const cpuHeld = c.cpus.reduce((a, cpu) => a + (cpu.slab ? 1 : 0) + cpu.partial.length, 0);
  const listed = c.nodes.reduce((a, n) => a + n.nrPartial, 0) + cpuHeld;
  const snap: SlubSnapshot = {
    ncpus: c.cpus.length,
    nslabs,
    nobj: nslabs * per,
    lastOp: 0,
    tracked: false,
    npages: nrSlabs << c.order,
    random: 0n,
    geometry: {
      objectSize: c.objectSize,
      align: c.align,
      inuse: c.inuse,
      offset: c.offset,
      redLeftPad: c.redLeftPad,
      size: c.size,
      order: c.order,
      objects: per,
      minPartial: c.minPartial,
      cpuPartial: c.cpuPartial,
      cpuPartialSlabs: 0,
      flags: c.flags,
      fastpath: 'cmpxchg',
      bulkFree: 'detached',
      tidStep: 0,
      id: 0,
    },
    node: { nrPartial: c.nodes.reduce((a, n) => a + n.nrPartial, 0), nrSlabs, totalObjects: c.nodes.reduce((a, n) => a + n.totalObjects, 0) },
    cpus,
    nodePartial,
    slab,
    obj,
    stats: new Float64Array(0),
    nstats: 0,
    kernel: { major, minor, era: !k.kernel.features.cpuSlab ? Era.SHEAVES : hasSheaves ? Era.OPT_IN_SHEAVES : Era.CPU_SLAB, hasSheaves, cpuSlab: k.kernel.features.cpuSlab },
    sheaves,
    slabNames: sorted.map((r) => r.where.address ?? `${hex(r.base)} (base)`),
    fullSlabs: Math.max(0, nrSlabs - listed),
  };
  const slabs = sorted.map((r) => r.where);
  return {
    snap,
    slabs,
    notDrawn,
    stray,
    objectAddress: (s, index) => hex((sorted[s]?.base ?? 0n) + pad + BigInt(index) * size),
    find(address) {
      if (!/^0x[0-9a-f]{1,16}$/i.test(address.trim())) return null;
      const a = BigInt(address.trim());
      const r = slabOf(a);
      if (!r || (a - r.base - pad) % size !== 0n) return null;
      return { slab: recIndex.get(r) ?? -1, index: Number((a - r.base - pad) / size) };
    },
  };
}
