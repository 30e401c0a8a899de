// StepLabPage.tsx - the page of a step-by-step view, assembled by the engine:
// useStepPage reads the view's parameters from the URL, runs the engine
// (use-step-lab.ts) and edits the sandbox script; StepLabPage lays out the
// frame (StepLab.tsx) from the parts a view declares: its name and story,
// pickers, legend, overlays and how a pane is drawn, the inspector's words
// for a selection, each pane's figures, the checker's extra words, operations
// by hand, and what goes under the caption or below the page.  The page adds
// what every view has: the heading, the single pane's figures line, the
// checker's alert, the panes' heads, the canvases, the inspector and the
// event timeline.  A view folder keeps only what is its own.

import { useCallback, type ReactNode } from 'react';
import type { CoreState } from '../core/use-core';
import type { OpNames } from './describe';
import type { CanvasLayout } from './LabCanvas';
import type { ParamSpecs, ParamValues } from './params';
import type { Shortcut } from './shortcuts';
import { CheckAlert, InspectorText, LabTimeline, paneDrawings, paneHeads, StepLabFrame, ViewCanvas, type ViewCanvasProps } from './StepLab';
import { paneChecks, paneLabel, SANDBOX } from './step-glue';
import { useParams } from './url-store';
import { useStepLab, type ShownPane, type STEP_PARAM, type StepLab } from './use-step-lab';
import type { EventWords, StepView, ViewProps } from './view';

/**
 * A step view's page state: its parameters (the URL's), the engine running
 * them, and `toSandbox(ops, landOn)`, which replaces the story by the
 * sandbox script `ops` (the view's text of it), pauses, and (when `landOn`
 * is given) lands on the end of operation `landOn` once it has loaded.
 */
export function useStepPage<P extends ParamSpecs & { step: typeof STEP_PARAM }, World, Script, Snap, L extends CanvasLayout, Hit, Overlay, Info>(
  view: StepView<P, World, Script, Snap, L, Hit, Overlay, Info>,
  { core, store }: Pick<ViewProps, 'core' | 'store'>,
) {
  const { values, update } = useParams(view.params, store);
  const setStep = useCallback((step: number) => update({ step } as Partial<ParamValues<P>>), [update]);
  const lab = useStepLab(view, core, values, setStep);
  const toSandbox = useCallback(
    (ops: string, landOn?: number) => {
      lab.setPlaying(() => false);
      if (landOn !== undefined) lab.landOnOp(landOn);
      // Every step view has `scenario` and `ops` parameters (story.ts): the sandbox is the scenario of a hand-made script.
      update({ scenario: SANDBOX, ops, step: lab.stepIndex } as unknown as Partial<ParamValues<P>>);
    },
    [lab, update],
  );
  return { values, update, lab, toSandbox };
}

/** How each pane is drawn: the view's drawing on the lab canvas (its test id, its words for screen readers, the handlers), or the view's own component. */
export type PaneDrawing<Snap, L extends CanvasLayout, Hit, Overlay> =
  | {
      testId: string;
      /** The canvas's accessible name for pane `pane`'s state. */
      label: (snap: Snap, pane: number) => string;
      /** A click (additive: with Shift or Ctrl) on pane `pane`'s state `snap`. */
      onPick: (hit: Hit | null, additive: boolean, snap: Snap) => void;
      onMove: (dx: number, dy: number, layout: L) => void;
    }
  | { draw: (shown: ShownPane<Snap>, overlay: Overlay, pane: number) => ReactNode };

