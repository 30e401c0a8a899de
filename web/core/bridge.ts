// bridge.ts - the UI's side of the bridge: starts the bridge worker and turns
// requests into promises (protocol: bridge-protocol.ts).
//
// A failed request rejects with a BridgeError whose `code` says why.  If the
// worker itself dies (its script fails to load, or it throws outside a
// request), every pending and later request rejects with code
// 'worker-failed': the UI shows that instead of waiting forever.
//
// One bridge per page and build of the core (getBridge), created on first
// use and kept at module level: React StrictMode mounts components twice in
// development, and two workers would load the core twice.  The page's entry
// point says how to start each worker (provideBridgeWorker): the worker's own
// entry point (web/bridge.worker.ts, web/bench.worker.ts for the Benchmarks
// page's benchmark flavour) lists the models it serves, and the core does
// not know them.

import type { BridgeErrorCode, CoreBuild, ParamsOf, RequestType, ResponseMessage, ResultOf } from './bridge-protocol';

export class BridgeError extends Error {
  constructor(
    readonly code: BridgeErrorCode,
    message: string,
    readonly coreCode?: number,
  ) {
    super(message);
    this.name = 'BridgeError';
  }
}

interface Pending {
  resolve: (result: ResultOf<RequestType>) => void;
  reject: (e: BridgeError) => void;
}

export class Bridge {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private dead: BridgeError | undefined;

  constructor(private readonly worker: Worker) {
    worker.addEventListener('message', (e: MessageEvent<ResponseMessage>) => this.onMessage(e.data));
    worker.addEventListener('error', (e: ErrorEvent) => {
      e.preventDefault();
      this.die(`the bridge worker failed: ${e.message || 'its script could not be loaded'}`);
    });
    worker.addEventListener('messageerror', () => this.die('the bridge worker sent a message that could not be read'));
  }

  /** Sends a request; `transfer` moves ArrayBuffers in params to the worker. */
  request<K extends RequestType>(type: K, params: ParamsOf<K>, transfer: Transferable[] = []): Promise<ResultOf<K>> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise<ResultOf<K>>((resolve, reject) => {
      // The worker answers request `id` of type K with ResultOf<K> (bridge.worker.ts `handlers`).
      this.pending.set(id, { resolve: resolve as (r: ResultOf<RequestType>) => void, reject });
      this.worker.postMessage({ id, type, params }, transfer);
    });
  }

  private onMessage(msg: ResponseMessage): void {
    const p = this.pending.get(msg.id);
    if (!p) return;
    this.pending.delete(msg.id);
    if (msg.ok) p.resolve(msg.result);
    else p.reject(new BridgeError(msg.error.code, msg.error.message, msg.error.coreCode));
  }

  private die(message: string): void {
    this.dead = new BridgeError('worker-failed', message);
    for (const p of this.pending.values()) p.reject(this.dead);
    this.pending.clear();
  }
}

const shared = new Map<CoreBuild, Bridge>();
const startWorker = new Map<CoreBuild, () => Worker>();

/** Tells getBridge how to start the worker of `build` (once, in the page's entry point). */
export function provideBridgeWorker(start: () => Worker, build: CoreBuild = 'traced'): void {
  startWorker.set(build, start);
}

/** The page's bridge to the `build` core, started on first use. */
export function getBridge(build: CoreBuild = 'traced'): Bridge {
  let bridge = shared.get(build);
  if (!bridge) {
    const start = startWorker.get(build);
    if (!start) throw new Error(`no ${build} bridge worker: the entry point must call provideBridgeWorker first`);
    bridge = new Bridge(start());
    shared.set(build, bridge);
  }
  return bridge;
}
