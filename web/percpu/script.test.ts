// The percpu script codec: the URL's `ops=` text read and written back, the
// defaults it may leave out, and every way a hand-made script can be wrong,
// each named; and the same checks on a script arriving in a request.
import { describe, expect, it } from 'vitest';
import { BadRequest } from '../core/requests';
import { SCENARIOS } from './scenarios';
import { checkScript, describeStep, freedIndices, parseScript, scriptToText, type PercpuScript } from './script';

const parse = (text: string, cpus = 2): PercpuScript => {
  const r = parseScript(text, cpus);
  if (!r.ok) throw new Error(r.error);
  return r.script;
};
const problem = (text: string, cpus = 2): string => {
  const r = parseScript(text, cpus);
  return r.ok ? '' : r.error;
};

describe('script text', () => {
  it('reads every kind of step with its defaults', () => {
    expect(parse('a0-4.a1-8-8.a0-16-4-256r.f0-2-0-3.f1-2-3.x1-2-40.a0-4-4-9.f0-6-1-4-2r').steps).toEqual([
      { kind: 'alloc', cpu: 0, size: 4, align: 4, count: 1, reserved: false },
      { kind: 'alloc', cpu: 1, size: 8, align: 8, count: 1, reserved: false },
      { kind: 'alloc', cpu: 0, size: 16, align: 4, count: 256, reserved: true },
      { kind: 'free', cpu: 0, of: 2, first: 0, count: 3, stride: 1, reverse: false },
      // No count: every area from the first on.
      { kind: 'free', cpu: 1, of: 2, first: 3, count: 253, stride: 1, reverse: false },
      { kind: 'freeAt', cpu: 1, chunk: 2, offset: 40 },
      { kind: 'alloc', cpu: 0, size: 4, align: 4, count: 9, reserved: false },
      { kind: 'free', cpu: 0, of: 6, first: 1, count: 4, stride: 2, reverse: true },
    ]);
  });

  it('writes back the shortest text that reads the same', () => {
    for (const text of ['a0-4', 'a1-8-8', 'a0-16-4-256r.f0-0', 'a0-4-4-10.f0-0-3', 'a0-4-4-10.f0-0-0-4', 'a0-4-4-10.f0-0-1-5-2r', 'x3-7-1024', '']) {
      const s = parse(text, 4);
      expect(scriptToText(s)).toBe(text);
      expect(parse(scriptToText(s), 4)).toEqual(s);
    }
    // Every scenario's script survives the round trip (a scenario turned into a sandbox keeps its steps).
    for (const sc of SCENARIOS) {
      const { script } = sc.build({ cpus: 2 });
      expect(parse(scriptToText(script))).toEqual(script);
    }
  });

  it('names what is wrong with a bad script', () => {
    expect(problem('a0-4.q9')).toBe('"q9" is not a step');
    expect(problem('a2-4')).toBe('"a2-4": it acts as CPU 2, there are 2');
    expect(problem('a0-40000')).toBe('"a0-40000": size 40000 is not 1 to 32768 bytes');
    expect(problem('a0-4-6')).toBe('"a0-4-6": alignment 6 is not a power of two up to 4096');
    expect(problem('a0-4-4-5000')).toBe('"a0-4-4-5000": 5000 areas, a step takes 1 to 4096');
    expect(problem('f0-0')).toBe('"f0-0": it frees areas of step 0, which is not an earlier alloc step');
    expect(problem('a0-4-4-8.f0-1')).toBe('"f0-1": it frees areas of step 1, which is not an earlier alloc step');
    expect(problem('a0-4-4-8.f0-0-6-3')).toBe('"f0-0-6-3": it names areas past the 8 step 0 allocates');
    expect(problem('a0-4-4-8.f0-0-2-1.f0-0-0-4')).toBe('"f0-0-0-4": area 2 of step 0 is already freed by then');
    expect(problem('x'.repeat(20_001))).toBe('too long');
  });

  it('frees the areas a step names in the order it names them', () => {
    const s = parse('a0-4-4-10.f0-0-1-4-2r.f0-0-8-2');
    const [, alt, first] = s.steps;
    if (alt?.kind !== 'free' || first?.kind !== 'free') throw new Error('not frees');
    expect(freedIndices(alt)).toEqual([7, 5, 3, 1]);
    expect(freedIndices(first)).toEqual([8, 9]);
    expect(describeStep(alt)).toBe('free 4 areas (every other from area 2) of step 1, last first on CPU 0');
    expect(describeStep(s.steps[0] ?? alt)).toBe('alloc 10 × 4 B on CPU 0');
  });
});

describe('a script in a request', () => {
  it('is checked as the text is', () => {
    const good = parse('a0-4-4-10.f1-0r.x0-0-6144', 2);
    expect(checkScript(JSON.parse(JSON.stringify(good)), 2)).toEqual(good);
    expect(() => checkScript(good, 1)).toThrow(/step 1's cpu must be a whole number from 0 to 0, got 1/);
    expect(() => checkScript({ steps: 'no' }, 2)).toThrow(BadRequest);
    expect(() => checkScript({ steps: [{ kind: 'grow', cpu: 0 }] }, 2)).toThrow(/step 0's kind must be one of alloc, free, freeAt/);
    expect(() => checkScript({ steps: [{ kind: 'free', cpu: 0, of: 0, first: 0, count: 1, stride: 1 }] }, 2)).toThrow(/step 0: it frees areas of step 0/);
    expect(() => checkScript({ steps: [{ kind: 'alloc', cpu: 0, size: 4, align: 3, count: 1 }] }, 2)).toThrow(/alignment 3/);
  });
});
