// session.ts - the deterministic view's engine, run in the bridge worker (and
// under Node by the tests).  A session is a world configuration plus a
// script.  Loading it runs the whole script once to learn every stop (each
// operation boundary and each preemption point, the micro-steps) and every
// event; asking for a stop replays the script from a fresh world up to it
// (the start is the checkpoint: the model is deterministic, so replay is
// exact, and a scenario's few hundred operations replay in well under a
// millisecond).  Back is therefore just asking for an earlier stop.
//
// Merging the per-CPU event rings: every event carries a global sequence
// number taken when it was emitted, and each ring holds its CPU's events in
// that order, so a k-way merge on it gives the order the events happened,
// with CPU threads running at once as with the driver's one operation at a
// time (where it is the script's order, interrupt handlers inside the
// operation they interrupted).

import { EVENT_LAYOUT, EVENT_SIZE, EventKind } from '../core/events.generated';
import type { LoadReply, Stop, WorldConfig, AtReply } from './protocol';
import { isSym, type AnyRef, type ObjRef, type Script, type ScriptOp } from './script';
import type { SlubApi } from './slub-api';
import { BULK_FORMS, decodeSnapshot, ObjState } from './snapshot';

const U32 = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8) | ((b[at + 2] ?? 0) << 16) | (((b[at + 3] ?? 0) << 24) >>> 0);
const U16 = (b: Uint8Array, at: number) => (b[at] ?? 0) | ((b[at + 1] ?? 0) << 8);
const KIND = (b: Uint8Array, i: number) => U16(b, i * EVENT_SIZE + 6);
const OPNUM = (b: Uint8Array, i: number) => U32(b, i * EVENT_SIZE) >>> 0;
const ARG0 = (b: Uint8Array, i: number) => U32(b, i * EVENT_SIZE + 20) >>> 0;
const SEQ = (b: Uint8Array, i: number) => U32(b, i * EVENT_SIZE + EVENT_LAYOUT.seq.offset) >>> 0;
const CPU = (b: Uint8Array, i: number) => U16(b, i * EVENT_SIZE + 4);
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
  for (let out = 0; out < total; ) {
    // The ring whose next event came first, and the next event of any other ring.
    let best = -1;
    for (let ring = 0; ring < rings.length; ring++)
      if ((at[ring] ?? 0) < (counts[ring] ?? 0) && (best < 0 || seqBefore(SEQ(rings[ring] as Uint8Array, at[ring] ?? 0), SEQ(rings[best] as Uint8Array, at[best] ?? 0))))
        best = ring;
    let limit: number | null = null;
    for (let ring = 0; ring < rings.length; ring++) {
      if (ring === best || (at[ring] ?? 0) >= (counts[ring] ?? 0)) continue;
      const next = SEQ(rings[ring] as Uint8Array, at[ring] ?? 0);
      if (limit === null || seqBefore(next, limit)) limit = next;
    }
    const r = rings[best] as Uint8Array;
    const from = at[best] ?? 0;
    let to = from + 1;
    while (to < (counts[best] ?? 0) && (limit === null || seqBefore(SEQ(r, to), limit))) to++;
    events.set(r.subarray(from * EVENT_SIZE, to * EVENT_SIZE), out);
    out += (to - from) * EVENT_SIZE;
    at[best] = to;
  }
  // Outermost operations: an OP_BEGIN at depth 0 on its CPU (handlers nest on the CPU they interrupt).
  const topOps: number[] = [];
  const depth = new Map<number, number>();
  for (let i = 0; i < total / EVENT_SIZE; i++) {
    const kind = KIND(events, i);
    const cpu = CPU(events, i);
    const d = depth.get(cpu) ?? 0;
    if (kind === EventKind.OP_BEGIN) {
      if (d === 0) topOps.push(OPNUM(events, i));
      depth.set(cpu, d + 1);
    } else if (kind === EventKind.OP_END && d > 0) depth.set(cpu, d - 1);
  }
  return { events, topOps };
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
    const kind = KIND(events, j);
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
      const point = ARG0(events, j);
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

export class SessionError extends Error {}

interface RunInfo {
  results: number[];
  irqResults: number[];
  events: Uint8Array;
  topOps: number[];
}

export class SlubSession {
  private loaded: { config: WorldConfig; script: Script; stops: Stop[] } | undefined;

  constructor(private readonly api: SlubApi) {}

  private fullRun(config: WorldConfig, script: Script, nops: number, withEvents: boolean): RunInfo {
    const w = this.api.createWorld(config);
    try {
      const r = this.api.run(w, script, nops, 0);
      const { events, topOps } = withEvents ? mergeRings(this.api.drain(w, config.cpus)) : { events: new Uint8Array(0), topOps: [] };
      const irqResults: number[] = [];
      return { results: Array.from(r.results), irqResults, events, topOps };
    } finally {
      this.api.destroyWorld(w);
    }
  }

