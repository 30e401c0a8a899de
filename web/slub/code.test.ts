// The code panel on real SLUB runs (the Node core): every micro-step of
// every fast path resolves to the SL_PREEMPT_POINT line the core reached
// (the rt variant's in its own function), and every operation's end to a
// line that recorded one of its events.
import { beforeAll, describe, expect, it } from 'vitest';
import { readCSource } from '../../scripts/c-source.mjs';
import { decodeEvents } from '../core/events.generated';
import { codeAt, type ModelSource } from '../lab/code';
import { replaySessions, type Session } from '../lab/session';
import { loadNodeCore } from '../test/node-core';
import { scenarioById, scenarioConfig } from './scenarios';
import { SlubApi, type SlubModule } from './slub-api';
import { FASTPATHS } from './snapshot';
import { slubSessions } from './worker';

const slub = readCSource().models.slub as ModelSource;
let api: SlubApi;
let open: (world: unknown, script: unknown) => Session;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
  open = replaySessions(slubSessions(api));
});

function run(scenario: string, fastpath: (typeof FASTPATHS)[number]) {
  const sc = scenarioById(scenario);
  if (!sc) throw new Error(scenario);
  const cfg = scenarioConfig(sc, 2, fastpath, 'detached');
  const r = open(cfg, sc.build({ cpus: 2, objects: api.geometry(cfg.objectSize, 2).objects }).script).load();
  return { stops: r.stops, events: decodeEvents(r.events) };
}

describe('the code at each stop of real runs', () => {
  for (const fastpath of FASTPATHS)
    it(`why the tid, ${fastpath}: each micro-step at its preemption point's line, each operation's end at one of its events`, () => {
      const { stops, events } = run('why-tid', fastpath);
      const micro = stops.filter((s) => s.micro > 0);
      expect(micro.length).toBeGreaterThan(0);
      for (const s of micro) {
        const at = codeAt(slub, s, events);
        expect(at, `micro-step ${s.micro}`).not.toBeNull();
        expect(at?.fn.lines[(at?.line ?? 0) - (at?.fn.first ?? 0)]).toContain('SL_PREEMPT_POINT(');
      }
      const allocPoint = codeAt(slub, micro[0] as (typeof micro)[number], events);
      expect(allocPoint?.fn.name).toBe(fastpath === 'rt' ? 'slab_alloc_rt' : 'slab_alloc');
      for (const s of stops.filter((x) => x.micro === 0 && x.opIndex >= 0)) expect(codeAt(slub, s, events), `after operation ${s.opIndex}`).not.toBeNull();
    });

  it("bulk free: each group built in the bulk free, then its free's own points; the end at the bulk free's last event", () => {
    const { stops, events } = run('bulk-free', 'cmpxchg');
    const micro = stops.filter((s) => s.micro > 0);
    const fns = micro.map((s) => codeAt(slub, s, events));
    // Each stop's line is the point the stop names.
    micro.forEach((s, i) => expect(fns[i]?.reason).toContain(slub.pointNames[s.point]));
    expect(new Set(fns.map((a) => a?.fn.name))).toEqual(new Set(['sl_slub_free_bulk', 'do_slab_free', 'slab_free_slow']));
    expect(fns.filter((a) => a?.fn.name === 'sl_slub_free_bulk').length).toBeGreaterThan(1);
    const end = codeAt(slub, stops[stops.length - 1] as (typeof stops)[number], events);
    expect(end).toMatchObject({ fn: { name: 'sl_slub_free_bulk' }, reason: expect.stringContaining('SLUB_BULK_FREE') });
  });
});
