// protocol.ts - the visualizer's request types on the bridge (see the header of
// web/core/bridge-protocol.ts, whose `Requests` extends `SlubRequests`).
// Handlers: web/slub/worker-handlers.ts.  Binary results (snapshots, merged
// event records) travel as transferred ArrayBuffers.

import type { AnyRef, ObjRef, Script } from './script';
import type { BulkForm, Fastpath } from './snapshot';

export interface WorldConfig {
  cpus: number;
  objectSize: number;
  fastpath: Fastpath;
  bulkFree: BulkForm;
  seed: number;
  arenaBytes: number;
}

/** A moment the view can stop at: after `ops` operations, or inside op `opIndex` at micro-step `micro`. */
export interface Stop {
  /** Operations completed. */
  ops: number;
  /** Global micro-step number (1-based) for a stop at a preemption point, 0 at an operation boundary. */
  micro: number;
  /** The op this stop belongs to (-1 for the start). */
  opIndex: number;
  /** Merged events that happened up to this stop. */
  eventCount: number;
  /** The preemption point id (micro stops), else 0. */
  point: number;
  /** The micro stop is inside an injected interrupt handler. */
  inHandler: boolean;
  /** Arrival number of the outer op at this point (for injecting an interrupt here). */
  arrival: number;
}

export interface OpInfo {
  /** The trace's operation number (what objects' last alloc/free refer to). */
  opNum: number;
  /** The op's return value (see RunResult.results). */
  result: number;
  /** sl_strerror of a negative result, else ''. */
  error: string;
}

export interface LoadReply {
  /** The script with every object named by place. */
  script: Script;
  stops: Stop[];
  ops: OpInfo[];
  /** Merged sl_event records of the whole run (EVENT_SIZE bytes each). */
  events: ArrayBuffer;
  /** Results of the same script with the other bulk-free form (for scenario 5's comparison). */
  otherBulkForm: { form: BulkForm; results: number[] };
  /** Interrupt handler results, in the order they fired. */
  irqResults: number[];
}

export interface AtReply {
  snapshot: ArrayBuffer;
  /** validate() at an operation boundary; null inside an operation (the checker needs a quiescent state). */
  check: { rc: number; message: string } | null;
}

export const WORKLOADS = ['local', 'prodcons', 'bursts'] as const;
export type Workload = (typeof WORKLOADS)[number];

export interface FreerunStartParams {
  cpus: number;
  objectSize: number;
  workload: Workload;
  /** Slabs to fill before starting (objects left allocated as a background). */
  prefillSlabs: number;
  seed: number;
  /** Share of the time (1..100 %) each CPU thread runs; below 100 it sleeps between rounds to leave the page a core. */
  duty: number;
  /** At most this many operations per second per CPU (0: no cap), so that a frame's events fit the rings. */
  rate: number;
}

export interface FreerunCpu {
  ops: number;
  allocFast: number;
  allocSlow: number;
  freeFast: number;
  freeSlow: number;
  cpuCasFail: number;
  slabCasFail: number;
  /** The id of the thread (web worker) running this CPU. */
  threadId: number;
}

export interface FreerunStarted {
  /** threads: one CPU worker per CPU; interleaved: the bridge worker runs the CPUs in turn. */
  mode: 'threads' | 'interleaved';
  duty: number;
  rate: number;
  /** The snapshot the view's mirror starts from. */
  anchor: ArrayBuffer;
}

export interface FreerunDrain {
  mode: 'threads' | 'interleaved';
  elapsedMs: number;
  cpus: FreerunCpu[];
  /** The rings' events since the last drain, merged into emission order (sl_event records). */
  events: ArrayBuffer;
  /** Events the rings had no room for since the last drain (the mirror must re-anchor). */
  dropped: number;
  /** The whole state, when the drain asked for it. */
  snapshot: ArrayBuffer | null;
}

export interface BenchRowParams {
  experiment: 'fastpath' | 'bulk';
  /** fastpath: cmpxchg|locked|plain; bulk: fallback|detached. */
  variant: string;
  /** bulk size (bulk), 1 for fastpath. */
  bulk: number;
  loops: number;
}
export interface BenchRowReply {
  /** Nanoseconds per operation (an alloc+free pair per object). */
  nsPerOp: number;
  ops: number;
  elapsedMs: number;
  onThread: boolean;
}

export interface SlubRequests {
  slubGeometry: { params: { objectSize: number; cpus: number }; result: { objects: number; order: number; size: number } };
  slubLoad: { params: { config: WorldConfig; script: Script<AnyRef> }; result: LoadReply };
  slubAt: { params: { stop: number }; result: AtReply };
  freerunStart: { params: FreerunStartParams; result: FreerunStarted };
  freerunDrain: { params: { snapshot: boolean }; result: FreerunDrain };
  freerunStop: { params: Record<string, never>; result: { ok: true } };
  benchRow: { params: BenchRowParams; result: BenchRowReply };
}

export type { ObjRef };
