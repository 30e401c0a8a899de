// stops.ts - from drained event rings to the moments a view can stop at.
//
// Merging the per-CPU event rings: every event carries a global sequence
// number taken when it was emitted, and each ring holds its CPU's events in
// that order, so a k-way merge on it gives the order the events happened,
// with CPU threads running at once as with the driver's one operation at a
// time (where it is the script's order, interrupt handlers inside the
// operation they interrupted).
//
// Stops: the start, each preemption point an operation reaches (the
// micro-steps), and each operation's end, read from the trace-level events
// every model emits (OP_BEGIN/OP_END, PREEMPT_POINT, INTERRUPT_BEGIN/END).
//
// Side by side: one script run on several worlds gives each world its own
// stops (a cmpxchg that retries reaches its preemption point twice, plain
// writes once).  alignStops makes one sequence the panes step through
// together: every operation's end is common to all, and inside an operation
// a pane with fewer micro-steps waits at its last one.
//
// Pure functions over bytes: the bridge worker uses them, and so do the
// views and the tests.

import { EVENT_LAYOUT, EVENT_SIZE, EventKind } from '../core/events.generated';
import type { Stop } from '../core/bridge-protocol';

const U32 = (b: Uint8Array, at: number) => ((b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | ((b[at + 3] ?? 0) << 24)) >>> 0;
const U16 = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
// Fields of event record i (offsets as constants: the free-running view merges tens of thousands a frame).
const OP = EVENT_LAYOUT.op.offset;
const CPU = EVENT_LAYOUT.cpu.offset;
const KIND = EVENT_LAYOUT.kind.offset;
const ARG0 = EVENT_LAYOUT.arg0.offset;
const SEQ = EVENT_LAYOUT.seq.offset;
const eventSeq = (b: Uint8Array, i: number) => U32(b, i * EVENT_SIZE + SEQ);
const eventKind = (b: Uint8Array, i: number) => U16(b, i * EVENT_SIZE + KIND);
const eventCpu = (b: Uint8Array, i: number) => U16(b, i * EVENT_SIZE + CPU);
/** a comes before b: sequence numbers wrap at 2^32, so compare their difference. */
const seqBefore = (a: number, b: number) => ((a - b) | 0) < 0;

/**
 * Merges drained rings into one record array in emission order (runs of one
 * ring copied at once, linear in the events: the free-running view merges
 * tens of thousands a frame); also returns the outermost operation numbers
 * in the order those operations began.
 */
export function mergeRings(rings: Uint8Array[]): { events: Uint8Array; topOps: number[] } {
  const counts = rings.map((r) => r.byteLength / EVENT_SIZE);
  const total = rings.reduce((n, r) => n + r.byteLength, 0);
  const events = new Uint8Array(total);
  const at = new Array<number>(rings.length).fill(0);
  const seq = (ring: number) => eventSeq(rings[ring] as Uint8Array, at[ring] ?? 0);
  for (let out = 0; out < total; ) {
    // The ring whose next event came first, and the next event of any other ring.
    let best = -1;
    for (let ring = 0; ring < rings.length; ring++)
      if ((at[ring] ?? 0) < (counts[ring] ?? 0) && (best < 0 || seqBefore(seq(ring), seq(best)))) best = ring;
    let limit: number | null = null;
    for (let ring = 0; ring < rings.length; ring++) {
      if (ring === best || (at[ring] ?? 0) >= (counts[ring] ?? 0)) continue;
      const next = seq(ring);
      if (limit === null || seqBefore(next, limit)) limit = next;
    }
    const r = rings[best] as Uint8Array;
    const from = at[best] ?? 0;
    let to = from + 1;
    while (to < (counts[best] ?? 0) && (limit === null || seqBefore(eventSeq(r, to), limit))) to++;
    events.set(r.subarray(from * EVENT_SIZE, to * EVENT_SIZE), out);
    out += (to - from) * EVENT_SIZE;
    at[best] = to;
  }
  return { events, topOps: topLevelOps(events) };
}

/** The outermost operations' numbers, in the order they began (handlers nest on the CPU they interrupt). */
export function topLevelOps(events: Uint8Array): number[] {
  const topOps: number[] = [];
  const depth = new Map<number, number>();
  for (let i = 0; i < events.byteLength / EVENT_SIZE; i++) {
    const kind = eventKind(events, i);
    const cpu = eventCpu(events, i);
    const d = depth.get(cpu) ?? 0;
    if (kind === EventKind.OP_BEGIN) {
      if (d === 0) topOps.push(U32(events, i * EVENT_SIZE + OP));
      depth.set(cpu, d + 1);
    } else if (kind === EventKind.OP_END && d > 0) depth.set(cpu, d - 1);
  }
  return topOps;
}

/** The stops of a merged event list (see Stop). */
export function computeStops(events: Uint8Array): Stop[] {
  const stops: Stop[] = [{ ops: 0, micro: 0, opIndex: -1, eventCount: 0, point: 0, inHandler: false, arrival: 0 }];
  const n = events.byteLength / EVENT_SIZE;
  let opIndex = -1;
  let depth = 0;
  let micro = 0;
  let inHandler = false;
  let arrivals = new Map<number, number>();
  for (let j = 0; j < n; j++) {
    const kind = eventKind(events, j);
    if (kind === EventKind.OP_BEGIN) {
      if (depth === 0) {
        opIndex++;
        arrivals = new Map();
      }
      depth++;
    } else if (kind === EventKind.INTERRUPT_BEGIN) {
      inHandler = true;
    } else if (kind === EventKind.INTERRUPT_END) {
      inHandler = false;
    } else if (kind === EventKind.PREEMPT_POINT) {
      micro++;
      const point = U32(events, j * EVENT_SIZE + ARG0);
      const arrival = inHandler ? 0 : (arrivals.get(point) ?? 0);
      if (!inHandler) arrivals.set(point, arrival + 1);
      stops.push({ ops: opIndex, micro, opIndex, eventCount: j + 1, point, inHandler, arrival });
    } else if (kind === EventKind.OP_END && depth > 0) {
      depth--;
      if (depth === 0) stops.push({ ops: opIndex + 1, micro: 0, opIndex, eventCount: j + 1, point: 0, inHandler: false, arrival: 0 });
    }
  }
  return stops;
}

/** One moment of panes stepping together. */
export interface AlignedStop {
  /** The operation (-1: the start). */
  opIndex: number;
  /** 0 at the operation's end (and at the start), else the micro-step within the operation (1-based). */
  micro: number;
  /** The stop each pane shows (an index into that pane's stops). */
  panes: number[];
}

/**
 * The moments panes running one script step through together.  With one
 * pane it is that pane's stops, one for one.  The first `setup` operations
 * have no moments: the start shows each pane at the end of them.
 */
export function alignStops(panes: readonly (readonly Stop[])[], setup = 0): AlignedStop[] {
  // Per pane and operation: its micro stops and its end stop.
  const perOp = panes.map((stops) => {
    const ops: { micro: number[]; end: number }[] = [];
    stops.forEach((s, i) => {
      if (s.opIndex < 0) return;
      const op = (ops[s.opIndex] ??= { micro: [], end: -1 });
      if (s.micro === 0) op.end = i;
      else op.micro.push(i);
    });
    return ops;
  });
  const nops = Math.max(0, ...perOp.map((ops) => ops.length));
  const shown = panes.map(() => 0);
  // The set-up: the start moment is its end.
  for (let k = 0; k < Math.min(setup, nops); k++)
    perOp.forEach((ops, p) => {
      const end = ops[k]?.end ?? -1;
      if (end >= 0) shown[p] = end;
    });
  const out: AlignedStop[] = [{ opIndex: -1, micro: 0, panes: shown.slice() }];
  for (let k = Math.min(setup, nops); k < nops; k++) {
    const micros = Math.max(0, ...perOp.map((ops) => ops[k]?.micro.length ?? 0));
    const before = shown.slice();
    for (let j = 1; j <= micros; j++)
      out.push({
        opIndex: k,
        micro: j,
        panes: perOp.map((ops, p) => {
          const m = ops[k]?.micro ?? [];
          return m.length ? (m[Math.min(j, m.length) - 1] ?? 0) : (before[p] ?? 0);
        }),
      });
    perOp.forEach((ops, p) => {
      const end = ops[k]?.end ?? -1;
      // A pane whose run stopped early (its events ran out) keeps showing its last stop.
      shown[p] = end >= 0 ? end : (out.at(-1)?.panes[p] ?? 0);
    });
    out.push({ opIndex: k, micro: 0, panes: shown.slice() });
  }
  return out;
}
