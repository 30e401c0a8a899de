// How long a SLUB session of 10,000 operations takes to load, and to answer
// Back (an earlier stop: a replay from a fresh world), a step forward (from
// the world the session keeps) and a jump to the end.  Prints figures; run
// with `npx vitest bench --run web/slub/replay.bench.ts`.
import { bench, describe } from 'vitest';
import { replaySessions } from '../lab/session';
import { loadNodeCore } from '../test/node-core';
import type { WorldConfig } from './protocol';
import type { AnyRef, Script } from './script';
import { SlubApi, type SlubModule } from './slub-api';
import { slubSessions } from './worker';

const OPS = 10_000;
const api = new SlubApi(await loadNodeCore<SlubModule>());
const open = replaySessions(slubSessions(api));
const world: WorldConfig = { cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 16 << 20 };
// Two allocs then a free of the first, on alternating CPUs (a remote free every other time), named symbolically.
const script: Script<AnyRef> = {
  ops: Array.from({ length: OPS }, (_, i) => (i % 3 === 2 ? { kind: 'free' as const, cpu: i % 2, refs: [{ allocOf: i - 2, nth: 0 }] } : { kind: 'alloc' as const, cpu: i % 2 })),
  irqs: [],
};
const session = open(world, script);
const { stops } = session.load();
const opEnds = stops.flatMap((s, i) => (s.micro === 0 ? [i] : []));
let back = opEnds.length - 1;
let forward = 0;

describe(`a SLUB session of ${OPS.toLocaleString('en')} operations (${stops.length.toLocaleString('en')} stops)`, () => {
  bench('load (resolve the symbolic frees, learn every stop)', () => {
    const s = open(world, script);
    s.load();
    s.dispose();
  }, { iterations: 3, warmupIterations: 1 });
  // Back, Back, ... from the end: each an earlier operation's end, replayed from a fresh world (about 10,000 operations each).
  bench('Back by one operation near the end (a replay from the start)', () => {
    back = back > opEnds.length - 50 ? back - 1 : opEnds.length - 2;
    session.at(opEnds[back] ?? 0);
  }, { iterations: 40 });
  // Step, Step, ... from the start: each only runs the next operation on the kept world.
  bench('Step forward by one operation (from the kept world)', () => {
    forward = forward < opEnds.length - 1 ? forward + 1 : 1;
    session.at(opEnds[forward] ?? 0);
  }, { iterations: 2000 });
});
