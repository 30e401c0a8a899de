// step-glue.ts - what every step view (SLUB, SLAB, percpu) needs around the
// engine and used to copy: the sandbox scenario's id and where an operation
// added by hand goes, the test hook's common part, each pane's label in the
// inspector and the checker's alert, the events of the step on screen, what
// each pane showed before it, and whether a step should fly.  The view keeps
// only its own words and state.

import { useEffect, useRef, useState } from 'react';
import type { Check, Stop } from '../core/bridge-protocol';
import type { SlEvent } from '../core/events.generated';
import { checkText } from './describe';
import { useLabHost } from './host';
import { reducedMotion } from './LabCanvas';
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

/** Each pane's events of the step on screen: from the stop before it to its stop (none before the state is ready or at a pane's start). */
export function stepEvents(lab: Pick<StepLab<unknown, unknown>, 'panes' | 'at' | 'ready'>): (readonly SlEvent[])[] {
  return lab.panes.map((p, i) => {
    if (!lab.ready) return [];
    const at = lab.at?.panes[i] ?? 0;
    const to = p.stops[at]?.eventCount ?? 0;
    const from = at > 0 ? (p.stops[at - 1]?.eventCount ?? 0) : to;
    return p.events.slice(from, to);
  });
}

/**
 * What each pane showed before the state on screen (null before its
 * first), for a drawing that outlines what the last step changed.  The
 * array is the same object throughout; its entries change with lab.shown.
 */
export function useShownBefore<Snap>(lab: Pick<StepLab<unknown, Snap>, 'shown'>): readonly (Snap | null)[] {
  const seen = useRef<{ now: (Snap | null)[]; before: (Snap | null)[] }>({ now: [], before: [] });
  // Updated while rendering, as the drawing of this render needs it (a ref: no re-render of its own).
  (lab.shown ?? []).forEach((p, i) => {
    if (seen.current.now[i] === p.snap) return;
    seen.current.before[i] = seen.current.now[i] ?? null;
    seen.current.now[i] = p.snap;
  });
  return seen.current.before;
}

/**
 * Whether the step on screen flies (its moves animated): only when it was
 * reached one step forward from the last step shown and the reader did not
 * ask for less motion; any other jump (Back, Reset, a link) just lands.
 * `step` keys the animation clock.
 */
export function useStepFlight(lab: Pick<StepLab<unknown, unknown>, 'ready' | 'stepIndex'>): { step: number; animate: boolean } {
  const [flight, setFlight] = useState({ step: -1, animate: false });
  useEffect(() => {
    if (lab.ready) setFlight((f) => (f.step === lab.stepIndex ? f : { step: lab.stepIndex, animate: lab.stepIndex === f.step + 1 && !reducedMotion() }));
  }, [lab.ready, lab.stepIndex]);
  return flight;
}
