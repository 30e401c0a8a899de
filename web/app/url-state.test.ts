import { describe, expect, it } from 'vitest';
import { APP_KEYS, DEFAULT_STATE, parseSearch, toSearch } from './url-state';

describe('parseSearch', () => {
  it('gives the defaults for an empty query', () => {
    expect(parseSearch('')).toEqual({ state: DEFAULT_STATE, problems: [] });
  });

  it('reads valid parameters', () => {
    const { state, problems } = parseSearch('?page=about&cpus=8&iters=1&seed=4294967295&rate=0');
    expect(problems).toEqual([]);
    expect(state).toMatchObject({ page: 'about', cpus: 8, iters: 1, seed: 4294967295, rate: 0 });
  });

  it.each([
    ['cpus=0', 'cpus="0"', 'a whole number from 1 to 8'],
    ['cpus=9', 'cpus="9"', 'a whole number from 1 to 8'],
    ['cpus=2.5', 'cpus="2.5"', 'a whole number from 1 to 8'],
    ['cpus=-1', 'cpus="-1"', 'a whole number from 1 to 8'],
    ['cpus=', 'cpus=""', 'a whole number from 1 to 8'],
    ['iters=1e3', 'iters="1e3"', 'a whole number from 1 to 1000000'],
    ['page=labs', 'page="labs"', 'one of lab, benchmarks, about'],
    ['view=percpu', 'view="percpu"', 'one of selftest, slub'],
    ['rate=fast', 'rate="fast"', 'a whole number from 0 to 1000000'],
    ['rate=2000000', 'rate="2000000"', 'a whole number from 0 to 1000000'],
    ['workload=storm', 'workload="storm"', 'one of local, prodcons, bursts'],
  ])('explains a bad %s and keeps the default', (query, shown, expected) => {
    const { state, problems } = parseSearch(`?${query}`);
    expect(state).toEqual(DEFAULT_STATE);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(`URL parameter ${shown} is not valid: expected ${expected}.`);
  });

  it('names unknown parameters and keeps the rest', () => {
    const { state, problems } = parseSearch('?cpu=2&cpus=3');
    expect(state.cpus).toBe(3);
    expect(problems).toEqual([expect.stringContaining('Unknown URL parameter "cpu" was ignored')]);
  });
});

describe('toSearch', () => {
  it('writes only what differs from the defaults, and round-trips', () => {
    expect(toSearch(DEFAULT_STATE, APP_KEYS)).toBe('');
    const state = { ...DEFAULT_STATE, page: 'benchmarks' as const, cpus: 2 };
    const search = toSearch(state, APP_KEYS);
    expect(search).toBe('?page=benchmarks&cpus=2');
    expect(parseSearch(search).state).toEqual(state);
  });
});
