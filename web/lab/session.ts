// session.ts - the deterministic session, in the bridge worker (and under
// Node in the tests): a world configuration plus a script, for any model.
//
// Loading runs the whole script once, in chunks with the event rings drained
// between them (so no ring overflows however long the script), to learn
// every stop (each operation's end and each preemption point: stops.ts) and
// every event.  Asking for a stop replays the script up to it: the model is
// deterministic, and running the script in pieces gives byte for byte the
// state and events of one run, so a world is kept at the last stop asked for
// (the cursor) and a later stop only runs what lies between.  An earlier
// stop (Back) replays from a fresh world: for SLUB 10,000 operations replay
// in a few milliseconds (`npx vitest bench`), well under the 100 ms a Back
// may take, so checkpoints would buy nothing; a model whose worlds could be
// cloned could keep some here.

import type { AtReply, OpInfo, Stop } from '../core/bridge-protocol';
import { BadRequest } from '../core/requests';
import type { ModelWorld, SessionModel } from './model';
import { computeStops, mergeRings, topLevelOps } from './stops';

/** Operations run between two drains of the learning run. */
const LEARN_CHUNK = 256;

export interface Loaded {
  /** The script as it runs. */
  script: unknown;
  stops: Stop[];
  ops: OpInfo[];
  /** Merged event records of the whole run. */
  events: Uint8Array;
  extra: unknown;
}

/** A session as the engine's handlers see it, whatever its model. */
export interface Session {
  load(): Loaded;
  at(stop: number): AtReply;
  dispose(): void;
}

/** Opens sessions of `model` on a request's (unchecked) world and script. */
export function replaySessions<World, Input, Script>(model: SessionModel<World, Input, Script>): (world: unknown, script: unknown) => Session {
  return (rawWorld, rawScript) => {
    const world = model.checkWorld(rawWorld);
    return new ReplaySession(model, world, model.checkScript(rawScript, world));
  };
}

class ReplaySession<World, Input, Script> implements Session {
  private script: Script | undefined;
  private stops: Stop[] = [];
  /** Micro-steps before each operation (microBase[k]: in ops 0..k-1). */
  private microBase: number[] = [];
  /** The world kept at the end of operation `ops - 1`. */
  private cursor: { world: ModelWorld<Script>; ops: number } | null = null;

  constructor(
    private readonly model: SessionModel<World, Input, Script>,
    private readonly world: World,
    private readonly input: Input,
  ) {}

  load(): Loaded {
    let walker: ModelWorld<Script> | null = null;
    let script: Script;
    try {
      script = this.model.prepare(this.world, this.input, () => (walker ??= this.model.create(this.world)));
    } finally {
      (walker as ModelWorld<Script> | null)?.destroy();
    }
    const n = this.model.opCount(script);
    let learned = this.learn(script, n, LEARN_CHUNK);
    // A chunk whose events overflowed a ring: learn again one operation at a time.
    if (!learned.complete) learned = this.learn(script, n, 1);
    if (!learned.complete)
      throw new BadRequest(`operation ${learned.failedAt + 1} records more events than a CPU's event ring holds: it cannot be stepped through`);
    const { events, results, world } = learned;
    this.replaceCursor({ world, ops: n });
    const topOps = topLevelOps(events);
    this.script = script;
    this.stops = computeStops(events);
    this.microBase = new Array<number>(n + 1).fill(0);
    for (const s of this.stops) if (s.micro > 0) this.microBase[s.opIndex + 1] = s.micro;
    for (let k = 1; k <= n; k++) this.microBase[k] = Math.max(this.microBase[k] ?? 0, this.microBase[k - 1] ?? 0);
    return {
      script,
      stops: this.stops,
      ops: results.map((result, i) => ({ opNum: topOps[i] ?? 0, result, error: result < 0 ? this.model.strerror(result) : '' })),
      events,
      extra: this.model.extra?.(this.world, script, results),
    };
  }

  /** Runs the script on a fresh world `chunk` operations at a time, draining the rings after each. */
  private learn(script: Script, n: number, chunk: number):
    | { complete: true; events: Uint8Array; results: number[]; world: ModelWorld<Script> }
    | { complete: false; failedAt: number } {
    const world = this.model.create(this.world);
    const parts: Uint8Array[] = [];
    const results: number[] = [];
    for (let from = 0; from < n; from += chunk) {
      const to = Math.min(n, from + chunk);
      try {
        results.push(...world.run(script, from, to, 0).results);
      } catch (e) {
        world.destroy();
        throw e;
      }
      parts.push(mergeRings(world.drain()).events);
      if (world.dropped() > 0) {
        world.destroy();
        return { complete: false, failedAt: from };
      }
    }
    const events = new Uint8Array(parts.reduce((k, p) => k + p.byteLength, 0));
    parts.reduce((at, p) => (events.set(p, at), at + p.byteLength), 0);
    return { complete: true, events, results, world };
  }

  private replaceCursor(next: { world: ModelWorld<Script>; ops: number } | null): void {
    if (this.cursor && this.cursor.world !== next?.world) this.cursor.world.destroy();
    this.cursor = next;
  }

  /** A world at the end of operation k - 1: the cursor moved on, or a fresh one replayed. */
  private worldAt(script: Script, k: number): ModelWorld<Script> {
    const c = this.cursor;
    const from = c && c.ops <= k ? c.ops : 0;
    const world = c && c.ops <= k ? c.world : this.model.create(this.world);
    this.replaceCursor({ world, ops: from });
    if (k > from) world.run(script, from, k, 0);
    this.replaceCursor({ world, ops: k });
    return world;
  }

  /** The state at stop i. */
  at(i: number): AtReply {
    const script = this.script;
    if (script === undefined) throw new BadRequest('the session has not been loaded');
    const stop = this.stops[i];
    if (!stop) throw new BadRequest(`stop ${i} is past the end (${this.stops.length} stops)`);
    if (stop.micro === 0) {
      const world = this.worldAt(script, stop.ops);
      return { snapshot: world.snapshot().slice().buffer, check: world.validate() };
    }
    const world = this.worldAt(script, stop.opIndex);
    const r = world.run(script, stop.opIndex, stop.opIndex + 1, stop.micro - (this.microBase[stop.opIndex] ?? 0));
    this.replaceCursor({ world, ops: stop.opIndex + 1 });
    if (!r.stopSnapshot) throw new BadRequest(`micro-step ${stop.micro} was not reached on replay`);
    return { snapshot: r.stopSnapshot.slice().buffer, check: null };
  }

  dispose(): void {
    this.replaceCursor(null);
  }
}
