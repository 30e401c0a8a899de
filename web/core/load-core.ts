// load-core.ts - instantiates one build of the WebAssembly core, inside the
// bridge worker, with errors that say what went wrong.
//
// The Emscripten glue (slablab-{threads,single}.mjs) would fetch and compile
// the .wasm itself, but it reports a missing or corrupt file only as a
// generic abort.  So the worker fetches and compiles the binary first and
// hands the compiled module to the glue through its `instantiateWasm` hook;
// each step that can fail names itself in the error.  The threads build then
// starts its pool of pthread workers (nested workers sharing the memory)
// before the module resolves.  The benchmark flavour (slablab-bench.mjs,
// SLABLAB_BENCH) exists with threads only: its atomics must be real ones, as
// natively, to compare.

import type { CoreBuild, CoreMode } from './bridge-protocol';
import type { CoreModule } from './core-api';

/** The core could not be loaded; `message` says which step failed and why. */
export class CoreLoadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CoreLoadError';
  }
}

type InstantiateHook = (
  imports: WebAssembly.Imports,
  receive: (instance: WebAssembly.Instance, module: WebAssembly.Module) => void,
) => object;
type CreateCore = (opts: { instantiateWasm: InstantiateHook; onAbort: (what: unknown) => void }) => Promise<CoreModule>;

const WASM_MAGIC = [0x00, 0x61, 0x73, 0x6d];
const START_TIMEOUT_MS = 30_000;

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

async function fetchBinary(url: URL): Promise<ArrayBuffer> {
  const name = url.pathname.split('/').pop() ?? url.pathname;
  let response: Response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    throw new CoreLoadError(`could not fetch ${name}: ${describe(e)}`);
  }
  if (!response.ok) throw new CoreLoadError(`${name} is missing (HTTP ${response.status} ${response.statusText})`.trim());
  const bytes = await response.arrayBuffer();
  const head = new Uint8Array(bytes, 0, Math.min(4, bytes.byteLength));
  if (head.length < 4 || WASM_MAGIC.some((b, i) => head[i] !== b)) {
    const hex = Array.from(head, (b) => b.toString(16).padStart(2, '0')).join(' ');
    throw new CoreLoadError(
      `${name} is not a WebAssembly binary (${bytes.byteLength} bytes starting with ${hex || 'nothing'}; expected 00 61 73 6d)`,
    );
  }
  return bytes;
}

async function compile(url: URL): Promise<WebAssembly.Module> {
  const bytes = await fetchBinary(url);
  try {
    return await WebAssembly.compile(bytes);
  } catch (e) {
    throw new CoreLoadError(`${url.pathname.split('/').pop()} is corrupt: ${describe(e)}`);
  }
}

/** The flavour a worker loads: the benchmark one needs threads; without them the lab's single build. */
export function flavourOf(mode: CoreMode, build: CoreBuild): 'threads' | 'single' | 'bench' {
  return build === 'bench' && mode === 'threads' ? 'bench' : mode;
}

async function importGlue(flavour: 'threads' | 'single' | 'bench'): Promise<CreateCore> {
  try {
    // Literal imports so the bundler emits every flavour.
    const glue =
      flavour === 'bench'
        ? await import('./generated/slablab-bench.mjs')
        : flavour === 'threads'
          ? await import('./generated/slablab-threads.mjs')
          : await import('./generated/slablab-single.mjs');
    return glue.default as CreateCore;
  } catch (e) {
    throw new CoreLoadError(`could not import the ${flavour} module glue: ${describe(e)}`);
  }
}

function wasmUrl(flavour: 'threads' | 'single' | 'bench'): URL {
  return flavour === 'bench'
    ? new URL('./generated/slablab-bench.wasm', import.meta.url)
    : flavour === 'threads'
      ? new URL('./generated/slablab-threads.wasm', import.meta.url)
      : new URL('./generated/slablab-single.wasm', import.meta.url);
}

/** Loads the `mode` build of the `build` C (see flavourOf); rejects with CoreLoadError. */
export async function loadCore(mode: CoreMode, build: CoreBuild = 'traced'): Promise<CoreModule> {
  const flavour = flavourOf(mode, build);
  const [create, compiled] = await Promise.all([importGlue(flavour), compile(wasmUrl(flavour))]);
  let fail: (e: CoreLoadError) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  const timer = setTimeout(
    () => fail(new CoreLoadError(`the core did not start within ${START_TIMEOUT_MS / 1000} s (CPU workers not ready)`)),
    START_TIMEOUT_MS,
  );
  try {
    return await Promise.race([
      create({
        instantiateWasm(imports, receive) {
          WebAssembly.instantiate(compiled, imports).then(
            (instance) => receive(instance, compiled),
            (e: unknown) => fail(new CoreLoadError(`could not instantiate the ${mode} module: ${describe(e)}`)),
          );
          return {};
        },
        onAbort(what) {
          fail(new CoreLoadError(`the ${mode} module aborted while starting: ${String(what)}`));
        },
      }),
      failed,
    ]);
  } catch (e) {
    throw e instanceof CoreLoadError ? e : new CoreLoadError(describe(e));
  } finally {
    clearTimeout(timer);
  }
}
