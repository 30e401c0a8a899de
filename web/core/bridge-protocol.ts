// bridge-protocol.ts - the messages between the UI (main thread) and the
// bridge worker that owns the WebAssembly core.
//
// Every request is {id, type, params}; the worker answers each with exactly
// one response carrying the same id: {ok: true, result} or {ok: false, error}.
// Requests run one at a time in arrival order.  Binary results (struct copies,
// drained event rings) travel as ArrayBuffers in the transfer list, so they
// move rather than copy; the UI decodes them with the documented decoders
// (layouts.ts, events.generated.ts), never by reaching into the core's memory.
//
// Besides the core's own requests (hello, selftest) the protocol carries the
// lab engine's (web/lab/worker-host.ts), which are generic over a model: a
// request that creates something names its model (`model`: a view id such as
// "slub", whose adapter web/<id>/worker.ts runs it) and returns a session id;
// every later request carries that id, and `dispose` frees it, so several
// sessions (two labs on a page, side-by-side panes) live at once.  What is
// the model's own (a world config, a script, a snapshot's bytes) crosses as
// `unknown` or bytes: the adapter checks it on arrival and the view decodes it.
//
// Adding a request type: add an entry to `Requests` below (params and result
// types), a handler to the table web/bridge.worker.ts serves (TypeScript
// refuses to compile until it exists), and call `bridge.request('name', params)`
// from the UI.  The C side of it is a SL_EXPORT function in
// wasm-core/bindings/api_<area>.c, called only through CoreApi (core-api.ts)
// or a model adapter.

/** Which build of the core the worker loaded. */
export type CoreMode = 'threads' | 'single';
/**
 * Which C it was compiled from: the lab's (tracing, preemption hooks and
 * asserts in) or the benchmark flavour's (SLABLAB_BENCH, -O3, threads only),
 * which only the Benchmarks page's own worker loads (web/bench.worker.ts).
 */
export type CoreBuild = 'traced' | 'bench';

export interface CoreInfo {
  mode: CoreMode;
  build: CoreBuild;
  /** SLABLAB_ABI_VERSION of the loaded module. */
  abiVersion: number;
  /** Most simulated CPUs the core supports (SL_MAX_CPUS). */
  maxCpus: number;
  /** Pthread workers kept ready for CPU threads (PTHREAD_POOL_SIZE), 0 in the single build. */
  cpuWorkerPool: number;
  /** Bytes per sl_event record as the C side sees it. */
  eventSize: number;
  /** navigator.hardwareConcurrency seen by the worker. */
  hostCpus: number;
}

export interface SelftestParams {
  cpus: number;
  iterations: number;
  /** Seed of the deterministic scheduler (single-threaded build only). */
  seed: number;
}

export interface SelftestReply {
  mode: CoreMode;
  /** 0 (passed) or SL_ECORRUPT (the check failed). */
  rc: number;
  /** sl_strerror(rc). */
  message: string;
  /** Raw sl_selftest_result, transferred; decode with decodeSelftestResult. */
  bytes: ArrayBuffer;
  /** Wall time of the run inside the worker. */
  elapsedMs: number;
}

/** A moment a session can stop at: after `ops` operations, or inside op `opIndex` at micro-step `micro`. */
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
  /** The op's return value (model-defined; negative: an sl_err). */
  result: number;
  /** sl_strerror of a negative result, else ''. */
  error: string;
}

/** The invariant checker's verdict (validate()): rc 0 or an sl_err, with its message. */
export interface Check {
  rc: number;
  message: string;
}

export interface LoadParams {
  /** The model adapter (a view id: web/<id>/worker.ts). */
  model: string;
  /** The model's world configuration, checked by its adapter. */
  world: unknown;
  /** The model's script, checked by its adapter. */
  script: unknown;
}

export interface LoadReply {
  /** The session to ask for stops; free it with `dispose`. */
  session: number;
  /** The script as it runs (an adapter may rewrite it: SLUB names every object by place). */
  script: unknown;
  stops: Stop[];
  ops: OpInfo[];
  /** Merged sl_event records of the whole run (EVENT_SIZE bytes each), in emission order. */
  events: ArrayBuffer;
  /** What else the adapter learned while loading (SLUB: the other bulk-free form's results). */
  extra: unknown;
}

export interface AtReply {
  /** The model's snapshot bytes at the stop. */
  snapshot: ArrayBuffer;
  /** validate() at an operation boundary; null inside an operation (the checker needs a quiescent state). */
  check: Check | null;
}

export interface FreerunCpu {
  ops: number;
  /** The id of the thread (web worker) running this CPU; 0 when the bridge worker runs it interleaved. */
  threadId: number;
  /** The model's counters for this CPU, by name. */
  counters: Record<string, number>;
}

