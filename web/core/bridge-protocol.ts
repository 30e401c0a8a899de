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
// Adding a request type: add an entry to `Requests` below (params and result
// types), a handler to `handlers` in bridge.worker.ts (TypeScript refuses to
// compile until it exists), and call `bridge.request('name', params)` from the
// UI.  The C side of it is a SL_EXPORT function in wasm-core/bindings/api_<area>.c,
// called only through CoreApi (core-api.ts).

/** Which build of the core the worker loaded. */
export type CoreMode = 'threads' | 'single';

export interface CoreInfo {
  mode: CoreMode;
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

/** Every request type: its params and the result it resolves to. */
export interface Requests {
  /** Loads the core (once) and describes it. */
  hello: { params: Record<string, never>; result: CoreInfo };
  /** Runs the CPU self-test. */
  selftest: { params: SelftestParams; result: SelftestReply };
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
