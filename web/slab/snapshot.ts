// snapshot.ts - decodes the SLAB snapshot (sl_slab_snapshot, wasm-core/src/slab/snapshot.c;
// format: docs/snapshot-format.md, "SLAB snapshot", version 1) into plain typed objects:
// per cache its geometry, tunables and node, each CPU's array_cache and the shared array
// with their entries bottom to top, every slab in list order with where its freelist array
// lives and the array's bytes, and the kmalloc_large blocks.  A pure module: bytes in,
// a SlabSnapshot out, or a SlabSnapshotError naming what is wrong with the bytes.

export const SLAB_SNAP_MAGIC = 0x42414c53; // "SLAB"
export const SLAB_SNAP_VERSION = 1;
/** An array entry or freelist that names no object of its cache (a corrupted state). */
export const CORRUPT32 = 0xfffffffe;
const NONE32 = 0xffffffff;
const SHARED_OWNER = 0xffff;

/**
 * Record sizes and the field offsets the decoder relies on, in the order
 * sl_slab_snapshot_layout (sl_api_slab_snapshot_layout) reports them.
 */
export const SLAB_SNAPSHOT_LAYOUT = {
  version: SLAB_SNAP_VERSION,
  header: 96,
  cache: 176,
  array: 40,
  slab: 32,
  ref: 8,
  headerKernel: 64,
  cacheNextReap: 144,
  cacheFirstArray: 156,
  arrayFirstEntry: 20,
  slabFreelistA: 20,
  slabFirstFreelistByte: 28,
} as const;

export const MGMT_NAMES = ['OBJFREELIST', 'NORMAL(leftover)', 'NORMAL', 'OFF'] as const;
export type MgmtName = (typeof MGMT_NAMES)[number];
export const SLAB_LISTS = ['free', 'partial', 'full'] as const;
export type SlabListName = (typeof SLAB_LISTS)[number];
export type Rules = 'before' | 'after';

/** An object named by its slab's head pfn and its index in the slab (both CORRUPT32 for a bad pointer). */
export interface ObjRef {
  pfn: number;
  index: number;
}

/** Where a slab's freelist array (one byte per object) lives. */
export type FreelistPlace =
  | { kind: 'in-page'; offset: number } // NORMAL: bytes at the slab end
  | { kind: 'in-object'; index: number } // OBJFREELIST: inside a free object of the slab
  | { kind: 'off-slab'; cacheId: number; pfn: number; index: number } // OFF: an object of a kmalloc cache
  | { kind: 'none' } // OBJFREELIST, slab full: the array's last home was handed out
  | { kind: 'corrupt' };

export interface ArrayCacheState {
  avail: number;
  limit: number;
  /** The shared array's is unused (the kernel stores 0xbaadf00d there). */
  batchcount: number;
  touched: boolean;
  /** entry[0] (the bottom, oldest) .. entry[avail - 1] (the top, handed out next). */
  entries: ObjRef[];
  /** Counters of a CPU's array (low 32 bits); 0 for the shared array. */
  allocHit: number;
  allocMiss: number;
  freeHit: number;
  freeMiss: number;
}

export interface SlabState {
  pfn: number;
  list: SlabListName;
  /** Position on its list, 0 = head. */
  position: number;
  /** Objects taken from the freelist: positions active .. num-1 of the array list the free ones. */
  active: number;
  order: number;
  /** Where the first object starts: colour * colourOff bytes into the slab. */
  sMemOffset: number;
  colour: number;
  freelist: FreelistPlace;
  /** The array's num bytes (0xff each when the slab has none). */
  freelistArray: Uint8Array;
}

export interface SlabCacheState {
  id: number;
  name: string;
  objectSize: number;
  size: number;
  align: number;
  order: number;
  num: number;
  mgmt: MgmtName;
  colour: number;
  colourOff: number;
  freelistSize: number;
  /** OFF: id of the kmalloc cache that holds the freelist arrays. */
  freelistCache: number | null;
  limit: number;
  batchcount: number;
  /** Entries of the shared array; 0 when there is none. */
  sharedLimit: number;
  freeLimit: number;
  colourNext: number;
  freeTouched: boolean;
  totalSlabs: number;
  freeSlabs: number;
  freeObjects: number;
  /** Reap time (ms, low 32 bits) at which cache_reap's node part is next due. */
  nextReap: number;
  grown: number;
  destroyed: number;
  initOnFree: boolean;
  cpus: ArrayCacheState[];
  shared: ArrayCacheState | null;
  /** Every slab: the partial list, then full, then free, each in list order. */
  slabs: SlabState[];
}

