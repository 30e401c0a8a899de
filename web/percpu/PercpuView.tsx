// PercpuView.tsx - the percpu view: a scenario or a hand-made script replayed
// step by step by the lab engine, which assembles the page
// (web/lab/StepLabPage.tsx), one pane per allocator (side by side when `allocator` lists several).  What is
// the percpu view's own is here: the zoom along the unit, the selection and
// the inspector's words (with the step that allocated an area), the figures
// of each step beside each world, the memmove animation (on the engine's
// AnimatedCanvas), steps by hand and the test hook.  The whole state but the zoom and the selection is in the
// URL.

import { useCallback, useEffect, useMemo, useState } from 'react';
import type { Stop } from '../core/bridge-protocol';
import { AnimatedCanvas } from '../lab/AnimatedCanvas';
import { numberText as fmt } from '../lab/describe';
import { reducedMotion } from '../lab/LabCanvas';
import { selectionShortcuts } from '../lab/shortcuts';
import { StepLabPage, useStepPage } from '../lab/StepLabPage';
import { insertionPoint, insertOp, useStepHook } from '../lab/step-glue';
import type { ViewProps } from '../lab/view';
import { areaAt, BIT_BYTES, region, runAt, RunState } from './areas';
import { ALLOCATOR_TITLES, describeHit } from './describe';
import { makerOf, runFigures, type RunFigures, type StepFigures } from './figures';
import { clampZoom, type PercpuHit, type PercpuLayout } from './layout';
import { PercpuLegend, PercpuOps, PercpuPickers, ZoomBar, type ZoomControls } from './PercpuControls';
import type { Overlay } from './render';
import { LAB_BOOT, scenarioById } from './scenarios';
import { scriptToText, type PercpuScript, type Step } from './script';
import { chunkById, type Allocator, type PercpuSnapshot } from './snapshot';
import { paneHook, type PercpuTestHook } from './test-hook';
import { percpuStepView } from './view';
import './percpu.css';


/** The figures of the step a pane's stop ends (null at the start). */
function stepAt(run: RunFigures | undefined, stop: Stop | undefined): StepFigures | null {
  return run && stop && stop.ops > 0 && stop.micro === 0 ? (run.steps[stop.opIndex] ?? null) : null;
}

/**
 * One line of counters for a step, as the allocator counts them: the
 * deterministic counts only (the same on every run and machine).  The time
 * the step took in the model is one run's, so it is not shown here: the
 * Benchmarks page times the allocators as medians of repeated runs.
 */
export function figuresText(allocator: Allocator, f: StepFigures | null): string {
  if (!f) return 'Before the first step.';
  const visited = allocator === 'areamap' ? 'map entries visited' : 'blocks scanned';
  const parts = [
    `entries memmoved ${fmt(f.entriesMoved)}${f.memmoves ? ` in ${fmt(f.memmoves)} memmove${f.memmoves === 1 ? '' : 's'}` : ''}`,
    `${visited} ${fmt(f.blocksScanned)}`,
    `chunks scanned ${fmt(f.chunksScanned)}`,
  ];
  const extra = [
    f.chunksCreated ? `${f.chunksCreated} chunk${f.chunksCreated === 1 ? '' : 's'} created` : '',
    f.chunksDestroyed ? `${f.chunksDestroyed} destroyed` : '',
    f.pagesPopulated ? `${f.pagesPopulated} page${f.pagesPopulated === 1 ? '' : 's'} populated` : '',
  ].filter(Boolean);
  return `This step: ${parts.join(' · ')}${extra.length ? ` · ${extra.join(', ')}` : ''}. Moved so far: ${fmt(4 * f.entriesMovedSoFar)} bytes.`;
}