export interface StepLabPageProps<Snap, L extends CanvasLayout, Hit, Overlay> {
  core: CoreState;
  lab: StepLab<unknown, Snap>;
  /** The view's drawing and its timeline's words. */
  view: ViewCanvasProps<Snap, L, Hit, Overlay>['view'] & { describe: { events: EventWords<OpNames> } };
  /** Prefix of the page's ids and test ids ("slub": slub-view, slub-caption, slub-figures, ...). */
  idPrefix: string;
  /** The view's name: the heading is "<name> · <story>" on the full page, "<name> view" embedded. */
  name: string;
  story: string;
  embedded: boolean;
  /** The CPUs (percpu: units) the timeline filters by. */
  cpus: number;
  shortcuts: readonly Shortcut[];
  pickers?: ReactNode;
  legend?: ReactNode;
  /** Pane i's overlay (selection, marks, animation); a pane without one is not drawn yet. */
  overlays: readonly Overlay[];
  panes: PaneDrawing<Snap, L, Hit, Overlay>;
  /** The narrowest a pane may be before side-by-side panes wrap (CSS length). */
  paneMinWidth?: string;
  /** The one pane's figures, under the caption (`<id>-figures`); null for none. With several panes, `paneFigures` heads each. */
  soloFigures?: () => ReactNode;
  /** Each pane's figures in its head when there are several. */
  paneFigures?: (snap: Snap, pane: number) => string;
  /** What else a pane's head shows. */
  paneMore?: (snap: Snap, pane: number) => ReactNode;
  /** What a compact (embedded) figure keeps under each pane's label. */
  paneNotes?: ReactNode[] | undefined;
  /** Under the caption, before the checker's alert. */
  captionNotes?: ReactNode;
  /** After the checker's alert. */
  afterCheck?: ReactNode;
  /** The view's words after a pane's checker finding (e.g. objects handed out twice). */
  checkMore?: (snap: Snap) => string;
  /** The inspector's words for pane i's selection, null when it has none there. */
  inspect: (snap: Snap, pane: number) => string | null;
  /** How to select, while nothing is selected. */
  inspectHint: string;
  /** What else the inspector shows. */
  inspectorMore?: ReactNode;
  quickOps?: ReactNode;
  aside?: ReactNode;
  /** Below the frame (full page): e.g. SLAB's caches panel. */
  after?: ReactNode;
}

/** A step view's page: nothing until the core is ready, then the frame with the view's parts in place. */
export function StepLabPage<Snap, L extends CanvasLayout, Hit, Overlay>(p: StepLabPageProps<Snap, L, Hit, Overlay>) {
  const { lab, idPrefix, view } = p;
  if (p.core.status !== 'ready') return null;
  const many = lab.panes.length > 1;
  const shown = lab.shown ?? [];
  const inspectorLines = shown.map((s, i) => {
    const text = p.inspect(s.snap, i);
    return text === null ? null : paneLabel(lab, i) + text;
  });
  const solo = !many && p.soloFigures ? p.soloFigures() : null;
  const drawing = p.panes;
  const panes =
    'draw' in drawing
      ? paneDrawings(lab, p.overlays, drawing.draw)
      : paneDrawings(lab, p.overlays, (s, overlay, i) => (
          <ViewCanvas view={view} snap={s.snap} overlay={overlay} testId={drawing.testId} label={drawing.label(s.snap, i)} onPick={(hit, additive) => drawing.onPick(hit, additive, s.snap)} onMove={drawing.onMove} />
        ));
  const frame = (
    <StepLabFrame
      lab={lab}
      idPrefix={idPrefix}
      title={p.embedded ? `${p.name} view` : `${p.name} · ${p.story}`}
      embedded={p.embedded}
      shortcuts={p.shortcuts}
      pickers={p.pickers}
      afterCaption={
        <>
          {solo !== null && solo !== undefined && (
            <p className="lab-figures" data-testid={`${idPrefix}-figures`}>
              {solo}
            </p>
          )}
          {p.captionNotes}
          <CheckAlert idPrefix={idPrefix} checks={paneChecks(lab, p.checkMore)} />
          {p.afterCheck}
        </>
      }
      legend={p.legend}
      {...(p.paneMinWidth ? { paneMinWidth: p.paneMinWidth } : {})}
      paneNotes={p.paneNotes}
      {...(p.paneFigures ? { paneHeads: paneHeads(lab, idPrefix, p.paneFigures, p.paneMore) } : {})}
      panes={panes}
      inspector={
        <>
          <InspectorText lines={inspectorLines.filter((t): t is string => t !== null)} hint={p.inspectHint} />
          {p.inspectorMore}
        </>
      }
      aside={p.aside}
      quickOps={p.quickOps}
      timeline={<LabTimeline lab={lab} words={view.describe.events} cpus={p.cpus} />}
    />
  );
  return p.after && !p.embedded ? (
    <>
      {frame}
      {p.after}
    </>
  ) : (
    frame
  );
}