export interface SlabSnapshot {
  /** "X.Y" */
  kernel: string;
  rules: Rules;
  initOnFree: boolean;
  ncpus: number;
  /** The latest reap time passed (ms, low 32 bits). */
  reapClock: number;
  npages: number;
  /** Last operation number issued (0: none, or no event trace). */
  lastOp: number;
  caches: SlabCacheState[];
  /** kmalloc_large blocks (6.1 on): whole pages from the page allocator. */
  large: { pfn: number; order: number }[];
}

export class SlabSnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SlabSnapshotError';
  }
}

function need(cond: boolean, what: string): asserts cond {
  if (!cond) throw new SlabSnapshotError(`bad SLAB snapshot: ${what}`);
}

/** Decodes a snapshot; throws SlabSnapshotError for bytes that are not one (truncated, corrupt, another version). */
export function decodeSlabSnapshot(bytes: ArrayBuffer | Uint8Array): SlabSnapshot {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const v = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const L = SLAB_SNAPSHOT_LAYOUT;
  need(u8.byteLength >= L.header, `${u8.byteLength} bytes is shorter than its ${L.header}-byte header`);
  const h = (i: number) => v.getUint32(4 * i, true);
  need(h(0) === SLAB_SNAP_MAGIC, `magic 0x${h(0).toString(16)} is not "SLAB"`);
  need(h(1) === SLAB_SNAP_VERSION, `version ${h(1)}, this decoder reads ${SLAB_SNAP_VERSION}`);
  const total = h(2);
  need(total <= u8.byteLength, `it says ${total} bytes, only ${u8.byteLength} given`);
  const [ncpus, ncaches, narrays, nslabs, nentries, nlarge, freelistBytes] = [h(3), h(4), h(5), h(6), h(7), h(8), h(9)];
  const [offCaches, offArrays, offSlabs, offEntries, offLarge, offFreelists] = [h(10), h(11), h(12), h(13), h(14), h(15)];
  need(ncpus >= 1 && ncpus <= 64, `${ncpus} CPUs`);
  need(narrays === ncaches * (ncpus + 1), `${narrays} array records for ${ncaches} caches of ${ncpus} CPUs`);
  const within = (off: number, count: number, size: number, what: string) =>
    need(off >= L.header && off + count * size <= total, `${what} past the end`);
  within(offCaches, ncaches, L.cache, 'cache records');
  within(offArrays, narrays, L.array, 'array records');
  within(offSlabs, nslabs, L.slab, 'slab records');
  within(offEntries, nentries, L.ref, 'array entries');
  within(offLarge, nlarge, L.ref, 'kmalloc_large records');
  within(offFreelists, freelistBytes, 1, 'freelist bytes');
  const kernelCode = h(16);
  need(kernelCode >= 410 && kernelCode <= 607, `kernel ${kernelCode}`);
  need(h(17) <= 1, `rules ${h(17)}`);

  const ref = (i: number): ObjRef => {
    need(i < nentries, `array entry ${i} of ${nentries}`);
    return { pfn: v.getUint32(offEntries + L.ref * i, true), index: v.getUint32(offEntries + L.ref * i + 4, true) };
  };
  const array = (i: number): ArrayCacheState => {
    const at = offArrays + L.array * i;
    const a = (k: number) => v.getUint32(at + 4 * k, true);
    const [avail, first] = [a(1), a(5)];
    need(avail <= a(2), `array ${i} holds ${avail} entries over its limit ${a(2)}`);
    need(first + avail <= nentries, `array ${i} entries past the end`);
    return {
      avail,
      limit: a(2),
      batchcount: a(3),
      touched: a(4) !== 0,
      entries: Array.from({ length: avail }, (_, k) => ref(first + k)),
      allocHit: a(6),
      allocMiss: a(7),
      freeHit: a(8),
      freeMiss: a(9),
    };
  };
  const slab = (i: number, num: number): SlabState => {
    const at = offSlabs + L.slab * i;
    const list = SLAB_LISTS[u8[at + 6] ?? 0xff];
    need(list !== undefined, `slab ${i} on list ${u8[at + 6]}`);
    const kind = u8[at + 7] ?? 0xff;
    const a = v.getUint32(at + L.slabFreelistA, true);
    const b = v.getUint32(at + L.slabFreelistA + 4, true);
    const firstByte = v.getUint32(at + L.slabFirstFreelistByte, true);
    need(firstByte + num <= freelistBytes, `slab ${i} freelist bytes past the end`);
    let freelist: FreelistPlace;
    if (kind === 0) freelist = { kind: 'in-page', offset: a };
    else if (kind === 1) freelist = { kind: 'in-object', index: a };
    else if (kind === 2) freelist = { kind: 'off-slab', cacheId: -1, pfn: a, index: b };
    else if (kind === 3) freelist = { kind: 'none' };
    else if (kind === 4) freelist = { kind: 'corrupt' };
    else throw new SlabSnapshotError(`bad SLAB snapshot: slab ${i} freelist kind ${kind}`);
    return {
      pfn: v.getUint32(at, true),
      list,
      position: v.getUint16(at + 10, true),
      active: v.getUint16(at + 8, true),
      order: u8[at + 18] ?? 0,
      sMemOffset: v.getUint32(at + 12, true),
      colour: v.getUint16(at + 16, true),
      freelist,
      freelistArray: u8.slice(offFreelists + firstByte, offFreelists + firstByte + num),
    };
  };

  const caches: SlabCacheState[] = [];
  for (let r = 0; r < ncaches; r++) {
    const at = offCaches + L.cache * r;
    const c = (k: number) => v.getUint32(at + 64 + 4 * k, true);
    const nameBytes = u8.subarray(at, at + 64);
    const nul = nameBytes.indexOf(0);
    const mgmt = MGMT_NAMES[c(6)];
    need(mgmt !== undefined, `cache ${r} management type ${c(6)}`);
    const num = c(5);
    need(num >= 1 && num <= 255, `cache ${r} with ${num} objects per slab`);
    const [firstSlab, nCacheSlabs, firstArray] = [c(21), c(22), c(23)];
    need(firstSlab + nCacheSlabs <= nslabs, `cache ${r} slabs past the end`);
    need(firstArray + ncpus + 1 <= narrays, `cache ${r} arrays past the end`);
    const freelistCache = c(10) === NONE32 ? null : c(10);
    const slabs = Array.from({ length: nCacheSlabs }, (_, k) => {
      const s = slab(firstSlab + k, num);
      if (s.freelist.kind === 'off-slab') s.freelist.cacheId = freelistCache ?? -1;
      return s;
    });
    const arrays = Array.from({ length: ncpus + 1 }, (_, k) => {
      const owner = v.getUint32(offArrays + L.array * (firstArray + k), true);
      need(owner === (k < ncpus ? k : SHARED_OWNER), `cache ${r} array ${k} belongs to ${owner}`);
      return array(firstArray + k);
    });
    const shared = arrays[ncpus];
    caches.push({
      id: c(0),
      name: new TextDecoder().decode(nameBytes.subarray(0, nul < 0 ? 64 : nul)),
      objectSize: c(1),
      size: c(2),
      align: c(3),
      order: c(4),
      num,
      mgmt,
      colour: c(7),
      colourOff: c(8),
      freelistSize: c(9),
      freelistCache,
      limit: c(11),
      batchcount: c(12),
      sharedLimit: c(13),
      freeLimit: c(14),
      colourNext: c(15),
      freeTouched: c(16) !== 0,
      totalSlabs: c(17),
      freeSlabs: c(18),
      freeObjects: c(19),
      nextReap: c(20),
      grown: c(24),
      destroyed: c(25),
      initOnFree: (c(26) & 1) !== 0,
      cpus: arrays.slice(0, ncpus),
      shared: shared && c(13) > 0 ? shared : null,
      slabs,
    });
  }
  const large = Array.from({ length: nlarge }, (_, k) => ({
    pfn: v.getUint32(offLarge + L.ref * k, true),
    order: v.getUint32(offLarge + L.ref * k + 4, true),
  }));
  return {
    kernel: `${Math.floor(kernelCode / 100)}.${kernelCode % 100}`,
    rules: h(17) === 0 ? 'before' : 'after',
    initOnFree: (h(18) & 1) !== 0,
    ncpus,
    reapClock: h(19),
    npages: h(20),
    lastOp: h(21),
    caches,
    large,
  };
}

/** The cache with this id, or undefined. */
export function cacheById(s: SlabSnapshot, id: number): SlabCacheState | undefined {
  return s.caches.find((c) => c.id === id);
}
