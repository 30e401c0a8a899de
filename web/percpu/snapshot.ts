// snapshot.ts - decodes the percpu snapshot (sl_pcpu_snapshot,
// wasm-core/src/percpu/pcpu_snapshot.c; format: docs/snapshot-format.md,
// "percpu snapshot", version 1) into one typed object.  Pure: bytes in, an
// object out, or a PercpuSnapshotError that says what is wrong with them.
//
// Layout (little-endian; the header gives the sections' offsets, each
// chunk record the offsets of its maps):
//   header 128 B  magic "PCPU", version, total, kind, units, unit size, unit pages,
//                 slots, chunk records, static/reserved/dynamic sizes, first and
//                 reserved chunk ids, empty populated pages, populated pages, last op,
//                 next chunk id, offsets of the records and the slot lists,
//                 u64 allocs, frees, chunks created, destroyed, map extensions; block bits
//   chunk  112 B  one per chunk in id order (see ChunkRecord below)
//   slots         u32 count per slot, then each slot's chunk ids in list order
//   data          per chunk: populated bitmap; bitmaps: alloc_map, bound_map (nr_bits + 1),
//                 32-byte md blocks; area map: the int map entries, sentinel included
// Bitmaps are bytes with bit i in byte i >> 3 at bit i & 7, padded to 4 bytes.

export const PCPU_SNAP_MAGIC = 0x55504350;
export const PCPU_SNAP_VERSION = 1;
export const HEADER_SIZE = 128;
export const CHUNK_RECORD_SIZE = 112;
export const BLOCK_RECORD_SIZE = 32;
export const NONE32 = 0xffffffff;

export const ALLOCATORS = ['areamap', 'bitmap', 'scanhint'] as const;
export type Allocator = (typeof ALLOCATORS)[number];

/** Chunk record flags. */
export const ChunkFlag = { FIRST: 1, RESERVED: 2 } as const;

/** struct pcpu_block_md of every block of a chunk, one typed array per field (in bits, block-relative). */
export interface BlockHints {
  scanHint: Int32Array;
  scanHintStart: Int32Array;
  contigHint: Int32Array;
  contigHintStart: Int32Array;
  leftFree: Int32Array;
  rightFree: Int32Array;
  firstFree: Int32Array;
  nrBits: Int32Array;
}

export interface PercpuChunk {
  /** Stable: never changes, never reused (0 the first chunk, 1 the reserved chunk when there is one). */
  id: number;
  first: boolean;
  reserved: boolean;
  /** The slot list it is on and its position there (0 = head); null for the reserved chunk, which is on none. */
  slot: number | null;
  position: number | null;
  /** pcpu_chunk_slot(): the slot its state calls for. */
  computedSlot: number;
  /** In slot 0 while its state calls for another (the scan-hint series' relegation). */
  relegated: boolean;
  nrPages: number;
  nrPopulated: number;
  nrEmptyPopPages: number;
  freeBytes: number;
  nrAlloc: number;
  /** The region it serves is [startOffset, unitSize - endOffset) of the unit; the rest is hidden. */
  startOffset: number;
  endOffset: number;
  /** The chunk's contig hint: bytes for the area map, bits for the bitmaps. */
  contigHint: number;
  /** Where it starts, in bits; null for the area map, which does not keep it. */
  contigHintStart: number | null;
  /** The chunk's scan hint (scanhint only, else 0), in bits. */
  scanHint: number;
  scanHintStart: number;
  /** Area map: the map index no free area precedes; v4.14: first_bit; scanhint: chunk_md.first_free. */
  firstFree: number;
  /** chunk_md.left_free / right_free (scanhint only, else 0). */
  leftFree: number;
  rightFree: number;
  /** Bits in alloc_map (bitmaps; 0 for the area map). */
  nrBits: number;
  /** Area map entries in use (the sentinel not counted) and allocated (0 for the bitmaps). */
  mapUsed: number;
  mapAlloc: number;
  /** One bit per page. */
  populated: Uint8Array;
  /** Bitmaps: one bit per 4-byte granule; bound_map has nrBits + 1 bits. Null for the area map. */
  allocMap: Uint8Array | null;
  boundMap: Uint8Array | null;
  blocks: BlockHints | null;
  /** Area map: the entries as the kernel stores them, offset | in-use bit, sentinel included. Null for the bitmaps. */
  map: Int32Array | null;
}

