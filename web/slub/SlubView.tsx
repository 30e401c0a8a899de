// SlubView.tsx - the SLUB view: a scenario or a hand-made script replayed step
// by step by the lab engine, which assembles the page (web/lab/StepLabPage.tsx),
// one pane per world (side by side when `variant` or `bulk` lists several).  What is
// SLUB's own is here: the pickers, the selection and the marks for a bulk
// free, the detached freelist being built, the inspector's words, the
// checker's alert, the contrast of the variants, operations and tuning by
// hand, the counters and the test hook.  The whole state is in the URL;
// selection is local.

import { useCallback, useMemo, useState } from 'react';
import type { Stop } from '../core/bridge-protocol';
import { EventKind, type SlEvent } from '../core/events.generated';
import { selectionShortcuts } from '../lab/shortcuts';
import { StepLabPage, useStepPage } from '../lab/StepLabPage';
import { insertionPoint, insertOp, useShownBefore, useStepHook } from '../lab/step-glue';
import type { LoadedPane } from '../lab/use-step-lab';
import type { ViewProps } from '../lab/view';
import { keyOrder, sheafObject, type Layout } from './layout';
import type { SlubLoadExtra } from './protocol';
import { interruptNames, refKey, type Overlay } from './render';
import { SandboxOps, SlubQuickOps, type TuningNow } from './SandboxOps';
import { comparisonText } from './compare';
import { misfit } from './scenarios';
import { eraOf, parseKernelVersion } from './slub-api';
import { detachedGroups, KIND_WORD, POINT_TEXT, PreemptPoint, scriptToText, walkSlots, type AnyRef, type ObjRef, type Script, type ScriptOp } from './script';
import { legendStates, SlubContrast, SlubCounters, SlubLegend, SlubMisfit, SlubPickers } from './SlubControls';
import { Era, slabIndexOf, stat, type SlubSnapshot } from './snapshot';
import { dupCount, paneHook, type SlubPaneHook, type SlubTestHook } from './test-hook';
import { scenarioFor, slubStepView } from './view';
import './slub.css';

/** The chain of the detached freelist a bulk free is building at a BULK_GROUP micro-step, if any. */
function detachedAt(pane: LoadedPane<Script<AnyRef>>, stop: Stop | undefined): ObjRef[] | null {
  if (!stop || stop.micro === 0 || stop.point !== PreemptPoint.BULK_GROUP) return null;
  let built: SlEvent | undefined;
  for (let j = stop.eventCount - 1; j >= 0 && !built; j--) if (pane.events[j]?.kind === EventKind.SLUB_DETACHED_FREELIST) built = pane.events[j];
  const refs = (pane.script as Script).ops[stop.opIndex]?.refs;
  if (!built || !refs) return null;
  return detachedGroups(refs).find((g) => g.chain[0]?.pfn === built.slab && g.chain[0]?.index === built.obj)?.chain ?? null;
}

/** The record of the sheaf with id `id` in a snapshot, -1 if it is gone. */
function sheafRecord(s: SlubSnapshot, id: number): number {
  return s.sheaves.sheaf.id.indexOf(id);
}

