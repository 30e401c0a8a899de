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

describe('the allocation context and the no-lock operations', () => {
  const s: Script = {
    ops: [
      { kind: 'allocGfp', cpu: 0, gfp: 'atomic' },
      { kind: 'allocGfp', cpu: 1, gfp: 'nowait' },
      { kind: 'kmallocNolock', cpu: 1 },
      { kind: 'kfreeNolock', cpu: 0, refs: [{ pfn: 12, index: 3 }] },
      { kind: 'irqWork', cpu: 0 },
    ],
    irqs: [
      { atOp: 0, point: 5, nth: 0, handler: { kind: 'kmallocNolock' } },
      { atOp: 1, point: 5, nth: 0, handler: { kind: 'allocGfp', gfp: 'nowait' } },
      { atOp: 2, point: 6, nth: 1, handler: { kind: 'kfreeNolock', refs: [{ pfn: 14, index: 2 }] } },
      { atOp: 3, point: 6, nth: 0, handler: { kind: 'irqWork' } },
    ],
  };

  it('round-trip in the URL form, and are said in words with the path they take', () => {
    const text = scriptToText(s);
    expect(text).toBe('A0-1.A1-2.n1.N0-12-3.w0.i0-5-0-n.i1-5-0-A-2.i2-6-1-N-14-2.i3-6-0-w');
    const back = parseScript(text, 2);
    expect(back.ok && back.script).toEqual(s);
    expect(s.ops.map(describeOp)).toEqual([
      'alloc in GFP_ATOMIC context (may not block: no sheaf refill in 6.18) on CPU 0',
      'alloc in GFP_NOWAIT context (may not block: no sheaf refill in 6.18) on CPU 1',
      'kmalloc_nolock on CPU 1 (no lock waited for)',
      'kfree_nolock of object 12:3 on CPU 0 (deferred to the irq_work if a lock would be needed)',
      "CPU 0's irq_work frees what kfree_nolock deferred there (7.3: and passes on what kfree_rcu_nolock deferred)",
    ]);
  });

  it('say what is wrong with a bad one', () => {
    const err = parseError;
    expect(err('A0-0')).toBe('"A0-0": the context must be 1 (GFP_ATOMIC) or 2 (GFP_NOWAIT); a GFP_KERNEL alloc is a<cpu>');
    expect(err('A0-3')).toContain('the context must be 1 (GFP_ATOMIC) or 2 (GFP_NOWAIT)');
    expect(err('A0')).toContain('"A0" has the wrong numbers for its kind');
    expect(err('n0-1')).toContain('wrong numbers');
    expect(err('N0-12')).toContain('wrong numbers');
    expect(err('w2')).toContain('"w2" names CPU 2, there are 2');
    expect(err('a0.i0-5-0-A-7')).toBe('interrupt "i0-5-0-A-7": its handler\'s context must be 1 (GFP_ATOMIC) or 2 (GFP_NOWAIT); a GFP_KERNEL alloc is a<cpu>');
    expect(err('a0.i0-5-0-N-1')).toContain('is not an operation');
  });

  it('are checked in a request and encoded for the driver with their context and object', () => {
    const bad = (raw: unknown) => {
      try {
        checkScript(raw, 2);
      } catch (e) {
        expect(e).toBeInstanceOf(BadRequest);
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(bad({ ops: [{ kind: 'allocGfp', cpu: 0 }], irqs: [] })).toMatch(/^op 1's gfp must be one of atomic, nowait/);
    expect(bad({ ops: [{ kind: 'allocGfp', cpu: 0, gfp: 'kernel' }], irqs: [] })).toMatch(/^op 1's gfp must be one of/);
    expect(bad({ ops: [{ kind: 'kfreeNolock', cpu: 0 }], irqs: [] })).toBe('op 1 must name one object in refs');
    expect(checkScript(s, 2)).toEqual(s);
    const enc = encodeScript(s, s.ops.length);
    const ops = new DataView(enc.ops.buffer);
    // kind, cpu, count (the context's sl_slub_gfp), first (the ref's entry)
    expect([0, 1, 2, 3, 4].map((i) => [ops.getUint8(8 * i), ops.getUint8(8 * i + 1), ops.getUint16(8 * i + 2, true)])).toEqual([
      [18, 0, 1],
      [18, 1, 2],
      [19, 1, 0],
      [20, 0, 0],
      [17, 0, 0],
    ]);
    expect(Array.from(new Uint32Array(enc.refs.buffer))).toEqual([12, 3, 14, 2]);
    expect(new DataView(enc.irqs.buffer).getUint16(16 + 8 + 2, true)).toBe(2);
  });
});

describe('CPU hotplug', () => {
  it('round-trips D<cpu> (slub_cpu_dead) and O<cpu> (slub_cpu_setup), encoded as sl_sched_kind 21 and 22', () => {
    const s: Script = { ops: [{ kind: 'cpuDead', cpu: 1 }, { kind: 'cpuOnline', cpu: 1 }], irqs: [] };
    const text = scriptToText(s);
    expect(text).toBe('D1.O1');
    const back = parseScript(text, 2);
    expect(back.ok && back.script).toEqual(s);
    expect(Array.from(encodeScript(s, 2).ops.filter((_, i) => i % 8 === 0))).toEqual([21, 22]);
    expect(describeOp({ kind: 'cpuOnline', cpu: 1 })).toBe('CPU 1 comes online (slub_cpu_setup: in 7.1 its node gets a barn if it had none)');
  });

  it('is refused as an interrupt handler and on a CPU that does not exist', () => {
    expect(() => checkScript({ ops: [{ kind: 'alloc', cpu: 0 }], irqs: [{ atOp: 0, point: 5, nth: 0, handler: { kind: 'cpuDead' } }] }, 2)).toThrow(
      /cannot be cpuDead: CPU hotplug runs in process context/,
    );
    const r = parseScript('D2', 2);
    expect(r.ok ? 'accepted' : r.error).toBe('"D2" names CPU 2, there are 2');
    const q = parseScript('O0-1', 2);
    expect(q.ok ? 'accepted' : q.error).toContain('wrong numbers');
  });
});

describe('kfree_rcu_nolock (7.3)', () => {
  const s: Script = {
    ops: [
      { kind: 'kfreeRcuNolock', cpu: 0, refs: [{ pfn: 12, index: 3 }] },
      { kind: 'kfreeRcuNolock', cpu: 1, refs: [{ pfn: 12, index: 4 }], count: 1 },
      { kind: 'irqWork', cpu: 1 },
    ],
    irqs: [{ atOp: 0, point: 6, nth: 0, handler: { kind: 'kfreeRcuNolock', refs: [{ pfn: 14, index: 2 }] } }],
  };

  it('round-trips with interrupts on or off, and is said in words', () => {
    const text = scriptToText(s);
    expect(text).toBe('R0-12-3.R1-12-4-1.w1.i0-6-0-R-14-2');
    const back = parseScript(text, 2);
    expect(back.ok && back.script).toEqual(s);
    expect(describeOp(s.ops[1] ?? s.ops[0]!)).toBe(
      'kfree_rcu_nolock of object 12:4 on CPU 1 with interrupts off (the rcu sheaf without waiting for a lock, else deferred to the irq_work)',
    );
  });

  it('refuses a bad one and encodes the interrupts-off flag in the count', () => {
    expect(parseError('R0-12')).toContain('wrong numbers');
    expect(parseError('R0-12-3-2')).toContain('wrong numbers');
    expect(parseError('R0-12-3-0')).toContain('wrong numbers');
    let msg = 'accepted';
    try {
      checkScript({ ops: [{ kind: 'kfreeRcuNolock', cpu: 0, refs: [{ pfn: 1, index: 0 }], count: 2 }], irqs: [] }, 2);
    } catch (e) {
      msg = (e as Error).message;
    }
    expect(msg).toMatch(/^op 1's count \(1: interrupts off\)/);
    expect(checkScript(s, 2)).toEqual(s);
    const enc = encodeScript(s, s.ops.length);
    const ops = new DataView(enc.ops.buffer);
    expect([0, 1].map((i) => [ops.getUint8(8 * i), ops.getUint16(8 * i + 2, true), ops.getUint32(8 * i + 4, true)])).toEqual([
      [23, 0, 0],
      [23, 1, 1],
    ]);
    expect(new DataView(enc.irqs.buffer).getUint8(8)).toBe(23);
  });
});
