// How long a SLUB session of 10,000 operations takes to load, and to answer
// Back (an earlier stop: a replay from a fresh world), a step forward (from
// the world the session keeps) and a jump to the end.  Prints figures; run
// with `npx vitest bench --run web/slub/replay.bench.ts`.
import { describe } from 'vitest';
import { replaySessions } from '../lab/session';
import { benchSession } from '../lab/session-bench';
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

// Back and Step move between operations' ends; a replay from the start runs about 10,000 operations.
describe(`a SLUB session of ${OPS.toLocaleString('en')} operations (${stops.length.toLocaleString('en')} stops)`, () => {
  benchSession(open, world, script, session, opEnds, { unit: 'operation', load: 'resolve the symbolic frees, learn every stop', backIterations: 40 });
});