function figures(snap: SlubSnapshot): string {
  const g = snap.geometry;
  let fallback = 0;
  for (let i = 0; i < snap.nslabs; i++) if (snap.slab.order[i] !== g.order) fallback++;
  const fallbackText = fallback ? ` ${fallback} fallback slab${fallback === 1 ? '' : 's'} of a lower order (ORDER_FALLBACK).` : '';
  const k = snap.kernel;
  const sheaves = k.hasSheaves ? ` Sheaves of ${snap.sheaves.capacity}: allocations from a CPU sheaf ${stat(snap, 'ALLOC_CPU_SHEAF')}, frees to one ${stat(snap, 'FREE_CPU_SHEAF')}; barn ${snap.sheaves.barnFull} full, ${snap.sheaves.barnEmpty} empty.` : '';
  if (!k.cpuSlab)
    return `Linux ${k.major}.${k.minor}: ${g.objectSize}-byte objects in ${g.size}-byte slots, ${g.objects} per order-${g.order} slab; min_partial ${g.minPartial}; no per-CPU slab, no tid.${sheaves} Slab-path allocations ${stat(snap, 'ALLOC_SLOWPATH')}.${fallbackText}`;
  return `Cache: ${g.objectSize}-byte objects in ${g.size}-byte slots, ${g.objects} per order-${g.order} slab; min_partial ${g.minPartial}, cpu_partial ${g.cpuPartial}; TID_STEP ${g.tidStep}; fast path ${g.fastpath}; bulk free ${g.bulkFree}. Fast-path allocs ${stat(snap, 'ALLOC_FASTPATH')}, slow ${stat(snap, 'ALLOC_SLOWPATH')}; cmpxchg retries ${stat(snap, 'CMPXCHG_DOUBLE_CPU_FAIL') + stat(snap, 'CMPXCHG_DOUBLE_FAIL')}.${sheaves}${fallbackText} Linux ${k.major}.${k.minor}.`;
}