/** The next selection for an arrow key: a bit along the unit, or the same offset in the next chunk. */
function moved(s: PercpuSnapshot, sel: PercpuHit | null, dx: number, dy: number): PercpuHit | null {
  const ids = s.chunks.map((c) => c.id);
  if (!ids.length) return null;
  // The first key press selects the first chunk's first byte; later ones move from the selection.
  const at = sel ? Math.max(0, ids.indexOf(sel.chunk)) : 0;
  const id = (sel ? ids[(at + dy + ids.length) % ids.length] : ids[0]) ?? 0;
  const c = chunkById(s, id);
  if (!c) return null;
  const offset = sel?.kind === 'byte' ? sel.offset : region(s, c).start;
  return { kind: 'byte', chunk: id, offset: sel ? Math.max(0, Math.min(s.unitSize - BIT_BYTES, offset + dx * BIT_BYTES)) : offset };
}

export function PercpuView({ core, store, embedded }: ViewProps) {
  const { values, update, lab, toSandbox } = useStepPage(percpuStepView, { core, store });
  const scenario = scenarioById(values.scenario);
  const [selection, setSelection] = useState<PercpuHit | null>(null);
  const [view, setView] = useState({ center: LAB_BOOT.unitSize / 2, span: Infinity });

  const shown = lab.shown ?? [];
  const first = lab.panes[0];
  const snap0 = shown[0]?.snap ?? null;
  const unitSize = snap0?.unitSize ?? LAB_BOOT.unitSize;
  const zoom = useMemo(() => clampZoom(unitSize, view.center, view.span), [unitSize, view.center, view.span]);
  const figures = useMemo(() => lab.panes.map((p) => runFigures(p.events)), [lab.panes]);
  const steps = useMemo(() => lab.panes.map((_, i) => stepAt(figures[i], lab.paneStops[i])), [lab.panes, lab.paneStops, figures]);

  const zoomControls: ZoomControls = useMemo(() => {
    const around = () => (selection?.kind === 'byte' ? selection.offset : zoom.from + zoom.span / 2);
    return {
      zoom,
      unitSize,
      zoomIn: () => setView({ center: around(), span: zoom.span / 2 }),
      zoomOut: () => setView({ center: zoom.from + zoom.span / 2, span: zoom.span * 2 }),
      whole: () => setView({ center: unitSize / 2, span: Infinity }),
      panTo: (center: number) => setView({ center, span: zoom.span }),
    };
  }, [zoom, unitSize, selection]);

  // Keep a selected byte in the window.
  useEffect(() => {
    if (selection?.kind === 'byte' && (selection.offset < zoom.from || selection.offset >= zoom.from + zoom.span)) setView((v) => ({ ...v, center: selection.offset }));
  }, [selection, zoom.from, zoom.span]);

  const select = useCallback((dx: number, dy: number) => snap0 && setSelection((sel) => moved(snap0, sel, dx, dy)), [snap0]);
  const shortcuts = useMemo(
    () => [
      { key: '+', description: 'Zoom in (around the selected byte)', run: zoomControls.zoomIn },
      { key: '=', description: 'Zoom in', run: zoomControls.zoomIn },
      { key: '-', description: 'Zoom out', run: zoomControls.zoomOut },
      { key: '0', description: 'Show the whole unit', run: zoomControls.whole },
      { key: '<', description: 'Pan left by half the window', run: () => zoomControls.panTo(zoom.from) },
      { key: '>', description: 'Pan right by half the window', run: () => zoomControls.panTo(zoom.from + zoom.span) },
      ...selectionShortcuts(select, 'bit', 'chunk (at the same offset)'),
    ],
    [zoomControls, zoom.from, zoom.span, select],
  );

  const overlays = useMemo(
    () => lab.panes.map((_, i): Omit<Overlay, 'anim'> => ({ zoom, selected: selection, step: steps[i] ?? null, ...(lab.panes.length > 1 && lab.shown ? { alignWith: lab.shown.map((p) => p.snap) } : {}) })),
    [lab.panes, lab.shown, steps, zoom, selection],
  );

  /** The inspector's words for pane i. */
  const inspect = (i: number): string | null => {
    const p = shown[i];
    const pane = lab.panes[i];
    if (!selection || !p || !pane) return null;
    const c = chunkById(p.snap, selection.chunk);
    const area = c && selection.kind === 'byte' ? areaAt(p.snap, c, selection.offset) : null;
    const eventCount = lab.paneStops[i]?.eventCount ?? 0;
    const maker = area && figures[i] ? makerOf(figures[i], selection.chunk, area.start, eventCount) : null;
    return describeHit(p.snap, selection, maker, (k) => `step ${k + 1} (${percpuStepView.describe.op(pane.script, k)})`);
  };

  // What a free of the selection would be, in pane 0's world.
  const freeOfSelection = useMemo(() => {
    if (!snap0 || selection?.kind !== 'byte') return null;
    const c = chunkById(snap0, selection.chunk);
    if (!c) return null;
    const run = runAt(snap0, c, selection.offset);
    const area = areaAt(snap0, c, selection.offset);
    const maker = area && figures[0] ? makerOf(figures[0], c.id, area.start, lab.paneStops[0]?.eventCount ?? 0) : null;
    const place = { chunk: c.id, offset: area?.start ?? (run && run.state === RunState.FREE ? run.start : selection.offset) };
    return { area: maker ? { kind: 'free' as const, of: maker.step, first: maker.nth, count: 1, stride: 1, reverse: false } : null, place };
  }, [snap0, selection, figures, lab.paneStops]);

  const stop0 = lab.paneStops[0];
  // Editing the script: a step goes after the current one, the later ones stay (step-glue.ts).
  const append = useCallback(
    (step: Step) => {
      if (!first) return;
      const at = insertionPoint(stop0);
      const script: PercpuScript = { steps: insertOp(first.script.steps, at, step) };
      toSandbox(scriptToText(script), at + 1);
    },
    [first, stop0, toSandbox],
  );

  // The test hook: the state the canvases draw, once every pane shows the step the URL names.
  useStepHook<PercpuTestHook>(lab, '__slablabPercpu', () => ({
    inspector: shown.map((_, i) => inspect(i)).filter(Boolean).join(' '),
    panes: shown.map((p, i) => paneHook(lab.panes[i]?.label ?? '', p.snap, p.check, steps[i] ?? null)),
  }));

  const many = lab.panes.length > 1;
  const allocatorOf = (i: number): Allocator => shown[i]?.snap.allocator ?? values.allocator[i] ?? 'bitmap';

  return (
    <StepLabPage
      core={core}
      lab={lab}
      view={percpuStepView}
      idPrefix="percpu"
      name="percpu"
      story={scenario ? scenario.title : 'sandbox'}
      embedded={embedded}
      cpus={values.units}
      shortcuts={shortcuts}
      pickers={<PercpuPickers values={values} update={update} />}
      soloFigures={() => `${ALLOCATOR_TITLES[allocatorOf(0)]}. ${figuresText(allocatorOf(0), steps[0] ?? null)}`}
      afterCheck={<ZoomBar z={zoomControls} />}
      legend={<PercpuLegend />}
      paneMinWidth="22rem"
      paneFigures={(_, i) => figuresText(allocatorOf(i), steps[i] ?? null)}
      overlays={overlays}
      panes={{
        draw: (p, overlay, i) => (
          <AnimatedCanvas<PercpuSnapshot, PercpuLayout, PercpuHit, Overlay>
            view={percpuStepView}
            lag={i}
            snap={p.snap}
            overlay={overlay}
            animate={lab.ready && (overlay.step?.lastMemmove.length ?? 0) > 0 && !reducedMotion()}
            animKey={lab.stepIndex}
            ms={Math.min(600, 800 / lab.speed)}
            testId="percpu-canvas"
            label={`percpu state${many ? ` with the ${lab.panes[i]?.label}` : ''} at stop ${lab.stepIndex}: ${p.snap.chunks.length} chunks on ${p.snap.nrSlots} slot lists. The inspector below describes the selection in words.`}
            onPick={setSelection}
            onMove={select}
            {...(window.__slablabPerfMarks ? { measure: 'percpu-draw' } : {})}
          />
        ),
      }}
      inspect={(_, i) => inspect(i)}
      inspectHint="Select a bit, a block, a map entry or a chunk: click it, or focus the canvas and use the arrow keys."
      aside={<PercpuOps units={values.units} onAppend={append} selected={freeOfSelection} />}
    />
  );
}
