// recording.ts - a free-running session saved as a file, to replay later:
// what the live view received, frame by frame.  A recording is segments; a
// segment is an anchoring snapshot (docs/snapshot-format.md) and the frames
// of events applied to it (sl_event records, EVENT_SIZE bytes each) until
// the view re-anchored.  Replaying a frame = decoding its segment's anchor
// into a LiveMirror and applying the segment's events up to that frame.
//
// File layout (little-endian; every length in bytes, every section padded
// to 4 bytes):
//   header   u32 magic "SLRC", u32 version, u32 EVENT_SIZE, u32 ncpus,
//            u32 segments, u32 workload length, workload (UTF-8)
//   segment  u32 anchor length, u32 frames, anchor,
//            frames x (f64 ms since the start, u32 events, events)
// decodeRecording checks every length against what is left of the file, the
// event size against this build's, and every anchor with decodeSnapshot, so
// a damaged or foreign file gets a RecordingError that says what is wrong.

import { EVENT_SIZE } from '../core/events.generated';
import { LiveMirror } from './live-mirror';
import { decodeSnapshot, SnapshotError } from './snapshot';

export const REC_MAGIC = 0x43524c53; // "SLRC"
export const REC_VERSION = 1;

export interface RecordedFrame {
  /** Milliseconds since the free-run started. */
  t: number;
  events: Uint8Array;
}
export interface RecordingSegment {
  anchor: Uint8Array;
  frames: RecordedFrame[];
}
export interface Recording {
  ncpus: number;
  workload: string;
  segments: RecordingSegment[];
}

export class RecordingError extends Error {
  constructor(message: string) {
    super(`not a slablab recording: ${message}`);
    this.name = 'RecordingError';
  }
}

const pad4 = (n: number) => (n + 3) & ~3;

export function encodeRecording(rec: Recording): Uint8Array<ArrayBuffer> {
  const name = new TextEncoder().encode(rec.workload);
  let size = 24 + pad4(name.byteLength);
  for (const s of rec.segments) {
    size += 8 + pad4(s.anchor.byteLength);
    for (const f of s.frames) size += 12 + f.events.byteLength;
  }
  const out = new Uint8Array(size);
  const v = new DataView(out.buffer);
  let at = 0;
  const u32 = (x: number) => {
    v.setUint32(at, x, true);
    at += 4;
  };
  const bytes = (b: Uint8Array) => {
    out.set(b, at);
    at += pad4(b.byteLength);
  };
  [REC_MAGIC, REC_VERSION, EVENT_SIZE, rec.ncpus, rec.segments.length, name.byteLength].forEach(u32);
  bytes(name);
  for (const s of rec.segments) {
    u32(s.anchor.byteLength);
    u32(s.frames.length);
    bytes(s.anchor);
    for (const f of s.frames) {
      v.setFloat64(at, f.t, true);
      at += 8;
      u32(f.events.byteLength / EVENT_SIZE);
      bytes(f.events);
    }
  }
  return out;
}

/** Reads a recording; throws RecordingError naming the first thing wrong. */
export function decodeRecording(file: ArrayBuffer | Uint8Array): Recording {
  const u8 = file instanceof Uint8Array ? file : new Uint8Array(file);
  const v = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  let at = 0;
  const need = (n: number, what: string) => {
    if (at + n > u8.byteLength) throw new RecordingError(`the file ends inside ${what} (byte ${at} of ${u8.byteLength}, ${n} more needed)`);
  };
  const u32 = (what: string) => {
    need(4, what);
    const x = v.getUint32(at, true);
    at += 4;
    return x;
  };
  const bytes = (n: number, what: string) => {
    need(pad4(n), what);
    const b = u8.slice(at, at + n);
    at += pad4(n);
    return b;
  };
  if (u8.byteLength < 4 || v.getUint32(0, true) !== REC_MAGIC) throw new RecordingError('it does not start with "SLRC"');
  at = 4;
  const version = u32('the header');
  if (version !== REC_VERSION) throw new RecordingError(`version ${version}; this slablab reads version ${REC_VERSION}`);
  const eventSize = u32('the header');
  if (eventSize !== EVENT_SIZE) throw new RecordingError(`its events are ${eventSize} bytes, this slablab's are ${EVENT_SIZE}`);
  const ncpus = u32('the header');
  if (ncpus < 1 || ncpus > 64) throw new RecordingError(`${ncpus} CPUs`);
  const nseg = u32('the header');
  if (nseg < 1) throw new RecordingError('it holds no segment');
  const workload = new TextDecoder().decode(bytes(u32('the header'), 'the workload name'));
  const segments: RecordingSegment[] = [];
  for (let k = 0; k < nseg; k++) {
    const where = `segment ${k + 1} of ${nseg}`;
    const anchorLen = u32(where);
    const nframes = u32(where);
    const anchor = bytes(anchorLen, `${where}'s snapshot`);
    try {
      const snap = decodeSnapshot(anchor);
      if (snap.ncpus !== ncpus) throw new RecordingError(`${where}'s snapshot has ${snap.ncpus} CPUs, the header ${ncpus}`);
    } catch (e) {
      if (e instanceof SnapshotError) throw new RecordingError(`${where}: ${e.message}`);
      throw e;
    }
    const frames: RecordedFrame[] = [];
    for (let f = 0; f < nframes; f++) {
      need(8, `${where}, frame ${f + 1}`);
      const t = v.getFloat64(at, true);
      at += 8;
      if (!Number.isFinite(t) || t < 0) throw new RecordingError(`${where}, frame ${f + 1} has time ${t}`);
      const n = u32(`${where}, frame ${f + 1}`);
      frames.push({ t, events: bytes(n * EVENT_SIZE, `${where}, frame ${f + 1}'s ${n} events`) });
    }
    segments.push({ anchor, frames });
  }
  if (at !== u8.byteLength) throw new RecordingError(`${u8.byteLength - at} bytes follow its last segment`);
  return { ncpus, workload, segments };
}

/** Every frame of a recording in order, as (segment, frame) positions. */
export function recordingFrames(rec: Recording): { segment: number; frame: number; t: number }[] {
  return rec.segments.flatMap((s, segment) => s.frames.map((f, frame) => ({ segment, frame, t: f.t })));
}

/** The mirror as it was after `frame` of `segment`: the segment's anchor with its frames 0..frame applied. */
export function replayTo(rec: Recording, segment: number, frame: number): LiveMirror {
  const seg = rec.segments[segment];
  if (!seg) throw new RangeError(`no segment ${segment}`);
  const mirror = new LiveMirror(decodeSnapshot(seg.anchor));
  for (let f = 0; f <= frame && f < seg.frames.length; f++) mirror.apply((seg.frames[f] as RecordedFrame).events);
  return mirror;
}
