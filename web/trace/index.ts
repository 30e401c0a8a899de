// index.ts - the trace view's entry in the shell's list (web/views.ts): a real
// kernel's trace replayed through the models.  The worker's side is worker.ts
// (web/models.ts).
import type { LabViewEntry, ViewUses } from '../lab/view';
import { TRACE_PARAMS, TraceView } from './TraceView';

export const traceView: LabViewEntry = { id: 'trace', title: 'Kernel trace replay', embeddable: false, params: TRACE_PARAMS, Component: TraceView };

/** The other views' modules this one imports (SLUB's drawing, layout, snapshot and kernel versions for the replayed caches; percpu's chunk drawing): web/lab/imports.test.ts checks it. */
export const USES: ViewUses = { slub: ['layout', 'render', 'slub-api', 'snapshot'], percpu: ['render'] };
