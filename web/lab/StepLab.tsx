// StepLab.tsx - the frame every step-by-step view shares: title and pickers,
// alerts, the transport (Reset, Back, Play, Micro-step, Step, speed), the
// caption, one drawing per pane (side by side when there are several), the
// inspector, a side panel and the event timeline.  StepLabPage.tsx fills the
// slots from the parts a view declares; the frame registers the transport's keys (and the
// view's) scoped to its own element, so two labs on a page keep theirs apart.
// The host (host.ts) may ask for less: an embedded figure (`controls=minimal`,
// the default there) is compact: the caption, the drawing and Back / Play /
// Micro-step / Step, nothing else (`controls=full` brings the rest); `controls=none`
// leaves the caption and the drawing, for a figure driven by its page.

import { memo, useCallback, useEffect, useMemo, useRef, useState, type ReactNode } from 'react';
import type { Stop } from '../core/bridge-protocol';
import type { SlEvent } from '../core/events.generated';
import { CodePanel } from './CodePanel';
import { PanePicker } from './PanePicker';
import type { OpNames } from './describe';
import { useLabHost } from './host';
import { downloadText } from './download';
import { LabCanvas, type CanvasLayout } from './LabCanvas';
import { labPerfetto } from './perfetto';
import { useShortcuts, type Shortcut } from './shortcuts';
import type { CanvasTheme } from './theme';
import type { ShownPane, StepLab } from './use-step-lab';
import type { EventWords, StepView } from './view';
import './lab.css';

export interface StepLabFrameProps {
  lab: StepLab<unknown, unknown>;
  /** Prefix of the frame's ids and test ids ("slub": slub-view, slub-caption, ...). */
  idPrefix: string;
  /** The heading (full page; the embed keeps it for screen readers only). */
  title: string;
  embedded: boolean;
  /** The view's own keys, registered with the transport's. */
  shortcuts: readonly Shortcut[];
  /** Pickers beside the title (full page only). */
  pickers?: ReactNode;
  /** Under the caption: the view's figures, contrasts, checker alerts. */
  afterCaption?: ReactNode;
  legend?: ReactNode;
  /** One drawing per pane; `paneHeads` titles them when there are several. */
  panes: ReactNode[];
  /** The narrowest a pane may be before the panes wrap (CSS length; lab.css's default otherwise). */
  paneMinWidth?: string;
  paneHeads?: ReactNode[];
  /** What a compact (embedded) figure keeps under each pane's label, when `paneHeads` are left out (a comparison row, say). */
  paneNotes?: ReactNode[] | undefined;
  inspector: ReactNode;
  /** Beside the inspector (full page only): e.g. operations by hand. */
  aside?: ReactNode;
  /** The operations by hand used most, in the toolbar beside playback (full page only), so the result shows without scrolling. */
  quickOps?: ReactNode;
  timeline: ReactNode;
}

