// wire.ts - the binary stream of `slablab serve` (GET /api/live), decoded
// without text parsing for events (wasm-core/cli/live_wire.h is the other
// side; docs/live.md describes both).  Frames arrive cut anywhere by the
// network: FrameReader keeps the unfinished tail, bounded by MAX_FRAME.

/** Frame types (live_wire.h enum live_frame_type). */
export const F = { HELLO: 1, CACHE: 2, SITE: 3, EVENTS: 4, STATUS: 5, SNAPSHOT: 6, ERROR: 7, SLABINFO: 8 } as const;
/** Event kinds (wasm-core/bpf/live_records.h enum live_kind). */
export const K = { ALLOC: 1, FREE: 2, KMALLOC: 3, KFREE: 4, PCPU_ALLOC: 5, PCPU_FREE: 6 } as const;
export const FRAME_HDR = 8;
export const EVENTS_HDR = 24;
export const EVENT_BYTES = 24;
export const CACHE_HDR = 24;
export const SITE_HDR = 16;
export const FORMAT = 'slablab-live/1';
/** A frame larger than this is refused (a whole-machine snapshot is a few MB). */
export const MAX_FRAME = 64 << 20;

export const isAlloc = (kind: number) => kind === K.ALLOC || kind === K.KMALLOC || kind === K.PCPU_ALLOC;

export interface Hello {
  format: string;
  client: number;
  release: string;
  nr_cpus: number;
  snapshot_interval: number;
  filtered: boolean;
  /** Where the events come from: the running kernel, or a recording (`serve --from`); servers before --from send none. */
  source?: 'kernel' | 'recording';
  recording?: Recording;
}
/** What `slablab serve --from` plays (HELLO's "recording"). */
export interface Recording {
  /** The capture's file name. */
  file: string;
  /** Events a pass plays, the capture's snapshots, first to last event as recorded (s), events the kernel lost recording them. */
  events: number;
  snapshots: number;
  span_s: number;
  lost: number;
  /** The recorded timing, a rate (events a second), or as fast as the server goes. */
  pace: 'recorded' | 'max' | number;
  loop: boolean;
}
export interface Status {
  events_in: number;
  sent: number;
  kernel_lost: number;
  server_dropped: number;
  snapshots_dropped: number;
  /** Events the kernel program left out as the server's own work (absent from servers before #21). */
  server_own?: number;
  /** Whether "own" is the server's process-context work only (interrupt work while it runs is streamed), else every event while it is current. */
  own_by_context?: boolean;
  /** Which rule, or why the narrower one could not be used. */
  own_note?: string;
  queued_bytes: number;
  pages: number;
  attached: boolean;
  error: string;
}
export interface CacheName {
  id: number;
  name: string;
  objectSize: number;
  size: number;
  /** order << 16 | objects per slab */
  oo: number;
  address: bigint;
}
export interface SiteName {
  id: number;
  name: string;
  address: bigint;
}
/** One EVENTS frame: the records stay in their bytes, read with the accessors below. */
export interface EventBatch {
  count: number;
  baseNs: bigint;
  kernelLost: number;
  /** count * EVENT_BYTES bytes of records. */
  records: DataView;
}
export interface SlabinfoRow {
  name: string;
  active: number;
  total: number;
  objsize: number;
  perSlab: number;
  pagesPerSlab: number;
  slabs: number;
}

export type Frame =
  | { type: typeof F.HELLO; hello: Hello }
  | { type: typeof F.CACHE; cache: CacheName }
  | { type: typeof F.SITE; site: SiteName }
  | { type: typeof F.EVENTS; batch: EventBatch }
  | { type: typeof F.STATUS; status: Status }
  /** restart: a recording (`serve --from`) starts (again) here: its state follows no event before it. */
  | { type: typeof F.SNAPSHOT; takenNs: [number, number]; snapshot: string; restart: boolean }
  | { type: typeof F.ERROR; error: string }
  | { type: typeof F.SLABINFO; atNs: number; rows: SlabinfoRow[] };

