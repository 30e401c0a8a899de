// test-hook.ts - what the SLAB view's canvases show, as data, for tests and
// tools: window.__slablabSlab holds every pane's caches (arrays, node, slabs
// with their freelist's home, counters) once the panes show the step the URL
// names.

import type { Check } from '../core/bridge-protocol';
import { checkText } from '../lab/describe';
import type { StepHookBase } from '../lab/step-glue';
import { shownCaches } from './places';
import type { FreelistPlace, SlabSnapshot } from './snapshot';

export interface SlabCacheHook {
  id: number;
  name: string;
  mgmt: string;
  num: number;
  limit: number;
  batchcount: number;
  cpus: { avail: number; touched: boolean; allocHit: number; allocMiss: number; freeHit: number; freeMiss: number }[];
  shared: number | null;
  freeObjects: number;
  freeLimit: number;
  lists: { partial: number; full: number; free: number };
  grown: number;
  destroyed: number;
  slabs: { pfn: number; list: string; active: number; freelist: FreelistPlace['kind'] }[];
}
export interface SlabPaneHook {
  label: string;
  /** The moves the step on screen made (moves.ts). */
  moves: number;
  rules: string;
  check: string;
  caches: SlabCacheHook[];
}
/** The common fields (step-glue.ts: ready, stop, stops, caption, position, opResults) and every pane's caches. */
export interface SlabTestHook extends StepHookBase {
  panes: SlabPaneHook[];
}
declare global {
  interface Window {
    __slablabSlab?: SlabTestHook;
  }
}

export function paneHook(label: string, s: SlabSnapshot, check: Check | null, moves: number): SlabPaneHook {
  return {
    label,
    moves,
    rules: s.rules,
    check: checkText(check),
    caches: shownCaches(s).map((c) => ({
      id: c.id,
      name: c.name,
      mgmt: c.mgmt,
      num: c.num,
      limit: c.limit,
      batchcount: c.batchcount,
      cpus: c.cpus.map((a) => ({ avail: a.avail, touched: a.touched, allocHit: a.allocHit, allocMiss: a.allocMiss, freeHit: a.freeHit, freeMiss: a.freeMiss })),
      shared: c.shared ? c.shared.avail : null,
      freeObjects: c.freeObjects,
      freeLimit: c.freeLimit,
      lists: { partial: c.slabs.filter((x) => x.list === 'partial').length, full: c.slabs.filter((x) => x.list === 'full').length, free: c.slabs.filter((x) => x.list === 'free').length },
      grown: c.grown,
      destroyed: c.destroyed,
      slabs: c.slabs.map((x) => ({ pfn: x.pfn, list: x.list, active: x.active, freelist: x.freelist.kind })),
    })),
  };
}
