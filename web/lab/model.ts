// model.ts - what a model supplies to the engine in the bridge worker: its
// adapter (web/<view>/worker.ts), over that model's bindings
// (wasm-core/bindings/api_<model>.c).  Only the worker bundle imports
// adapters (web/models.ts lists them); the engine drives them through these
// interfaces and never knows a model's own types: a world config and a
// script arrive as `unknown` from a request, the adapter checks them, and
// from then on they stay inside the closures it builds.

import type { BenchRowParams, Check } from '../core/bridge-protocol';
import type { LoadedCore } from '../core/bridge-server';
import type { Session } from './session';

/** One simulated machine of a model, in the core's memory. */
export interface ModelWorld<Script> {
  /**
   * Runs operations [from, to) of `script` on this world, which is at the
   * end of operation `from - 1` (a fresh world: from = 0).  With stopAt > 0
   * the snapshot is taken at that micro-step (1-based, counted from op
   * `from`) and the run ends with the operation it falls in.  Returns each
   * operation's result (model-defined; negative: an sl_err).
   */
  run(script: Script, from: number, to: number, stopAt: number): { results: number[]; stopSnapshot: Uint8Array | null };
  /** Each CPU's recorded events since the last drain (merge them with mergeRings). */
  drain(): Uint8Array[];
  /** Events the rings had no room for since the world was made. */
  dropped(): number;
  /** The whole state, as the view's decoder reads it. */
  snapshot(): Uint8Array;
  /** The model's invariant checker (validate()), at an operation boundary. */
  validate(): Check;
  destroy(): void;
}

/** What a model's bindings (web/<view>/<model>-api.ts) do with any of its worlds, named by the core's handle. */
export interface WorldBindings {
  /** Each CPU's recorded events since the last drain. */
  drain(w: number, cpus: number): Uint8Array[];
  /** Events CPU `cpu`'s ring had no room for since the world was made. */
  eventsDropped(w: number, cpu: number): number;
  snapshot(w: number): Uint8Array;
  validate(w: number): Check;
  destroyWorld(w: number): void;
}

/**
 * A ModelWorld over world handle `w` (of `cpus` CPUs) of a model's
 * bindings: what every model's world does the same way.  A model adds how
 * its world runs a script, and overrides what its world does otherwise.
 */
export abstract class CoreWorld<Script> implements ModelWorld<Script> {
  constructor(
    private readonly bindings: WorldBindings,
    protected readonly w: number,
    protected readonly cpus: number,
  ) {}
  abstract run(script: Script, from: number, to: number, stopAt: number): { results: number[]; stopSnapshot: Uint8Array | null };
  drain(): Uint8Array[] {
    return this.bindings.drain(this.w, this.cpus);
  }
  dropped(): number {
    let n = 0;
    for (let k = 0; k < this.cpus; k++) n += this.bindings.eventsDropped(this.w, k);
    return n;
  }
  snapshot(): Uint8Array {
    return this.bindings.snapshot(this.w);
  }
  validate(): Check {
    return this.bindings.validate(this.w);
  }
  destroy(): void {
    this.bindings.destroyWorld(this.w);
  }
}

/**
 * A model's deterministic sessions: worlds that run a script the same way
 * every time, so any moment is reached again by replay.  `Input` is the
 * script a request carries, `Script` the one that runs (the same type unless
 * `prepare` rewrites it).
 */
export interface SessionModel<World, Input, Script> {
  /** The world configuration from a request, checked (BadRequest otherwise). */
  checkWorld(raw: unknown): World;
  /** The script from a request, checked against the world (BadRequest otherwise). */
  checkScript(raw: unknown, world: World): Input;
  /** A fresh world recording events. */
  create(world: World): ModelWorld<Script>;
  /**
   * The script that runs.  `walker()` opens (once) a world of the session's
   * configuration that the adapter may run op by op to learn what it needs
   * (SLUB: which objects an operation allocated, to name later frees by
   * place); the engine destroys it afterwards.
   */
  prepare(world: World, input: Input, walker: () => ModelWorld<Script>): Script;
  opCount(script: Script): number;
  /** What else a load reports (LoadReply.extra), from the run's results. */
  extra?(world: World, script: Script, results: number[]): unknown;
  strerror(rc: number): string;
}

