// The trace-level bookkeeping every model shares: merging per-CPU rings into
// emission order, and the moments panes running one script step through
// together.  Pure functions, fed synthetic events.
import { describe, expect, it } from 'vitest';
import type { Stop } from '../core/bridge-protocol';
import { decodeEvents, EVENT_LAYOUT, EVENT_SIZE, EventKind } from '../core/events.generated';
import { alignStops, computeStops, mergeRings } from './stops';

/** Merged event records from (cpu, kind, arg0) triples, one operation number per OP_BEGIN. */
function events(list: [number, number, number?][]): Uint8Array {
  const b = new Uint8Array(list.length * EVENT_SIZE);
  const v = new DataView(b.buffer);
  let op = 0;
  list.forEach(([cpu, kind, arg0 = 0], i) => {
    if (kind === EventKind.OP_BEGIN) op++;
    v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.op.offset, op, true);
    v.setUint16(i * EVENT_SIZE + EVENT_LAYOUT.cpu.offset, cpu, true);
    v.setUint16(i * EVENT_SIZE + EVENT_LAYOUT.kind.offset, kind, true);
    v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.arg0.offset, arg0, true);
    v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.seq.offset, i, true);
  });
  return b;
}

const { OP_BEGIN: B, OP_END: E, PREEMPT_POINT: P, INTERRUPT_BEGIN: IB, INTERRUPT_END: IE } = EventKind;

describe('merging rings', () => {
  it('merges rings into emission order across a wrap of the sequence numbers', () => {
    // Three CPUs run operations at once; every event takes the next sequence number, from just below 2^32.
    let seed = 12345;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    const recs: { cpu: number; op: number; kind: number }[][] = [[], [], []];
    const emitted: string[] = [];
    const open: number[] = [0, 0, 0];
    const begun: number[] = [];
    let nextOp = 1;
    let seq = 0xffffffff - 40;
    const rings = [[], [], []] as number[][];
    for (let i = 0; i < 600; i++) {
      const cpu = rnd(3);
      let kind: number;
      if (!open[cpu]) {
        open[cpu] = nextOp++;
        begun.push(open[cpu] ?? 0);
        kind = EventKind.OP_BEGIN;
      } else if (rnd(4) === 0) kind = EventKind.OP_END;
      else kind = EventKind.SLUB_ALLOC_FASTPATH;
      const op = open[cpu] ?? 0;
      if (kind === EventKind.OP_END) open[cpu] = 0;
      recs[cpu]?.push({ cpu, op, kind });
      rings[cpu]?.push(seq >>> 0);
      emitted.push(`${cpu}/${op}/${kind}/${seq >>> 0}`);
      seq = (seq + 1) >>> 0;
    }
    const bytes = recs.map((list, cpu) => {
      const b = new Uint8Array(list.length * EVENT_SIZE);
      const v = new DataView(b.buffer);
      list.forEach((r, i) => {
        v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.op.offset, r.op, true);
        v.setUint16(i * EVENT_SIZE + EVENT_LAYOUT.cpu.offset, r.cpu, true);
        v.setUint16(i * EVENT_SIZE + EVENT_LAYOUT.kind.offset, r.kind, true);
        v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.seq.offset, rings[cpu]?.[i] ?? 0, true);
      });
      return b;
    });
    const { events: merged, topOps } = mergeRings(bytes);
    expect(decodeEvents(merged).map((e) => `${e.cpu}/${e.op}/${e.kind}/${e.seq}`)).toEqual(emitted);
    expect(topOps).toEqual(begun);
  });

});

describe('stops', () => {
  it("has the start, every preemption point and every operation end; a handler's points are inside its operation", () => {
    // op 0 reaches point 1 twice (a retry), op 1 none, op 2 is interrupted at point 1 and its handler reaches point 1.
    const stops = computeStops(events([[0, B], [0, P, 1], [0, P, 1], [0, E], [1, B], [1, E], [0, B], [0, P, 1], [0, IB], [0, B], [0, P, 1], [0, E], [0, IE], [0, E]]));
    expect(stops.map((s) => [s.opIndex, s.micro, s.inHandler, s.arrival])).toEqual([
      [-1, 0, false, 0],
      [0, 1, false, 0],
      [0, 2, false, 1],
      [0, 0, false, 0],
      [1, 0, false, 0],
      [2, 3, false, 0],
      [2, 4, true, 0],
      [2, 0, false, 0],
    ]);
    expect(stops.map((s) => s.ops)).toEqual([0, 0, 0, 1, 2, 2, 2, 3]);
  });
});

describe('panes side by side', () => {
  const stopsOf = (list: [number, number, number?][]) => computeStops(events(list));
  // The same two operations: with a retry (a second point in op 0) and without.
  const retry = stopsOf([[0, B], [0, P, 1], [0, P, 1], [0, E], [0, B], [0, P, 1], [0, E]]);
  const once = stopsOf([[0, B], [0, P, 1], [0, E], [0, B], [0, E]]);

  it('is the stops themselves for one pane', () => {
    expect(alignStops([retry]).map((a) => a.panes[0])).toEqual(retry.map((_, i) => i));
    expect(alignStops([retry]).map((a) => [a.opIndex, a.micro])).toEqual(retry.map((s: Stop) => [s.opIndex, s.micro ? retry.filter((x) => x.opIndex === s.opIndex && x.micro && x.micro <= s.micro).length : 0]));
  });

  it('steps every pane to each operation end together; a pane with fewer micro-steps waits at its last', () => {
    const a = alignStops([retry, once]);
    expect(a.map((x) => [x.opIndex, x.micro, ...x.panes])).toEqual([
      [-1, 0, 0, 0],
      [0, 1, 1, 1],
      [0, 2, 2, 1], // `once` waits at its only micro-step of op 0
      [0, 0, 3, 2],
      [1, 1, 4, 2], // `once` reaches no point in op 1: it stays at op 0's end
      [1, 0, 5, 3],
    ]);
    // Every operation end shows both panes at their own end of that operation.
    for (const x of a.filter((y) => y.micro === 0 && y.opIndex >= 0)) {
      expect(retry[x.panes[0] ?? -1]).toMatchObject({ micro: 0, opIndex: x.opIndex });
      expect(once[x.panes[1] ?? -1]).toMatchObject({ micro: 0, opIndex: x.opIndex });
    }
  });

  it('starts after the set-up operations: the start shows each pane at their end, their micro-steps are no moments', () => {
    const a = alignStops([retry, once], 1);
    expect(a.map((x) => [x.opIndex, x.micro, ...x.panes])).toEqual([
      [-1, 0, 3, 2],
      [1, 1, 4, 2],
      [1, 0, 5, 3],
    ]);
    // A set-up longer than the script: the start is the end.
    expect(alignStops([once], 5)).toEqual([{ opIndex: -1, micro: 0, panes: [3] }]);
  });

  it('holds a pane whose run ended early at its last stop', () => {
    const short = stopsOf([[0, B], [0, E]]);
    expect(alignStops([retry, short]).at(-1)?.panes).toEqual([retry.length - 1, short.length - 1]);
  });
});
