// worker.ts - the trace view's adapter for the lab engine, in the bridge
// worker only (web/models.ts): a file the page opened, replayed through the
// models by trace-file.ts a chunk at a time.  Its one option is the kernel
// whose SLUB rules the models follow (`{ kernel: "X.Y" }`; absent: the
// capture's); the capture says the CPUs and geometry.  Anything else is
// refused.
import { BadRequest } from '../core/requests';
import type { ModelAdapter } from '../lab/model';
import { kernelOptionError, type ReplayModule } from './replay-api';
import { TraceFile } from './trace-file';

export const traceModel: ModelAdapter = {
  id: 'trace',
  bind: (core) => ({
    openFile: (source, options) => {
      // The module exports the replay bindings in every build (wasm-core/bindings/api_replay.c).
      const m = core.module as ReplayModule;
      return new TraceFile(m, source, kernelOption(m, options));
    },
  }),
};

/** The options' kernel ("X.Y"), or undefined for the capture's; throws BadRequest naming what is wrong. */
function kernelOption(m: ReplayModule, options: unknown): string | undefined {
  if (options === null || options === undefined) return undefined;
  const keys = typeof options === 'object' ? Object.keys(options) : [];
  if (typeof options !== 'object' || keys.some((k) => k !== 'kernel')) throw new BadRequest('a trace replay takes one option, kernel ("X.Y")');
  const { kernel } = options as { kernel?: unknown };
  if (kernel === undefined) return undefined;
  if (typeof kernel !== 'string' || kernel.includes(',')) throw new BadRequest('kernel: one version "X.Y" (the page replays one kernel at a time)');
  const wrong = kernelOptionError(m, kernel);
  if (wrong) throw new BadRequest(`kernel: ${wrong}`);
  return kernel;
}
