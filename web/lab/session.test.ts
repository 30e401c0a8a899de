// The engine's sessions and its request handlers, over a small model written
// here (no core needed): a world counts operations per CPU, each operation
// reaches one preemption point (two when the world "retries"), and records
// its events into per-CPU rings of a fixed size, as the C models do.
import { describe, expect, it } from 'vitest';
import type { CoreInfo } from '../core/bridge-protocol';
import type { LoadedCore } from '../core/bridge-server';
import type { CoreApi } from '../core/core-api';
import { EVENT_LAYOUT, EVENT_SIZE, EventKind } from '../core/events.generated';
import { BadRequest, checkRecord, checkWhole } from '../core/requests';
import type { ModelAdapter, ModelWorld, SessionModel } from './model';
import { replaySessions } from './session';
import { alignStops } from './stops';
import { labHandlers, MAX_SESSIONS } from './worker-host';

interface World {
  cpus: number;
  retry: boolean;
  /** Events each CPU's ring holds. */
  ring: number;
}
type Script = number[];

/** What the test counts: worlds made and destroyed, operations run. */
const tally = { created: 0, destroyed: 0, opsRun: 0 };

class CountingWorld implements ModelWorld<Script> {
  private readonly counts: number[];
  private readonly rings: number[][][];
  private droppedEvents = 0;
  private seq = 0;
  private opNum = 0;
  private ops = 0;
  constructor(private readonly w: World) {
    this.counts = new Array<number>(w.cpus).fill(0);
    this.rings = Array.from({ length: w.cpus }, () => []);
    tally.created++;
  }
  private emit(cpu: number, kind: number, arg0 = 0): void {
    const ring = this.rings[cpu] as number[][];
    if (ring.length >= this.w.ring) this.droppedEvents++;
    else ring.push([this.opNum, cpu, kind, arg0, this.seq]);
    this.seq++;
  }
  run(script: Script, from: number, to: number, stopAt: number) {
    let micro = 0;
    let stopSnapshot: Uint8Array | null = null;
    const results: number[] = [];
    for (let i = from; i < to && !(stopSnapshot && i > from); i++) {
      const cpu = script[i] ?? 0;
      this.opNum++;
      this.emit(cpu, EventKind.OP_BEGIN);
      for (let k = 0; k < (this.w.retry ? 2 : 1); k++) {
        this.emit(cpu, EventKind.PREEMPT_POINT, 1);
        if (++micro === stopAt) stopSnapshot = this.snapshot();
      }
      this.counts[cpu] = (this.counts[cpu] ?? 0) + 1;
      this.ops++;
      tally.opsRun++;
      this.emit(cpu, EventKind.OP_END);
      results.push(this.counts[cpu] ?? 0);
      if (stopSnapshot) break;
    }
    return { results, stopSnapshot };
  }
  drain() {
    const out = this.rings.map((ring) => {
      const b = new Uint8Array(ring.length * EVENT_SIZE);
      const v = new DataView(b.buffer);
      ring.forEach(([op, cpu, kind, arg0, seq], i) => {
        v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.op.offset, op ?? 0, true);
        v.setUint16(i * EVENT_SIZE + EVENT_LAYOUT.cpu.offset, cpu ?? 0, true);
        v.setUint16(i * EVENT_SIZE + EVENT_LAYOUT.kind.offset, kind ?? 0, true);
        v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.arg0.offset, arg0 ?? 0, true);
        v.setUint32(i * EVENT_SIZE + EVENT_LAYOUT.seq.offset, seq ?? 0, true);
      });
      return b;
    });
    this.rings.forEach((r) => (r.length = 0));
    return out;
  }
  dropped() {
    return this.droppedEvents;
  }
  /** The operations done and each CPU's count, a byte each. */
  snapshot() {
    return Uint8Array.from([this.ops, ...this.counts]);
  }
  validate() {
    return { rc: 0, message: '' };
  }
  destroy() {
    tally.destroyed++;
  }
}

