// worker.ts - the trace view's adapter for the lab engine, in the bridge
// worker only (web/models.ts): a file the page opened, replayed through the
// models by trace-file.ts a chunk at a time.  It takes no options yet (the
// capture says the kernel, CPUs and geometry); anything else is refused.
import { BadRequest } from '../core/requests';
import type { ModelAdapter } from '../lab/model';
import type { ReplayModule } from './replay-api';
import { TraceFile } from './trace-file';

export const traceModel: ModelAdapter = {
  id: 'trace',
  bind: (core) => ({
    openFile: (source, options) => {
      if (options !== null && options !== undefined && (typeof options !== 'object' || Object.keys(options).length))
        throw new BadRequest('a trace replay takes no options');
      // The module exports the replay bindings in every build (wasm-core/bindings/api_replay.c).
      return new TraceFile(core.module as ReplayModule, source);
    },
  }),
};
