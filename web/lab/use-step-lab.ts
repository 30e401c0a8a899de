// use-step-lab.ts - the deterministic session seen from the page: a view's
// worlds (one pane each) loaded in the bridge worker with the same script,
// stepped through together, each stop fetched as the model's snapshot.
//
// The URL holds the step (an index into the aligned stops: stops.ts), so any
// moment is a link; Step, Micro-step, Back, Reset and Play only change it,
// and an effect fetches the state there from every pane's session.  Sessions
// are disposed when the parameters that defined them change and when the
// view goes away.  What is on screen stays while the next stop is fetched;
// `ready` says when it is the stop the step names.

import { startTransition, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { BridgeError, getBridge } from '../core/bridge';
import type { Check, OpInfo, Stop } from '../core/bridge-protocol';
import { decodeEvents, type SlEvent } from '../core/events.generated';
import { describeBridgeError, type CoreState } from '../core/use-core';
import { caption as captionOf, OpNames, positionText } from './describe';
import { useLabHost } from './host';
import type { CanvasLayout } from './LabCanvas';
import { whole, type ParamSpecs, type ParamValues } from './params';
import type { Shortcut } from './shortcuts';
import { alignStops, type AlignedStop } from './stops';
import type { EventWords, StepView, Story } from './view';

/** Every step view's `step` parameter: an index into the aligned stops. */
export const STEP_PARAM = whole(0, 1_000_000, 0);
/** A step past any story's end: the view shows the last stop (after an edit, say) without calling it a bad URL. */
export const STEP_END = 1_000_000;

export interface LoadedPane<Script> {
  label: string;
  session: number;
  /** The script as it ran in this pane's world. */
  script: Script;
  stops: Stop[];
  ops: OpInfo[];
  events: SlEvent[];
  names: OpNames;
  /** The model's LoadReply.extra. */
  extra: unknown;
}

export interface ShownPane<Snap> {
  /** The pane's stop index. */
  stop: number;
  snap: Snap;
  check: Check | null;
}

export interface StepLab<Script, Snap> {
  /** The view's model (its C folder, for the code panel) and the kernel release each pane follows for these values. */
  model: string;
  kernel: { file: string; versions: string[] } | null;
  story: Story<Script> | null;
  panes: LoadedPane<Script>[];
  stops: AlignedStop[];
  stepIndex: number;
  /** The moment the step names. */
  at: AlignedStop | undefined;
  /** Each pane's Stop at that moment. */
  paneStops: (Stop | undefined)[];
  /** The states on screen (the last fetched; `ready` when they are the step's). */
  shown: ShownPane<Snap>[] | null;
  ready: boolean;
  atEnd: boolean;
  caption: string;
  /** The one progress counter: "Step 3 of 6", "Step 3 of 6 · micro-step 2", "Start (6 steps)" (describe.ts positionText). */
  position: string;
  /** The cue for what Step does next, shown before it happens ("Next: alloc on CPU 0"), '' at the end. */
  next: string;
  /** After the parameters change (an operation added by hand), land on the end of operation `n` (1-based: ops completed) once the new script has loaded. */
  landOnOp: (n: number) => void;
  error: string | null;
  stepProblem: string | null;
  playing: boolean;
  setPlaying: (f: (playing: boolean) => boolean) => void;
  speed: number;
  setSpeed: (s: number) => void;
  go: (i: number) => void;
  nextOp: () => void;
  prevOp: () => void;
  /** The transport's keys (Space, arrows, '.', ',', r). */
  shortcuts: Shortcut[];
  /** The words of the model's events (the timeline's, the export's). */
  words: EventWords<OpNames>;
  /** The view's "find address" in each pane's state on screen ("cmpxchg: ..." when there are several), null if the view has none. */
  find: ((text: string) => string) | null;
}

/** The path pane `p` took in the operation its stop `k` ends (view.describe.path over that operation's events), '' inside one or when the view says none. */
function pathAt<Script>(view: { describe: { path?(events: readonly SlEvent[]): string } }, p: LoadedPane<Script>, k: number): string {
  const stop = p.stops[k];
  const path = view.describe.path;
  if (!path || !stop || stop.micro !== 0 || stop.opIndex < 0) return '';
  let j = k - 1;
  while (j > 0 && (p.stops[j]?.micro ?? 0) !== 0) j--;
  const from = j >= 0 ? (p.stops[j]?.eventCount ?? 0) : 0;
  return path(p.events.slice(from, stop.eventCount));
}

export function errorText(e: unknown): string {
  return e instanceof BridgeError ? describeBridgeError(e) : e instanceof Error ? e.message : String(e);
}

interface Loaded<Script> {
  key: string;
  story: Story<Script>;
  panes: LoadedPane<Script>[];
}

/**
 * Loads `view`'s panes for `values` and follows `values.step`; `setStep`
 * writes a new step (to the URL).
 */
export function useStepLab<P extends ParamSpecs & { step: typeof STEP_PARAM }, World, Script, Snap, L extends CanvasLayout, Hit, Overlay, Info>(
  view: StepView<P, World, Script, Snap, L, Hit, Overlay, Info>,
  core: CoreState,
  values: ParamValues<P>,
  setStep: (step: number) => void,
): StepLab<Script, Snap> {
  const { step, ...defining } = values;
  const key = JSON.stringify(defining);
  const [loaded, setLoaded] = useState<Loaded<Script> | null>(null);
  const [shown, setShown] = useState<{ key: string; step: number; panes: ShownPane<Snap>[] } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(2);
  const host = useLabHost();
  // The values `key` stands for, read when the key changes (the step alone does not reload).
  const definedBy = useRef(values);
  definedBy.current = values;

  // Load the panes whenever what defines them changes; free their sessions after.
  useEffect(() => {
    if (core.status !== 'ready') return;
    let live = true;
    const opened: number[] = [];
    const bridge = getBridge();
    const dispose = (session: number) => void bridge.request('dispose', { session }).catch(() => undefined);
    setError(null);
    const values = definedBy.current;
    (async () => {
      const panes = view.panes(values);
      const first = panes[0];
      if (!first) throw new Error('the parameters name no world to run');
      const story = await view.story(values, () => bridge.request('worldInfo', { model: view.model, world: first.world }) as Promise<Info>);
      const replies = await Promise.all(
        panes.map((p) =>
          bridge.request('load', { model: view.model, world: p.world, script: story.script }).then((r) => {
            if (live) opened.push(r.session);
            else dispose(r.session);
            return r;
          }),
        ),
      );
      if (!live) return;
      setLoaded({
        key,
        story,
        panes: replies.map((r, i) => {
          // The worker's adapter ran the view's own script type (rewritten at most: objects named by place).
          const script = r.script as Script;
          return {
            label: panes[i]?.label ?? '',
            session: r.session,
            script,
            stops: r.stops,
            ops: r.ops,
            events: decodeEvents(r.events),
            names: new OpNames(r.ops, (k) => view.describe.op(script, k)),
            extra: r.extra,
          };
        }),
      });
    })().catch((e: unknown) => live && setError(errorText(e)));
    return () => {
      live = false;
      opened.forEach(dispose);
    };
    // `key` stands for every value but the step: all that defines the panes and the story.
  }, [core.status, key, view]);

  const current = loaded?.key === key ? loaded : null;
  const setup = current?.story.setup ?? 0;
  const stops = useMemo(() => (current ? alignStops(current.panes.map((p) => p.stops), current.story.setup ?? 0) : []), [current]);
  const stepIndex = stops.length ? Math.min(step, stops.length - 1) : 0;
  const stepProblem =
    stops.length && step >= stops.length && step !== STEP_END
      ? `URL parameter step=${step} is past the end of this story (${stops.length} steps, 0 to ${stops.length - 1}): showing the last.`
      : null;
  const at = stops[stepIndex];
  const paneStops = useMemo(() => current?.panes.map((p, i) => p.stops[at?.panes[i] ?? 0]) ?? [], [current, at]);

  // Fetch every pane's state at the current moment.
  useEffect(() => {
    if (!current || !at) return;
    let live = true;
    const bridge = getBridge();
    Promise.all(current.panes.map((p, i) => bridge.request('at', { session: p.session, stop: at.panes[i] ?? 0 })))
      .then((rs) => {
        if (!live) return;
        const panes = rs.map((r, i) => ({ stop: at.panes[i] ?? 0, snap: view.decode(r.snapshot), check: r.check }));
        // A transition: React renders the new state in slices between frames, so a big view does not stall the page.
        startTransition(() => setShown({ key, step: stepIndex, panes }));
      })
      .catch((e: unknown) => live && setError(errorText(e)));
    return () => {
      live = false;
    };
  }, [current, at, key, stepIndex, view]);

  const go = useCallback((i: number) => setStep(Math.max(0, Math.min(i, Math.max(0, stops.length - 1)))), [setStep, stops.length]);
  const nextOp = useCallback(() => {
    const i = stops.findIndex((s, k) => k > stepIndex && s.micro === 0);
    go(i < 0 ? stops.length - 1 : i);
  }, [stops, stepIndex, go]);
  const prevOp = useCallback(() => {
    let i = stepIndex - 1;
    while (i > 0 && stops[i]?.micro !== 0) i--;
    go(i);
  }, [stops, stepIndex, go]);
  const atEnd = stops.length === 0 || stepIndex >= stops.length - 1;

  // Play: one stop (micro-steps included) per tick, while the lab is on screen.
  useEffect(() => {
    if (!playing || !stops.length || !host.active) return;
    if (atEnd) {
      setPlaying(false);
      return;
    }
    const t = setTimeout(() => startTransition(() => go(stepIndex + 1)), 1000 / speed);
    return () => clearTimeout(t);
  }, [playing, stops.length, host.active, atEnd, stepIndex, speed, go]);

  // The host's commands, and autoplay once per story.
  useEffect(() => host.commands.listen((c) => (c.type === 'go' ? go(c.step) : setPlaying(c.type === 'play'))), [host.commands, go]);
  const autoplayed = useRef('');
  useEffect(() => {
    if (!host.autoplay || !current || autoplayed.current === current.key) return;
    autoplayed.current = current.key;
    setPlaying(true);
  }, [host.autoplay, current]);

  const shortcuts = useMemo<Shortcut[]>(
    () => [
      { key: ' ', description: 'Space: play or pause', run: () => setPlaying((p) => !p) },
      { key: 'ArrowRight', description: 'Step: one operation forward', run: nextOp },
      { key: 'ArrowLeft', description: 'Back: one operation backward (replayed)', run: prevOp },
      { key: '.', description: 'Micro-step: to the next preemption point', run: () => go(stepIndex + 1) },
      { key: ',', description: 'Micro-step back', run: () => go(stepIndex - 1) },
      { key: 'r', description: 'Reset to the start', run: () => go(0) },
    ],
    [nextOp, prevOp, go, stepIndex],
  );

  const caption =
    current && at
      ? captionOf(
          current.story,
          at,
          current.panes.map((p, i) => ({ label: p.label, stop: paneStops[i], script: p.script, ops: p.ops, path: pathAt(view, p, at.panes[i] ?? 0) })),
          atEnd,
          view.describe.stop,
        )
      : '';
  const nops = Math.max(0, ...(current?.panes.map((p) => p.ops.length) ?? [0]));
  const position = stops.length ? positionText(at, nops, setup) : 'loading…';
  const nextIndex = at && at.opIndex >= 0 ? at.opIndex + 1 : setup;
  const script0 = current?.panes[0]?.script;
  const next = script0 !== undefined && at && !atEnd && at.micro === 0 && nextIndex < nops ? `Next: ${view.describe.op(script0, nextIndex)}` : '';

  // An operation added by hand: once the new script has loaded, go to the end of that operation.
  const landing = useRef<number | null>(null);
  const landOnOp = useCallback((n: number) => {
    landing.current = n;
  }, []);
  useEffect(() => {
    const n = landing.current;
    if (n === null || !current || !stops.length) return;
    landing.current = null;
    const i = stops.findIndex((s) => s.micro === 0 && s.opIndex + 1 >= n);
    setStep(i < 0 ? stops.length - 1 : i);
  }, [current, stops, setStep]);

  const shownNow = shown?.key === key ? shown : null;
  const ready = shownNow?.step === stepIndex;
  const { report } = host;
  useEffect(() => report({ ready, step: stepIndex, stops: stops.length, atEnd, playing, caption, position }), [report, ready, stepIndex, stops.length, atEnd, playing, caption, position]);
  const kernel = useMemo(() => {
    const k = view.kernel;
    return k ? { file: k.file, versions: view.panes(values).map((_, i) => k.version(values, i)) } : null;
  }, [view, values]);
  const shownPanes = shownNow?.panes;
  const find = useMemo(() => {
    const viewFind = view.describe.find;
    if (!viewFind || !current || !shownPanes) return null;
    return (text: string) =>
      shownPanes
        .map((p, i) => {
          const pane = current.panes[i];
          const words = viewFind(p.snap, text, pane?.names ?? null);
          return current.panes.length > 1 ? `${pane?.label}: ${words}` : words;
        })
        .join(' ');
  }, [view, current, shownPanes]);
  return {
    model: view.model,
    kernel,
    story: current?.story ?? null,
    panes: current?.panes ?? [],
    stops,
    stepIndex,
    at,
    paneStops,
    shown: shownNow?.panes ?? null,
    ready,
    atEnd,
    caption,
    position,
    next,
    landOnOp,
    error,
    stepProblem,
    playing,
    setPlaying,
    speed,
    setSpeed,
    go,
    nextOp,
    prevOp,
    shortcuts,
    find,
    words: view.describe.events,
  };
}
