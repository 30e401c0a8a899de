// The SLAB script's text (the URL's ops=): every operation and object name
// round-trips, and a bad text is refused with what is wrong.
import { describe, expect, it } from 'vitest';
import { BadRequest } from '../core/requests';
import { checkScript, describeOp, parseScript, scriptToText, type Script } from './script';

const script: Script = {
  ops: [
    { kind: 'kmalloc', cpu: 0, size: 256, count: 60 },
    { kind: 'alloc', cpu: 1, cache: 0, count: 1 },
    { kind: 'free', cpu: 1, refs: [{ op: 0, first: 0, count: 60 }, { op: 1, first: 0, count: 1 }] },
    { kind: 'free', cpu: 0, refs: [{ cache: 20, pfn: 2048, index: 3 }] },
    { kind: 'drain', cpu: 1 },
    { kind: 'reap', cpu: 0, ms: 6000 },
    { kind: 'shrink', cpu: 0 },
  ],
};

describe('script text', () => {
  it('round-trips every operation and both ways of naming objects', () => {
    const text = scriptToText(script);
    expect(text).toBe('m0-256-60.a1-0.f1-1_1_60-2_1.f0-p20_2048_3.d1.r0-6000.s');
    expect(parseScript(text, 2, 1)).toEqual({ ok: true, script });
    expect(parseScript('', 2, 0)).toEqual({ ok: true, script: { ops: [] } });
  });

  it('says what is wrong with a text', () => {
    const err = (t: string, cpus = 2, caches = 1) => {
      const r = parseScript(t, cpus, caches);
      return r.ok ? '' : r.error;
    };
    expect(err('m0-256.q9')).toBe('"q9" is not an operation');
    expect(err('m2-64')).toBe('step 1 acts as CPU 2, the world has CPUs 0 to 1');
    expect(err('m0-0')).toMatch(/the size must be 1 to 4194304/);
    expect(err('m0-64-10001')).toMatch(/the count must be 1 to 10000/);
    expect(err('a0-1')).toBe('step 1 allocates from cache 1, the world creates caches 0 to 0');
    expect(err('a0-0', 2, 0)).toBe('step 1 allocates from cache 0, the world creates no cache');
    expect(err('m0-64-2.f0-1_2_2')).toBe('step 2 frees objects 2 to 3 of step 1, which allocates 2');
    expect(err('f0-1_1.m0-64')).toBe('step 1 frees objects of step 1, which does not come before it');
    expect(err('d0.f0-1_1')).toBe('step 2 frees objects 1 to 1 of step 1, which allocates none');
    expect(err('f0-x')).toMatch(/"x" is not an object/);
    expect(err('r0')).toMatch(/reap takes a time in ms/);
    expect(err('d0-1')).toMatch(/drain takes only a CPU/);
  });

  it('puts an operation in words', () => {
    const name = (i: number) => ['dentry'][i] ?? '?';
    expect(script.ops.map((o) => describeOp(o, name))).toEqual([
      'kmalloc(256) × 60 on CPU 0',
      'kmem_cache_alloc(dentry) on CPU 1',
      'free 61 objects (objects 1–60 of step 1, object 1 of step 2) on CPU 1',
      'free object 3 of slab 2048 on CPU 0',
      "drain CPU 1's arrays",
      'cache_reap on CPU 0 at 6000 ms',
      'shrink every cache',
    ]);
  });

  it('checks a script arriving in a request as strictly as its text', () => {
    expect(checkScript(script, 2, 1)).toEqual(script);
    expect(() => checkScript({ ops: [{ kind: 'nope', cpu: 0 }] }, 2, 1)).toThrow(BadRequest);
    expect(() => checkScript({ ops: [{ kind: 'free', cpu: 0, refs: [] }] }, 2, 1)).toThrow(/must name 1 to 10000 objects/);
    expect(() => checkScript({ ops: [{ kind: 'free', cpu: 0, refs: [{ op: 0, first: 0, count: 1 }] }] }, 2, 1)).toThrow(/does not come before it/);
    expect(() => checkScript({ ops: [{ kind: 'kmalloc', cpu: 0, size: 8, count: 1.5 }] }, 2, 1)).toThrow(/count must be a whole number/);
  });
});
