// index.ts - the CPU self-test's entry in the shell's list (web/views.ts): the
// walking skeleton's demo of CPUs racing double-word CAS, on the core's own
// `selftest` request (no model adapter).
import type { LabViewEntry, ViewUses } from '../lab/view';
import { SELFTEST_PARAMS, SelftestPanel } from './SelftestPanel';

export const selftestView: LabViewEntry = { id: 'selftest', title: 'CPU self-test', embeddable: true, params: SELFTEST_PARAMS, Component: SelftestPanel };

/** The other views' modules this one imports (none): web/lab/imports.test.ts checks it. */
export const USES: ViewUses = {};
