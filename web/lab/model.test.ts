import { describe, expect, it } from 'vitest';
import { CoreWorld, type WorldBindings } from './model';

/** Bindings of a pretend core: world 7 of 3 CPUs, each call recorded. */
function fakeBindings(calls: string[]): WorldBindings {
  return {
    drain: (w, cpus) => (calls.push(`drain ${w} ${cpus}`), Array.from({ length: cpus }, (_, k) => new Uint8Array([k]))),
    eventsDropped: (w, cpu) => (calls.push(`dropped ${w} ${cpu}`), 10 ** cpu),
    snapshot: (w) => new Uint8Array([w]),
    validate: (w) => ({ rc: -w, message: `world ${w}` }),
    destroyWorld: (w) => void calls.push(`destroy ${w}`),
  };
}

class NoScriptWorld extends CoreWorld<null> {
  run() {
    return { results: [], stopSnapshot: null };
  }
}

describe('CoreWorld', () => {
  it('counts the events every CPU dropped, and drains every CPU of its own world', () => {
    const calls: string[] = [];
    const world = new NoScriptWorld(fakeBindings(calls), 7, 3);
    expect(world.dropped()).toBe(111);
    expect(world.drain().map((r) => r[0])).toEqual([0, 1, 2]);
    expect(calls).toEqual(['dropped 7 0', 'dropped 7 1', 'dropped 7 2', 'drain 7 3']);
  });
  it('snapshots, checks and destroys its own world', () => {
    const calls: string[] = [];
    const world = new NoScriptWorld(fakeBindings(calls), 7, 3);
    expect([...world.snapshot()]).toEqual([7]);
    expect(world.validate()).toEqual({ rc: -7, message: 'world 7' });
    world.destroy();
    expect(calls).toEqual(['destroy 7']);
  });
});
