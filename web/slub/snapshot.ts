// snapshot.ts - decodes the SLUB snapshot (sl_slub_snapshot, wasm-core/src/slub/snapshot.c;
// format: docs/snapshot-format.md, version 2) into typed arrays the renderers
// draw from directly: one entry per slab and per object slot, no per-object
// JavaScript objects, so 16k objects decode and draw within a frame.
//
// Layout (all little-endian; offsets of each section are in the header, so a
// section that grows does not move the others):
//   header 104 B  magic "SLUB", version, total, ncpus, nslabs, nobj, nnode, nstats,
//                 offsets of geom, node, cpu, slab, obj, list, stats; last op; tracked; npages;
//                 in-flight chain; offset of the sheaves section; kernel version, era, flags;
//                 s->random (u64 at 96)
//   geom   64 B   16 u32: object_size align inuse offset red_left_pad size order objects
//                 min_partial cpu_partial cpu_partial_slabs flags fastpath bulk_free tid_step id
//   node   16 B   nr_partial nr_slabs total_objects
//   cpu    32 B   freelist (pfn, index), tid lo, tid hi, cpu slab pfn, partial count,
//                 first partial pfn, cpu freelist length
//   slab   32 B   pfn u32, order u8, list u8, cpu u8, frozen u8, objects u16, inuse u16,
//                 (order and objects are the slab's own: a fallback slab has a lower order, fewer objects)
//                 slab freelist head u32, next pfn on its list u32, first object record u32,
//                 slab freelist length u16, cpu freelist length u16, position on its list u16,
//                 NUMA node u8 (slab_nid; 0 on one node)
//   obj    16 B   state u8, alloc cpu u8, free cpu u8, tracked u8, next index u32,
//                 last alloc op u32, last free op u32
//   list   4 B    the node partial list in order (pfns)
//   stats  8 B    nstats u64 counters per CPU
//   sheaves       32 B header (counts, barn, offsets, capacity), 16 B per CPU (main, spare,
//                 rcu_free record indices, locked), 24 B per sheaf (id, place, cpu, flags,
//                 size, capacity, first entry, position), 8 B per held object (pfn, index)

import { decodeNuma, type NumaState } from './numa';

export const SNAP_MAGIC = 0x42554c53;
export const SNAP_VERSION = 2;
export const NONE32 = 0xffffffff;
/** A freelist pointer that does not name an object of its slab (a corrupt freelist). */
export const NEXT_CORRUPT = 0xfffffffe;
/** SL_SLUB_FREELIST_HARDENED in the geometry's cache flags: free pointers stored encoded. */
export const FREELIST_HARDENED = 0x01000000;
/** A slab's or an object's CPU when there is none (snapshot `cpu`, `alloc cpu`, `free cpu`). */
export const NO_CPU = 0xff;

const HDR_SIZE = 104;
const CPU_SIZE = 32;
const SLAB_SIZE = 32;
const OBJ_SIZE = 16;

/** A field of a fixed-size record: its width and its byte offset in the record. */
type Field = readonly ['u8' | 'u16' | 'u32', number];
type Layout = Readonly<Record<string, Field>>;
/** A section of records as parallel typed arrays, one per field. */
type Columns<L extends Layout> = { [K in keyof L]: L[K][0] extends 'u8' ? Uint8Array : L[K][0] extends 'u16' ? Uint16Array : Uint32Array };

const SLAB_FIELDS = {
  pfn: ['u32', 0], order: ['u8', 4], list: ['u8', 5], cpu: ['u8', 6], frozen: ['u8', 7], objects: ['u16', 8], inuse: ['u16', 10],
  freelistHead: ['u32', 12], next: ['u32', 16], firstObj: ['u32', 20], slabFreeCount: ['u16', 24], cpuFreeCount: ['u16', 26], position: ['u16', 28], nid: ['u8', 30],
} as const;
const OBJ_FIELDS = { state: ['u8', 0], allocCpu: ['u8', 1], freeCpu: ['u8', 2], next: ['u32', 4], allocOp: ['u32', 8], freeOp: ['u32', 12] } as const;
const SHEAF_FIELDS = {
  id: ['u32', 0], place: ['u8', 4], cpu: ['u8', 5], rcuFlush: ['u8', 6], size: ['u32', 8], capacity: ['u32', 12], first: ['u32', 16], position: ['u32', 20],
} as const;