  /** Names every symbolic object by place, running the prefix each one needs. */
  resolve(config: WorldConfig, script: Script<AnyRef>): Script {
    const ops: ScriptOp[] = [];
    const concrete: Script = { ops, irqs: [] };
    const madeBy = new Map<number, ObjRef[]>();
    // Handlers name objects by place only (an interrupt is injected into a state already on screen).
    concrete.irqs = script.irqs.map((q) => ({
      ...q,
      handler: { ...q.handler, refs: (q.handler.refs ?? []).filter((r): r is ObjRef => !isSym(r)) },
    }));
    for (let i = 0; i < script.ops.length; i++) {
      const o = script.ops[i] as ScriptOp<AnyRef>;
      const refs = o.refs ?? [];
      if (!refs.some(isSym)) {
        ops.push({ ...o, refs: refs as ObjRef[] });
        continue;
      }
      const out: ObjRef[] = refs.map((r) => {
        if (!isSym(r)) return r;
        if (r.allocOf >= i) throw new SessionError(`op ${i + 1} frees an object of op ${r.allocOf + 1}, which comes later`);
        let made = madeBy.get(r.allocOf);
        if (!made) {
          made = this.allocatedBy(config, concrete, r.allocOf);
          madeBy.set(r.allocOf, made);
        }
        const got = made[r.nth];
        if (!got) throw new SessionError(`op ${i + 1} frees object ${r.nth + 1} of op ${r.allocOf + 1}, which has no such object`);
        return got;
      });
      ops.push({ ...o, refs: out });
    }
    return concrete;
  }

  /** The objects op k allocated, by place, as they are right after it. */
  private allocatedBy(config: WorldConfig, script: Script, k: number): ObjRef[] {
    const w = this.api.createWorld(config);
    try {
      this.api.run(w, { ops: script.ops, irqs: script.irqs }, k + 1, 0);
      const { topOps } = mergeRings(this.api.drain(w, config.cpus));
      const snap = decodeSnapshot(this.api.snapshot(w));
      const opNum = topOps[k];
      const out: ObjRef[] = [];
      for (let s = 0; s < snap.nslabs; s++) {
        const first = snap.slab.firstObj[s] ?? 0;
        for (let j = 0; j < snap.geometry.objects; j++) {
          if (snap.obj.state[first + j] !== ObjState.ALLOCATED) continue;
          if (snap.obj.allocOp[first + j] === opNum) out.push({ pfn: snap.slab.pfn[s] ?? 0, index: j });
        }
      }
      return out;
    } finally {
      this.api.destroyWorld(w);
    }
  }

  load(config: WorldConfig, symbolic: Script<AnyRef>): LoadReply {
    const script = this.resolve(config, symbolic);
    const full = this.fullRun(config, script, script.ops.length, true);
    const stops = computeStops(full.events);
    const other = BULK_FORMS.find((f) => f !== config.bulkFree) ?? 'fallback';
    const otherRun = script.ops.some((o) => o.kind === 'freeBulk')
      ? this.fullRun({ ...config, bulkFree: other }, script, script.ops.length, false).results
      : [];
    const irqResults: number[] = [];
    const ev = full.events;
    for (let j = 0; j < ev.byteLength / EVENT_SIZE; j++)
      if (KIND(ev, j) === EventKind.INTERRUPT_END) irqResults.push(U32(ev, j * EVENT_SIZE + 24) | 0);
    this.loaded = { config, script, stops };
    const ops = full.results.map((result, i) => ({
      opNum: full.topOps[i] ?? 0,
      result,
      error: result < 0 ? this.api.strerror(result) : '',
    }));
    const events = full.events.slice().buffer;
    return { script, stops, ops, events, otherBulkForm: { form: other, results: otherRun }, irqResults };
  }

  /** The state at stop `i` of the loaded script, by replay from a fresh world. */
  at(i: number): AtReply {
    if (!this.loaded) throw new SessionError('no session is loaded');
    const { config, script, stops } = this.loaded;
    const stop = stops[i];
    if (!stop) throw new SessionError(`stop ${i} is past the end (${stops.length} stops)`);
    const w = this.api.createWorld(config);
    try {
      if (stop.micro === 0) {
        this.api.run(w, script, stop.ops, 0);
        const snap = this.api.snapshot(w);
        return { snapshot: snap.slice().buffer, check: this.api.validate(w) };
      }
      const r = this.api.run(w, script, stop.opIndex + 1, stop.micro);
      if (!r.stopSnapshot) throw new SessionError(`micro-step ${stop.micro} was not reached on replay`);
      return { snapshot: r.stopSnapshot.slice().buffer, check: null };
    } finally {
      this.api.destroyWorld(w);
    }
  }
}
