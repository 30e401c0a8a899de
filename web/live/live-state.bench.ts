// How fast the live worker's reading and counting go in Node, on a real recorded stream
// (fixtures/stream-filp.bin, or LIVE_STREAM=FILE: a recording kept by
// `node scripts/live-bench.mjs --phases 4 --save FILE`) replayed many times: frames cut from the
// bytes, events counted into bins, sites and owners (the core's C as WebAssembly).  Prints
// figures; run with `npx vitest bench --run web/live/live-state.bench.ts`.  The native driver of
// the same C on the same file: wasm-core/tests/tools/live_replay_native.c.
import { readFileSync } from 'node:fs';
import { bench, describe } from 'vitest';
import { LiveState } from './live-state';
import { F, FrameReader, type Frame } from './wire';

const file = process.env.LIVE_STREAM ?? new URL('./fixtures/stream-filp.bin', import.meta.url).pathname;
const stream = new Uint8Array(readFileSync(file));
const frames: Frame[] = [];
{
  const r = new FrameReader();
  for (let i = 0; i < stream.length; i += 65536) frames.push(...r.push(stream.subarray(i, i + 65536)));
}
const events = frames.reduce((n, f) => n + (f.type === F.EVENTS ? f.batch.count : 0), 0);

/** Counts the frames into a new LiveState. */
function countFrames(fs: Iterable<Frame>, s = new LiveState()): LiveState {
  for (const f of fs) {
    if (f.type === F.CACHE) s.nameCache(f.cache.id, f.cache.name);
    else if (f.type === F.EVENTS) s.add(f.batch);
  }
  return s;
}

/** A new LiveState with the whole stream read (64-KiB chunks) and counted. */
function readAndCount(): LiveState {
  const r = new FrameReader();
  const s = new LiveState();
  for (let i = 0; i < stream.length; i += 65536) countFrames(r.push(stream.subarray(i, i + 65536)), s);
  return s;
}

describe(`the recorded stream (${(stream.length / 1024).toFixed(0)} KiB, ${events} events)`, () => {
  bench('read the frames (64 KiB chunks)', () => {
    const r = new FrameReader();
    for (let i = 0; i < stream.length; i += 65536) r.push(stream.subarray(i, i + 65536));
  });
  bench('count the frames already read (copy into the module, count)', () => countFrames(frames).dispose());
  bench('read and count every event (frames cut in JavaScript, records copied per frame)', () => readAndCount().dispose());
  bench("read and count every event in C (push: each chunk copied once, the worker's path)", () => {
    const s = new LiveState();
    for (let i = 0; i < stream.length; i += 65536) s.push(stream.subarray(i, i + 65536));
    s.dispose();
  });
  const counted = readAndCount();
  bench('a summary of the counted stream', () => void counted.summary());
});