/** `n` zeroed records of `layout`. */
function columns<L extends Layout>(layout: L, n: number): Columns<L> {
  const make = ([width]: Field) => (width === 'u8' ? new Uint8Array(n) : width === 'u16' ? new Uint16Array(n) : new Uint32Array(n));
  return Object.fromEntries(Object.entries(layout).map(([name, f]) => [name, make(f)])) as Columns<L>;
}

/** The `n` records of `layout`, `size` bytes each, from byte `at` of `v` (the caller checked they are inside it). */
function readColumns<L extends Layout>(layout: L, v: DataView, at: number, size: number, n: number): Columns<L> {
  const out = columns(layout, n);
  for (const [name, [width, offset]] of Object.entries(layout)) {
    const column = out[name as keyof L];
    const read = width === 'u8' ? (p: number) => v.getUint8(p) : width === 'u16' ? (p: number) => v.getUint16(p, true) : (p: number) => v.getUint32(p, true);
    for (let i = 0; i < n; i++) column[i] = read(at + size * i + offset);
  }
  return out;
}

/** `n` zeroed slab records, for the decoder and for the live mirror's view. */
export const slabRecords = (n: number): SlubSnapshot['slab'] => columns(SLAB_FIELDS, n);
/** `n` zeroed object records, for the decoder and for the live mirror's view. */
export const objectRecords = (n: number): SlubSnapshot['obj'] => columns(OBJ_FIELDS, n);
/** `n` zeroed sheaf records, for the decoder and for the live mirror's view. */
export const sheafRecords = (n: number): SheavesState['sheaf'] => columns(SHEAF_FIELDS, n);

/** Which list a slab is on (snapshot `list`). Full slabs are on none. */
export const SlabList = { NONE: 0, CPU_SLAB: 1, CPU_PARTIAL: 2, NODE_PARTIAL: 3 } as const;
export type SlabListValue = (typeof SlabList)[keyof typeof SlabList];

/**
 * Object state (snapshot `state`). CPU_SHEAF .. PREFILLED: held by a sheaf (a CPU's main or spare,
 * the barn, an RCU wait, a prefilled sheaf out with a caller), only when the sheaves were taken.
 */
export const ObjState = {
  SLAB_FREE: 0, CPU_FREE: 1, ALLOCATED: 2, POISON_BAD: 3, REDZONE_BAD: 4, DUP: 5, IN_FLIGHT: 6, NO_OBJECT: 7,
  CPU_SHEAF: 8, BARN: 9, RCU: 10, PREFILLED: 11,
} as const;
export type ObjStateValue = (typeof ObjState)[keyof typeof ObjState];

/** Where a sheaf record is (`place`); RCU_WAIT is the pseudo-sheaf of objects kfree_rcu'd alone. */
export const SheafPlace = {
  MAIN: 0, SPARE: 1, RCU_FREE: 2, RCU_PENDING: 3, BARN_FULL: 4, BARN_EMPTY: 5, PREFILLED: 6, RCU_WAIT: 7,
} as const;
export type SheafPlaceValue = (typeof SheafPlace)[keyof typeof SheafPlace];

/** The kernel era a cache follows (wasm-core/src/slub/eras.h). */
export const Era = { FROZEN_PARTIAL: 0, CPU_SLAB: 1, OPT_IN_SHEAVES: 2, SHEAVES: 3 } as const;
export type EraValue = (typeof Era)[keyof typeof Era];

