// index.ts - what the shell's pages (web/pages/: Lab, Benchmarks, About)
// take from the views' folders: the Benchmarks page runs each model's
// benchmark rows and shows the percpu section.  The app imports the pages
// themselves (web/app/App.tsx); this file is the pages' declaration.
import type { ViewUses } from '../lab/view';

/** The views' modules the pages import: web/lab/imports.test.ts checks it. */
export const USES: ViewUses = { slub: ['bench'], slab: ['bench'], percpu: ['bench', 'BenchSection'] };
