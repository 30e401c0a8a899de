// index.ts - the live view's entry in the shell's list (web/views.ts): the
// running kernel's allocations streamed by `slablab serve` (docs/live.md).
import type { LabViewEntry } from '../lab/view';
import { LIVE_PARAMS, LiveView } from './LiveView';

export const liveView: LabViewEntry = { id: 'live', title: 'Live kernel', embeddable: false, params: LIVE_PARAMS, Component: LiveView };
