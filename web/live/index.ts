// index.ts - the live view's entry in the shell's list (web/views.ts): the
// running kernel's allocations streamed by `slablab serve` (docs/live.md).
// It draws with the trace view's chart and the kernel view's cache drawing
// and decoder, declared in USES.
import type { LabViewEntry, ViewUses } from '../lab/view';
import { LIVE_PARAMS, LiveView } from './LiveView';

export const liveView: LabViewEntry = { id: 'live', title: 'Live kernel', embeddable: false, params: LIVE_PARAMS, Component: LiveView };

/** The other views' modules this one imports (the trace view's over-time chart and its Overview type; the kernel view's snapshot decoder and cache drawing): web/lab/imports.test.ts checks it. */
export const USES: ViewUses = { trace: ['TraceParts', 'trace-file'], kernel: ['snapshot-file', 'CacheDetail'] };
