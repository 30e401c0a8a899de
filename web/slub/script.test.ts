import { describe, expect, it } from 'vitest';
import { BadRequest } from '../core/requests';
import { checkScript, describeOp, detachedGroups, encodeScript, parseScript, scriptToText, type Script } from './script';

/** What parseScript says is wrong with `text` ('' when nothing is). */
const parseError = (text: string, cpus = 2) => {
  const r = parseScript(text, cpus);
  return r.ok ? '' : r.error;
};

describe('script text', () => {
  it('round-trips every kind of operation and an interrupt', () => {
    const s: Script = {
      ops: [
        { kind: 'alloc', cpu: 0 },
        { kind: 'allocBulk', cpu: 1, count: 8 },
        { kind: 'free', cpu: 1, refs: [{ pfn: 12, index: 3 }] },
        { kind: 'freeBulk', cpu: 0, refs: [{ pfn: 12, index: 4 }, { pfn: 14, index: 0 }] },
        { kind: 'flush', cpu: 1 },
      ],
      irqs: [
        { atOp: 0, point: 1, nth: 0, handler: { kind: 'alloc' } },
        { atOp: 2, point: 2, nth: 1, handler: { kind: 'free', refs: [{ pfn: 12, index: 5 }] } },
      ],
    };
    const text = scriptToText(s);
    expect(text).toBe('a0.b1-8.f1-12-3.F0-12-4-14-0.x1.i0-1-0-a.i2-2-1-f-12-5');
    const back = parseScript(text, 2);
    expect(back.ok && back.script).toEqual(s);
  });

  it('says what is wrong with bad text', () => {
    const err = parseError;
    expect(err('a0.q9')).toContain('"q9" is not an operation');
    expect(err('a3')).toContain('names CPU 3, there are 2');
    expect(err('f0-1')).toContain('wrong numbers');
    expect(err('b0-0')).toContain('wrong numbers');
    expect(err('i0-1-0-a')).toContain('does not exist yet');
    expect(parseScript('', 2).ok).toBe(true);
  });
});

describe('tuning operations', () => {
  const tuned: Script = {
    ops: [
      { kind: 'alloc', cpu: 1 },
      { kind: 'zoneShort', cpu: 0, value: 1 },
      { kind: 'minPartial', cpu: 0, value: 2 },
      { kind: 'cpuPartial', cpu: 0, value: 30 },
      { kind: 'shrink', cpu: 0 },
      { kind: 'zoneShort', cpu: 0, value: 0 },
      { kind: 'alloc', cpu: 0 },
    ],
    irqs: [{ atOp: 6, point: 1, nth: 0, handler: { kind: 'alloc' } }],
  };

  it('round-trips min_partial, cpu_partial, shrink and the page allocator running short, and says them in words', () => {
    const text = scriptToText(tuned);
    expect(text).toBe('a1.z1.m2.c30.s.z0.a0.i6-1-0-a');
    const back = parseScript(text, 2);
    expect(back.ok && back.script).toEqual(tuned);
    expect(tuned.ops.slice(1, 6).map(describeOp)).toEqual([
      'make the page allocator run short',
      'set min_partial to 2',
      'set cpu_partial to 30 objects',
      'shrink the cache',
      'give the page allocator its pages back',
    ]);
  });

  it('says what is wrong with bad tuning text', () => {
    const err = parseError;
    expect(err('z2')).toContain('"z2" must be z1');
    expect(err('m65536')).toContain('"m65536" writes more than 65535');
    expect(err('c')).toContain('"c" is not an operation');
    expect(err('s1')).toContain('"s1" is not an operation');
    expect(err('a0.s.i1-1-0-a')).toContain('names op 1, a tuning operation, which has no preemption point');
    expect(parseScript('m65535.c0', 2).ok).toBe(true);
  });

  it('checks them in a request, and never hands one to the driver', () => {
    const bad = (raw: unknown) => {
      try {
        checkScript(raw, 2);
      } catch (e) {
        expect(e).toBeInstanceOf(BadRequest);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(bad({ ops: [{ kind: 'minPartial', cpu: 0 }], irqs: [] })).toBe("op 1's value must be a whole number from 0 to 65535, got undefined");
    expect(bad({ ops: [{ kind: 'zoneShort', cpu: 0, value: 2 }], irqs: [] })).toBe("op 1's value must be a whole number from 0 to 1, got 2");
    expect(bad({ ops: [{ kind: 'shrink', cpu: 1 }], irqs: [] })).toBe('op 1 is shrink, which acts as CPU 0, not CPU 1');
    expect(bad({ ops: [{ kind: 'alloc', cpu: 0 }], irqs: [{ atOp: 0, point: 1, nth: 0, handler: { kind: 'shrink' } }] })).toBe(
      "interrupt 1's handler cannot be shrink: an interrupt handler writes no sysfs file",
    );
    expect(bad({ ops: [{ kind: 'shrink', cpu: 0 }], irqs: [{ atOp: 0, point: 1, nth: 0, handler: { kind: 'alloc' } }] })).toBe(
      'interrupt 1 interrupts op 1, shrink, which has no preemption point',
    );
    expect(bad(tuned)).toBe('accepted');
    expect(() => encodeScript(tuned, tuned.ops.length)).toThrow(/zoneShort is not a driver operation/);
    expect(encodeScript(tuned, 1).ops).toHaveLength(8);
  });
});

describe('detached freelist replay', () => {
  it('groups by slab with a look-ahead of three, scanning from the end', () => {
    const A = (index: number) => ({ pfn: 1, index });
    const B = (index: number) => ({ pfn: 2, index });
    // From the end: B3 starts a group; A2, A1 are skipped (2 of 3), B2 joins; A0 skipped (3rd) ends the look-ahead.
    const groups = detachedGroups([B(0), A(0), B(2), A(1), A(2), B(3)]);
    expect(groups[0]?.chain).toEqual([B(2), B(3)]);
    // The rest (A0, A1, A2 and B0) are grouped next: A first (the new last entry), then B0.
    expect(groups.map((g) => g.chain.length).reduce((a, b) => a + b, 0)).toBe(6);
    expect(groups[1]?.chain.every((o) => o.pfn === 1)).toBe(true);
    expect(groups).toHaveLength(3);
  });
});