export class WireError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WireError';
  }
}

const utf8 = new TextDecoder();

/** Event i's fields (the record layout of live_wire.h). */
export const ev = {
  kind: (r: DataView, i: number) => r.getUint8(i * EVENT_BYTES),
  cpu: (r: DataView, i: number) => r.getUint8(i * EVENT_BYTES + 1),
  cache: (r: DataView, i: number) => r.getUint16(i * EVENT_BYTES + 2, true),
  site: (r: DataView, i: number) => r.getUint32(i * EVENT_BYTES + 4, true),
  /** Microseconds after the batch's baseNs. */
  dtUs: (r: DataView, i: number) => r.getUint32(i * EVENT_BYTES + 8, true),
  bytes: (r: DataView, i: number) => r.getUint32(i * EVENT_BYTES + 12, true),
  objLo: (r: DataView, i: number) => r.getUint32(i * EVENT_BYTES + 16, true),
  objHi: (r: DataView, i: number) => r.getUint32(i * EVENT_BYTES + 20, true),
};

function json<T>(bytes: Uint8Array, what: string): T {
  try {
    return JSON.parse(utf8.decode(bytes)) as T;
  } catch (e) {
    throw new WireError(`a ${what} frame is not JSON (${(e as Error).message})`);
  }
}

/** Decodes one frame's payload. Throws a WireError saying what is wrong. */
export function decodeFrame(type: number, p: Uint8Array): Frame | null {
  const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
  switch (type) {
    case F.HELLO: {
      const hello = json<Hello>(p, 'HELLO');
      if (hello.format !== FORMAT) throw new WireError(`the server speaks ${String(hello.format)}, this page ${FORMAT}`);
      return { type, hello };
    }
    case F.CACHE:
      if (p.length < CACHE_HDR) throw new WireError('a CACHE frame is too short');
      return {
        type,
        cache: { id: v.getUint16(0, true), objectSize: v.getUint32(4, true), size: v.getUint32(8, true), oo: v.getUint32(12, true), address: v.getBigUint64(16, true), name: utf8.decode(p.subarray(CACHE_HDR)) },
      };
    case F.SITE:
      if (p.length < SITE_HDR) throw new WireError('a SITE frame is too short');
      return { type, site: { id: v.getUint32(0, true), address: v.getBigUint64(8, true), name: utf8.decode(p.subarray(SITE_HDR)) } };
    case F.EVENTS: {
      if (p.length < EVENTS_HDR) throw new WireError('an EVENTS frame is too short');
      const count = v.getUint32(0, true);
      if (p.length !== EVENTS_HDR + count * EVENT_BYTES) throw new WireError(`an EVENTS frame of ${p.length} bytes says ${count} events`);
      return {
        type,
        batch: { count, baseNs: v.getBigUint64(8, true), kernelLost: Number(v.getBigUint64(16, true)), records: new DataView(p.buffer, p.byteOffset + EVENTS_HDR, count * EVENT_BYTES) },
      };
    }
    case F.STATUS:
      return { type, status: json<Status>(p, 'STATUS') };
    case F.SNAPSHOT: {
      // {"taken_ns":[a,b],["restart":true,]"snapshot":...}: the snapshot text is kept as it is, for the kernel view's decoder.
      const text = utf8.decode(p);
      const m = /^\{"taken_ns":\[(\d+),(\d+)\],("restart":true,)?"snapshot":/.exec(text);
      if (!m || !text.endsWith('}')) throw new WireError('a SNAPSHOT frame without its taken_ns wrapper');
      return { type, takenNs: [Number(m[1]), Number(m[2])], snapshot: text.slice(m[0].length, -1), restart: m[3] !== undefined };
    }
    case F.ERROR: {
      const e = json<{ snapshot_error?: string }>(p, 'ERROR');
      return { type, error: e.snapshot_error ?? 'unknown error' };
    }
    case F.SLABINFO: {
      const s = json<{ at_ns: number; caches: [string, number, number, number, number, number, number][] }>(p, 'SLABINFO');
      return { type, atNs: s.at_ns, rows: s.caches.map(([name, active, total, objsize, perSlab, pagesPerSlab, slabs]) => ({ name, active, total, objsize, perSlab, pagesPerSlab, slabs })) };
    }
    default:
      return null; // a newer server's frame: skipped
  }
}

/**
 * Cuts a byte stream into frames, whatever the chunking.  Frames that lie whole in a chunk are
 * views of it (no copy: the chunk must not be written to afterwards, as fetch's never are); a
 * frame cut across chunks is gathered, once its header is known, into a buffer of its exact size,
 * its own for good (one copy; the server's event frames are often larger than fetch's chunks).
 */
export class FrameReader {
  /** The header of a cut frame, while fewer than FRAME_HDR bytes of it have come. */
  private head = new Uint8Array(FRAME_HDR);
  private headLen = 0;
  /** The payload of a cut frame whose header has come, and how much of it. */
  private body: Uint8Array | null = null;
  private bodyLen = 0;
  private bodyType = 0;

  /** Adds a chunk; returns the whole frames it completes. Throws a WireError on a malformed stream. */
  push(chunk: Uint8Array): Frame[] {
    const out: Frame[] = [];
    let off = 0;
    if (this.headLen > 0) {
      // Finish the header cut at the end of the last chunk.
      const take = Math.min(FRAME_HDR - this.headLen, chunk.length);
      this.head.set(chunk.subarray(0, take), this.headLen);
      this.headLen += take;
      off = take;
      if (this.headLen < FRAME_HDR) return out;
      this.headLen = 0;
      this.begin(this.head, 0);
    }
    if (this.body) {
      const body = this.body;
      const take = Math.min(body.length - this.bodyLen, chunk.length - off);
      body.set(chunk.subarray(off, off + take), this.bodyLen);
      this.bodyLen += take;
      off += take;
      if (this.bodyLen < body.length) return out;
      this.body = null;
      const f = decodeFrame(this.bodyType, body);
      if (f) out.push(f);
    }
    while (chunk.length - off >= FRAME_HDR) {
      const n = this.frameBytes(chunk, off);
      if (chunk.length - off < FRAME_HDR + n) {
        // Cut: the payload so far goes into the frame's own buffer.
        const body = this.begin(chunk, off);
        body.set(chunk.subarray(off + FRAME_HDR));
        this.bodyLen = chunk.length - off - FRAME_HDR;
        return out;
      }
      const f = decodeFrame(chunk[off + 4] ?? 0, chunk.subarray(off + FRAME_HDR, off + FRAME_HDR + n));
      if (f) out.push(f);
      off += FRAME_HDR + n;
    }
    this.head.set(chunk.subarray(off));
    this.headLen = chunk.length - off;
    return out;
  }

  /** Starts gathering the frame whose header is at b[off]. Returns its payload buffer. Throws a WireError past MAX_FRAME. */
  private begin(b: Uint8Array, off: number): Uint8Array {
    this.body = new Uint8Array(this.frameBytes(b, off));
    this.bodyLen = 0;
    this.bodyType = b[off + 4] ?? 0;
    return this.body;
  }

  /** The payload length in the frame header at off. Throws a WireError past MAX_FRAME. */
  private frameBytes(b: Uint8Array, off: number): number {
    const n = ((b[off] ?? 0) | ((b[off + 1] ?? 0) << 8) | ((b[off + 2] ?? 0) << 16) | ((b[off + 3] ?? 0) << 24)) >>> 0;
    if (n > MAX_FRAME) throw new WireError(`a frame of ${n} bytes (more than ${MAX_FRAME})`);
    return n;
  }

  /** Bytes held of an unfinished frame. */
  get pending(): number {
    return this.headLen + (this.body ? FRAME_HDR + this.bodyLen : 0);
  }
}
