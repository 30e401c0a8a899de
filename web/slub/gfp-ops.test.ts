// The allocation's context and the no-lock API as script operations, run by
// the wasm core's driver: an atomic allocation on 6.18 (opt-in sheaves) takes
// the slab path where a blocking one refills a sheaf (7.0 on: both refill,
// 7.0-rc3's fb1091febd66 "mm/slab: allow sheaf refill if blocking is not
// allowed"), kfree_nolock
// defers what it cannot free without a lock until the CPU's irq_work, and a
// kernel before 6.18 refuses kmalloc_nolock as an operation of its own.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind, type SlEvent } from '../core/events.generated';
import { replaySessions, type Session } from '../lab/session';
import type { OpNames } from '../lab/describe';
import { loadNodeCore } from '../test/node-core';
import { SLUB_EVENT_WORDS } from './describe';
import { slubPath } from './path';
import { scenarioConfig } from './scenarios';
import { describeOp, encodeScript, parseScript, scriptToText, type AnyRef, type Script, type ScriptOp } from './script';
import { parseKernelVersion, SlubApi, type SlubModule } from './slub-api';
import { decodeSnapshot, ObjState, stat, type SlubSnapshot, type StatName } from './snapshot';
import { slubSessions } from './worker';

let open: (world: unknown, script: unknown) => Session;
const live = new Set<Session>();
beforeAll(async () => {
  const raw = replaySessions(slubSessions(new SlubApi(await loadNodeCore<SlubModule>())));
  open = (world, script) => {
    const s = raw(world, script);
    live.add(s);
    return s;
  };
});
afterEach(() => {
  for (const s of live) s.dispose();
  live.clear();
});

/** Runs `script` (text or a request's script) on a fresh 2-CPU world of kernel `version`. */
function run(version: string, script: string | Script<AnyRef>) {
  let input: Script<AnyRef>;
  if (typeof script === 'string') {
    const p = parseScript(script, 2);
    if (!p.ok) throw new Error(p.error);
    input = p.script;
  } else input = script;
  const session = open(scenarioConfig(undefined, 2, 'cmpxchg', 'detached', undefined, parseKernelVersion(version)), input);
  const r = session.load();
  const events = decodeEvents(r.events);
  /** The snapshot at the end of op i (-1: the start). */
  const after = (i: number): SlubSnapshot => decodeSnapshot(session.at(r.stops.findIndex((s) => s.micro === 0 && s.ops === i + 1)).snapshot);
  /** The events of op i (by its op number). */
  const of = (i: number): SlEvent[] => events.filter((e) => e.op === r.ops[i]?.opNum);
  return { r, after, of, results: r.ops.map((o) => o.result) };
}
const kinds = (evs: SlEvent[], kind: number) => evs.filter((e) => e.kind === kind);
const inSheaves = (s: SlubSnapshot) => Array.from(s.obj.state).filter((x) => x === ObjState.CPU_SHEAF).length;

describe('the allocation context', () => {
  it('on 6.18 an atomic allocation finding no full sheaf takes the slab path, while a blocking one refills', () => {
    const t = run('6.18', 'A0-1.a0.A0-2');
    expect(t.results.slice(0, 2)).toEqual([0, 0]);
    // Op 1, GFP_ATOMIC: main is empty, the barn has no full sheaf, no refill.
    const noRefill = kinds(t.of(0), EventKind.SLUB_SHEAF_NO_REFILL);
    expect(noRefill.map((e) => e.arg1)).toEqual([1]);
    expect(kinds(t.of(0), EventKind.SLUB_SHEAF_REFILL)).toHaveLength(0);
    expect(stat(t.after(0), 'SHEAF_REFILL')).toBe(0);
    expect(inSheaves(t.after(0))).toBe(0);
    expect(SLUB_EVENT_WORDS.event(noRefill[0] as SlEvent, { name: (op: number) => `op ${op}` } as OpNames)).toMatch(/may not block.*the allocation takes the slab path/);
    // The caption's path says which way each went: 6.18's slab path is the CPU slab's slow path,
    // whose new slab becomes the CPU slab (7.0-rc1/rc2's went onto the node partial list).
    expect(slubPath(t.of(0))).toBe('the barn had no full sheaf, no sheaf refill in this context: the slab path, slow path, refilled from a new slab');
    expect(slubPath(t.of(1))).toContain('the sheaf refilled from slabs');
    expect(slubPath(t.of(1))).not.toContain('no sheaf refill');
    // Op 2, GFP_KERNEL, in the same state: the empty main sheaf is refilled from slabs.
    expect(kinds(t.of(1), EventKind.SLUB_SHEAF_NO_REFILL)).toHaveLength(0);
    expect(kinds(t.of(1), EventKind.SLUB_SHEAF_REFILL)).toHaveLength(1);
    expect(stat(t.after(1), 'SHEAF_REFILL')).toBeGreaterThan(0);
    expect(inSheaves(t.after(1))).toBeGreaterThan(0);
    // Op 3, GFP_NOWAIT with a filled main sheaf: served from it like any allocation.
    expect(t.results[2]).toBe(0);
    expect(inSheaves(t.after(2))).toBe(inSheaves(t.after(1)) - 1);
  });

  it('on 7.0 and 7.3 an atomic or nowait allocation refills as a blocking one does, as spinning is allowed', () => {
    for (const version of ['7.0', '7.3']) {
      const kernel = run(version, 'a0');
      for (const script of ['A0-1', 'A0-2']) {
        const t = run(version, script);
        expect(t.results).toEqual([0]);
        expect(kinds(t.of(0), EventKind.SLUB_SHEAF_NO_REFILL)).toHaveLength(0);
        expect(kinds(t.of(0), EventKind.SLUB_SHEAF_REFILL)).toHaveLength(1);
        expect(slubPath(t.of(0))).toBe(slubPath(kernel.of(0)));
        expect(stat(t.after(0), 'SHEAF_REFILL')).toBe(stat(kernel.after(0), 'SHEAF_REFILL'));
        expect(stat(t.after(0), 'ALLOC_SLOWPATH')).toBe(0);
        expect(inSheaves(t.after(0))).toBe(inSheaves(kernel.after(0)));
        expect(inSheaves(t.after(0))).toBeGreaterThan(0);
      }
    }
  });

  it('kmalloc_nolock on 7.0 never refills: the sheaf stays empty', () => {
    const t = run('7.0', 'n0');
    expect(t.results).toEqual([0]);
    expect(kinds(t.of(0), EventKind.SLUB_SHEAF_NO_REFILL).map((e) => e.arg1)).toEqual([2]);
    expect(inSheaves(t.after(0))).toBe(0);
  });
});

