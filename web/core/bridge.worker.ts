// bridge.worker.ts - the worker that owns the WebAssembly core.
//
// The UI never instantiates the core on the main thread: it starts this
// worker (bridge.ts) and sends it requests (bridge-protocol.ts).  On the
// first request the worker loads the core: the threads build when the page
// is cross-origin isolated (SharedArrayBuffer available; each simulated CPU
// then runs on its own pthread, a nested worker sharing the memory), else
// the single-threaded build, where all CPUs run here, interleaved by a
// deterministic scheduler.  The load promise is kept, so a failed load is
// reported to every request rather than retried.
//
// Requests are handled strictly one after another (a chain of promises):
// the core's entry points are not re-entrant from the bridge's side.

import {
  CPU_WORKER_POOL,
  type BridgeErrorData,
  type CoreInfo,
  type CoreMode,
  type ParamsOf,
  type RequestMessage,
  type RequestType,
  type ResponseMessage,
  type ResultOf,
} from './bridge-protocol';
import { CoreApi, CoreError, EXPECTED_ABI_VERSION } from './core-api';
import { CoreLoadError, loadCore } from './load-core';
import { SessionError } from '../slub/session';
import { SlubError } from '../slub/slub-api';
import { SlubBadRequest } from '../slub/params';
import { bindSlubHandlers } from '../slub/worker-handlers';

interface WorkerScope {
  crossOriginIsolated?: boolean;
  navigator: { hardwareConcurrency?: number };
  postMessage(message: ResponseMessage, transfer: Transferable[]): void;
  addEventListener(type: 'message', listener: (e: MessageEvent<RequestMessage>) => void): void;
}
const scope = globalThis as unknown as WorkerScope;

class BadRequest extends Error {}

interface Loaded {
  api: CoreApi;
  info: CoreInfo;
  /** The Emscripten module itself, for the SLUB view's handlers (web/slub/worker-handlers.ts). */
  module: unknown;
}

const mode: CoreMode = scope.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' ? 'threads' : 'single';
let loaded: Promise<Loaded> | undefined;

function load(): Promise<Loaded> {
  loaded ??= loadCore(mode).then((m) => {
    const api = new CoreApi(m);
    if (api.abiVersion !== EXPECTED_ABI_VERSION)
      throw new CoreLoadError(`ABI version ${api.abiVersion} of the core does not match the UI's ${EXPECTED_ABI_VERSION}: rebuild`);
    const info: CoreInfo = {
      mode,
      abiVersion: api.abiVersion,
      maxCpus: api.maxCpus,
      cpuWorkerPool: api.hasThreads ? CPU_WORKER_POOL : 0,
      eventSize: api.eventSize,
      hostCpus: scope.navigator.hardwareConcurrency ?? 1,
    };
    return { api, info, module: m };
  });
  return loaded;
}

interface Reply<T> {
  result: T;
  transfer?: Transferable[];
}
type Handlers = { [K in RequestType]: (params: ParamsOf<K>, core: Loaded) => Reply<ResultOf<K>> };

function wholeNumber(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new BadRequest(`${name} must be a whole number from ${min} to ${max}, got ${String(v)}`);
  return v;
}

const handlers: Handlers = {
  ...bindSlubHandlers<Loaded>(
    (core) => core.module,
    (core) => core.api.hasThreads,
  ),
  hello: (_params, core) => ({ result: core.info }),
  selftest: (params, core) => {
    const cpus = wholeNumber('cpus', params.cpus, 1, core.info.maxCpus);
    const iterations = wholeNumber('iterations', params.iterations, 1, 10_000_000);
    const seed = wholeNumber('seed', params.seed, 0, 0xffffffff);
    const t0 = performance.now();
    const run = core.api.selftest(cpus, iterations, seed);
    const elapsedMs = performance.now() - t0;
    return {
      result: { mode, rc: run.rc, message: core.api.strerror(run.rc), bytes: run.bytes, elapsedMs },
      transfer: [run.bytes],
    };
  },
};

function toErrorData(e: unknown): BridgeErrorData {
  if (e instanceof CoreLoadError) return { code: 'core-load', message: e.message };
  if (e instanceof CoreError) return { code: 'core-error', message: e.message, coreCode: e.code };
  if (e instanceof BadRequest || e instanceof SlubBadRequest || e instanceof SessionError) return { code: 'bad-request', message: e.message };
  if (e instanceof SlubError) return { code: 'core-error', message: e.message, coreCode: e.code };
  return { code: 'worker-failed', message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
}

async function handle(msg: RequestMessage): Promise<void> {
  try {
    const handler = handlers[msg.type] as ((p: typeof msg.params, c: Loaded) => Reply<ResultOf<RequestType>>) | undefined;
    if (!handler) throw new BadRequest(`unknown request type '${String(msg.type)}'`);
    const core = await load();
    const { result, transfer = [] } = handler(msg.params, core);
    scope.postMessage({ id: msg.id, ok: true, result }, transfer);
  } catch (e) {
    scope.postMessage({ id: msg.id, ok: false, error: toErrorData(e) }, []);
  }
}

let queue: Promise<void> = Promise.resolve();
scope.addEventListener('message', (e) => {
  const msg = e.data;
  queue = queue.then(() => handle(msg));
});