export type FreerunMode = 'threads' | 'interleaved';

export interface FreerunStarted {
  session: number;
  /** threads: one CPU worker per CPU; interleaved: the bridge worker runs the CPUs in turn. */
  mode: FreerunMode;
  /** The cap on operations per second per CPU in force (0: none). */
  rate: number;
  /** The snapshot the view's mirror starts from. */
  anchor: ArrayBuffer;
}

export interface FreerunDrain {
  mode: FreerunMode;
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
  model: string;
  /** The model's experiment (SLUB: fastpath, bulk). */
  experiment: string;
  variant: string;
  /** The row of the experiment's table (SLUB bulk: the bulk size; 1 otherwise). */
  row: number;
  loops: number;
  /** What else the model's experiment takes (percpu: alignment, prefill, units, budget), checked by its adapter. */
  options?: unknown;
}
export interface BenchRowReply {
  /** Nanoseconds per operation (per object for a bulk row). */
  nsPerOp: number;
  ops: number;
  elapsedMs: number;
  /** It ran on a CPU worker (threads build) rather than on the bridge worker. */
  onThread: boolean;
  /** The model's own figures for the row, by name (percpu: alloc and free milliseconds, objects done, status). */
  figures?: Record<string, number>;
}

/** Every request type: its params and the result it resolves to. */
export interface Requests {
  /** Loads the core (once) and describes it. */
  hello: { params: Record<string, never>; result: CoreInfo };
  /** Runs the CPU self-test. */
  selftest: { params: SelftestParams; result: SelftestReply };
  /** Facts about a world a view needs before it writes its script (SLUB: objects per slab). */
  worldInfo: { params: { model: string; world: unknown }; result: unknown };
  /** A model's answer that belongs to no world (SLAB: seed 002's table for a kernel's caches). */
  query: { params: { model: string; query: unknown }; result: unknown };
  /** Runs a script once to learn its stops and events; the session then answers `at`. */
  load: { params: LoadParams; result: LoadReply };
  /** The state at one stop of a loaded session. */
  at: { params: { session: number; stop: number }; result: AtReply };
  /** Starts a free run (the model's CPUs running a workload on their own); the latest one stops any other. */
  freerunStart: { params: { model: string; params: unknown }; result: FreerunStarted };
  /** Everything a free run did since the last drain. */
  freerunDrain: { params: { session: number; snapshot: boolean }; result: FreerunDrain };
  /** Frees a session (a loaded script's worlds, or a free run: its CPUs stop). */
  dispose: { params: { session: number }; result: { disposed: boolean } };
  /** One timed row of a model's benchmark experiment. */
  benchRow: { params: BenchRowParams; result: BenchRowReply };
  /**
   * Opens a session on a file the page opened; free it with `dispose`.  The page feeds it the
   * file (fileAdvance); questions that need the file again read it here, a slice at a time.
   */
  fileOpen: { params: { model: string; file: Blob; options: unknown }; result: { session: number } };
  /**
   * The file's next slice (web/lab/file-feed.ts): in order from offset 0, an empty file as one
   * empty slice.  Answers the session's progress (model-defined).
   */
  fileAdvance: { params: { session: number; offset: number; bytes: ArrayBuffer }; result: unknown };
  /** A question about a file session's file or work (model-defined). */
  fileAsk: { params: { session: number; question: unknown }; result: unknown };
}
export type RequestType = keyof Requests;
export type ParamsOf<K extends RequestType> = Requests[K]['params'];
export type ResultOf<K extends RequestType> = Requests[K]['result'];

export type RequestMessage = {
  [K in RequestType]: { id: number; type: K; params: ParamsOf<K> };
}[RequestType];

/**
 * Why a request failed.
 *  - core-load: the WebAssembly core could not be loaded (missing or corrupt .wasm, ABI mismatch, ...)
 *  - core-error: a C function returned an sl_err (`coreCode`)
 *  - bad-request: the params were out of range or the type unknown
 *  - worker-failed: the worker itself died or could not start
 */
export type BridgeErrorCode = 'core-load' | 'core-error' | 'bad-request' | 'worker-failed';

export interface BridgeErrorData {
  code: BridgeErrorCode;
  message: string;
  /** The sl_err value for core-error. */
  coreCode?: number;
}

export type ResponseMessage =
  | { id: number; ok: true; result: ResultOf<RequestType> }
  | { id: number; ok: false; error: BridgeErrorData };

/** Pthread pool size of the threads build (PTHREAD_POOL_SIZE in wasm-core/CMakeLists.txt). */
export const CPU_WORKER_POOL = 8;