/** The fast-path variants (SL_SLUB_FP_*): the kernel's cmpxchg, LOCK CMPXCHG, seed 001's plain writes, PREEMPT_RT. */
export const FASTPATHS = ['cmpxchg', 'locked', 'plain', 'rt'] as const;
export type Fastpath = (typeof FASTPATHS)[number];
/** The bulk-free forms (SL_SLUB_BULK_*): detached freelists, and slab_common.c's generic per-object loop (the seeds' "fallback"). */
export const BULK_FORMS = ['detached', 'generic'] as const;
export type BulkForm = (typeof BULK_FORMS)[number];

/**
 * The counters in the snapshot's order (SL_SLUB_STATS in slub.h): the kernel's enum stat_item
 * of 6.8-6.17 in its order (the C side's sl_slub_stat_name gives their sysfs names), the 17
 * that 6.18 added for sheaves (named as their sysfs files), then the model's own from
 * BULK_ALLOC_CALLS on.
 */
export const STAT_NAMES = [
  'ALLOC_FASTPATH', 'ALLOC_SLOWPATH', 'FREE_FASTPATH', 'FREE_SLOWPATH', 'FREE_FROZEN',
  'FREE_ADD_PARTIAL', 'FREE_REMOVE_PARTIAL', 'ALLOC_FROM_PARTIAL', 'ALLOC_SLAB', 'ALLOC_REFILL',
  'ALLOC_NODE_MISMATCH', 'FREE_SLAB', 'CPUSLAB_FLUSH', 'DEACTIVATE_FULL', 'DEACTIVATE_EMPTY',
  'DEACTIVATE_TO_HEAD', 'DEACTIVATE_TO_TAIL', 'DEACTIVATE_REMOTE_FREES', 'DEACTIVATE_BYPASS',
  'ORDER_FALLBACK', 'CMPXCHG_DOUBLE_CPU_FAIL', 'CMPXCHG_DOUBLE_FAIL', 'CPU_PARTIAL_ALLOC',
  'CPU_PARTIAL_FREE', 'CPU_PARTIAL_NODE', 'CPU_PARTIAL_DRAIN',
  'ALLOC_CPU_SHEAF', 'FREE_CPU_SHEAF', 'FREE_RCU_SHEAF', 'FREE_RCU_SHEAF_FAIL', 'SHEAF_FLUSH', 'SHEAF_REFILL',
  'SHEAF_ALLOC', 'SHEAF_FREE', 'BARN_GET', 'BARN_GET_FAIL', 'BARN_PUT', 'BARN_PUT_FAIL', 'SHEAF_PREFILL_FAST',
  'SHEAF_PREFILL_SLOW', 'SHEAF_PREFILL_OVERSIZE', 'SHEAF_RETURN_FAST', 'SHEAF_RETURN_SLOW',
  'BULK_ALLOC_CALLS', 'BULK_FREE_CALLS', 'BULK_FREE_CAS', 'BULK_FREE_GROUPS', 'ERRORS', 'MODEL_LIST_LOCK',
] as const;
export type StatName = (typeof STAT_NAMES)[number];

export interface SlubGeometry {
  objectSize: number;
  align: number;
  inuse: number;
  offset: number;
  redLeftPad: number;
  size: number;
  order: number;
  objects: number;
  minPartial: number;
  cpuPartial: number;
  cpuPartialSlabs: number;
  flags: number;
  fastpath: Fastpath;
  bulkFree: BulkForm;
  tidStep: number;
  id: number;
}

export interface CpuState {
  cpu: number;
  /** The CPU freelist head: slab pfn and object index, NONE32 when empty (index NEXT_CORRUPT: outside its slab). */
  freelistPfn: number;
  freelistIndex: number;
  /** tid (low 32 bits are enough for the model's counts; hi kept for completeness). */
  tid: number;
  tidHi: number;
  /** pfn of the CPU slab, NONE32 for none. */
  slabPfn: number;
  partialCount: number;
  firstPartialPfn: number;
  freelistLength: number;
}