const counting: SessionModel<World, Script, Script> = {
  checkWorld: (raw) => {
    const w = checkRecord('world', raw);
    return { cpus: checkWhole('cpus', w.cpus, 1, 8), retry: w.retry === true, ring: checkWhole('ring', w.ring, 1, 1 << 20) };
  },
  checkScript: (raw, world) => {
    if (!Array.isArray(raw)) throw new BadRequest('script must be an array');
    return raw.map((c, i) => checkWhole(`op ${i + 1}'s cpu`, c, 0, world.cpus - 1));
  },
  create: (w) => new CountingWorld(w),
  prepare: (_w, input) => input,
  opCount: (s) => s.length,
  strerror: (rc) => `error ${rc}`,
};

const core = { api: { hasThreads: false, strerror: (rc: number) => `error ${rc}` } as unknown as CoreApi, info: {} as CoreInfo, module: null } satisfies LoadedCore;
const adapter: ModelAdapter = { id: 'counting', bind: () => ({ openSession: replaySessions(counting) }) };

const world: World = { cpus: 2, retry: false, ring: 1 << 15 };
const script = (n: number): Script => Array.from({ length: n }, (_, i) => i % 2);
const counts = (snapshot: ArrayBuffer) => Array.from(new Uint8Array(snapshot));

