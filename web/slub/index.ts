// index.ts - the SLUB view's entries in the shell's list (web/views.ts): the
// step-by-step view (scenarios, sandbox, side by side) and the free-running
// mode.  The worker's side is worker.ts (web/models.ts).
import type { LabViewEntry, ViewUses } from '../lab/view';
import { FREE_PARAMS, FreeRunView } from './FreeRunView';
import { SlubView } from './SlubView';
import { SLUB_PARAMS } from './view';

export const slubView: LabViewEntry = { id: 'slub', title: 'SLUB step by step', embeddable: true, params: SLUB_PARAMS, Component: SlubView };
export const slubFreeRun: LabViewEntry = { id: 'free', title: 'SLUB free-running', embeddable: false, params: FREE_PARAMS, Component: FreeRunView };

/** The other views' modules this one imports (none): web/lab/imports.test.ts checks it. */
export const USES: ViewUses = {};