/** The kernel the cache follows (header words 22-23). */
export interface SlubKernel {
  major: number;
  minor: number;
  era: EraValue;
  /** The cache has sheaves (6.18 opted in, or 7.0). */
  hasSheaves: boolean;
  /** The cache has a per-CPU slab (kmem_cache_cpu: every version before 7.0). */
  cpuSlab: boolean;
}

/** A CPU's slub_percpu_sheaves: sheaf record indices, -1 for none (or the bootstrap sheaf). */
export interface PcsState {
  main: number;
  spare: number;
  rcuFree: number;
  /** Inside its sheaf section (the local trylock held): seen only at a preemption point. */
  locked: boolean;
}

/** The sheaves section; per-sheaf fields are parallel typed arrays. */
export interface SheavesState {
  /** False when the snapshot was taken while CPUs ran: then every list below is empty. */
  taken: boolean;
  capacity: number;
  barnFull: number;
  barnEmpty: number;
  pcs: PcsState[];
  nsheaves: number;
  sheaf: {
    id: Uint32Array;
    place: Uint8Array;
    /** NO_CPU for barn and prefilled sheaves. */
    cpu: Uint8Array;
    /** Queued for RCU by a flush: flushed to slabs after the grace period, not put in the barn. */
    rcuFlush: Uint8Array;
    size: Uint32Array;
    capacity: Uint32Array;
    /** Index of its first entry: entries first .. first + size - 1 are objects[0 .. size - 1]. */
    first: Uint32Array;
    position: Uint32Array;
  };
  /** Held objects as (slab pfn, object index); NONE32 / NEXT_CORRUPT for a pointer that is not one. */
  entryPfn: Uint32Array;
  entryIndex: Uint32Array;
}

/** One decoded snapshot; per-slab and per-object fields are parallel typed arrays. */
export interface SlubSnapshot {
  ncpus: number;
  nslabs: number;
  nobj: number;
  /** Last operation number the trace handed out (0: none yet). */
  lastOp: number;
  /** Objects carry state and last alloc/free (the cache tracks them). */
  tracked: boolean;
  npages: number;
  /** s->random: the key FREELIST_HARDENED folds into stored free pointers. */
  random: bigint;
  geometry: SlubGeometry;
  node: { nrPartial: number; nrSlabs: number; totalObjects: number };
  cpus: CpuState[];
  /** The node partial list, in list order, as slab record indices. */
  nodePartial: number[];
  slab: {
    pfn: Uint32Array;
    /** The slab's own order: the cache's, or its fallback order (ORDER_FALLBACK). */
    order: Uint8Array;
    list: Uint8Array;
    /** Owning CPU (CPU slab or CPU partial list), NO_CPU for none. */
    cpu: Uint8Array;
    frozen: Uint8Array;
    /** The slab's own object count (a fallback slab holds fewer; its records past them are NO_OBJECT). */
    objects: Uint16Array;
    inuse: Uint16Array;
    freelistHead: Uint32Array;
    /** pfn of the next slab on the same list, NONE32 at the end. */
    next: Uint32Array;
    firstObj: Uint32Array;
    slabFreeCount: Uint16Array;
    cpuFreeCount: Uint16Array;
    position: Uint16Array;
    /** The slab's NUMA node (slab_nid): where its memory is, for its whole life; 0 on one node. */
    nid: Uint8Array;
  };
  obj: {
    state: Uint8Array;
    allocCpu: Uint8Array;
    freeCpu: Uint8Array;
    /** Next object index on its freelist (CPU or slab), NONE32 at the end, NEXT_CORRUPT for a bad pointer. */
    next: Uint32Array;
    allocOp: Uint32Array;
    freeOp: Uint32Array;
  };
  /** stats[cpu * STAT_NAMES.length + i]. */
  stats: Float64Array;
  nstats: number;
  kernel: SlubKernel;
  sheaves: SheavesState;
  /** Per slab record, the name the drawing gives it instead of "pfn N" (a real kernel's snapshot: the slab's address). */
  slabNames?: readonly string[];
  /** Full slabs there are, when the records hold only some of them (a real kernel lists none: web/kernel). */
  fullSlabs?: number;
  /** The NUMA nodes of a world with more than one (numa.ts: the worker's trailer); absent: one node. */
  numa?: NumaState;
}

