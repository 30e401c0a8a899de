// bench.worker.ts - the Benchmarks page's bridge worker: the same requests as
// web/bridge.worker.ts, served from the benchmark flavour of the core
// (SLABLAB_BENCH: no tracing, no preemption hooks, no asserts; -O3), so the
// page times the C the native CLI times.
import { coreHandlers, serveBridge } from './core/bridge-server';
import { labHandlers } from './lab/worker-host';
import { MODELS } from './models';

serveBridge({ ...coreHandlers, ...labHandlers(MODELS) }, 'bench');