export interface PercpuSnapshot {
  allocator: Allocator;
  nrUnits: number;
  unitSize: number;
  unitPages: number;
  nrSlots: number;
  staticSize: number;
  reservedSize: number;
  dynSize: number;
  firstChunkId: number;
  reservedChunkId: number | null;
  /** pcpu_nr_empty_pop_pages (the reserved chunk's pages do not count) and pcpu_nr_populated. */
  nrEmptyPopPages: number;
  nrPopulated: number;
  /** The last operation number the trace handed out (0: none, or no trace). */
  lastOp: number;
  nextChunkId: number;
  nrAllocs: number;
  nrFrees: number;
  chunksCreated: number;
  chunksDestroyed: number;
  mapExtends: number;
  /** Bits per metadata block (a page of 4-byte granules). */
  blockBits: number;
  /** Every chunk, in id order. */
  chunks: PercpuChunk[];
  /** slots[s]: the chunk ids on slot list s, head first. */
  slots: number[][];
}

export class PercpuSnapshotError extends Error {
  constructor(message: string) {
    super(`bad percpu snapshot: ${message}`);
    this.name = 'PercpuSnapshotError';
  }
}

function need(cond: boolean, what: string): asserts cond {
  if (!cond) throw new PercpuSnapshotError(what);
}

/** Bit i of a bitmap decoded from the snapshot. */
export function testBit(map: Uint8Array, i: number): boolean {
  return (((map[i >> 3] ?? 0) >> (i & 7)) & 1) === 1;
}

/** An area map entry's start offset (bytes) and whether that area is in use. */
export function mapEntryOffset(entry: number): number {
  return entry & ~1;
}
export function mapEntryInUse(entry: number): boolean {
  return (entry & 1) === 1;
}

/** The chunk with this id (chunks are in id order), or undefined. */
export function chunkById(s: PercpuSnapshot, id: number): PercpuChunk | undefined {
  return findChunk(s.chunks, id);
}

function findChunk(chunks: readonly PercpuChunk[], id: number): PercpuChunk | undefined {
  let lo = 0;
  let hi = chunks.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((chunks[mid]?.id ?? 0) < id) lo = mid + 1;
    else hi = mid;
  }
  const c = chunks[lo];
  return c && c.id === id ? c : undefined;
}

function bitmapBytes(bits: number): number {
  return (Math.ceil(bits / 8) + 3) & ~3;
}

