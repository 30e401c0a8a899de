// test-hook.ts - what the SLUB view's canvases show, as data, for tests and
// tools: __slablabSlub (on the window in the app, on the element in
// <slab-lab>: the host's `hooks`) holds pane 0's state at its top level (as
// before panes existed) and every pane's under `panes`.

import type { Check } from '../core/bridge-protocol';
import { checkText } from '../lab/describe';
import type { StepHookBase } from '../lab/step-glue';
import type { StatNames } from './slub-api';
import { NO_CPU, NONE32, ObjState, stat, sysfsLine, type StatName, type SlubSnapshot } from './snapshot';

export interface SlubPaneHook {
  label: string;
  check: string;
  cpus: { tid: number; freelistLength: number; slabPfn: number | null; partial: number }[];
  nodePartial: number[];
  slabs: { pfn: number; order: number; list: number; cpu: number; inuse: number; objects: number; frozen: boolean }[];
  dupObjects: number;
  stats: Record<string, number>;
  /** Every counter as its sysfs file prints it, by its sysfs name ("alloc_fastpath": "3 C0=3"). */
  sysfs: Record<string, string>;
}
/** The common fields (step-glue.ts: ready, stop, stops, caption, position, opResults), pane 0's state, and every pane's. */
export interface SlubTestHook extends SlubPaneHook, StepHookBase {
  otherBulkResults: number[];
  panes: SlubPaneHook[];
}
declare global {
  interface Window {
    __slablabSlub?: SlubTestHook;
  }
}

const HOOK_STATS: readonly StatName[] = ['ALLOC_FASTPATH', 'ALLOC_SLOWPATH', 'FREE_FASTPATH', 'FREE_SLOWPATH', 'CMPXCHG_DOUBLE_CPU_FAIL', 'ALLOC_FROM_PARTIAL', 'CPU_PARTIAL_ALLOC', 'ALLOC_SLAB', 'ALLOC_REFILL', 'BULK_FREE_CAS', 'FREE_FROZEN'];

/** Objects handed out twice (seen only after an interrupted plain fast path). */
export const dupCount = (s: SlubSnapshot) => s.obj.state.reduce((n, st) => n + (st === ObjState.DUP ? 1 : 0), 0);


export function paneHook(label: string, snap: SlubSnapshot, check: Check | null, names: StatNames): SlubPaneHook {
  return {
    label,
    check: checkText(check),
    cpus: snap.cpus.map((c) => ({ tid: c.tid, freelistLength: c.freelistLength, slabPfn: c.slabPfn === NONE32 ? null : c.slabPfn, partial: c.partialCount })),
    nodePartial: snap.nodePartial.map((i) => snap.slab.pfn[i] ?? 0),
    slabs: Array.from({ length: snap.nslabs }, (_, i) => ({
      pfn: snap.slab.pfn[i] ?? 0,
      order: snap.slab.order[i] ?? 0,
      list: snap.slab.list[i] ?? 0,
      cpu: snap.slab.cpu[i] ?? NO_CPU,
      inuse: snap.slab.inuse[i] ?? 0,
      objects: snap.slab.objects[i] ?? 0,
      frozen: (snap.slab.frozen[i] ?? 0) !== 0,
    })),
    dupObjects: dupCount(snap),
    stats: Object.fromEntries(HOOK_STATS.map((n) => [n, stat(snap, n)])),
    sysfs: Object.fromEntries([...names.kernel, ...names.model].map(({ name, stat }) => [name, sysfsLine(snap, stat)])),
  };
}
