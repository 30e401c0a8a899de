// The code panel on real SLAB runs (the Node core): the end of every step
// that recorded one of the model's events resolves to the line of mm/slab.c's
// model that recorded it.
import { beforeAll, describe, expect, it } from 'vitest';
import { readCSource } from '../../scripts/c-source.mjs';
import { decodeEvents, eventKindInfo } from '../core/events.generated';
import { codeAt, type ModelSource } from '../lab/code';
import { parseParams } from '../lab/params';
import { replaySessions } from '../lab/session';
import { loadNodeCore } from '../test/node-core';
import { SCENARIOS } from './scenarios';
import { SlabApi, type SlabModule } from './slab-api';
import { SLAB_PARAMS, worldOf } from './view';
import { slabSessions, worldInfo } from './worker';

const slab = readCSource().models.slab as ModelSource;
let api: SlabApi;
beforeAll(async () => {
  api = new SlabApi(await loadNodeCore<SlabModule>());
});

describe('the code at each step of the SLAB scenarios', () => {
  for (const s of SCENARIOS)
    it(`${s.id}: each step that recorded a SLAB event ends at the line that recorded its last one`, () => {
      const v = parseParams(SLAB_PARAMS, (k) => new URLSearchParams(`scenario=${s.id}`).get(k)).values;
      const world = worldOf(v, 'after');
      const story = s.build({ cpus: v.cpus, size: v.size, caches: world.caches, info: worldInfo(api, world) });
      const session = replaySessions(slabSessions(api))(world, story.script);
      try {
        const loaded = session.load();
        const events = decodeEvents(loaded.events.buffer as ArrayBuffer);
        let resolved = 0;
        loaded.stops.forEach((stop, i) => {
          const from = loaded.stops[i - 1]?.eventCount ?? 0;
          const own = events.slice(from, stop.eventCount).filter((e) => slab.events[e.kind]);
          const at = codeAt(slab, stop, events);
          if (!own.length) return;
          const last = own[own.length - 1];
          expect(at, `step ${i}`).not.toBeNull();
          expect(at?.reason).toContain(eventKindInfo(last?.kind ?? 0)?.name ?? '?');
          expect(at?.fn.lines[(at?.line ?? 0) - (at?.fn.first ?? 0)]).toContain(eventKindInfo(last?.kind ?? 0)?.name ?? '?');
          resolved++;
        });
        expect(resolved).toBeGreaterThan(0);
      } finally {
        session.dispose();
      }
    });
});