export function StepLabFrame(p: StepLabFrameProps) {
  const { lab, idPrefix, embedded } = p;
  const host = useLabHost();
  const controls = host.controls ?? (embedded ? 'minimal' : 'full');
  const root = useRef<HTMLElement>(null);
  const keys = useMemo(() => [...lab.shortcuts, ...p.shortcuts], [lab.shortcuts, p.shortcuts]);
  useShortcuts(keys, root, host.keysNeedFocus);
  const titleId = `${idPrefix}-title`;
  const full = controls === 'full';
  return (
    <section className="lab-view" ref={root} aria-labelledby={titleId} data-testid={`${idPrefix}-view`}>
      {controls !== 'full' ? (
        <h2 id={titleId} className="visually-hidden">
          {p.title}
        </h2>
      ) : (
        <div className="lab-pickers">
          <h2 id={titleId}>{p.title}</h2>
          {p.pickers}
        </div>
      )}
      {lab.stepProblem && (
        <div className="alert alert-warn" role="alert" data-testid="step-problem">
          {lab.stepProblem}
        </div>
      )}
      {lab.error && (
        <div className="alert alert-error" role="alert" data-testid={`${idPrefix}-error`}>
          {lab.error}
        </div>
      )}

      {/* The dock: playback, the operations by hand used most, the counter, the cue and the caption, kept in view (sticky) above the picture. */}
      <div className={full ? 'lab-dock' : undefined} data-testid={`${idPrefix}-dock`}>
      {controls !== 'none' && (
        <div className="lab-controls" role="toolbar" aria-label="Playback">
          {full && (
            <button type="button" onClick={() => lab.go(0)} disabled={lab.stepIndex === 0}>
              Reset
            </button>
          )}
          <button type="button" onClick={lab.prevOp} disabled={lab.stepIndex === 0}>
            Back
          </button>
          <button type="button" onClick={() => lab.setPlaying((x) => !x)} disabled={lab.atEnd && !lab.playing}>
            {lab.playing ? 'Pause' : 'Play'}
          </button>
          <button type="button" onClick={() => lab.go(lab.stepIndex + 1)} disabled={lab.atEnd}>
            Micro-step
          </button>
          <button type="button" onClick={lab.nextOp} disabled={lab.atEnd}>
            Step
          </button>
          {controls === 'full' && (
            <label className="lab-speed">
              Speed{' '}
              <input type="range" min={0.5} max={12} step={0.5} value={lab.speed} aria-label="Speed (steps per second)" onChange={(e) => lab.setSpeed(Number(e.target.value))} />
              <span>{lab.speed}/s</span>
            </label>
          )}
          {controls === 'full' && (
            <button
              type="button"
              disabled={!lab.panes.length}
              title="The whole session as a Perfetto trace (Chrome JSON): open it in ui.perfetto.dev"
              data-testid={`${idPrefix}-export-perfetto`}
              onClick={() => downloadText(`slablab-${idPrefix}.perfetto.json`, labPerfetto(p.title, lab.panes, lab.words), 'application/json')}
            >
              Export to Perfetto
            </button>
          )}
          <span className="lab-position" data-testid={`${idPrefix}-position`} aria-live="polite">
            {lab.position}
          </span>
        </div>
      )}
      {controls === 'full' && p.quickOps && (
        <div className="lab-controls lab-quick-ops" role="toolbar" aria-label="Operations by hand" data-testid={`${idPrefix}-quick-ops`}>
          {p.quickOps}
        </div>
      )}

      <p className="lab-caption" data-testid={`${idPrefix}-caption`} aria-live="polite" tabIndex={full ? undefined : 0}>
        {lab.caption}
        {full && lab.next && (
          <span className="lab-next" data-testid={`${idPrefix}-next`}>
            {' '}
            {lab.next}
          </span>
        )}
      </p>
      </div>
      {p.afterCaption}
      {full && p.legend}

      <div
        className={p.panes.length > 1 ? 'lab-panes lab-panes-many' : 'lab-panes'}
        style={p.panes.length > 1 && p.paneMinWidth ? { gridTemplateColumns: `repeat(auto-fit, minmax(min(100%, ${p.paneMinWidth}), 1fr))` } : undefined}
      >
        {p.panes.map((pane, i) => (
          <section key={i} className="lab-pane" aria-label={p.panes.length > 1 ? lab.panes[i]?.label : undefined} data-testid={p.panes.length > 1 ? `${idPrefix}-pane-${i}` : undefined}>
            {p.panes.length > 1 &&
              (full ? (
                p.paneHeads?.[i]
              ) : (
                <div>
                  <h3 className="lab-pane-label">{lab.panes[i]?.label}</h3>
                  {p.paneNotes?.[i]}
                </div>
              ))}
            {pane}
          </section>
        ))}
      </div>

      {full && (
        <>
          <CodePanel
            model={lab.model}
            kernel={lab.kernel}
            panes={lab.panes.map((pane, i) => ({ label: pane.label, stop: lab.paneStops[i], events: pane.events }))}
            startOpen={controls === 'full'}
            idPrefix={idPrefix}
          />
          <div className="lab-bottom">
            <section className="lab-inspector" aria-labelledby={`${idPrefix}-inspector-title`}>
              <h3 id={`${idPrefix}-inspector-title`}>Inspector</h3>
              {p.inspector}
              {lab.find && <FindAddress find={lab.find} idPrefix={idPrefix} />}
            </section>
            {p.aside}
          </div>

          {p.timeline}
        </>
      )}
    </section>
  );
}

/** The "find address" box: an address typed in, what it is said in words (announced). */
function FindAddress({ find, idPrefix }: { find: (text: string) => string; idPrefix: string }) {
  const [text, setText] = useState('');
  const [asked, setAsked] = useState('');
  return (
    <form
      className="lab-find"
      role="search"
      aria-label="Find an address"
      onSubmit={(e) => {
        e.preventDefault();
        setAsked(text);
      }}
    >
      <label>
        Find address{' '}
        <input type="text" value={text} spellCheck={false} placeholder="0xffff888000001000" onChange={(e) => setText(e.target.value)} data-testid={`${idPrefix}-find-input`} />
      </label>{' '}
      <button type="submit">Find</button>
      <p aria-live="polite" data-testid={`${idPrefix}-find-result`}>
        {asked ? find(asked) : ''}
      </p>
    </form>
  );
}

/** Rows the timeline lists at once (each step re-renders them). */
const TIMELINE_ROWS = 600;

