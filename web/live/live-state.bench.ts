// How fast the live worker's reading and counting go in Node, on the real recorded stream
// (fixtures/stream-filp.bin) replayed many times: frames cut from the bytes, events counted
// into bins, sites and owners.  Prints figures; run with
// `npx vitest bench --run web/live/live-state.bench.ts`.
import { readFileSync } from 'node:fs';
import { bench, describe } from 'vitest';
import { LiveState } from './live-state';
import { F, FrameReader } from './wire';

const stream = new Uint8Array(readFileSync(new URL('./fixtures/stream-filp.bin', import.meta.url)));
const events = new FrameReader().push(stream).reduce((n, f) => n + (f.type === F.EVENTS ? f.batch.count : 0), 0);

/** A new LiveState with the whole stream read and counted (the counting is the core's C as WebAssembly). */
function count(): LiveState {
  const r = new FrameReader();
  const s = new LiveState();
  for (let i = 0; i < stream.length; i += 65536)
    for (const f of r.push(stream.subarray(i, i + 65536))) {
      if (f.type === F.CACHE) s.nameCache(f.cache.id, f.cache.name);
      else if (f.type === F.EVENTS) s.add(f.batch);
    }
  return s;
}

describe(`the recorded stream (${(stream.length / 1024).toFixed(0)} KiB, ${events} events)`, () => {
  bench('read the frames (64 KiB chunks)', () => {
    const r = new FrameReader();
    for (let i = 0; i < stream.length; i += 65536) r.push(stream.subarray(i, i + 65536));
  });
  bench('read and count every event', () => count().dispose());
  const counted = count();
  bench('a summary of the counted stream', () => void counted.summary());
});
