// node-core.ts - loads the Node flavour of the core (web/core/generated/node/,
// built beside the browser modules) for vitest tests, once per test file:
// slablab-node (the lab's traced C, single-threaded), or slablab-bench (the
// benchmark flavour's C, SLABLAB_BENCH, with threads).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { CoreInfo } from '../core/bridge-protocol';
import type { LoadedCore } from '../core/bridge-server';
import { CoreApi, type CoreModule } from '../core/core-api';

const dir = fileURLToPath(new URL('../core/generated/node/', import.meta.url));

/**
 * The module, typed as the exports a test uses (CoreModule, or a view's own
 * superset such as SlubModule: the Node build exports them all).
 */
export async function loadNodeCore<M extends object = CoreModule>(flavour: 'slablab-node' | 'slablab-bench' = 'slablab-node'): Promise<M> {
  const glue = `${dir}${flavour}.js`;
  if (!existsSync(glue))
    throw new Error(`${glue} is missing: build the core (npm run setup, or ninja -C wasm-core/build/wasm)`);
  const create = createRequire(import.meta.url)(glue) as (opts: { wasmBinary: Uint8Array }) => Promise<M>;
  return create({ wasmBinary: readFileSync(`${dir}${flavour}.wasm`) });
}

/** The Node core as the bridge worker's handlers see it (web/core/bridge-server.ts's LoadedCore). */
export async function loadNodeBridgeCore(): Promise<LoadedCore> {
  const module = await loadNodeCore();
  const api = new CoreApi(module);
  const info: CoreInfo = { mode: 'single', build: api.build, abiVersion: api.abiVersion, maxCpus: api.maxCpus, cpuWorkerPool: 0, eventSize: api.eventSize, hostCpus: 1 };
  return { api, info, module };
}