/** A free run's world: the model's CPUs running a workload on their own. */
export interface FreeRunWorld {
  readonly cpus: number;
  /** At most this many operations per second per CPU (0: no cap). */
  readonly rate: number;
  /** The state when the CPUs started, for the view's mirror. */
  readonly anchor: Uint8Array;
  /** Events each CPU's ring holds: a drain takes at most that many per CPU. */
  readonly ringEvents: number;
  /** The CPUs run on threads of their own (sl_api_freerun_start); false: the engine runs them in turn (runCpu). */
  readonly threads: boolean;
  /** Interleaved: runs up to `nops` operations as CPU `cpu` on this worker (`round` varies its workload's seed); returns how many it did. */
  runCpu(cpu: number, nops: number, round: number): number;
  /** Threads: the operations CPU `cpu`'s thread has done, and that thread's id. */
  threadOps(cpu: number): number;
  threadId(cpu: number): number;
  /** The model's counters for one CPU, by name. */
  counters(cpu: number): Record<string, number>;
  /** Each CPU's events since the last drain, at most `limit` per CPU (running CPUs keep writing: a drain that waited for an empty ring might never end). */
  drain(limit: number): Uint8Array[];
  /** Events CPU `cpu`'s ring had no room for since the start. */
  dropped(cpu: number): number;
  snapshot(): Uint8Array;
  /** Stops the CPUs and destroys the world. */
  stop(): void;
}

/** A file's bytes as a file session reads them again: synchronously, a slice at a time, never the whole file at once. */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number): Uint8Array;
}

/**
 * A model's work on a file the page opened (the trace view's replay): done
 * a step at a time, so the page shows progress between steps and cancels by
 * asking for no more; then questions about what it found.  Results are
 * model-defined (`unknown` here), as a world's snapshot is.
 */
export interface FileSession {
  /**
   * Works on the file's next slice, the bytes from `offset` (the page reads them: web/lab/file-feed.ts);
   * returns the progress, whose `done` ends the feeding.  Slices come in order; an empty file is one
   * empty slice.  Throws BadRequest for a slice out of order.
   */
  advance(offset: number, bytes: Uint8Array): unknown;
  /** A question about the file or the work done (checked here, as a world is). */
  ask(question: unknown): { result: unknown; transfer?: Transferable[] };
  dispose(): void;
}

/** A model bound to one loaded core: what the engine's request handlers call. */
export interface BoundModel {
  /** Checks a request's world and script and opens a session on them (replaySessions builds it). */
  openSession?(world: unknown, script: unknown): Session;
  /** Facts about a world a view needs to write its script. */
  worldInfo?(world: unknown): unknown;
  /** Answers a question that belongs to no world (checked here, as a world is). */
  query?(query: unknown): unknown;
  /** Checks the params, builds and fills a world, starts its CPUs (on threads when `threads`). */
  startFreeRun?(params: unknown, threads: boolean): FreeRunWorld;
  /** Opens a session on a file the page opened (`options` checked here). */
  openFile?(source: ByteSource, options: unknown): FileSession;
  /** One timed row of a benchmark experiment: nanoseconds per operation. */
  benchRow?(p: Omit<BenchRowParams, 'model'>, onThread: boolean): { nsPerOp: number; ops: number; figures?: Record<string, number> };
}

/** A model's worker-side adapter, listed in web/models.ts. */
export interface ModelAdapter {
  /** The view id it serves (web/<id>/), which requests name as `model`. */
  id: string;
  bind(core: LoadedCore): BoundModel;
}
