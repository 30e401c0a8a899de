// SlabView.tsx - the SLAB view: a scenario or a hand-made script replayed step
// by step by the lab engine, which assembles the page (web/lab/StepLabPage.tsx),
// one pane per rule set (side by side with rules=both).  What is SLAB's own is here:
// the pickers, the selection (an array slot, a slab, an object, a freelist
// position), the step's moves animated from where each object was to where
// it went, the per-cache counters, operations by hand, the caches panel and
// the test hook.  The whole state is in the URL; the selection is local.

import { useCallback, useMemo, useState } from 'react';
import { useAnimationClock } from '../lab/animation-clock';
import { selectionShortcuts } from '../lab/shortcuts';
import { StepLabPage, useStepPage } from '../lab/StepLabPage';
import { insertionPoint, insertOp, stepEvents, useStepFlight, useStepHook } from '../lab/step-glue';
import type { ViewProps } from '../lab/view';
import { CachesPanel } from './CachesPanel';
import { hitFocus, hitObject, type Hit, type Layout } from './layout';
import { movesOf, type Move } from './moves';
import { shownCaches } from './places';
import type { Overlay } from './render';
import { scriptProblem, scriptToText, type Script, type ScriptOp } from './script';
import { scenarioTitle, SlabLegend, SlabOps, SlabPickers } from './SlabControls';
import type { SlabSnapshot } from './snapshot';
import { paneHook, type SlabTestHook } from './test-hook';
import { CACHE_NAME } from './protocol';
import { ownCache, slabStepView } from './view';
import './slab.css';

/** How long a step's moves fly (ms). */
const MOVE_MS = 700;

/** Each cache's counters: what seed 002's test moves. */
function figures(s: SlabSnapshot): string {
  return shownCaches(s)
    .map((c) => {
      const sum = (k: 'allocHit' | 'allocMiss' | 'freeHit' | 'freeMiss') => c.cpus.reduce((n, a) => n + a[k], 0);
      return `${c.name} (${c.mgmt}): alloc hits ${sum('allocHit')}, misses ${sum('allocMiss')}; free hits ${sum('freeHit')}, misses ${sum('freeMiss')}; slabs ${c.slabs.length} (grown ${c.grown}, destroyed ${c.destroyed}).`;
    })
    .join(' ');
}

