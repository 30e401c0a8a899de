// models.ts - the model adapters the bridge worker serves, one line per view
// (web/<id>/worker.ts; the views themselves are listed in web/views.ts).
// Only the worker's entry point imports this list.
import type { ModelAdapter } from './lab/model';
import { percpuModel } from './percpu/worker';
import { slabModel } from './slab/worker';
import { slubModel } from './slub/worker';
import { traceModel } from './trace/worker';

export const MODELS: readonly ModelAdapter[] = [slubModel, slabModel, percpuModel, traceModel];
