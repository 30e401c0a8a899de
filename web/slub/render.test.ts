// The names the SLUB drawing puts on a story's objects (render.ts
// interruptNames), on real runs of "Why the tid" (the Node core): X is the
// head the interrupted allocation had read, Y the next object on that
// freelist, in every fast-path variant.
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents } from '../core/events.generated';
import { replaySessions, type Session } from '../lab/session';
import { loadNodeCore } from '../test/node-core';
import { interruptNames, refKey } from './render';
import { scenarioById, scenarioConfig } from './scenarios';
import { SlubApi, type SlubModule } from './slub-api';
import { decodeSnapshot, FASTPATHS, NONE32 } from './snapshot';
import { slubSessions } from './worker';

let api: SlubApi;
let open: (world: unknown, script: unknown) => Session;

beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
  open = replaySessions(slubSessions(api));
});

describe('X and Y on the picture of an interrupted allocation', () => {
  for (const fastpath of FASTPATHS)
    it(`why the tid, ${fastpath}: X is CPU 0's freelist head when the interrupted alloc starts, Y its next`, () => {
      const sc = scenarioById('why-tid');
      if (!sc) throw new Error('why-tid');
      const cfg = scenarioConfig(sc, 2, fastpath, 'detached');
      const session = open(cfg, sc.build({ cpus: 2, objects: api.geometry(cfg.objectSize, 2).objects }).script);
      const r = session.load();
      const names = interruptNames(decodeEvents(r.events));
      const byName = new Map([...names].map(([k, v]) => [v, k]));
      expect([...byName.keys()].sort()).toEqual(['X', 'Y']);
      // The stop before the interrupted operation (op 2): its CPU freelist is X -> Y.
      const k = r.stops.findIndex((s) => s.micro === 0 && s.ops === 2);
      const s = decodeSnapshot(session.at(k).snapshot);
      const c = s.cpus[0];
      expect(c && c.freelistPfn !== NONE32).toBe(true);
      expect(refKey(c?.freelistPfn ?? 0, c?.freelistIndex ?? 0)).toBe(byName.get('X'));
      const slab = s.slab.pfn.indexOf(c?.freelistPfn ?? 0);
      const next = s.obj.next[(s.slab.firstObj[slab] ?? 0) + (c?.freelistIndex ?? 0)];
      expect(refKey(c?.freelistPfn ?? 0, next ?? 0)).toBe(byName.get('Y'));
      session.dispose();
    });

  it('names nothing in a story without an interrupt', () => {
    const sc = scenarioById('fast-path');
    if (!sc) throw new Error('fast-path');
    const cfg = scenarioConfig(sc, 2, 'cmpxchg', 'detached');
    const r = open(cfg, sc.build({ cpus: 2, objects: api.geometry(cfg.objectSize, 2).objects }).script).load();
    expect(interruptNames(decodeEvents(r.events)).size).toBe(0);
  });
});