export function SlabView({ core, store, embedded }: ViewProps) {
  const { values, update, lab, toSandbox } = useStepPage(slabStepView, { core, store });
  const [selection, setSelection] = useState<Hit | null>(null);
  const shown = lab.shown ?? [];
  const first = lab.panes[0];
  const snap0 = shown[0]?.snap ?? null;

  // The moves of the step on screen, per pane; they fly when the step is one forward from the last one shown (step-glue.ts).
  const { panes, at, ready } = lab;
  const moves = useMemo(() => stepEvents({ panes, at, ready }).map((events): Move[] => movesOf(events)), [panes, at, ready]);
  const flight = useStepFlight(lab);
  const progress = useAnimationClock(flight.step, flight.animate, MOVE_MS);

  const focus = useMemo(() => (snap0 && selection ? hitFocus(snap0, selection) : null), [snap0, selection]);
  const overlays = useMemo(
    () => lab.panes.map((_, i): Overlay => ({ selected: selection, focus, moves: moves[i] ?? [], progress, ...(lab.panes.length > 1 && lab.shown ? { alignWith: lab.shown.map((p) => p.snap) } : {}) })),
    [lab.panes, lab.shown, selection, focus, moves, progress],
  );

  // Arrow keys: left/right through the focused slab's objects, up/down through the slabs in drawing order.
  const moveSel = useCallback(
    (dx: number, dy: number, layout?: Layout) => {
      if (!snap0) return;
      const slabs = layout ? [...layout.details.map((d) => ({ cacheId: d.cacheId, pfn: d.pfn })), ...layout.thumbs.map((t) => ({ cacheId: t.cacheId, pfn: t.pfn }))] : snap0.caches.flatMap((c) => c.slabs.map((s) => ({ cacheId: c.id, pfn: s.pfn })));
      const unique = slabs.filter((x, i) => slabs.findIndex((y) => y.cacheId === x.cacheId && y.pfn === x.pfn) === i);
      if (!unique.length) return;
      const cur = selection ? hitFocus(snap0, selection) : null;
      let pos = Math.max(0, unique.findIndex((x) => cur && x.cacheId === cur.cacheId && x.pfn === cur.pfn));
      if (dy || !cur) {
        pos = cur ? (pos + dy + unique.length) % unique.length : 0;
        const to = unique[pos];
        if (to) setSelection({ kind: 'slab', ...to });
        return;
      }
      const num = snap0.caches.find((c) => c.id === cur.cacheId)?.num ?? 1;
      const index = selection?.kind === 'object' ? selection.index + dx : dx > 0 ? 0 : num - 1;
      setSelection(index < 0 || index >= num ? { kind: 'slab', ...cur } : { kind: 'object', ...cur, index });
    },
    [snap0, selection],
  );
  const shortcuts = useMemo(() => selectionShortcuts(moveSel), [moveSel]);

  // Editing the script: an operation goes after the current step, the later ones stay (step-glue.ts).
  const own = ownCache(values);
  const append = (op: ScriptOp) => {
    const all = (first?.script as Script | undefined)?.ops ?? [];
    // The sandbox world creates one cache: a scenario's steps on other caches cannot come along.
    const base = scriptProblem({ ops: all }, values.cpus, 1) === null ? all : [];
    const at = base.length ? insertionPoint(lab.paneStops[0]) : 0;
    toSandbox(scriptToText({ ops: insertOp(base, at, op) }), at + 1);
  };
  const selectedObject = snap0 && selection ? hitObject(snap0, selection) : null;

  // The test hook: the state the canvases draw, once every pane shows the step the URL names.
  useStepHook<SlabTestHook>(lab, '__slablabSlab', () => ({ panes: shown.map((p, i) => paneHook(lab.panes[i]?.label ?? '', p.snap, p.check, moves[i]?.length ?? 0)) }));

  const many = lab.panes.length > 1;
  return (
    <StepLabPage
      core={core}
      lab={lab}
      view={slabStepView}
      idPrefix="slab"
      name="SLAB"
      story={scenarioTitle(values.scenario)}
      embedded={embedded}
      cpus={values.cpus}
      shortcuts={shortcuts}
      pickers={<SlabPickers values={values} update={update} />}
      soloFigures={() => snap0 && figures(snap0)}
      legend={<SlabLegend />}
      paneFigures={figures}
      overlays={overlays}
      panes={{
        testId: 'slab-canvas',
        label: (snap, i) =>
          `SLAB state${many ? ` ${lab.panes[i]?.label}` : ''} at step ${lab.stepIndex}: ${shownCaches(snap)
            .map((c) => `${c.name} (${c.mgmt}, ${c.slabs.length} slabs)`)
            .join(', ')}. The inspector below describes the selection in words.`,
        onPick: (hit) => setSelection(hit),
        onMove: moveSel,
      }}
      inspect={(snap, i) => (selection ? slabStepView.describe.hit(snap, selection, lab.panes[i]?.names ?? null) : null)}
      inspectHint="Select an array slot, a slab, an object or a freelist cell: click it, or focus the canvas and use the arrow keys."
      aside={<SlabOps cpus={values.cpus} size={values.size} cacheName={own.name} selection={selectedObject ? { cache: selectedObject.cacheId, pfn: selectedObject.pfn, index: selectedObject.index } : null} onAppend={append} />}
      after={
        <CachesPanel
          cpus={values.cpus}
          kernel={values.kernel}
          onOpen={(c) => {
            // A name the URL cannot carry (none in sysfs or slabinfo that we know) gets the default, cache-<size>.
            update({ scenario: 'cache', size: c.size, align: c.align, flags: c.flags, name: CACHE_NAME.test(c.name) ? c.name : '', rules: 'both', step: 0, ops: '' });
            setSelection(null);
            window.scrollTo({ top: 0 });
          }}
        />
      }
    />
  );
}
