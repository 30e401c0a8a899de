// describe.ts - the engine's words: which script step an operation number
// is, the trace-level events every model emits (operation brackets,
// micro-steps, interrupts, the page allocator), and the caption of a moment.
// A view's describe.ts adds the words for its own events and state.

import type { Check, OpInfo, Stop } from '../core/bridge-protocol';
import { EventKind, type SlEvent } from '../core/events.generated';
import type { EventWords, Story } from './view';

const NUMBER = new Intl.NumberFormat('en');
/** A number as the lab writes it in words, with thousands separators ("16,384"); one formatter, as toLocaleString builds one per call. */
export const numberText = (n: number) => NUMBER.format(n);

/** Maps trace operation numbers to the script's steps. */
export class OpNames {
  private readonly byNum = new Map<number, number>();
  constructor(
    ops: readonly OpInfo[],
    /** Step i in words ("alloc on CPU 0"). */
    private readonly describeOp: (i: number) => string,
  ) {
    ops.forEach((o, i) => this.byNum.set(o.opNum, i));
  }
  /** Whether `opNum` is one of the script's steps (not an operation inside one). */
  has(opNum: number): boolean {
    return this.byNum.has(opNum);
  }
  /** "step 4 (alloc on CPU 0)", or "operation #12 (an interrupt handler)". */
  name(opNum: number): string {
    const i = this.byNum.get(opNum);
    if (i === undefined) return `operation #${opNum} (an interrupt handler)`;
    return `step ${i + 1} (${this.describeOp(i)})`;
  }
}

/** A model's names for what the trace-level events carry. */
export interface TraceWords {
  /** OP_BEGIN/OP_END's arg0: the driver's operation code. */
  opcode(code: number): string;
  /** PREEMPT_POINT's arg0: the preemption point. */
  point(id: number): string;
}

/** Timeline groups of the trace-level events (a view adds its own). */
export const TRACE_GROUPS = { ops: 'operations', micro: 'micro-steps and interrupts', pages: 'pages and errors' } as const;

/** One of a model's own timeline groups: its name in the kind filter, and the model's event kinds it holds. */
export interface TimelineGroup {
  name: string;
  kinds?: readonly number[];
}

/**
 * A view's timeline groups (its EventWords' `groups` and `groupOf`): the
 * kind filter lists operations first, then the model's own groups in the
 * order `own` gives them, pages and errors last.  An event kind goes to its
 * trace-level group, else to the model's group that lists it, else to pages
 * and errors.  A model with preemption points has a `micro` group
 * (TRACE_GROUPS.micro) among its own, where the filter shows it; in one
 * without, the trace-level micro-step kinds count as operations.
 */
export function timelineGroups(own: Readonly<Record<string, TimelineGroup>>): Pick<EventWords<unknown>, 'groups' | 'groupOf'> {
  const microSteps = 'micro' in own;
  const groupOf = new Map(Object.entries(own).flatMap(([id, g]) => (g.kinds ?? []).map((kind) => [kind, id] as const)));
  return {
    groups: { ops: TRACE_GROUPS.ops, ...Object.fromEntries(Object.entries(own).map(([id, g]) => [id, g.name])), pages: TRACE_GROUPS.pages },
    groupOf: (kind) => {
      const trace = traceGroup(kind);
      if (trace === 'micro' && !microSteps) return 'ops';
      return trace ?? groupOf.get(kind) ?? 'pages';
    },
  };
}

/** The group of a trace-level event kind, or null for a model's own. */
export function traceGroup(kind: number): keyof typeof TRACE_GROUPS | null {
  switch (kind) {
    case EventKind.OP_BEGIN:
    case EventKind.OP_END:
      return 'ops';
    case EventKind.PREEMPT_POINT:
    case EventKind.INTERRUPT_BEGIN:
    case EventKind.INTERRUPT_END:
      return 'micro';
    case EventKind.ERROR:
    case EventKind.PAGE_ALLOC:
    case EventKind.PAGE_FREE:
      return 'pages';
    default:
      return null;
  }
}

/** Where an event happened, " pfn:obj" or " slab pfn", or ''. */
export const eventPlace = (e: SlEvent, none: number) => (e.slab === none ? '' : e.obj === none ? ` slab ${e.slab}` : ` ${e.slab}:${e.obj}`);

