// SlubView.tsx - the SLUB view: a scenario or a hand-made script, replayed
// step by step in the bridge worker (session.ts), drawn on a canvas, with the
// controls, the inspector, the caption and the event timeline around it.
// Its whole state is in the URL (scenario or script, CPUs, variant, bulk
// form, step); selection is the only local state.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { UrlState } from '../app/url-state';
import { useShortcuts, type Shortcut } from '../app/shortcuts';
import { getBridge } from '../core/bridge';
import { decodeEvents, type SlEvent } from '../core/events.generated';
import { describeBridgeError, type CoreState } from '../core/use-core';
import { BridgeError } from '../core/bridge';
import { describeEvent, describeObject, describeSlab, EVENT_GROUPS, eventGroup, OpNames, type EventGroup } from './describe';
import type { Layout } from './layout';
import type { LoadReply, Stop } from './protocol';
import { COLORS, refKey, STATE_COLORS, STATE_NAMES, type Overlay } from './render';
import { scenarioById, scenarioConfig, SCENARIOS } from './scenarios';
import { describeOp, detachedGroups, POINT_TEXT, PreemptPoint, type AnyRef, type ObjRef, type Script, type ScriptOp } from './script';
import { SlabCanvas } from './SlabCanvas';
import { decodeSnapshot, slabIndexOf, stat, type SlubSnapshot } from './snapshot';
import { parseScript, SANDBOX, scriptToText } from './url';
import './slub.css';

export const STEP_END = 1_000_000;

interface Loaded {
  key: string;
  reply: LoadReply;
  events: SlEvent[];
  captions: string[];
  intro: string;
  outro: string;
  names: OpNames;
}

interface Current {
  key: string;
  stop: number;
  snapshot: SlubSnapshot;
  check: { rc: number; message: string } | null;
}

interface Selection {
  pfn: number;
  index: number;
}

/** What the canvas shows, as data, for tests and tools (window.__slablabSlub). */
export interface SlubTestHook {
  ready: boolean;
  stop: number;
  stops: number;
  caption: string;
  check: string;
  cpus: { tid: number; freelistLength: number; slabPfn: number | null; partial: number }[];
  nodePartial: number[];
  slabs: { pfn: number; list: number; cpu: number; inuse: number; objects: number; frozen: boolean }[];
  dupObjects: number;
  stats: Record<string, number>;
  opResults: number[];
  otherBulkResults: number[];
}
declare global {
  interface Window {
    __slablabSlub?: SlubTestHook;
  }
}

export interface SlubViewProps {
  core: CoreState;
  state: UrlState;
  update: (p: Partial<UrlState>) => void;
  embedded?: boolean;
}

function errorText(e: unknown): string {
  return e instanceof BridgeError ? describeBridgeError(e) : e instanceof Error ? e.message : String(e);
}

