// How long a percpu session of 10,000 steps (one model call each) takes to
// load, and to answer Back (an earlier step: a replay of about 10,000 calls
// on a fresh world), a step forward (one call on the world the session
// keeps), for each allocator.  Prints figures; run with
// `npx vitest bench --run web/percpu/replay.bench.ts`.
import { describe } from 'vitest';
import { replaySessions } from '../lab/session';
import { benchSession } from '../lab/session-bench';
import { loadNodeCore } from '../test/node-core';
import { PercpuApi, type PercpuModule } from './percpu-api';
import { labWorld } from './scenarios';
import type { PercpuScript, Step } from './script';
import { ALLOCATORS } from './snapshot';
import { percpuSessions } from './worker';

const STEPS = 10_000;
const api = new PercpuApi(await loadNodeCore<PercpuModule>());
const open = replaySessions(percpuSessions(api));
// Two 16-byte allocations, then a free of the first, on alternating CPUs: the maps fill up with holes as they grow.
const script: PercpuScript = {
  steps: Array.from({ length: STEPS }, (_, i): Step =>
    i % 3 === 2
      ? { kind: 'free', cpu: i % 2, of: i - 2, first: 0, count: 1, stride: 1, reverse: false }
      : { kind: 'alloc', cpu: i % 2, size: 16, align: 8, count: 1, reserved: false },
  ),
};

for (const allocator of ALLOCATORS) {
  const world = labWorld(allocator, 2);
  const session = open(world, script);
  const { stops } = session.load();
  // Every stop is a step's end (no micro-steps); a replay from the start runs about 10,000 calls.
  const moments = stops.map((_, i) => i);
  describe(`a ${allocator} session of ${STEPS.toLocaleString('en')} steps`, () => {
    benchSession(open, world, script, session, moments, { unit: 'step', load: 'learn every stop and event', backIterations: 30 });
  });
}
