// The SLAB view's URL parameters and panes: each bad value is named with what
// it accepts (and the others keep theirs), rules=both gives both rule sets
// side by side on the same world, and each scenario's world is one the model
// adapter accepts.
import { describe, expect, it } from 'vitest';
import { parseParams } from '../lab/params';
import { SCENARIOS } from './scenarios';
import { checkWorld } from './worker';
import { ownCache, SLAB_PARAMS, slabStepView, worldOf } from './view';

const parse = (q: string) => parseParams(SLAB_PARAMS, (k) => new URLSearchParams(q).get(k));

describe('SLAB URL parameters', () => {
  it.each([
    ['rules=all', 'rules="all"', 'one of before, after, both'],
    ['kernel=6.8', 'kernel="6.8"', 'a kernel version from 4.10 to 6.7 such as 5.4'],
    ['kernel=4.9', 'kernel="4.9"', 'a kernel version from 4.10 to 6.7 such as 5.4'],
    ['size=0', 'size="0"', 'a whole number from 1 to 4194304'],
    ['cpus=9', 'cpus="9"', 'a whole number from 1 to 8'],
    ['align=24', 'align="24"', '0 or a power of two up to 4194304'],
    ['flags=ctor,ctor', 'flags="ctor,ctor"', 'one of hwcache, rcu, ctor, reclaim, noleaktrace, or a comma list of up to 5 different ones'],
    ['name=a%20b', 'name="a b"', 'a cache name of 1 to 63 letters, digits or _:.@-'],
    ['scenario=nope', 'scenario="nope"', 'one of types, refill-flush, shared, reap, kmalloc-test, cache, sandbox'],
    ['ops=m0-64.q1', 'ops="m0-64.q1"', 'a script like m0-256-60.f0-1_1_60.d0 ("q1" is not an operation)'],
  ])('a bad %s is named with what it accepts', (query, shown, expected) => {
    const { problems, values } = parse(`${query}&cpus=3`);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`URL parameter ${shown} is not valid: expected ${expected}.`);
    if (!query.startsWith('cpus')) expect(values.cpus).toBe(3);
  });

  it('reads a cache opened from the caches panel', () => {
    const { values, problems } = parse('scenario=cache&size=600&align=8&flags=ctor,reclaim&name=inode_cache');
    expect(problems).toEqual([]);
    expect(ownCache(values)).toEqual({ name: 'inode_cache', objectSize: 600, align: 8, flags: 4 | 8 });
  });
});

describe('SLAB panes', () => {
  it('rules=both runs the same world under the rules before and after OBJFREELIST, side by side', () => {
    const { values } = parse('scenario=types&size=512');
    const panes = slabStepView.panes(values);
    expect(panes.map((p) => [p.label, p.world.rules])).toEqual([
      ['before OBJFREELIST', 'before'],
      ['after OBJFREELIST', 'after'],
    ]);
    expect(panes[0]?.world.caches).toEqual(panes[1]?.world.caches);
    expect(slabStepView.panes(parse('rules=after').values).map((p) => p.label)).toEqual(['']);
  });

  it("gives every scenario a world the model adapter accepts, at the smallest and the largest size it runs", () => {
    for (const s of SCENARIOS)
      for (const size of [1, 4096, ...(s.sizeProblem ? [] : [4 << 20])]) {
        const w = worldOf(parse(`scenario=${s.id}&size=${size}&cpus=8`).values, 'after');
        expect(checkWorld(w)).toEqual(w);
      }
  });
});