export function SlubView({ core, state, update, embedded = false }: SlubViewProps) {
  const cpus = Math.max(2, state.cpus);
  const scenario = scenarioById(state.scenario);
  const sandbox = state.scenario === SANDBOX;
  const key = `${state.scenario}|${cpus}|${state.variant}|${state.bulk}|${sandbox ? state.ops : ''}`;
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [current, setCurrent] = useState<Current | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(2);
  const [selection, setSelection] = useState<Selection | null>(null);
  const [marked, setMarked] = useState<ReadonlySet<string>>(new Set());
  const [showFull, setShowFull] = useState(true);
  const [opCpu, setOpCpu] = useState(0);
  const [bulkN, setBulkN] = useState(8);

  // Load the scenario or script whenever what defines it changes.
  useEffect(() => {
    if (core.status !== 'ready') return;
    let live = true;
    setError(null);
    (async () => {
      const bridge = getBridge();
      const config = scenarioConfig(scenario, cpus, state.variant, state.bulk);
      let script: Script<AnyRef>;
      let captions: string[];
      let intro: string;
      let outro: string;
      if (scenario) {
        const g = await bridge.request('slubGeometry', { objectSize: config.objectSize, cpus });
        const story = scenario.build({ cpus, objects: g.objects });
        ({ script, captions, intro, outro } = story);
      } else {
        const p = parseScript(state.ops, cpus);
        if (!p.ok) throw new Error(`the script in the URL cannot run with ${cpus} CPUs: ${p.error}`);
        script = p.script;
        captions = script.ops.map((o) => `You: ${describeOp(o)}.`);
        intro = 'Sandbox: add operations with the buttons below; select objects on the canvas to free them.';
        outro = '';
      }
      const reply = await bridge.request('slubLoad', { config, script });
      if (!live) return;
      setLoaded({ key, reply, events: decodeEvents(reply.events), captions, intro, outro, names: new OpNames(reply.ops, reply.script) });
    })().catch((e: unknown) => live && setError(errorText(e)));
    return () => {
      live = false;
    };
    // `key` stands for every input of the load (scenario, CPUs, variant, bulk form, script).
  }, [core.status, key]);

  const stops: Stop[] = loaded?.key === key ? loaded.reply.stops : [];
  const stepIndex = stops.length ? Math.min(state.step, stops.length - 1) : 0;
  const stepProblem =
    stops.length && state.step >= stops.length && state.step !== STEP_END
      ? `URL parameter step=${state.step} is past the end of this story (${stops.length} steps, 0 to ${stops.length - 1}): showing the last.`
      : null;

  // Fetch the state at the current stop.
  useEffect(() => {
    if (!loaded || loaded.key !== key) return;
    let live = true;
    getBridge()
      .request('slubAt', { stop: stepIndex })
      .then((r) => {
        if (live) setCurrent({ key, stop: stepIndex, snapshot: decodeSnapshot(r.snapshot), check: r.check });
      })
      .catch((e: unknown) => live && setError(errorText(e)));
    return () => {
      live = false;
    };
  }, [loaded, key, stepIndex]);

  const go = useCallback((i: number) => update({ step: Math.max(0, Math.min(i, Math.max(0, stops.length - 1))) }), [update, stops.length]);
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

  // Play: one stop (micro-steps included) per tick.
  useEffect(() => {
    if (!playing) return;
    if (atEnd) {
      setPlaying(false);
      return;
    }
    const t = setTimeout(() => go(stepIndex + 1), 1000 / speed);
    return () => clearTimeout(t);
  }, [playing, atEnd, stepIndex, speed, go]);

  const snap = current?.key === key ? current.snapshot : null;
  const stop = stops[stepIndex];
  const selSlab = snap && selection ? slabIndexOf(snap, selection.pfn) : -1;

  // Selection moves (keyboard on the canvas, and [ ] { } anywhere).
  const moveSel = useCallback(
    (dx: number, dy: number, layout?: Layout) => {
      if (!snap || snap.nslabs === 0) return;
      const order = layout ? layout.boxes.map((b) => b.slab) : Array.from({ length: snap.nslabs }, (_, i) => i);
      if (!order.length) return;
      let pos = Math.max(0, order.indexOf(selSlab));
      let index = selection?.index ?? -1;
      if (dy) {
        pos = (pos + dy + order.length) % order.length;
        index = -1;
      } else if (selSlab < 0) {
        index = 0;
      } else {
        index = Math.max(-1, Math.min(snap.geometry.objects - 1, index + dx));
      }
      const slab = order[pos] ?? 0;
      setSelection({ pfn: snap.slab.pfn[slab] ?? 0, index });
    },
    [snap, selSlab, selection],
  );

  // Editing the script: ops go after the current step; later ones are dropped.
  const edit = useCallback(
    (f: (s: Script) => Script, step: number) => {
      if (!loaded) return;
      const text = scriptToText(f(loaded.reply.script));
      setPlaying(false);
      update({ scenario: SANDBOX, ops: text, step });
    },
    [loaded, update],
  );
  const append = useCallback(
    (op: ScriptOp) =>
      edit((s) => {
        const keep = stop ? (stop.micro ? stop.opIndex + 1 : stop.ops) : 0;
        return { ops: [...s.ops.slice(0, keep), op], irqs: s.irqs.filter((q) => q.atOp < keep) };
      }, STEP_END),
    [edit, stop],
  );
  const canInterrupt = !!stop && stop.micro > 0 && !stop.inHandler && (loaded?.reply.script.irqs.length ?? 8) < 8;
  const interrupt = useCallback(
    (handler: ScriptOp['kind'], refs?: ObjRef[]) => {
      if (!stop || !canInterrupt) return;
      edit(
        (s) => ({
          ops: s.ops,
          irqs: [...s.irqs, { atOp: stop.opIndex, point: stop.point, nth: stop.arrival, handler: refs ? { kind: handler, refs } : { kind: handler } }],
        }),
        stepIndex,
      );
    },
    [stop, canInterrupt, edit, stepIndex],
  );

  const shortcuts = useMemo<Shortcut[]>(
    () => [
      { key: ' ', description: 'Space: play or pause', run: () => setPlaying((p) => !p) },
      { key: 'ArrowRight', description: 'Step: one operation forward', run: nextOp },
      { key: 'ArrowLeft', description: 'Back: one operation backward (replayed)', run: prevOp },
      { key: '.', description: 'Micro-step: to the next preemption point', run: () => go(stepIndex + 1) },
      { key: ',', description: 'Micro-step back', run: () => go(stepIndex - 1) },
      { key: 'r', description: 'Reset to the start', run: () => go(0) },
      { key: ']', description: 'Select the next object (arrows do this when the canvas has focus)', run: () => moveSel(1, 0) },
      { key: '[', description: 'Select the previous object', run: () => moveSel(-1, 0) },
      { key: '}', description: 'Select the next slab', run: () => moveSel(0, 1) },
      { key: '{', description: 'Select the previous slab', run: () => moveSel(0, -1) },
    ],
    [nextOp, prevOp, go, stepIndex, moveSel],
  );
  useShortcuts(shortcuts);

  // The detached freelist being built at a BULK_GROUP micro-step.
  const detached = useMemo<ObjRef[] | null>(() => {
    if (!loaded || !stop || stop.micro === 0 || stop.point !== PreemptPoint.BULK_GROUP) return null;
    let built: SlEvent | undefined;
    for (let j = stop.eventCount - 1; j >= 0; j--) {
      const e = loaded.events[j];
      if (e?.kind === 121) {
        built = e;
        break;
      }
    }
    const op = loaded.reply.script.ops[stop.opIndex];
    if (!built || !op?.refs) return null;
    const g = detachedGroups(op.refs).find((x) => x.chain[0]?.pfn === built.slab && x.chain[0]?.index === built.obj);
    return g ? g.chain : null;
  }, [loaded, stop]);

  const overlay = useMemo<Overlay>(
    () => ({
      selected: selSlab >= 0 && selection ? { slab: selSlab, index: selection.index } : null,
      marked,
      detached,
      arrows: 'all',
    }),
    [selSlab, selection, marked, detached],
  );

  // Caption.
  let caption = '';
  if (loaded && stop) {
    if (stop.opIndex < 0) caption = loaded.intro;
    else {
      const opCaption = loaded.captions[stop.opIndex] ?? '';
      const cpu = loaded.reply.script.ops[stop.opIndex]?.cpu ?? 0;
      if (stop.micro > 0)
        caption = `Micro-step ${stop.micro}, inside step ${stop.opIndex + 1}${stop.inHandler ? ' (in the interrupt handler)' : ''}: CPU ${cpu} is in ${POINT_TEXT[stop.point] ?? `point ${stop.point}`}. ${opCaption}`;
      else {
        const info = loaded.reply.ops[stop.opIndex];
        const failed = info && info.result < 0 ? ` It failed: ${info.error}.` : '';
        caption = `Step ${stop.opIndex + 1} of ${loaded.reply.ops.length}: ${opCaption}${failed}`;
      }
      if (atEnd && loaded.outro) caption += ` ${loaded.outro}`;
    }
  }
  const bulkCompare = useMemo(() => {
    if (!loaded) return null;
    const i = loaded.reply.script.ops.findIndex((o) => o.kind === 'freeBulk');
    if (i < 0) return null;
    const mine = loaded.reply.ops[i]?.result ?? 0;
    const other = loaded.reply.otherBulkForm.results[i] ?? 0;
    const n = loaded.reply.script.ops[i]?.refs?.length ?? 0;
    return { n, mine, other, otherForm: loaded.reply.otherBulkForm.form };
  }, [loaded]);

  const checkText = current?.check && current.check.rc !== 0 ? `The checker (validate) flags a corruption: ${current.check.message}` : '';
  let dups = 0;
  if (snap) for (let i = 0; i < snap.nobj; i++) if (snap.obj.state[i] === 5) dups++;

  // The test hook: the same state the canvas draws.
  useEffect(() => {
    // Ready only once the snapshot of the stop on screen has arrived: the
    // previous one stays drawn meanwhile, but tests must not read it.
    if (!snap || !loaded || current?.stop !== stepIndex) {
      window.__slablabSlub = { ...(window.__slablabSlub as SlubTestHook), ready: false };
      return;
    }
    const stats: Record<string, number> = {};
    for (const n of ['ALLOC_FASTPATH', 'ALLOC_SLOWPATH', 'FREE_FASTPATH', 'FREE_SLOWPATH', 'CMPXCHG_DOUBLE_CPU_FAIL', 'ALLOC_FROM_PARTIAL', 'CPU_PARTIAL_ALLOC', 'ALLOC_SLAB', 'ALLOC_REFILL', 'BULK_FREE_CAS', 'FREE_FROZEN'] as const)
      stats[n] = stat(snap, n);
    window.__slablabSlub = {
      ready: true,
      stop: stepIndex,
      stops: stops.length,
      caption,
      check: checkText,
      cpus: snap.cpus.map((c) => ({ tid: c.tid, freelistLength: c.freelistLength, slabPfn: c.slabPfn === 0xffffffff ? null : c.slabPfn, partial: c.partialCount })),
      nodePartial: snap.nodePartial.map((i) => snap.slab.pfn[i] ?? 0),
      slabs: Array.from({ length: snap.nslabs }, (_, i) => ({
        pfn: snap.slab.pfn[i] ?? 0,
        list: snap.slab.list[i] ?? 0,
        cpu: snap.slab.cpu[i] ?? 255,
        inuse: snap.slab.inuse[i] ?? 0,
        objects: snap.slab.objects[i] ?? 0,
        frozen: (snap.slab.frozen[i] ?? 0) !== 0,
      })),
      dupObjects: dups,
      stats,
      opResults: loaded.reply.ops.map((o) => o.result),
      otherBulkResults: loaded.reply.otherBulkForm.results,
    };
  });

  if (core.status !== 'ready') return null;

  const inspector =
    snap && selSlab >= 0 && selection
      ? selection.index < 0
        ? describeSlab(snap, selSlab)
        : describeObject(snap, selSlab, selection.index, loaded?.names ?? null)
      : 'Select an object or a slab: click it, or focus the canvas and use the arrow keys.';
  const selOwnerCpu = snap && selSlab >= 0 ? snap.slab.cpu[selSlab] : undefined;

  return (
    <section className="slub-view" aria-labelledby="slub-title" data-testid="slub-view">
      {!embedded && (
        <div className="slub-pickers">
          <h2 id="slub-title">SLUB {scenario ? `· ${scenario.title}` : '· sandbox'}</h2>
          <label>
            Scenario{' '}
            <select value={state.scenario} onChange={(e) => update({ scenario: e.target.value, step: 0, ops: '' })}>
              {SCENARIOS.map((s, i) => (
                <option key={s.id} value={s.id}>
                  {i + 1}. {s.title}
                </option>
              ))}
              <option value={SANDBOX}>Sandbox (your own steps)</option>
            </select>
          </label>
          <label>
            CPUs{' '}
            <select value={cpus} onChange={(e) => update({ cpus: Number(e.target.value), step: 0, ...(sandbox ? { ops: '' } : {}) })}>
              {[2, 3, 4, 5, 6, 7, 8].map((n) => (
                <option key={n}>{n}</option>
              ))}
            </select>
          </label>
          <label>
            Fast path{' '}
            <select value={state.variant} onChange={(e) => update({ variant: e.target.value as UrlState['variant'] })}>
              <option value="cmpxchg">cmpxchg (kernel)</option>
              <option value="locked">locked cmpxchg</option>
              <option value="plain">plain writes (RFC)</option>
            </select>
          </label>
          <label>
            Bulk free{' '}
            <select value={state.bulk} onChange={(e) => update({ bulk: e.target.value as UrlState['bulk'] })}>
              <option value="detached">detached freelist</option>
              <option value="fallback">fallback</option>
            </select>
          </label>
        </div>
      )}
      {embedded && <h2 id="slub-title" className="visually-hidden">SLUB view</h2>}
      {stepProblem && (
        <div className="alert alert-warn" role="alert" data-testid="step-problem">
          {stepProblem}
        </div>
      )}
      {error && (
        <div className="alert alert-error" role="alert" data-testid="slub-error">
          {error}
        </div>
      )}

      <div className="slub-controls" role="toolbar" aria-label="Playback">
        <button type="button" onClick={() => go(0)} disabled={stepIndex === 0}>
          Reset
        </button>
        <button type="button" onClick={prevOp} disabled={stepIndex === 0}>
          Back
        </button>
        <button type="button" onClick={() => setPlaying((p) => !p)} disabled={atEnd && !playing}>
          {playing ? 'Pause' : 'Play'}
        </button>
        <button type="button" onClick={() => go(stepIndex + 1)} disabled={atEnd}>
          Micro-step
        </button>
        <button type="button" onClick={nextOp} disabled={atEnd}>
          Step
        </button>
        {!embedded && (
          <label className="slub-speed">
            Speed{' '}
            <input type="range" min={0.5} max={12} step={0.5} value={speed} aria-label="Speed (steps per second)" onChange={(e) => setSpeed(Number(e.target.value))} />
            <span>{speed}/s</span>
          </label>
        )}
        <span className="slub-position" data-testid="slub-position" aria-live="polite">
          {stops.length ? `stop ${stepIndex} of ${stops.length - 1}${stop && stop.micro ? ` · micro-step ${stop.micro}` : ''}` : 'loading…'}
        </span>
      </div>

      <p className="slub-caption" data-testid="slub-caption" aria-live="polite">
        {caption}
      </p>
      {atEnd && scenario?.contrast && (
        <p>
          <button
            type="button"
            onClick={() =>
              update({
                ...(scenario.contrast?.fastpath ? { variant: state.variant === scenario.contrast.fastpath ? scenario.defaultFastpath : scenario.contrast.fastpath } : {}),
                ...(scenario.contrast?.bulkFree ? { bulk: state.bulk === scenario.contrast.bulkFree ? scenario.defaultBulk : scenario.contrast.bulkFree } : {}),
                step: 0,
              })
            }
          >
            {state.variant === scenario.contrast.fastpath || state.bulk === scenario.contrast.bulkFree ? 'Replay with the kernel\'s version' : scenario.contrast.label}
          </button>
        </p>
      )}
      {bulkCompare && (
        <p className="slub-figures" data-testid="bulk-compare">
          Bulk free of {bulkCompare.n} objects: {state.bulk} form {bulkCompare.mine} cmpxchg{bulkCompare.mine === 1 ? '' : 's'}; {bulkCompare.otherForm} form{' '}
          {bulkCompare.other} cmpxchg{bulkCompare.other === 1 ? '' : 's'} for the same objects.
        </p>
      )}
      {checkText && (
        <div className="alert alert-error" role="alert" data-testid="slub-check">
          {checkText}
          {dups > 0 && ` ${dups} object${dups === 1 ? ' is' : 's are'} marked as handed out twice.`}
        </div>
      )}

      <ul className="slub-legend" aria-label="Colours">
        {STATE_NAMES.map((n, i) => (
          <li key={n}>
            <span className="swatch" style={{ background: STATE_COLORS[i] }} /> {n}
          </li>
        ))}
        <li>
          <span className="swatch" style={{ background: COLORS.detached }} /> detached freelist / marked for bulk free
        </li>
        <li>
          <label>
            <input type="checkbox" checked={showFull} onChange={(e) => setShowFull(e.target.checked)} /> show full slabs
          </label>
        </li>
      </ul>

      {snap && (
        <SlabCanvas
          snapshot={snap}
          overlay={overlay}
          showFull={showFull}
          label={`SLUB state at stop ${stepIndex}: ${snap.ncpus} CPU lanes, ${snap.nslabs} slabs, ${snap.node.nrPartial} on the node partial list. The inspector below describes the selection in words.`}
          onPick={(hit, additive) => {
            if (!hit) return setSelection(null);
            const pfn = snap.slab.pfn[hit.slab] ?? 0;
            if (additive && hit.index >= 0) {
              const k = refKey(pfn, hit.index);
              setMarked((m) => {
                const n = new Set(m);
                if (n.has(k)) n.delete(k);
                else n.add(k);
                return n;
              });
            }
            setSelection({ pfn, index: hit.index });
          }}
          onMove={(dx, dy, layout) => moveSel(dx, dy, layout)}
        />
      )}

      <div className="slub-bottom">
        <section className="slub-inspector" aria-labelledby="inspector-title">
          <h3 id="inspector-title">Inspector</h3>
          <p aria-live="polite" data-testid="inspector">
            {inspector}
          </p>
          {snap && (
            <p className="slub-figures">
              Cache: {snap.geometry.objectSize}-byte objects in {snap.geometry.size}-byte slots, {snap.geometry.objects} per order-{snap.geometry.order} slab; TID_STEP{' '}
              {snap.geometry.tidStep}; fast path {snap.geometry.fastpath}; bulk free {snap.geometry.bulkFree}. Fast-path allocs {stat(snap, 'ALLOC_FASTPATH')}, slow{' '}
              {stat(snap, 'ALLOC_SLOWPATH')}; cmpxchg retries {stat(snap, 'CMPXCHG_DOUBLE_CPU_FAIL') + stat(snap, 'CMPXCHG_DOUBLE_FAIL')}.
            </p>
          )}
        </section>
        {!embedded && (
          <section className="slub-ops" aria-labelledby="ops-title">
            <h3 id="ops-title">Operations by hand</h3>
            <p className="hint">Added after the current step (later steps are dropped); the session becomes a sandbox, still in the URL.</p>
            <label>
              As CPU{' '}
              <select value={Math.min(opCpu, cpus - 1)} onChange={(e) => setOpCpu(Number(e.target.value))}>
                {Array.from({ length: cpus }, (_, k) => (
                  <option key={k} value={k}>
                    {k}
                  </option>
                ))}
              </select>
            </label>
            <div className="slub-op-buttons">
              <button type="button" onClick={() => append({ kind: 'alloc', cpu: Math.min(opCpu, cpus - 1) })}>
                Alloc on CPU {Math.min(opCpu, cpus - 1)}
              </button>
              <button
                type="button"
                disabled={!selection || selection.index < 0}
                onClick={() => selection && append({ kind: 'free', cpu: Math.min(opCpu, cpus - 1), refs: [{ pfn: selection.pfn, index: selection.index }] })}
              >
                Free selected from CPU {Math.min(opCpu, cpus - 1)}
                {selOwnerCpu !== undefined && selOwnerCpu !== 255 && selOwnerCpu !== Math.min(opCpu, cpus - 1) ? ' (remote)' : ''}
              </button>
              <label>
                N <input type="number" min={1} max={1024} value={bulkN} onChange={(e) => setBulkN(Math.max(1, Math.min(1024, Number(e.target.value) || 1)))} aria-label="Bulk count" />
              </label>
              <button type="button" onClick={() => append({ kind: 'allocBulk', cpu: Math.min(opCpu, cpus - 1), count: bulkN })}>
                Bulk alloc {bulkN}
              </button>
              <button
                type="button"
                disabled={marked.size === 0}
                onClick={() => {
                  const refs = [...marked].map((k) => {
                    const [pfn, index] = k.split(':').map(Number);
                    return { pfn: pfn ?? 0, index: index ?? 0 };
                  });
                  setMarked(new Set());
                  append({ kind: 'freeBulk', cpu: Math.min(opCpu, cpus - 1), refs });
                }}
              >
                Bulk free {marked.size} marked ({state.bulk})
              </button>
              <button type="button" onClick={() => append({ kind: 'flush', cpu: Math.min(opCpu, cpus - 1) })}>
                Flush CPU {Math.min(opCpu, cpus - 1)}
              </button>
              <button type="button" disabled={!canInterrupt} onClick={() => interrupt('alloc')}>
                Interrupt here: alloc
              </button>
              <button
                type="button"
                disabled={!canInterrupt || !selection || selection.index < 0}
                onClick={() => selection && interrupt('free', [{ pfn: selection.pfn, index: selection.index }])}
              >
                Interrupt here: free selected
              </button>
            </div>
            <p className="hint">
              Shift-click objects to mark them for a bulk free. An interrupt runs on the CPU of the operation at the current micro-step{stop && stop.micro > 0 && !stop.inHandler ? ` (CPU ${loaded?.reply.script.ops[stop.opIndex]?.cpu ?? 0})` : ': micro-step into an operation first'}.
            </p>
          </section>
        )}
      </div>

      {loaded && <Timeline loaded={loaded} stops={stops} stepIndex={stepIndex} cpus={cpus} onJump={go} />}
    </section>
  );
}

