// views.ts - the views the shell offers, one line per view (its folder's
// index.ts).  Their order is the Lab's buttons' order; a view that runs a
// model also has a line in web/models.ts, for the bridge worker.
import type { LabViewEntry } from './lab/view';
import { kernelView } from './kernel';
import { percpuView } from './percpu';
import { selftestView } from './selftest';
import { slabView } from './slab';
import { slubFreeRun, slubView } from './slub';
import { liveView } from './live';
import { traceView } from './trace';

export const VIEWS: readonly LabViewEntry[] = [slubView, slubFreeRun, selftestView, slabView, percpuView, traceView, kernelView, liveView];
