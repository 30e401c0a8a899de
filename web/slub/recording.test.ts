// Recordings of the free-running view: written and read back, replayed to
// the exact state of the run, and damaged files refused with a reason.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { decodeRecording as decode, encodeRecording, recordingFrames, RecordingError, replayTo as replay, type Recording } from '../lab/recording';
import { mergeRings } from '../lab/stops';
import { LiveMirror } from './live-mirror';
import { SlubApi, type SlubModule } from './slub-api';
import { decodeSnapshot, type SlubSnapshot } from './snapshot';

let api: SlubApi;
/** The SLUB view's reading of a recording (FreeRunView does the same). */
const decodeRecording = (bytes: ArrayBuffer | Uint8Array, view = 'slub') => decode(bytes, view, (anchor) => decodeSnapshot(anchor));
const replayTo = (r: Recording, segment: number, frame: number) => replay(r, segment, frame, (anchor) => new LiveMirror(decodeSnapshot(anchor))) as LiveMirror;
let rec: Recording;
let truth: SlubSnapshot;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
  // Four frames of a few dozen operations on two CPUs, remote frees included.
  const w = api.createWorld({ cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 }, false);
  try {
    rec = { view: 'slub', ncpus: 2, workload: 'script', segments: [{ anchor: api.snapshot(w), frames: [] }] };
    const held: [number, number][] = [];
    for (let frame = 0; frame < 4; frame++) {
      for (let i = 0; i < 30; i++) {
        const cpu = (i + frame) % 2;
        if (i % 3 === 2 && held.length) {
          const [pfn, idx] = held.shift() as [number, number];
          expect(api.m._sl_api_slub_free(w, 1 - cpu, pfn, idx)).toBe(0);
        } else {
          expect(api.m._sl_api_slub_alloc(w, cpu)).toBe(0);
          const p = new Uint32Array(api.copy(api.m._sl_api_slub_scratch(w, cpu), 8).buffer);
          held.push([p[0] ?? 0, p[1] ?? 0]);
        }
      }
      rec.segments[0]?.frames.push({ t: 16.7 * frame, events: mergeRings(api.drain(w, 2)).events });
    }
    truth = decodeSnapshot(api.snapshot(w));
  } finally {
    api.destroyWorld(w);
  }
});

const summary = (s: SlubSnapshot) => ({
  slabs: Array.from(s.slab.pfn),
  lists: Array.from(s.slab.list),
  inuse: Array.from(s.slab.inuse),
  node: s.nodePartial.map((i) => s.slab.pfn[i]),
  free: s.cpus.map((c) => c.freelistLength),
});

describe('recordings', () => {
  it('round-trip, and replay to the state the run reached', () => {
    const bytes = encodeRecording(rec);
    const back = decodeRecording(bytes);
    expect(back.ncpus).toBe(2);
    expect(back.workload).toBe('script');
    expect(recordingFrames(back)).toHaveLength(4);
    expect(back.segments[0]?.frames.map((f) => f.events)).toEqual(rec.segments[0]?.frames.map((f) => f.events));
    const mirror = replayTo(back, 0, 3);
    expect(mirror.mismatches).toBe(0);
    expect(summary(mirror.view())).toEqual(summary(truth));
    // An earlier frame is an earlier state.
    expect(replayTo(back, 0, 0).applied).toBeLessThan(mirror.applied);
  });

  it('refuses a damaged or foreign file with a reason, whatever the damage', () => {
    const back = (b: Uint8Array) => decodeRecording(b);
    const bytes = encodeRecording(rec);
    expect(() => decodeRecording(new TextEncoder().encode('{"not": "a recording"}'))).toThrow(/does not start with "SLRC"/);
    const v = new DataView(bytes.buffer.slice(0));
    v.setUint32(4, 9, true);
    expect(() => decodeRecording(v.buffer)).toThrow(/version 9; this slablab reads version 2/);
    // A recording names its view: another view's is refused with where to open it.
    expect(() => decodeRecording(bytes, 'percpu')).toThrow(/recorded by the "slub" view; open it there \(this is the "percpu" view\)/);
    expect(back(bytes).view).toBe('slub');
    const w = new DataView(bytes.buffer.slice(0));
    w.setUint32(8, 32, true);
    expect(() => decodeRecording(w.buffer)).toThrow(/events are 32 bytes/);
    expect(() => decodeRecording(bytes.subarray(0, bytes.byteLength - 36))).toThrow(/the file ends inside segment 1 of 1, frame 4/);
    expect(() => decodeRecording(new Uint8Array([...bytes, 0, 0, 0, 0]))).toThrow(/4 bytes follow its last segment/);
    // Every truncation, and single-byte damage all over the header and the anchor: a RecordingError or a good read.
    let refused = 0;
    for (let n = 0; n < bytes.byteLength; n += 5) {
      expect(() => decodeRecording(bytes.subarray(0, n))).toThrow(RecordingError);
      refused++;
    }
    for (let at = 0; at < bytes.byteLength; at += 3) {
      const hurt = bytes.slice();
      hurt[at] = (hurt[at] ?? 0) ^ 0xa5;
      try {
        decodeRecording(hurt);
      } catch (e) {
        expect(e).toBeInstanceOf(RecordingError);
      }
    }
    expect(refused).toBeGreaterThan(10);
  });
});
