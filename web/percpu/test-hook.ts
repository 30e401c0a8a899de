// test-hook.ts - what the percpu view's canvases show, as data, for tests and
// tools: window.__slablabPercpu holds every pane's state at the step the URL
// names, once every pane shows it.

import type { Check } from '../core/bridge-protocol';
import { checkText } from '../lab/describe';
import type { StepHookBase } from '../lab/step-glue';
import type { StepFigures } from './figures';
import type { Allocator, PercpuSnapshot } from './snapshot';

export interface PercpuPaneHook {
  label: string;
  allocator: Allocator;
  check: string;
  chunks: { id: number; first: boolean; reserved: boolean; slot: number | null; position: number | null; relegated: boolean; freeBytes: number; nrAlloc: number; nrPopulated: number; mapUsed: number }[];
  slots: number[][];
  nrEmptyPopPages: number;
  allocs: number;
  frees: number;
  /** The figures of the step on screen (null at the start). */
  step: Omit<StepFigures, 'lastMemmove' | 'slotMoves'> | null;
}

/** The common fields (step-glue.ts: ready, stop, stops, caption, position, opResults) and every pane's state. */
export interface PercpuTestHook extends StepHookBase {
  inspector: string;
  panes: PercpuPaneHook[];
}

declare global {
  interface Window {
    __slablabPercpu?: PercpuTestHook;
  }
}

export function paneHook(label: string, s: PercpuSnapshot, check: Check | null, step: StepFigures | null): PercpuPaneHook {
  const figures = step ? (({ lastMemmove: _m, slotMoves: _s, ...rest }) => rest)(step) : null;
  return {
    label,
    allocator: s.allocator,
    check: checkText(check),
    chunks: s.chunks.map((c) => ({
      id: c.id,
      first: c.first,
      reserved: c.reserved,
      slot: c.slot,
      position: c.position,
      relegated: c.relegated,
      freeBytes: c.freeBytes,
      nrAlloc: c.nrAlloc,
      nrPopulated: c.nrPopulated,
      mapUsed: c.mapUsed,
    })),
    slots: s.slots,
    nrEmptyPopPages: s.nrEmptyPopPages,
    allocs: s.nrAllocs,
    frees: s.nrFrees,
    step: figures,
  };
}