describe('a session', () => {
  it('learns a stop per preemption point and per operation end, and replays any of them', () => {
    const s = replaySessions(counting)({ ...world, retry: true }, script(5));
    const r = s.load();
    expect(r.stops).toHaveLength(1 + 5 * 3);
    expect(r.ops.map((o) => o.result)).toEqual([1, 1, 2, 2, 3]);
    expect(counts(s.at(r.stops.length - 1).snapshot)).toEqual([5, 3, 2]);
    // Inside op 3 (CPU 0) at its second point: two ops done before it, and it completes with the run.
    const i = r.stops.findIndex((x) => x.opIndex === 2 && x.micro === 6);
    expect(counts(s.at(i).snapshot)).toEqual([2, 1, 1]);
    expect(s.at(i).check).toBeNull();
    expect(s.at(0).check).toEqual({ rc: 0, message: '' });
    s.dispose();
  });

  it('steps forward from the world it kept, and replays from a fresh world to go back', () => {
    const s = replaySessions(counting)(world, script(1000));
    const r = s.load();
    const end = r.stops.length - 1;
    const at = (i: number) => {
      const before = { ...tally };
      const snap = counts(s.at(i).snapshot);
      return { snap, created: tally.created - before.created, ran: tally.opsRun - before.opsRun };
    };
    expect(at(end)).toMatchObject({ created: 0, ran: 0 }); // the learning run's world is kept at the end
    expect(at(10)).toMatchObject({ created: 1, ran: 5 }); // back: a fresh world, 5 ops (stops 1, 2 are op 0's)
    expect(at(14)).toMatchObject({ created: 0, ran: 2 }); // forward: only what lies between
    expect(at(15)).toMatchObject({ created: 0, ran: 1 }); // a micro-step runs the op it is in
    expect(at(14).created).toBe(1); // back again
    expect(at(end).snap).toEqual([1000 % 256, 500 % 256, 500 % 256]);
    const destroyed = tally.destroyed;
    s.dispose();
    expect(tally.destroyed).toBe(destroyed + 1);
  });

  it('learns a script whose events overflow a ring between two drains, one operation at a time; an operation alone too big is refused', () => {
    // 3 events per op on one CPU: 256 ops per chunk overflow a ring of 300, one op does not.
    const long = replaySessions(counting)({ cpus: 1, retry: false, ring: 300 }, new Array<number>(600).fill(0));
    expect(long.load().stops).toHaveLength(1 + 600 * 2);
    long.dispose();
    const tiny = replaySessions(counting)({ cpus: 1, retry: false, ring: 2 }, [0, 0]);
    expect(() => tiny.load()).toThrow(/operation 1 records more events than a CPU's event ring holds/);
  });

  it('refuses a stop past the end', () => {
    const s = replaySessions(counting)(world, script(2));
    expect(() => s.at(0)).toThrow(/has not been loaded/);
    s.load();
    expect(() => s.at(5)).toThrow(/stop 5 is past the end \(5 stops\)/);
  });
});

describe('the engine\'s requests', () => {
  it('keeps several sessions at once, each with its own world, until disposed', () => {
    const h = labHandlers([adapter]);
    const a = h.load({ model: 'counting', world, script: script(4) }, core).result;
    const b = h.load({ model: 'counting', world: { ...world, retry: true }, script: script(2) }, core).result;
    expect(a.session).not.toBe(b.session);
    expect(counts(h.at({ session: a.session, stop: a.stops.length - 1 }, core).result.snapshot)).toEqual([4, 2, 2]);
    expect(counts(h.at({ session: b.session, stop: b.stops.length - 1 }, core).result.snapshot)).toEqual([2, 1, 1]);
    expect(h.dispose({ session: a.session }, core).result).toEqual({ disposed: true });
    expect(h.dispose({ session: a.session }, core).result).toEqual({ disposed: false });
    expect(() => h.at({ session: a.session, stop: 0 }, core)).toThrow(`session ${a.session} is not open: it was disposed`);
    expect(counts(h.at({ session: b.session, stop: 0 }, core).result.snapshot)).toEqual([0, 0, 0]);
  });

  it('frees the least recently used session beyond its limit, and says so', () => {
    const h = labHandlers([adapter]);
    const ids = Array.from({ length: MAX_SESSIONS }, () => h.load({ model: 'counting', world, script: script(1) }, core).result.session);
    h.at({ session: ids[0] ?? 0, stop: 0 }, core); // the first is now the most recently used
    h.load({ model: 'counting', world, script: script(1) }, core);
    expect(() => h.at({ session: ids[1] ?? 0, stop: 0 }, core)).toThrow(/is not open: it was freed to make room/);
    expect(() => h.at({ session: ids[0] ?? 0, stop: 0 }, core)).not.toThrow();
  });

  it('says what is wrong with a request', () => {
    const h = labHandlers([adapter]);
    expect(() => h.load({ model: 'nope', world, script: [] }, core)).toThrow('model must be one of counting, got nope');
    expect(() => h.load({ model: 'counting', world: { ...world, cpus: 0 }, script: [] }, core)).toThrow('cpus must be a whole number from 1 to 8, got 0');
    expect(() => h.at({ session: -1, stop: 0 }, core)).toThrow(BadRequest);
    expect(() => h.freerunStart({ model: 'counting', params: {} }, core)).toThrow('model counting has no free-running mode');
    expect(() => h.worldInfo({ model: 'counting', world }, core)).toThrow('model counting describes no worlds');
    expect(() => h.query({ model: 'counting', query: {} }, core)).toThrow('model counting answers no queries');
  });

  it('passes a query to the model that answers it, which checks it', () => {
    const asking: ModelAdapter = { id: 'asking', bind: () => ({ query: (q) => ({ echoed: checkRecord('query', q).x }) }) };
    const h = labHandlers([adapter, asking]);
    expect(h.query({ model: 'asking', query: { x: 3 } }, core).result).toEqual({ echoed: 3 });
    expect(() => h.query({ model: 'asking', query: 5 }, core)).toThrow('query must be an object, got 5');
  });

  it('runs one script on several worlds side by side, stepping them together', () => {
    // The same four operations, with and without a retry: every operation's end lines up.
    const h = labHandlers([adapter]);
    const panes = [world, { ...world, retry: true }].map((w) => h.load({ model: 'counting', world: w, script: script(4) }, core).result);
    const aligned = alignStops(panes.map((p) => p.stops));
    expect(aligned).toHaveLength(1 + 4 * 3); // each op: the retrying pane's two points, then the end
    for (const step of aligned) {
      const shown = panes.map((p, i) => counts(h.at({ session: p.session, stop: step.panes[i] ?? 0 }, core).result.snapshot));
      // Both worlds have done the same operations at every moment (a micro-step shows the ops before it).
      expect(shown[0]).toEqual(shown[1]);
      expect(shown[0]?.[0]).toBe(step.micro ? step.opIndex : step.opIndex + 1);
    }
  });
});
