// recording.ts - a free-running session saved as a file, to replay later:
// what the live view received, frame by frame, for any view with a mirror.
// A recording is segments; a segment is an anchoring snapshot (the view's
// format, e.g. docs/snapshot-format.md for SLUB) and the frames of events
// applied to it (sl_event records, EVENT_SIZE bytes each) until the view
// re-anchored.  Replaying a frame = the view's mirror of its segment's anchor
// with the segment's events applied up to that frame.
//
// File layout (little-endian; every length in bytes, every section padded
// to 4 bytes):
//   header   u32 magic "SLRC", u32 version (2), u32 EVENT_SIZE, u32 ncpus,
//            u32 segments, u32 view id length, view id (UTF-8),
//            u32 workload length, workload (UTF-8)
//   segment  u32 anchor length, u32 frames, anchor,
//            frames x (f64 ms since the start, u32 events, events)
// decodeRecording checks every length against what is left of the file, the
// view against the one opening it, the event size against this build's, and
// every anchor with the view's decoder, so a damaged or foreign file gets a
// RecordingError that says what is wrong.

import { EVENT_SIZE } from '../core/events.generated';
import type { Mirror } from './view';

export const REC_MAGIC = 0x43524c53; // "SLRC"
export const REC_VERSION = 2;

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
  /** The view that recorded it (its id). */
  view: string;
  ncpus: number;
  /** What ran (the view's words, e.g. a workload's name). */
  workload: string;
  segments: RecordingSegment[];
}

/** How a view reads its anchors: the snapshot's CPU count, or a throw that says what is wrong with the bytes. */
export type AnchorCheck = (anchor: Uint8Array) => { ncpus: number };

export class RecordingError extends Error {
  constructor(message: string) {
    super(`not a slablab recording: ${message}`);
    this.name = 'RecordingError';
  }
}

const pad4 = (n: number) => (n + 3) & ~3;

export function encodeRecording(rec: Recording): Uint8Array<ArrayBuffer> {
  const view = new TextEncoder().encode(rec.view);
  const name = new TextEncoder().encode(rec.workload);
  let size = 28 + pad4(view.byteLength) + pad4(name.byteLength);
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
  [REC_MAGIC, REC_VERSION, EVENT_SIZE, rec.ncpus, rec.segments.length, view.byteLength].forEach(u32);
  bytes(view);
  u32(name.byteLength);
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

/** Reads a recording of view `viewId`, checking its anchors with `checkAnchor`; throws RecordingError naming the first thing wrong. */
export function decodeRecording(file: ArrayBuffer | Uint8Array, viewId: string, checkAnchor: AnchorCheck): Recording {
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
  const view = new TextDecoder().decode(bytes(u32('the header'), 'the view name'));
  if (view !== viewId) throw new RecordingError(`it was recorded by the ${JSON.stringify(view)} view; open it there (this is the ${JSON.stringify(viewId)} view)`);
  const workload = new TextDecoder().decode(bytes(u32('the header'), 'the workload name'));
  const segments: RecordingSegment[] = [];
  for (let k = 0; k < nseg; k++) {
    const where = `segment ${k + 1} of ${nseg}`;
    const anchorLen = u32(where);
    const nframes = u32(where);
    const anchor = bytes(anchorLen, `${where}'s snapshot`);
    let anchorCpus: number;
    try {
      anchorCpus = checkAnchor(anchor).ncpus;
    } catch (e) {
      throw new RecordingError(`${where}: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (anchorCpus !== ncpus) throw new RecordingError(`${where}'s snapshot has ${anchorCpus} CPUs, the header ${ncpus}`);
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
  return { view, ncpus, workload, segments };
}

/** Every frame of a recording in order, as (segment, frame) positions. */
export function recordingFrames(rec: Recording): { segment: number; frame: number; t: number }[] {
  return rec.segments.flatMap((s, segment) => s.frames.map((f, frame) => ({ segment, frame, t: f.t })));
}

/** The mirror as it was after `frame` of `segment`: the segment's anchor with its frames 0..frame applied. */
export function replayTo<Snap>(rec: Recording, segment: number, frame: number, mirrorOf: (anchor: Uint8Array) => Mirror<Snap>): Mirror<Snap> {
  const seg = rec.segments[segment];
  if (!seg) throw new RangeError(`no segment ${segment}`);
  const mirror = mirrorOf(seg.anchor);
  for (let f = 0; f <= frame && f < seg.frames.length; f++) mirror.apply((seg.frames[f] as RecordedFrame).events);
  return mirror;
}
