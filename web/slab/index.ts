// index.ts - the SLAB view's entry in the shell's list (web/views.ts): the
// step-by-step view (scenarios, sandbox, both rule sets side by side, the
// caches panel).  The worker's side is worker.ts (web/models.ts).
import type { LabViewEntry, ViewUses } from '../lab/view';
import { SlabView } from './SlabView';
import { SLAB_PARAMS } from './view';

export const slabView: LabViewEntry = { id: 'slab', title: 'SLAB step by step', embeddable: true, params: SLAB_PARAMS, Component: SlabView };

/** The other views' modules this one imports (none): web/lab/imports.test.ts checks it. */
export const USES: ViewUses = {};