/** `stepView`: the SLUB view's worlds and stories, or another's built on them (web/kernel's seeded cache). */
export function SlubView({ core, store, embedded, stepView = slubStepView }: ViewProps & { stepView?: typeof slubStepView }) {
  const { values, update, lab, toSandbox } = useStepPage(stepView, { core, store });
  const { cpus } = values;
  const scenario = scenarioFor(values);
  const [selection, setSelection] = useState<ObjRef | null>(null);
  /** The selected sheaf, by its id (sheaves keep it from stop to stop), and its slot (-1: the sheaf itself). */
  const [sheafSel, setSheafSel] = useState<number | null>(null);
  const [sheafSlot, setSheafSlot] = useState(-1);
  const [marked, setMarked] = useState<ReadonlySet<string>>(new Set());
  const [showFull, setShowFull] = useState(true);
  /** The CPU operations by hand run on (the toolbar's "As CPU"). */
  const [opCpu, setOpCpu] = useState(0);
  const cpu = Math.min(opCpu, cpus - 1);
  /** The CPUs the script does not use, drawn anyway (one click on their folded row). */
  const [allCpus, setAllCpus] = useState(false);

  const shown = lab.shown ?? [];
  const first = lab.panes[0];
  const stop0 = lab.paneStops[0];
  const snap0 = shown[0]?.snap ?? null;
  const selSlab0 = snap0 && selection ? slabIndexOf(snap0, selection.pfn) : -1;

  // Selection moves (keyboard on a canvas, and [ ] { } anywhere) over pane 0's sheaves and slabs:
  // up and down from one to the next (keyOrder), left and right along its slots or objects
  // (-1: the sheaf or slab itself).
  const moveSel = useCallback(
    (dx: number, dy: number, layout?: Layout) => {
      if (!snap0) return;
      const order = keyOrder(snap0, layout);
      if (!order.length) return;
      const selRec = sheafSel === null ? -1 : sheafRecord(snap0, sheafSel);
      const at = order.findIndex((k) => (k.sheaf !== undefined ? k.sheaf === selRec : selRec < 0 && k.slab === selSlab0));
      const here = selRec >= 0 ? sheafSlot : (selection?.index ?? -1);
      // Nothing selected yet: Down starts at the top, Up at the bottom, Left or Right at the first slot of the top.
      const next = at < 0 ? (dy < 0 ? order.length - 1 : 0) : (at + dy + order.length) % order.length;
      const [stop, index] = dy ? [order[next], -1] : [order[next], at < 0 ? 0 : here + dx];
      if (!stop) return;
      if (stop.sheaf !== undefined) {
        const sh = snap0.sheaves.sheaf;
        const slot = Math.max(-1, Math.min(Math.max(sh.capacity[stop.sheaf] ?? 0, sh.size[stop.sheaf] ?? 0) - 1, index));
        const obj = sheafObject(snap0, stop.sheaf, slot);
        setSheafSel(sh.id[stop.sheaf] ?? null);
        setSheafSlot(slot);
        setSelection(obj ? { pfn: snap0.slab.pfn[obj.slab] ?? 0, index: obj.index } : null);
      } else {
        setSheafSel(null);
        setSheafSlot(-1);
        setSelection({ pfn: snap0.slab.pfn[stop.slab] ?? 0, index: Math.max(-1, Math.min((snap0.slab.objects[stop.slab] ?? 0) - 1, index)) });
      }
    },
    [snap0, selSlab0, selection, sheafSel, sheafSlot],
  );
  const shortcuts = useMemo(() => selectionShortcuts(moveSel), [moveSel]);

  // Editing the script: an operation goes after the current step, the later ones stay (step-glue.ts).
  // The worker named every object by place: the script that ran is a concrete one.
  const edit = (f: (s: Script) => Script, landOn?: number) => first && toSandbox(scriptToText(f(first.script as Script)), landOn);
  const keep = insertionPoint(stop0);
  // Interrupts injected into later operations move with them.
  const append = (op: ScriptOp) => edit((s) => ({ ops: insertOp(s.ops, keep, op), irqs: s.irqs.map((q) => (q.atOp >= keep ? { ...q, atOp: q.atOp + 1 } : q)) }), keep + 1);
  const canInterrupt = !!stop0 && stop0.micro > 0 && !stop0.inHandler && (first?.script.irqs.length ?? 8) < 8;
  const tuning: TuningNow = {
    minPartial: snap0?.geometry.minPartial ?? 0,
    cpuPartial: snap0?.geometry.cpuPartial ?? 0,
    zoneShort: first?.script.ops.slice(0, keep).findLast((o) => o.kind === 'zoneShort')?.value === 1,
  };
  /** Each pane's counters under its kernel version's names. */
  const paneNames = (i: number) => {
    const pane = lab.panes[i];
    return pane ? (pane.extra as SlubLoadExtra).statNames : null;
  };
  const statNames = paneNames(0);
  const interrupt = (kind: ScriptOp['kind'], refs?: ObjRef[]) => {
    if (!stop0 || !canInterrupt) return;
    const handler = refs ? { kind, refs } : { kind };
    edit((s) => ({ ops: s.ops, irqs: [...s.irqs, { atOp: stop0.opIndex, point: stop0.point, nth: stop0.arrival, handler }] }));
  };
  const markedRefs = [...marked].map((k) => {
    const [pfn, index] = k.split(':').map(Number);
    return { pfn: pfn ?? 0, index: index ?? 0 };
  });

  // The lanes the script uses (CPU 0 at least; a handler runs on its interrupted op's CPU).
  const scriptCpus = useMemo(() => [...new Set([0, ...(first?.script.ops ?? []).map((o) => o.cpu)])].filter((c) => c < cpus).sort((a, b) => a - b), [first, cpus]);
  // What each pane showed before the state on screen: the drawing outlines what differs.
  const before = useShownBefore(lab);
  const overlays = useMemo(
    () =>
      lab.panes.map((pane, i): Overlay => {
        const snap = lab.shown?.[i]?.snap;
        const stop = pane.stops[lab.at?.panes[i] ?? 0];
        const script = pane.script as Script;
        const op = stop ? script.ops[stop.opIndex] : undefined;
        const irq = stop && stop.micro > 0 ? script.irqs.find((q) => q.atOp === stop.opIndex && (stop.inHandler || q.point === stop.point)) : undefined;
        const interrupt =
          irq && op
            ? {
                cpu: op.cpu,
                text: stop?.inHandler
                  ? `Interrupt on CPU ${op.cpu}: its handler runs ${/^[aeiou]/.test(KIND_WORD[irq.handler.kind]) ? 'an' : 'a'} ${KIND_WORD[irq.handler.kind]}; the interrupted ${KIND_WORD[op.kind]} waits`
                  : `Interrupt arriving on CPU ${op.cpu} in ${(POINT_TEXT[stop?.point ?? 0] ?? 'the operation').split(':')[0]}`,
              }
            : null;
        const selSlab = snap && selection ? slabIndexOf(snap, selection.pfn) : -1;
        return {
          selected: selSlab >= 0 && selection ? { slab: selSlab, index: selection.index } : null,
          selectedSheaf: snap && sheafSel !== null ? sheafRecord(snap, sheafSel) : null,
          selectedSlot: sheafSlot,
          marked,
          detached: detachedAt(pane, pane.stops[lab.at?.panes[i] ?? 0]),
          arrows: 'all',
          showFull,
          prev: before[i] ?? null,
          cpus: scriptCpus,
          allCpus,
          interrupt,
          ...(scenario?.objectNames === 'interrupt' ? { names: interruptNames(pane.events) } : {}),
          ...(lab.panes.length > 1 ? { alignWith: (lab.shown ?? []).map((x) => x.snap) } : {}),
        };
      }),
    // `before` (the same array throughout) changes only with lab.shown.
    [lab.panes, lab.shown, lab.at, selection, sheafSel, sheafSlot, marked, showFull, scriptCpus, allCpus, before, scenario],
  );

  const bulkCompare = useMemo(() => {
    // With sheaves a bulk free fills them first: the two forms' cmpxchgs are not the story.
    if (!first || lab.shown?.[0]?.snap.kernel.hasSheaves) return null;
    const i = first.script.ops.findIndex((o) => o.kind === 'freeBulk');
    if (i < 0) return null;
    const other = (first.extra as SlubLoadExtra).otherBulkForm;
    return { n: first.script.ops[i]?.refs?.length ?? 0, mine: first.ops[i]?.result ?? 0, other: other.results[i] ?? 0, otherForm: other.form };
  }, [first, lab.shown]);

  // The test hook: the state the canvases draw, once every pane shows the step the URL names.
  useStepHook<SlubTestHook>(lab, '__slablabSlub', () => {
    const extra = first?.extra as SlubLoadExtra;
    const panes = shown.map((p, i) => paneHook(lab.panes[i]?.label ?? '', p.snap, p.check, paneNames(i) ?? extra.statNames));
    return { ...(panes[0] as SlubPaneHook), otherBulkResults: extra.otherBulkForm.results, panes };
  });

  const many = lab.panes.length > 1;
  return (
    <StepLabPage
      core={core}
      lab={lab}
      view={stepView}
      idPrefix="slub"
      name="SLUB"
      story={scenario ? scenario.title : 'sandbox'}
      embedded={embedded}
      cpus={cpus}
      shortcuts={shortcuts}
      pickers={<SlubPickers values={values} update={update} sideBySide={many} />}
      captionNotes={
        <>
          {lab.atEnd && scenario && !many && !embedded && <SlubContrast scenario={scenario} values={values} update={update} />}
          {scenario && values.kernel.every((k) => misfit(scenario, parseKernelVersion(k))) && <SlubMisfit scenario={scenario} values={values} update={update} />}
          {bulkCompare && (
            <p className="lab-figures" data-testid="bulk-compare">
              Bulk free of {bulkCompare.n} objects: {values.bulk[0]} form {bulkCompare.mine} cmpxchg{bulkCompare.mine === 1 ? '' : 's'}; {bulkCompare.otherForm} form{' '}
              {bulkCompare.other} cmpxchg{bulkCompare.other === 1 ? '' : 's'} for the same objects.
            </p>
          )}
        </>
      }
      checkMore={(snap) => {
        const dups = dupCount(snap);
        return dups > 0 ? ` ${dups} object${dups === 1 ? ' is' : 's are'} marked as handed out twice.` : '';
      }}
      legend={
        <SlubLegend
          showFull={showFull}
          setShowFull={setShowFull}
          states={legendStates(shown.map((p) => p.snap), values.variant.includes('plain'))}
          locked={shown.some((p) => p.snap.kernel.hasSheaves)}
          detached={!!first?.script.ops.some((o) => o.kind === 'freeBulk')}
        />
      }
      paneNotes={
        values.kernel.length > 1
          ? lab.panes.map((_, i) => {
              const s = lab.shown?.[i]?.snap;
              return s ? (
                <p key={i} className="lab-figures" data-testid={`slub-compare-${i}`}>
                  {comparisonText(s)}
                </p>
              ) : null;
            })
          : undefined
      }
      paneFigures={figures}
      paneMore={(s, i) => {
        const names = paneNames(i);
        return (
          <>
            {values.kernel.length > 1 && (
              <p className="lab-figures" data-testid={`slub-compare-${i}`}>
                {comparisonText(s)}
              </p>
            )}
            {names && <SlubCounters snap={s} names={names} testId={`slub-counters-${i}`} />}
          </>
        );
      }}
      overlays={overlays}
      panes={{
        testId: 'slub-canvas',
        label: (snap, i) =>
          `SLUB state${many ? ` with ${lab.panes[i]?.label}` : ''} at stop ${lab.stepIndex}: ${snap.ncpus} CPU lanes, ${snap.nslabs} slabs, ${snap.node.nrPartial} on the node partial list. The inspector below describes the selection in words.`,
        onPick: (hit, additive, snap) => {
          if (hit?.cpus) return setAllCpus(hit.cpus === 'show');
          setSheafSel(hit?.sheaf === undefined ? null : (snap.sheaves.sheaf.id[hit.sheaf] ?? null));
          setSheafSlot(hit?.slot ?? -1);
          if (!hit || hit.slab < 0) return setSelection(null);
          const { slab, index } = hit;
          const pfn = snap.slab.pfn[slab] ?? 0;
          if (additive && index >= 0)
            setMarked((m) => {
              const n = new Set(m);
              const k = refKey(pfn, index);
              if (n.has(k)) n.delete(k);
              else n.add(k);
              return n;
            });
          setSelection({ pfn, index });
        },
        onMove: moveSel,
      }}
      inspect={(snap, i) => {
        const slab = selection ? slabIndexOf(snap, selection.pfn) : -1;
        const sheaf = sheafSel === null ? -1 : sheafRecord(snap, sheafSel);
        if (sheaf >= 0) return stepView.describe.hit(snap, { slab, index: slab < 0 ? -1 : (selection?.index ?? -1), sheaf, slot: sheafSlot }, lab.panes[i]?.names ?? null);
        if (!selection || slab < 0) return null;
        return stepView.describe.hit(snap, { slab, index: selection.index }, lab.panes[i]?.names ?? null);
      }}
      inspectHint="Select an object or a slab: click it, or focus the canvas and use the arrow keys."
      inspectorMore={
        <>
          {snap0 && !many && <p className="lab-figures">{figures(snap0)}</p>}
          {snap0 && !many && statNames && <SlubCounters snap={snap0} names={statNames} testId="slub-counters" />}
        </>
      }
      quickOps={<SlubQuickOps cpus={cpus} cpu={cpu} setCpu={setOpCpu} selection={selection} ownerCpu={snap0 && selSlab0 >= 0 ? snap0.slab.cpu[selSlab0] : undefined} onAppend={append} />}
      aside={
        <SandboxOps
          cpu={cpu}
          selection={selection}
          marked={markedRefs}
          bulkForm={values.bulk[0] ?? 'detached'}
          stop={stop0}
          stopCpu={stop0 ? (first?.script.ops[stop0.opIndex]?.cpu ?? 0) : 0}
          canInterrupt={canInterrupt}
          tuning={tuning}
          sheaves={snap0?.kernel.hasSheaves ?? false}
          cpuSlab={!snap0 || eraOf(snap0.kernel) !== 'sheaves'}
          {...(snap0?.numa ? { online: ((snap0.numa.onlineCpus >> cpu) & 1) === 1 } : {})}
          nolock={!!snap0 && snap0.kernel.era >= Era.OPT_IN_SHEAVES}
          rcuNolock={!!snap0 && (snap0.kernel.major > 7 || (snap0.kernel.major === 7 && snap0.kernel.minor >= 3))}
          filledSlots={walkSlots(first?.script.ops.slice(0, keep) ?? []).full}
          onAppend={append}
          onBulkFree={(cpu) => {
            setMarked(new Set());
            append({ kind: 'freeBulk', cpu, refs: markedRefs });
          }}
          onInterrupt={interrupt}
        />
      }
    />
  );
}
