// bridge-server.ts - the bridge worker's side of the bridge: it owns the
// WebAssembly core and answers requests with a table of handlers.
//
// The UI never instantiates the core on the main thread: it starts the
// worker (bridge.ts) and sends it requests (bridge-protocol.ts).  On the
// first request the worker loads the core: the threads build when the page
// is cross-origin isolated (SharedArrayBuffer available; each simulated CPU
// then runs on its own pthread, a nested worker sharing the memory), else
// the single-threaded build, where all CPUs run here, interleaved by a
// deterministic scheduler.  The load promise is kept, so a failed load is
// reported to every request rather than retried.
//
// Requests are handled strictly one after another (a chain of promises):
// the core's entry points are not re-entrant from the bridge's side.  The
// worker's entry point (web/bridge.worker.ts) builds the table from the
// core's handlers below and the lab engine's, which serve the models; the
// Benchmarks page's worker (web/bench.worker.ts) serves the same table from
// the benchmark flavour of the core.

import {
  CPU_WORKER_POOL,
  type BridgeErrorData,
  type CoreBuild,
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
import { BadRequest, checkWhole } from './requests';

interface WorkerScope {
  crossOriginIsolated?: boolean;
  navigator: { hardwareConcurrency?: number };
  postMessage(message: ResponseMessage, transfer: Transferable[]): void;
  addEventListener(type: 'message', listener: (e: MessageEvent<RequestMessage>) => void): void;
}

/** The loaded core, as handlers see it. */
export interface LoadedCore {
  api: CoreApi;
  info: CoreInfo;
  /** The Emscripten module itself, for the model adapters' own typed faces (e.g. web/slub/slub-api.ts). */
  module: unknown;
}

export interface Reply<T> {
  result: T;
  /** ArrayBuffers in `result` to move rather than copy. */
  transfer?: Transferable[];
}
export type Handler<K extends RequestType> = (params: ParamsOf<K>, core: LoadedCore) => Reply<ResultOf<K>>;
export type Handlers = { [K in RequestType]: Handler<K> };

/** hello and selftest: the core's own requests. */
export const coreHandlers: Pick<Handlers, 'hello' | 'selftest'> = {
  hello: (_params, core) => ({ result: core.info }),
  selftest: (params, core) => {
    const cpus = checkWhole('cpus', params.cpus, 1, core.info.maxCpus);
    const iterations = checkWhole('iterations', params.iterations, 1, 10_000_000);
    const seed = checkWhole('seed', params.seed, 0, 0xffffffff);
    const t0 = performance.now();
    const run = core.api.selftest(cpus, iterations, seed);
    const elapsedMs = performance.now() - t0;
    return {
      result: { mode: core.info.mode, rc: run.rc, message: core.api.strerror(run.rc), bytes: run.bytes, elapsedMs },
      transfer: [run.bytes],
    };
  },
};

function toErrorData(e: unknown): BridgeErrorData {
  if (e instanceof CoreLoadError) return { code: 'core-load', message: e.message };
  if (e instanceof CoreError) return { code: 'core-error', message: e.message, coreCode: e.code };
  if (e instanceof BadRequest) return { code: 'bad-request', message: e.message };
  return { code: 'worker-failed', message: e instanceof Error ? `${e.name}: ${e.message}` : String(e) };
}

/**
 * Answers the page's requests with `handlers`, in this worker (call once,
 * from the worker's entry point), from the `build` C: hello's `build` says
 * which the module is (a bench worker on a page without isolation gets the
 * traced single build).
 */
export function serveBridge(handlers: Handlers, build: CoreBuild = 'traced'): void {
  const scope = globalThis as unknown as WorkerScope;
  const mode: CoreMode = scope.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function' ? 'threads' : 'single';
  let loaded: Promise<LoadedCore> | undefined;

  const load = (): Promise<LoadedCore> => {
    loaded ??= loadCore(mode, build).then((m) => {
      const api = new CoreApi(m);
      if (api.abiVersion !== EXPECTED_ABI_VERSION)
        throw new CoreLoadError(`ABI version ${api.abiVersion} of the core does not match the UI's ${EXPECTED_ABI_VERSION}: rebuild`);
      const info: CoreInfo = {
        mode,
        build: api.build,
        abiVersion: api.abiVersion,
        maxCpus: api.maxCpus,
        cpuWorkerPool: api.hasThreads ? CPU_WORKER_POOL : 0,
        eventSize: api.eventSize,
        hostCpus: scope.navigator.hardwareConcurrency ?? 1,
      };
      return { api, info, module: m };
    });
    return loaded;
  };

  const handle = async (msg: RequestMessage): Promise<void> => {
    try {
      const handler = (handlers as Partial<Record<string, (p: unknown, c: LoadedCore) => Reply<ResultOf<RequestType>>>>)[msg.type];
      if (!handler) throw new BadRequest(`unknown request type '${String(msg.type)}'`);
      const core = await load();
      const { result, transfer = [] } = handler(msg.params, core);
      scope.postMessage({ id: msg.id, ok: true, result }, transfer);
    } catch (e) {
      scope.postMessage({ id: msg.id, ok: false, error: toErrorData(e) }, []);
    }
  };

  let queue: Promise<void> = Promise.resolve();
  scope.addEventListener('message', (e) => {
    const msg = e.data;
    queue = queue.then(() => handle(msg));
  });
}