function Timeline({ loaded, stops, stepIndex, cpus, onJump }: { loaded: Loaded; stops: Stop[]; stepIndex: number; cpus: number; onJump: (stop: number) => void }) {
  const [cpuOn, setCpuOn] = useState<boolean[]>(() => new Array<boolean>(8).fill(true));
  const [group, setGroup] = useState<EventGroup | 'all'>('all');
  const now = stops[stepIndex]?.eventCount ?? 0;
  const listRef = useRef<HTMLOListElement>(null);
  const rows = useMemo(
    () =>
      loaded.events
        .map((e, j) => ({ e, j }))
        .filter(({ e }) => (cpuOn[e.cpu] ?? true) && (group === 'all' || eventGroup(e.kind) === group))
        .slice(0, 3000),
    [loaded, cpuOn, group],
  );
  useEffect(() => {
    listRef.current?.querySelector('.now')?.scrollIntoView({ block: 'nearest' });
  }, [now]);
  const jump = (j: number) => {
    const i = stops.findIndex((s) => s.eventCount >= j + 1);
    onJump(i < 0 ? stops.length - 1 : i);
  };
  return (
    <section className="slub-timeline" aria-labelledby="timeline-title">
      <h3 id="timeline-title">Events</h3>
      <div className="slub-timeline-filters">
        {Array.from({ length: cpus }, (_, k) => (
          <label key={k}>
            <input type="checkbox" checked={cpuOn[k] ?? true} onChange={(e) => setCpuOn((c) => c.map((v, i) => (i === k ? e.target.checked : v)))} /> CPU {k}
          </label>
        ))}
        <label>
          Kind{' '}
          <select value={group} onChange={(e) => setGroup(e.target.value as EventGroup | 'all')} aria-label="Event kind">
            <option value="all">all</option>
            {Object.entries(EVENT_GROUPS).map(([k, v]) => (
              <option key={k} value={k}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <span>
          {rows.length} of {loaded.events.length} events
        </span>
      </div>
      <ol className="slub-events" ref={listRef} data-testid="timeline">
        {rows.map(({ e, j }) => (
          <li key={j} className={j < now ? (j === now - 1 ? 'past now' : 'past') : 'future'}>
            <button type="button" onClick={() => jump(j)}>
              <span className="ev-cpu">CPU {e.cpu}</span> {describeEvent(e, loaded.names)}
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