/** Decodes a snapshot; throws PercpuSnapshotError for a buffer that is not one (truncated, corrupt, another version). */
export function decodePercpuSnapshot(bytes: ArrayBuffer | Uint8Array): PercpuSnapshot {
  const u8 = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  const v = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  need(u8.byteLength >= HEADER_SIZE, `${u8.byteLength} bytes is shorter than its ${HEADER_SIZE}-byte header`);
  const h = (i: number) => v.getUint32(4 * i, true);
  const h64 = (at: number) => Number(v.getBigUint64(at, true));
  need(h(0) === PCPU_SNAP_MAGIC, `magic 0x${h(0).toString(16)} is not "PCPU"`);
  need(h(1) === PCPU_SNAP_VERSION, `version ${h(1)}, this decoder reads ${PCPU_SNAP_VERSION}`);
  const total = h(2);
  need(total >= HEADER_SIZE && total <= u8.byteLength, `it says ${total} bytes, ${u8.byteLength} given`);
  const allocator = ALLOCATORS[h(3)];
  need(allocator !== undefined, `allocator kind ${h(3)} is none of ${ALLOCATORS.join(', ')}`);
  const [nrUnits, unitSize, unitPages, nrSlots, nchunks] = [h(4), h(5), h(6), h(7), h(8)];
  const blockBits = h(30);
  need(unitPages >= 1 && unitPages <= 1 << 18 && blockBits > 0 && unitSize === unitPages * blockBits * 4,
    `unit of ${unitSize} bytes in ${unitPages} pages of ${blockBits} bits`);
  const offRecords = h(18);
  const offLists = h(19);
  need(offRecords === HEADER_SIZE && offRecords + CHUNK_RECORD_SIZE * nchunks <= offLists,
    `${nchunks} chunk records do not fit before the slot lists at ${offLists}`);
  need(nrSlots >= 1 && offLists + 4 * nrSlots <= total, `${nrSlots} slot counts past the end`);
  const areamap = allocator === 'areamap';

  const chunks: PercpuChunk[] = [];
  for (let i = 0; i < nchunks; i++) {
    const at = offRecords + CHUNK_RECORD_SIZE * i;
    const r = (k: number) => v.getUint32(at + 4 * k, true);
    const id = r(0);
    need(i === 0 || id > (chunks[i - 1]?.id ?? 0), `chunk records out of id order at record ${i}`);
    const nrPages = r(5);
    const nrBits = r(19);
    need(nrPages === unitPages, `chunk ${id}: ${nrPages} pages in a unit of ${unitPages}`);
    need(areamap ? nrBits === 0 : nrBits === nrPages * blockBits, `chunk ${id}: ${nrBits} bits for ${nrPages} pages`);
    const section = (off: number, size: number, what: string): Uint8Array => {
      need(off >= offLists && off + size <= total, `chunk ${id}: ${what} (${size} bytes at ${off}) past the end`);
      return u8.slice(off, off + size);
    };
    const populated = section(r(22), bitmapBytes(nrPages), 'populated bitmap');
    let allocMap: Uint8Array | null = null;
    let boundMap: Uint8Array | null = null;
    let blocks: BlockHints | null = null;
    let map: Int32Array | null = null;
    const mapUsed = r(20);
    if (areamap) {
      need(mapUsed >= 1 && mapUsed <= unitSize / 2, `chunk ${id}: ${mapUsed} map entries`);
      const raw = section(r(26), 4 * (mapUsed + 1), 'map entries');
      const mv = new DataView(raw.buffer);
      map = new Int32Array(mapUsed + 1);
      for (let e = 0; e <= mapUsed; e++) map[e] = mv.getInt32(4 * e, true);
    } else {
      allocMap = section(r(23), bitmapBytes(nrBits), 'alloc_map');
      boundMap = section(r(24), bitmapBytes(nrBits + 1), 'bound_map');
      const raw = section(r(25), BLOCK_RECORD_SIZE * nrPages, 'md blocks');
      const bv = new DataView(raw.buffer);
      const field = (k: number) => {
        const out = new Int32Array(nrPages);
        for (let b = 0; b < nrPages; b++) out[b] = bv.getInt32(BLOCK_RECORD_SIZE * b + 4 * k, true);
        return out;
      };
      blocks = {
        scanHint: field(0),
        scanHintStart: field(1),
        contigHint: field(2),
        contigHintStart: field(3),
        leftFree: field(4),
        rightFree: field(5),
        firstFree: field(6),
        nrBits: field(7),
      };
    }
    const slot = r(2);
    const computedSlot = r(3);
    chunks.push({
      id,
      first: (r(1) & ChunkFlag.FIRST) !== 0,
      reserved: (r(1) & ChunkFlag.RESERVED) !== 0,
      slot: slot === NONE32 ? null : slot,
      position: r(4) === NONE32 ? null : r(4),
      computedSlot,
      relegated: slot === 0 && computedSlot !== 0,
      nrPages,
      nrPopulated: r(6),
      nrEmptyPopPages: v.getInt32(at + 28, true),
      freeBytes: r(8),
      nrAlloc: r(9),
      startOffset: r(10),
      endOffset: r(11),
      contigHint: r(12),
      contigHintStart: r(13) === NONE32 ? null : r(13),
      scanHint: r(14),
      scanHintStart: r(15),
      firstFree: r(16),
      leftFree: r(17),
      rightFree: r(18),
      nrBits,
      mapUsed: areamap ? mapUsed : 0,
      mapAlloc: r(21),
      populated,
      allocMap,
      boundMap,
      blocks,
      map,
    });
  }

  const slots: number[][] = [];
  let at = offLists + 4 * nrSlots;
  for (let s = 0; s < nrSlots; s++) {
    const n = v.getUint32(offLists + 4 * s, true);
    need(at + 4 * n <= total, `slot ${s}'s ${n} chunks run past the end`);
    const ids: number[] = [];
    for (let i = 0; i < n; i++, at += 4) {
      const id = v.getUint32(at, true);
      const c = findChunk(chunks, id);
      need(c !== undefined && c.slot === s && c.position === i, `slot ${s} lists chunk ${id} at ${i}, which is not there`);
      ids.push(id);
    }
    slots.push(ids);
  }
  need(slots.reduce((n, l) => n + l.length, 0) === chunks.filter((c) => c.slot !== null).length,
    'a chunk says it is on a slot list that does not hold it');

  const reservedChunkId = h(13) === NONE32 ? null : h(13);
  const firstChunkId = h(12);
  need(findChunk(chunks, firstChunkId)?.first === true, `first chunk ${firstChunkId} missing`);
  need(reservedChunkId === null || findChunk(chunks, reservedChunkId)?.reserved === true,
    `reserved chunk ${String(reservedChunkId)} missing`);
  return {
    allocator,
    nrUnits,
    unitSize,
    unitPages,
    nrSlots,
    staticSize: h(9),
    reservedSize: h(10),
    dynSize: h(11),
    firstChunkId,
    reservedChunkId,
    nrEmptyPopPages: v.getInt32(56, true),
    nrPopulated: h(15),
    lastOp: h(16),
    nextChunkId: h(17),
    nrAllocs: h64(80),
    nrFrees: h64(88),
    chunksCreated: h64(96),
    chunksDestroyed: h64(104),
    mapExtends: h64(112),
    blockBits,
    chunks,
    slots,
  };
}
