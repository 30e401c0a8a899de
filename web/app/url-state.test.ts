import { describe, expect, it } from 'vitest';
import { APP_PARAMS, EMBED_PARAMS, keyOrder, urlProblems, viewById } from './url-state';
import { parseParams } from '../lab/params';

const problems = (search: string) => urlProblems(search, APP_PARAMS, (get) => viewById(parseParams(APP_PARAMS, get).values.mode));

describe('the URL as loaded', () => {
  it('has nothing to say about an empty or a valid query', () => {
    expect(problems('')).toEqual([]);
    expect(problems('?page=about&mode=selftest&cpus=8&iters=1&seed=4294967295')).toEqual([]);
    expect(problems('?mode=free&rate=0&workload=bursts&slabs=2048')).toEqual([]);
    expect(problems('?scenario=why-tid&variant=cmpxchg,plain,rt&bulk=generic&step=3&cpus=2')).toEqual([]);
    expect(problems('?scenario=sandbox&ops=z1.a0.m2.c30.s&slub_min_order=1&slub_max_order=default&slub_min_objects=8&nr_cpus=64&preemption=off')).toEqual([]);
  });

  it.each([
    ['mode=selftest&cpus=0', 'cpus="0"', 'a whole number from 1 to 8'],
    ['mode=selftest&cpus=9', 'cpus="9"', 'a whole number from 1 to 8'],
    ['mode=selftest&cpus=2.5', 'cpus="2.5"', 'a whole number from 1 to 8'],
    ['mode=selftest&cpus=-1', 'cpus="-1"', 'a whole number from 1 to 8'],
    ['mode=selftest&cpus=', 'cpus=""', 'a whole number from 1 to 8'],
    ['mode=selftest&iters=1e3', 'iters="1e3"', 'a whole number from 1 to 1000000'],
    ['cpus=1', 'cpus="1"', 'a whole number from 2 to 8'],
    ['page=labs', 'page="labs"', 'one of lab, benchmarks, about'],
    ['mode=slob', 'mode="slob"', 'one of slub, free, selftest, slab, percpu, trace, kernel, live'],
    ['mode=percpu&allocator=slub', 'allocator="slub"', 'one of areamap, bitmap, scanhint, or a comma list of up to 3 different ones'],
    ['mode=percpu&allocator=bitmap,bitmap', 'allocator="bitmap,bitmap"', 'one of areamap, bitmap, scanhint, or a comma list of up to 3 different ones'],
    ['mode=percpu&units=9', 'units="9"', 'a whole number from 1 to 4'],
    ['mode=percpu&scenario=bulk-free', 'scenario="bulk-free"', 'one of in-order, free-orders, second-half, align8, bpf-burst, sandbox'],
    ['mode=percpu&ops=a0-4.f0-1', 'ops="a0-4.f0-1"', 'a script like a0-4-4-256.f0-0 ("f0-1": it frees areas of step 1, which is not an earlier alloc step)'],
    ['mode=free&rate=fast', 'rate="fast"', 'a whole number from 0 to 1000000'],
    ['mode=free&rate=2000000', 'rate="2000000"', 'a whole number from 0 to 1000000'],
    ['mode=free&workload=storm', 'workload="storm"', 'one of local, prodcons, bursts'],
    ['variant=fast', 'variant="fast"', 'one of cmpxchg, locked, plain, rt, or a comma list of up to 4 different ones'],
    ['variant=plain,plain', 'variant="plain,plain"', 'one of cmpxchg, locked, plain, rt, or a comma list of up to 4 different ones'],
    ['bulk=detached,', 'bulk="detached,"', 'one of detached, generic, or a comma list of up to 2 different ones'],
    ['bulk=fallback', 'bulk="fallback"', `one of detached, generic, or a comma list of up to 2 different ones; "fallback" is now called "generic" (slab_common.c's generic loop of one kmem_cache_free per object)`],
    ['nr_cpus=0', 'nr_cpus="0"', 'a whole number from 1 to 8192, or default'],
  ])('explains a bad %s and names what it accepts', (query, shown, expected) => {
    const p = problems(`?${query}`);
    expect(p).toHaveLength(1);
    expect(p[0]).toContain(`URL parameter ${shown} is not valid: expected ${expected}.`);
  });

  it('checks the keys of the view on screen, each on its own, and names unknown ones', () => {
    const p = problems('?mode=selftest&cpu=2&cpus=3&iters=0');
    expect(p).toEqual([
      expect.stringContaining('iters="0" is not valid'),
      expect.stringContaining('Unknown URL parameter "cpu" was ignored (known: page, mode, scenario, step, cpus'),
    ]);
    // A key of another view is not unknown: switching views keeps it.
    expect(problems('?mode=selftest&workload=bursts')).toEqual([]);
  });

  it('reads the embed\'s view', () => {
    expect(urlProblems('?view=slub&scenario=nope', EMBED_PARAMS, (get) => viewById(parseParams(EMBED_PARAMS, get).values.view))).toEqual([
      expect.stringContaining('URL parameter scenario="nope" is not valid: expected one of fast-path, why-tid, slow-path, remote-frees, bulk-free, sheaf-hit, spare-swap, barn-exchange, sheaf-refill, barn-full-flush, kfree-rcu, prefill, sheaf-irq, bootstrap, refill-partial, oversize-counted, memoryless-barn, sandbox.'),
    ]);
    expect(urlProblems('?view=free', EMBED_PARAMS, () => viewById('selftest'))[0]).toContain('expected one of slub, selftest');
  });

  it('writes keys in one order: the shell\'s, then every view\'s once', () => {
    const keys = keyOrder(APP_PARAMS);
    expect(keys.slice(0, 2)).toEqual(['page', 'mode']);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(expect.arrayContaining(['scenario', 'step', 'cpus', 'variant', 'bulk', 'ops', 'workload', 'slabs', 'rate', 'iters', 'seed']));
  });
});
