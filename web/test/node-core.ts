// node-core.ts - loads the Node flavour of the core (web/core/generated/node/,
// built beside the browser modules) for vitest tests, once per test file.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import type { CoreModule } from '../core/core-api';

const dir = fileURLToPath(new URL('../core/generated/node/', import.meta.url));

type CreateCore = (opts: { wasmBinary: Uint8Array }) => Promise<CoreModule>;

export async function loadNodeCore(): Promise<CoreModule> {
  const glue = `${dir}slablab-node.js`;
  if (!existsSync(glue))
    throw new Error(`${glue} is missing: build the core (npm run setup, or ninja -C wasm-core/build/wasm)`);
  const create = createRequire(import.meta.url)(glue) as CreateCore;
  return create({ wasmBinary: readFileSync(`${dir}slablab-node.wasm`) });
}
