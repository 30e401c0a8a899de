// The code panel on real percpu runs (the Node core): the end of every step
// that recorded one of the model's events resolves to the line that
// recorded its last one, for each allocator.
import { beforeAll, describe, expect, it } from 'vitest';
import { readCSource } from '../../scripts/c-source.mjs';
import { decodeEvents, eventKindInfo } from '../core/events.generated';
import { codeAt, type ModelSource } from '../lab/code';
import { replaySessions, type Session } from '../lab/session';
import { loadNodeCore } from '../test/node-core';
import { PercpuApi, type PercpuModule } from './percpu-api';
import { labWorld, SCENARIOS } from './scenarios';
import { ALLOCATORS } from './snapshot';
import { percpuSessions } from './worker';

const percpu = readCSource().models.percpu as ModelSource;
let open: (world: unknown, script: unknown) => Session;
beforeAll(async () => {
  open = replaySessions(percpuSessions(new PercpuApi(await loadNodeCore<PercpuModule>())));
});

describe('the code at each step of the percpu scenarios', () => {
  for (const allocator of ALLOCATORS)
    it(`${allocator}: each step that recorded a percpu event ends at the line that recorded its last one`, () => {
      let resolved = 0;
      for (const s of SCENARIOS) {
        const session = open(labWorld(allocator, 2), s.build({ cpus: 2 }).script);
        try {
          const loaded = session.load();
          const events = decodeEvents(loaded.events);
          loaded.stops.forEach((stop, i) => {
            const own = events.slice(loaded.stops[i - 1]?.eventCount ?? 0, stop.eventCount).filter((e) => percpu.events[e.kind]);
            const last = own[own.length - 1];
            if (!last) return;
            const at = codeAt(percpu, stop, events);
            const name = eventKindInfo(last.kind)?.name ?? '?';
            expect(at?.reason, `${s.id} step ${i}`).toContain(name);
            expect(at?.fn.lines[(at?.line ?? 0) - (at?.fn.first ?? 0)]).toContain(name.replace(/^PCPU_/, ''));
            resolved++;
          });
        } finally {
          session.dispose();
        }
      }
      expect(resolved).toBeGreaterThan(0);
    });
});
