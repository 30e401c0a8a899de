// index.ts - the kernel view's entry in the shell's list (web/views.ts): a
// real kernel's slab state from a `slablab snapshot` file, drawn with the
// SLUB view's drawing (it imports web/slub, declared in USES).
import type { LabViewEntry, ViewUses } from '../lab/view';
import { KERNEL_PARAMS, KernelView } from './KernelView';

export const kernelView: LabViewEntry = { id: 'kernel', title: 'Your kernel', embeddable: false, params: KERNEL_PARAMS, Component: KernelView };

/** The other views' modules this one imports (SLUB's layout, drawing and snapshot types, for a real cache's slabs; its view, lab and world types for the seeded model; tests are not counted): web/lab/imports.test.ts checks it. */
export const USES: ViewUses = { slub: ['layout', 'render', 'snapshot', 'view', 'SlubView', 'protocol'] };