describe('bulk alloc, prefill and refill in a context', () => {
  it('reads, writes and encodes the context (GFP_KERNEL without one), and refuses another number', () => {
    const p = parseScript('b0-4-1.p1-2-3-2.r1-2-6-1.b0-2.p0-3-2.r0-3-4', 2);
    if (!p.ok) throw new Error(p.error);
    expect(p.script.ops.map((o) => o.gfp)).toEqual(['atomic', 'nowait', 'atomic', undefined, undefined, undefined]);
    expect(scriptToText(p.script)).toBe('b0-4-1.p1-2-3-2.r1-2-6-1.b0-2.p0-3-2.r0-3-4');
    const dv = new DataView(encodeScript(p.script, 6).ops.buffer);
    // A bulk alloc's context is its whole `first`; a prefill's or refill's sits in bits 8-15 beside the slot.
    expect([0, 1, 2, 3, 4, 5].map((i) => dv.getUint32(8 * i + 4, true))).toEqual([1, 2 | (2 << 8), 2 | (1 << 8), 0, 3, 3]);
    expect(describeOp(p.script.ops[0] as ScriptOp)).toMatch(/in GFP_ATOMIC context \(the same path as GFP_KERNEL/);
    for (const bad of ['b0-4-3', 'p0-1-3-0', 'r0-1-3-9'].map((t) => `${t.startsWith('r') ? 'p0-1-2.' : ''}${t}`)) {
      const q = parseScript(bad, 2);
      expect(q.ok).toBe(false);
      if (!q.ok) expect(q.error).toMatch(/must be 1 \(GFP_ATOMIC\) or 2 \(GFP_NOWAIT\); without it the operation is GFP_KERNEL/);
    }
  });

  it('takes the GFP_KERNEL path in every sheaf era: same results, objects and counters', () => {
    for (const version of ['6.18', '7.0', '7.1', '7.3']) {
      const kernel = run(version, 'b0-12.p0-0-3.r0-0-6.t0-0.u0-0.b1-5');
      const atomic = run(version, 'b0-12-1.p0-0-3-2.r0-0-6-1.t0-0.u0-0.b1-5-2');
      expect(atomic.results).toEqual(kernel.results);
      expect(kernel.results[0]).toBe(12);
      const last = kernel.results.length - 1;
      const k = kernel.after(last), a = atomic.after(last);
      expect(Array.from(a.obj.state)).toEqual(Array.from(k.obj.state));
      const names: StatName[] = ['SHEAF_REFILL', 'SHEAF_PREFILL_FAST', 'SHEAF_PREFILL_SLOW', 'BARN_GET', 'BARN_GET_FAIL', 'ALLOC_SLOWPATH'];
      for (const name of names) expect(stat(a, name)).toBe(stat(k, name));
    }
  });
});

describe('kfree_nolock and the irq_work', () => {
  it('on 6.18 a kfree_nolock of another CPU slab\'s object waits for that CPU\'s irq_work', () => {
    const t = run('6.18', {
      ops: [
        { kind: 'alloc', cpu: 0 },
        { kind: 'kfreeNolock', cpu: 1, refs: [{ allocOf: 0, nth: 0 }] },
        { kind: 'irqWork', cpu: 1 },
        { kind: 'irqWork', cpu: 1 },
      ],
      irqs: [],
    });
    expect(t.results).toEqual([0, 0, 1, 0]);
    expect(kinds(t.of(1), EventKind.SLUB_DEFER_FREE).map((e) => e.arg0)).toEqual([1]);
    const allocated = (s: SlubSnapshot) => Array.from(s.obj.state).filter((x) => x === ObjState.ALLOCATED).length;
    expect(allocated(t.after(1))).toBe(1);
    expect(kinds(t.of(2), EventKind.SLUB_IRQ_WORK).map((e) => e.arg0)).toEqual([1]);
    expect(slubPath(t.of(1))).toBe("deferred to the CPU's irq_work");
    expect(slubPath(t.of(2))).toContain('the deferred objects freed (__slab_free)');
    expect(allocated(t.after(2))).toBe(0);
  });

  it('before 6.18 the kernel has no kmalloc_nolock: the operation is refused, the script runs on', () => {
    const t = run('6.17', 'n0.a0');
    expect(t.results[0]).toBeLessThan(0);
    expect(t.results[1]).toBe(0);
  });
});