export class SnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SnapshotError';
  }
}

function need(cond: boolean, what: string): void {
  if (!cond) throw new SnapshotError(`bad SLUB snapshot: ${what}`);
}

/** Decodes a snapshot; throws SnapshotError for a buffer that is not one (or is truncated). */
export function decodeSnapshot(bytes: ArrayBuffer | Uint8Array): SlubSnapshot {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const v = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  need(u8.byteLength >= HDR_SIZE, `${u8.byteLength} bytes is shorter than its ${HDR_SIZE}-byte header`);
  const h = (i: number) => v.getUint32(4 * i, true);
  need(h(0) === SNAP_MAGIC, `magic 0x${h(0).toString(16)} is not "SLUB"`);
  need(h(1) === SNAP_VERSION, `version ${h(1)}, this decoder reads ${SNAP_VERSION}`);
  const total = h(2);
  need(total <= u8.byteLength, `it says ${total} bytes, only ${u8.byteLength} given`);
  const [ncpus, nslabs, nobj, nnode, nstats] = [h(3), h(4), h(5), h(6), h(7)];
  const [offGeom, offNode, offCpu, offSlab, offObj, offList, offStats] = [h(8), h(9), h(10), h(11), h(12), h(13), h(14)];
  need(ncpus >= 1 && ncpus <= 64, `${ncpus} CPUs`);
  need(offGeom + 64 <= total, 'geometry past the end');
  need(offNode + 16 <= total, 'node record past the end');
  need(offCpu + CPU_SIZE * ncpus <= total, 'CPU records past the end');
  need(offSlab + SLAB_SIZE * nslabs <= total, 'slab records past the end');
  need(offObj + OBJ_SIZE * nobj <= total, 'object records past the end');
  need(offList + 4 * nnode <= total, 'node list past the end');
  need(offStats + 8 * nstats * ncpus <= total, 'counters past the end');

  const g = (i: number) => v.getUint32(offGeom + 4 * i, true);
  const geometry: SlubGeometry = {
    objectSize: g(0),
    align: g(1),
    inuse: g(2),
    offset: g(3),
    redLeftPad: g(4),
    size: g(5),
    order: g(6),
    objects: g(7),
    minPartial: g(8),
    cpuPartial: g(9),
    cpuPartialSlabs: g(10),
    flags: g(11),
    fastpath: FASTPATHS[g(12)] ?? 'cmpxchg',
    bulkFree: BULK_FORMS[g(13)] ?? 'detached',
    tidStep: g(14),
    id: g(15),
  };
  need(nobj === nslabs * geometry.objects, `${nobj} objects for ${nslabs} slabs of ${geometry.objects}`);

  const cpus: CpuState[] = [];
  for (let k = 0; k < ncpus; k++) {
    const at = offCpu + CPU_SIZE * k;
    const c = (i: number) => v.getUint32(at + 4 * i, true);
    cpus.push({
      cpu: k,
      freelistPfn: c(0),
      freelistIndex: c(1),
      tid: c(2),
      tidHi: c(3),
      slabPfn: c(4),
      partialCount: c(5),
      firstPartialPfn: c(6),
      freelistLength: c(7),
    });
  }

  const slab = readColumns(SLAB_FIELDS, v, offSlab, SLAB_SIZE, nslabs);
  // Drawing and words index a slab's records by its own count: it must fit its records.
  for (let i = 0; i < nslabs; i++)
    need((slab.objects[i] ?? 0) <= geometry.objects, `slab ${slab.pfn[i]} has ${slab.objects[i]} objects, more than the ${geometry.objects} records per slab`);

  // Object records are 16-byte aligned (every section before them is a multiple of 16):
  // read them through word views rather than a DataView per field (16k objects per frame).
  let obj: SlubSnapshot['obj'];
  if ((u8.byteOffset + offObj) % 4 === 0) {
    obj = objectRecords(nobj);
    const w = new Uint32Array(u8.buffer, u8.byteOffset + offObj, 4 * nobj);
    for (let i = 0; i < nobj; i++) {
      const w0 = w[4 * i] ?? 0;
      obj.state[i] = w0 & 0xff;
      obj.allocCpu[i] = (w0 >>> 8) & 0xff;
      obj.freeCpu[i] = (w0 >>> 16) & 0xff;
      obj.next[i] = w[4 * i + 1] ?? 0;
      obj.allocOp[i] = w[4 * i + 2] ?? 0;
      obj.freeOp[i] = w[4 * i + 3] ?? 0;
    }
  } else obj = readColumns(OBJ_FIELDS, v, offObj, OBJ_SIZE, nobj);

  const slabByPfn = new Map<number, number>();
  for (let i = 0; i < nslabs; i++) slabByPfn.set(slab.pfn[i] ?? 0, i);
  const nodePartial: number[] = [];
  for (let i = 0; i < nnode; i++) {
    const rec = slabByPfn.get(v.getUint32(offList + 4 * i, true));
    if (rec !== undefined) nodePartial.push(rec);
  }

  const stats = new Float64Array(nstats * ncpus);
  for (let i = 0; i < nstats * ncpus; i++) stats[i] = Number(v.getBigUint64(offStats + 8 * i, true));

  const flags = u8[92] ?? 0;
  const version = v.getUint16(88, true);
  const kernel: SlubKernel = {
    major: version >> 8,
    minor: version & 0xff,
    era: Math.min(u8[90] ?? 0, Era.SHEAVES) as EraValue,
    hasSheaves: (flags & 1) !== 0,
    cpuSlab: (flags & 4) !== 0,
  };
  const sheaves = decodeSheaves(v, h(21), total, ncpus, (flags & 2) === 0);
  let numa: NumaState | undefined;
  try {
    numa = decodeNuma(u8, total);
  } catch (e) {
    need(false, (e as Error).message);
  }

  return {
    ncpus,
    nslabs,
    nobj,
    lastOp: h(15),
    tracked: h(16) !== 0,
    npages: h(17),
    random: v.getBigUint64(96, true),
    geometry,
    node: { nrPartial: v.getUint32(offNode, true), nrSlabs: v.getUint32(offNode + 4, true), totalObjects: v.getUint32(offNode + 8, true) },
    cpus,
    nodePartial,
    slab,
    obj,
    stats,
    nstats,
    kernel,
    sheaves,
    ...(numa ? { numa } : {}),
  };
}

