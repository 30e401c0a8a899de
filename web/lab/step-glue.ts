// step-glue.ts - what every step view (SLUB, SLAB, percpu) needs around the
// engine and used to copy: the sandbox scenario's id and where an operation
// added by hand goes, the test hook's common part, and each pane's label in
// the inspector and the checker's alert.  The view keeps only its own words
// and state.

import { useEffect } from 'react';
import type { Check, Stop } from '../core/bridge-protocol';
import { checkText } from './describe';
import { useLabHost } from './host';
import type { StepLab } from './use-step-lab';

/** Every step view's scenario id for a hand-made script (`scenario=sandbox&ops=...`). */
export const SANDBOX = 'sandbox';

/**
 * Where an operation added by hand goes in the script: after the operation
 * the stop is inside or has just ended (0 at the start).  The operations
 * after it stay (insertOp): a shared sandbox link keeps its operations
 * whatever step the reader adds one at.
 */
export function insertionPoint(stop: Stop | undefined): number {
  if (!stop) return 0;
  return stop.micro > 0 ? stop.opIndex + 1 : stop.ops;
}

/** `ops` with `op` inserted at index `at` (clamped to the list), nothing dropped. */
export function insertOp<T>(ops: readonly T[], at: number, op: T): T[] {
  const i = Math.max(0, Math.min(at, ops.length));
  return [...ops.slice(0, i), op, ...ops.slice(i)];
}

/** What every step view's test hook holds, before the view's own fields. */
export interface StepHookBase {
  /** The states of the stop the URL names are on screen in every pane. */
  ready: boolean;
  stop: number;
  stops: number;
  caption: string;
  /** The progress counter on screen ("Step 3 of 6 · micro-step 2"). */
  position: string;
  /** Pane 0's result of every operation. */
  opResults: number[];
}

/**
 * Publishes a step view's test hook `name` where the host says (the window
 * in the app, the element in <slab-lab>): the common fields and the view's
 * `own()` once every pane shows the step the URL names; `ready: false`
 * (the last state kept) before.  Runs after every render, as the state it
 * reports may change with any of them.
 */
export function useStepHook<Hook extends StepHookBase>(lab: StepLab<unknown, unknown>, name: string, own: () => Omit<Hook, keyof StepHookBase>): void {
  const hooks = useLabHost().hooks as Record<string, unknown>;
  useEffect(() => {
    const first = lab.panes[0];
    if (!lab.ready || !first || (lab.shown?.length ?? -1) !== lab.panes.length) {
      hooks[name] = { ...(hooks[name] as object | undefined), ready: false };
      return;
    }
    const base: StepHookBase = { ready: true, stop: lab.stepIndex, stops: lab.stops.length, caption: lab.caption, position: lab.position, opResults: first.ops.map((o) => o.result) };
    const hook: StepHookBase = { ...base, ...own() };
    hooks[name] = hook;
  });
}

/** Pane i's prefix in words shared by the panes ("cmpxchg: "), '' when there is one pane. */
export function paneLabel(lab: Pick<StepLab<unknown, unknown>, 'panes'>, i: number): string {
  return lab.panes.length > 1 ? `${lab.panes[i]?.label ?? ''}: ` : '';
}

/** The checker's findings in the panes on screen, each with its pane's label and the view's `more` words (CheckAlert's lines). */
export function paneChecks<Snap>(lab: Pick<StepLab<unknown, Snap>, 'panes' | 'shown'>, more?: (snap: Snap) => string): string[] {
  return (lab.shown ?? [])
    .map((p: { snap: Snap; check: Check | null }, i) => {
      const text = checkText(p.check);
      return text && `${paneLabel(lab, i)}${text}${more ? more(p.snap) : ''}`;
    })
    .filter(Boolean);
}