/** One line for a trace-level event, or null for a model's own kind. */
export function describeTraceEvent(e: SlEvent, names: OpNames | null, words: TraceWords, none: number): string | null {
  switch (e.kind) {
    case EventKind.OP_BEGIN:
      return `${words.opcode(e.arg0)} begins${names ? ` — ${names.name(e.op)}` : ''}`;
    case EventKind.OP_END:
      return `${words.opcode(e.arg0)} ends: ${(e.arg1 | 0) < 0 ? `error ${e.arg1 | 0}` : `result ${e.arg1}`}`;
    case EventKind.ERROR:
      return `error ${e.arg0 | 0} detected${eventPlace(e, none)}`;
    case EventKind.PREEMPT_POINT:
      return `micro-step: ${words.point(e.arg0)}`;
    case EventKind.INTERRUPT_BEGIN:
      return 'interrupt: a handler runs on this CPU';
    case EventKind.INTERRUPT_END:
      return `interrupt handler returns ${e.arg1 | 0}`;
    case EventKind.PAGE_ALLOC:
      return `page allocator: order-${e.arg0} pages at pfn ${e.slab}`;
    case EventKind.PAGE_FREE:
      return `pages at pfn ${e.slab} back to the page allocator`;
    default:
      return null;
  }
}

/** The checker's verdict (validate() at an operation's end) in words ('' when it found nothing). */
export const checkText = (check: Check | null | undefined) => (check && check.rc !== 0 ? `The checker (validate) flags a corruption: ${check.message}` : '');

/** One pane's part of a caption: its label, its stop there, its script and results. */
export interface CaptionPane<Script> {
  label: string;
  stop: Stop | undefined;
  script: Script;
  ops: readonly OpInfo[];
  /** The path the operation took, read from its events (StepView.describe.path), '' when the view says none. */
  path?: string;
}

/**
 * Where a moment is, the lab's one progress counter: "Start (6 steps)",
 * "Step 3 of 6", "Step 3 of 6 · micro-step 2" (inside step 3).
 */
export function positionText(at: { opIndex: number; micro: number } | undefined, nops: number, setup = 0): string {
  if (!at) return 'loading…';
  const steps = nops - setup;
  if (at.opIndex < 0) return `Start (${steps} step${steps === 1 ? '' : 's'})`;
  return `Step ${at.opIndex + 1 - setup} of ${steps}${at.micro > 0 ? ` · micro-step ${at.micro}` : ''}`;
}

/**
 * The caption of a moment: the story's intro at the start, else the
 * operation's caption, after the preemption point each pane is at (inside
 * an operation) or, at its end, the path it took and any failure; the
 * outro at the end.  The counter ("Step 3 of 6") is positionText's, not
 * repeated here.
 */
export function caption<Script>(
  story: Story<unknown>,
  at: { opIndex: number; micro: number },
  panes: readonly CaptionPane<Script>[],
  atEnd: boolean,
  describeStop: (stop: Stop, script: Script) => string,
): string {
  if (at.opIndex < 0) {
    // The set-up is done before the opening frame: said after the intro.
    const setup = story.captions.slice(0, story.setup ?? 0).map((c) => c.replace(/^Set-up: /, ''));
    return setup.length ? `${story.intro} Already set up: ${setup.join(' ')}` : story.intro;
  }
  const opCaption = story.captions[at.opIndex] ?? '';
  const handler = (s: Stop) => (s.inHandler ? ' (in the interrupt handler)' : '');
  let text: string;
  if (at.micro > 0) {
    const one = panes.length === 1 ? panes[0] : undefined;
    if (one?.stop) text = `${one.stop.inHandler ? 'In the interrupt handler: ' : ''}${describeStop(one.stop, one.script)}. ${opCaption}`;
    else
      text = `${panes
        .map((p) => (p.stop && p.stop.micro > 0 && p.stop.opIndex === at.opIndex ? `${p.label}${handler(p.stop)}: ${describeStop(p.stop, p.script)}` : `${p.label}: not inside it`))
        .join('; ')}. ${opCaption}`;
  } else {
    const failed = panes
      .map((p) => ({ p, info: p.ops[at.opIndex] }))
      .filter(({ info }) => info && info.result < 0)
      .map(({ p, info }) => ` It failed${panes.length > 1 ? ` with ${p.label}` : ''}: ${info?.error ?? ''}.`)
      .join('');
    const paths = panes.filter((p) => p.path);
    const path = paths.length === 0 ? '' : panes.length === 1 ? ` Path: ${paths[0]?.path}.` : ` Path: ${paths.map((p) => `${p.label}: ${p.path}`).join('; ')}.`;
    text = `${opCaption}${path}${failed}`;
  }
  return atEnd && story.outro ? `${text} ${story.outro}` : text;
}