const SH_HDR_SIZE = 32;
const PCS_SIZE = 16;
const SHEAF_SIZE = 24;
const ENTRY_SIZE = 8;

function decodeSheaves(v: DataView, off: number, total: number, ncpus: number, taken: boolean): SheavesState {
  need(off + SH_HDR_SIZE <= total, 'sheaves section past the end');
  const w = (i: number) => v.getUint32(off + 4 * i, true);
  const [nsheaves, nentries, barnFull, barnEmpty, offPcs, offSheaf, offEntry, capacity] = [w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7)];
  need(off + offPcs + PCS_SIZE * ncpus <= total, 'per-CPU sheaves past the end');
  need(off + offSheaf + SHEAF_SIZE * nsheaves <= total, 'sheaf records past the end');
  need(off + offEntry + ENTRY_SIZE * nentries <= total, 'sheaf entries past the end');
  const record = (x: number) => (x < nsheaves ? x : -1);
  const pcs: PcsState[] = [];
  for (let k = 0; k < ncpus; k++) {
    const at = off + offPcs + PCS_SIZE * k;
    pcs.push({
      main: record(v.getUint32(at, true)),
      spare: record(v.getUint32(at + 4, true)),
      rcuFree: record(v.getUint32(at + 8, true)),
      locked: v.getUint32(at + 12, true) !== 0,
    });
  }
  const sheaf = readColumns(SHEAF_FIELDS, v, off + offSheaf, SHEAF_SIZE, nsheaves);
  for (let i = 0; i < nsheaves; i++) need((sheaf.first[i] ?? 0) + (sheaf.size[i] ?? 0) <= nentries, `sheaf ${i}'s objects past the entries`);
  const entryPfn = new Uint32Array(nentries);
  const entryIndex = new Uint32Array(nentries);
  for (let i = 0; i < nentries; i++) {
    entryPfn[i] = v.getUint32(off + offEntry + ENTRY_SIZE * i, true);
    entryIndex[i] = v.getUint32(off + offEntry + ENTRY_SIZE * i + 4, true);
  }
  return { taken, capacity, barnFull, barnEmpty, pcs, nsheaves, sheaf, entryPfn, entryIndex };
}

