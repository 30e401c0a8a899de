// index.ts - the percpu view's entry in the shell's list (web/views.ts): the
// three generations of mm/percpu.c stepped through side by side.  The
// worker's side is worker.ts (web/models.ts).
import type { LabViewEntry, ViewUses } from '../lab/view';
import { PercpuView } from './PercpuView';
import { PERCPU_PARAMS } from './view';

export const percpuView: LabViewEntry = { id: 'percpu', title: 'percpu allocators', embeddable: true, params: PERCPU_PARAMS, Component: PercpuView };

/** The other views' modules this one imports (none): web/lab/imports.test.ts checks it. */
export const USES: ViewUses = {};
