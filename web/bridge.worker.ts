// bridge.worker.ts - the bridge worker's entry point: the core's own requests
// and the lab engine's, serving the models web/models.ts lists
// (web/core/bridge-server.ts explains the worker).
import { coreHandlers, serveBridge } from './core/bridge-server';
import { labHandlers } from './lab/worker-host';
import { MODELS } from './models';

serveBridge({ ...coreHandlers, ...labHandlers(MODELS) });