/** The sheaf records at `place` (of one CPU, or all), in list order. */
export function sheavesAt(s: SlubSnapshot, place: SheafPlaceValue, cpu = -1): number[] {
  const out: number[] = [];
  for (let i = 0; i < s.sheaves.nsheaves; i++)
    if (s.sheaves.sheaf.place[i] === place && (cpu < 0 || s.sheaves.sheaf.cpu[i] === cpu)) out.push(i);
  return out.sort((a, b) => (s.sheaves.sheaf.position[a] ?? 0) - (s.sheaves.sheaf.position[b] ?? 0));
}

/** Slab record index of pfn, or -1 (records are sorted by pfn). */
export function slabIndexOf(s: SlubSnapshot, pfn: number): number {
  let lo = 0;
  let hi = s.nslabs;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((s.slab.pfn[mid] ?? 0) < pfn) lo = mid + 1;
    else hi = mid;
  }
  return lo < s.nslabs && s.slab.pfn[lo] === pfn ? lo : -1;
}

/** Counter i (snapshot order) of one CPU, or summed over all CPUs (cpu = -1). */
function statAt(s: SlubSnapshot, i: number, cpu: number): number {
  if (i < 0 || i >= s.nstats) return 0;
  if (cpu >= 0) return s.stats[cpu * s.nstats + i] ?? 0;
  let sum = 0;
  for (let k = 0; k < s.ncpus; k++) sum += s.stats[k * s.nstats + i] ?? 0;
  return sum;
}

/** Counter `name` of one CPU, or summed over all CPUs (cpu = -1). */
export function stat(s: SlubSnapshot, name: StatName, cpu = -1): number {
  return statAt(s, STAT_NAMES.indexOf(name), cpu);
}

/** Counter i (snapshot order) as its sysfs file prints it: the total, then each CPU that counted any ("6 C0=4 C1=2"). */
export function sysfsLine(s: SlubSnapshot, i: number): string {
  const perCpu = s.cpus.map((c) => statAt(s, i, c.cpu)).flatMap((n, k) => (n ? [`C${k}=${n}`] : []));
  return [String(statAt(s, i, -1)), ...perCpu].join(' ');
}

/** The slab records of the CPU partial list of `cpu`, in list order. */
export function cpuPartialSlabs(s: SlubSnapshot, cpu: number): number[] {
  const out: number[] = [];
  let pfn = s.cpus[cpu]?.firstPartialPfn ?? NONE32;
  while (pfn !== NONE32 && out.length < s.nslabs) {
    const i = slabIndexOf(s, pfn);
    if (i < 0) break;
    out.push(i);
    pfn = s.slab.next[i] ?? NONE32;
  }
  return out;
}