export interface TimelinePane {
  label: string;
  events: readonly SlEvent[];
  stops: readonly Stop[];
  names: OpNames;
  /** The pane's stop on screen. */
  now: number;
}

/**
 * Every event of the run, filterable by CPU and kind; the ones after the
 * moment on screen greyed; a click jumps to the stop that event belongs to.
 * With several panes, a picker chooses whose events.
 */
export function Timeline({ panes, words, cpus, onJump }: { panes: readonly TimelinePane[]; words: EventWords<OpNames>; cpus: number; onJump: (pane: number, stop: number) => void }) {
  const [cpuOn, setCpuOn] = useState<boolean[]>(() => new Array<boolean>(cpus).fill(true));
  const [group, setGroup] = useState('all');
  const [which, setWhich] = useState(0);
  const pane = panes[Math.min(which, panes.length - 1)];
  const now = pane?.stops[pane.now]?.eventCount ?? 0;
  const listRef = useRef<HTMLOListElement>(null);
  // Keyed on the events, not the pane: a view passes new pane objects on every render.
  const events = pane?.events;
  const matching = useMemo(
    () => (events ?? []).map((e, j) => ({ e, j })).filter(({ e }) => (cpuOn[e.cpu] ?? true) && (group === 'all' || words.groupOf(e.kind) === group)),
    [events, cpuOn, group, words],
  );
  // A long run lists a window of rows around the current event (the list stays quick however many events there are).
  const first = useMemo(() => {
    let lo = 0;
    let hi = matching.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((matching[mid]?.j ?? 0) < now - 1) lo = mid + 1;
      else hi = mid;
    }
    return Math.max(0, Math.min(lo - TIMELINE_ROWS / 2, matching.length - TIMELINE_ROWS));
  }, [matching, now]);
  const rows = useMemo(() => matching.slice(first, first + TIMELINE_ROWS), [matching, first]);
  // Keep the current event in view by scrolling the list only (scrollIntoView would scroll the page to it too).
  useEffect(() => {
    const list = listRef.current;
    const row = list?.querySelector<HTMLElement>('.now');
    if (!list || !row) return;
    if (row.offsetTop < list.scrollTop) list.scrollTop = row.offsetTop;
    else if (row.offsetTop + row.offsetHeight > list.scrollTop + list.clientHeight) list.scrollTop = row.offsetTop + row.offsetHeight - list.clientHeight;
  }, [now]);
  // One callback for every row, so a row re-renders only when its own class or text changes.
  const jumpTo = useRef<(j: number) => void>(() => undefined);
  jumpTo.current = (j: number) => {
    if (!pane) return;
    const i = pane.stops.findIndex((s) => s.eventCount >= j + 1);
    onJump(Math.min(which, panes.length - 1), i < 0 ? pane.stops.length - 1 : i);
  };
  const onRowJump = useCallback((j: number) => jumpTo.current(j), []);
  if (!pane) return null;
  return (
    <section className="lab-timeline" aria-labelledby="timeline-title">
      <h3 id="timeline-title">Events</h3>
      <div className="lab-timeline-filters">
        {panes.length > 1 && <PanePicker labels={panes.map((p) => p.label)} which={which} onPick={setWhich} label="Events of" />}
        {Array.from({ length: cpus }, (_, k) => (
          <label key={k}>
            <input type="checkbox" checked={cpuOn[k] ?? true} onChange={(e) => setCpuOn((c) => Array.from({ length: cpus }, (_, i) => (i === k ? e.target.checked : (c[i] ?? true))))} /> CPU {k}
          </label>
        ))}
        <label>
          Kind{' '}
          <select value={group} onChange={(e) => setGroup(e.target.value)} aria-label="Event kind">
            <option value="all">all</option>
            {Object.entries(words.groups).map(([k, v]) => (
              <option key={k} value={k}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <span>
          {matching.length} of {pane.events.length} events{matching.length > rows.length ? ` (showing ${first + 1} to ${first + rows.length})` : ''}
        </span>
      </div>
      <ol className="lab-events" ref={listRef} data-testid="timeline">
        {rows.map(({ e, j }) => (
          <TimelineRow key={j} j={j} cls={j < now ? (j === now - 1 ? 'past now' : 'past') : 'future'} cpu={e.cpu} text={words.event(e, pane.names)} onJump={onRowJump} />
        ))}
      </ol>
    </section>
  );
}

const TimelineRow = memo(function TimelineRow({ j, cls, cpu, text, onJump }: { j: number; cls: string; cpu: number; text: string; onJump: (j: number) => void }) {
  return (
    <li className={cls}>
      <button type="button" onClick={() => onJump(j)}>
        <span className="ev-cpu">CPU {cpu}</span> {text}
      </button>
    </li>
  );
});

/** One drawing per pane (StepLabFrame's `panes`): `draw` for a pane whose state is on screen and whose overlay is ready, nothing for the others. */
export function paneDrawings<Snap, Overlay>(lab: Pick<StepLab<unknown, Snap>, 'panes' | 'shown'>, overlays: readonly Overlay[], draw: (shown: ShownPane<Snap>, overlay: Overlay, pane: number) => ReactNode): ReactNode[] {
  return lab.panes.map((_, i) => {
    const shown = lab.shown?.[i];
    const overlay = overlays[i];
    return shown && overlay ? draw(shown, overlay, i) : null;
  });
}

/** What the checker (validate) found in the states on screen, one text per pane that has a finding, as an alert; nothing when it found none. */
export function CheckAlert({ idPrefix, checks }: { idPrefix: string; checks: readonly string[] }) {
  if (!checks.length) return null;
  return (
    <div className="alert alert-error" role="alert" data-testid={`${idPrefix}-check`}>
      {checks.join(' ')}
    </div>
  );
}

/** The inspector's words for the selection, one text per pane that has one, or how to select when there is none. */
export function InspectorText({ lines, hint }: { lines: readonly string[]; hint: string }) {
  return (
    <p aria-live="polite" data-testid="inspector">
      {lines.length ? lines.join(' ') : hint}
    </p>
  );
}

/** Each pane's head when they are side by side: its label, the view's figures for its state on screen (`pane` is its index), and what else the view shows of that state (`more`). */
export function paneHeads<Snap>(lab: StepLab<unknown, Snap>, idPrefix: string, figures: (s: Snap, pane: number) => string, more?: (s: Snap, pane: number) => ReactNode): ReactNode[] {
  return lab.panes.map((p, i) => {
    const s = lab.shown?.[i]?.snap;
    return (
      <div key={i}>
        <h3>{p.label}</h3>
        {s && (
          <p className="lab-figures" data-testid={`${idPrefix}-pane-figures-${i}`}>
            {figures(s, i)}
          </p>
        )}
        {s && more?.(s, i)}
      </div>
    );
  });
}

/** The timeline of a lab's panes (once loaded); a click on an event goes to its stop. */
export function LabTimeline({ lab, words, cpus }: { lab: StepLab<unknown, unknown>; words: EventWords<OpNames>; cpus: number }) {
  if (!lab.panes.length) return null;
  return (
    <Timeline
      panes={lab.panes.map((p, i) => ({ label: p.label, events: p.events, stops: p.stops, names: p.names, now: lab.at?.panes[i] ?? 0 }))}
      words={words}
      cpus={cpus}
      onJump={(pane, stop) => lab.go(stepOfPaneStop(lab, pane, stop))}
    />
  );
}

/** The aligned step at which pane `pane` shows its stop `stop` (or the first after it). */
export function stepOfPaneStop(lab: StepLab<unknown, unknown>, pane: number, stop: number): number {
  const i = lab.stops.findIndex((s) => (s.panes[pane] ?? 0) >= stop);
  return i < 0 ? lab.stops.length - 1 : i;
}

export interface ViewCanvasProps<Snap, L extends CanvasLayout, Hit, Overlay> {
  /** The view's drawing: its layout, draw and hit for this snapshot and overlay. */
  view: Pick<StepView<never, unknown, unknown, Snap, L, Hit, Overlay, unknown>, 'layout' | 'draw' | 'hit'>;
  snap: Snap;
  overlay: Overlay;
  label: string;
  testId: string;
  onPick: (hit: Hit | null, additive: boolean) => void;
  onMove: (dx: number, dy: number, layout: L) => void;
  /** Each paint's duration as a performance measure of this name. */
  measure?: string;
  /** Animate between states (default: yes, for step views; a free run repaints every frame). */
  motion?: boolean;
}

/** One pane's state drawn by its view on the canvas host. */
export function ViewCanvas<Snap, L extends CanvasLayout, Hit, Overlay>({ view, snap, overlay, label, testId, onPick, onMove, measure, motion = true }: ViewCanvasProps<Snap, L, Hit, Overlay>) {
  const layout = useCallback((width: number) => view.layout(snap, width, overlay), [view, snap, overlay]);
  const draw = useCallback((ctx: CanvasRenderingContext2D, l: L, colors: CanvasTheme) => view.draw(ctx, snap, l, overlay, colors), [view, snap, overlay]);
  const hit = useCallback((l: L, x: number, y: number) => view.hit(l, snap, x, y), [view, snap]);
  return <LabCanvas layout={layout} draw={draw} hit={hit} onPick={onPick} onMove={onMove} label={label} testId={testId} {...(motion ? { motionKey: snap } : {})} {...(measure ? { measure } : {})} />;
}
