// SlabControls.tsx - the SLAB view's own controls around the engine's frame:
// the pickers (scenario, rules, object size, kernel version, CPUs), the
// colour legend, and the operations by hand of the sandbox.

import { useState } from 'react';
import { ChoicePicker, range, ScenarioPicker } from '../lab/pickers';
import { PLACE_NAMES } from './places';
import { COLORS, PLACE_COLORS } from './render';
import { scenarioById, SCENARIOS } from './scenarios';
import { MAX_COUNT, type PlaceRef, type ScriptOp } from './script';
import { KERNEL_LAST } from './slab-api';
import { RULES_CHOICES, SANDBOX, type SlabValues } from './view';

type Update = (patch: Partial<SlabValues>) => void;

/** The kernels SLAB is modelled for, newest first. */
const KERNELS = [
  ...Array.from({ length: 8 }, (_, k) => `6.${7 - k}`),
  ...Array.from({ length: 20 }, (_, k) => `5.${19 - k}`),
  ...Array.from({ length: 11 }, (_, k) => `4.${20 - k}`),
];
const SIZES = [32, 48, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096];
const RULES_TEXT: Record<(typeof RULES_CHOICES)[number], string> = { before: 'before OBJFREELIST', after: 'after OBJFREELIST', both: 'both, side by side' };

export function SlabPickers({ values, update }: { values: SlabValues; update: Update }) {
  const sizes = SIZES.includes(values.size) ? SIZES : [...SIZES, values.size].sort((a, b) => a - b);
  return (
    <>
      <ScenarioPicker scenarios={SCENARIOS} value={values.scenario} sandbox={SANDBOX} onPick={(scenario) => update({ scenario, step: 0, ops: '' })} />
      <ChoicePicker label="Rules" value={values.rules} choices={RULES_CHOICES} text={(r) => RULES_TEXT[r]} onPick={(rules) => update({ rules, step: 0 })} />
      <ChoicePicker label="Size" value={values.size} choices={sizes} text={(n) => `${n} B`} onPick={(size) => update({ size, step: 0, ...(values.scenario === SANDBOX ? { ops: '' } : {}) })} />
      <ChoicePicker label="Kernel" value={values.kernel} choices={KERNELS} text={(k) => (k === KERNEL_LAST ? `${k} (last SLAB)` : k)} onPick={(kernel) => update({ kernel, step: 0 })} />
      <ChoicePicker label="CPUs" value={values.cpus} choices={range(1, 8)} onPick={(cpus) => update({ cpus, step: 0, ...(values.scenario === SANDBOX ? { ops: '' } : {}) })} />
    </>
  );
}

export function SlabLegend() {
  return (
    <ul className="lab-legend" aria-label="Colours">
      {PLACE_NAMES.map((n, i) => (
        <li key={n}>
          <span className="swatch" style={{ background: PLACE_COLORS[i] }} /> {n}
        </li>
      ))}
      <li>
        <span className="swatch" style={{ background: COLORS.colourOffset }} /> colour offset · <span className="swatch" style={{ background: COLORS.leftover }} /> left over
      </li>
      <li>
        <span className="swatch" style={{ background: 'var(--canvas-selected)' }} /> batchcount mark, active cursor
      </li>
      <li>
        <span className="swatch" style={{ background: COLORS.moved }} /> moved by this step
      </li>
    </ul>
  );
}

export interface SlabOpsProps {
  cpus: number;
  size: number;
  cacheName: string;
  /** The selected object, named by place. */
  selection: PlaceRef | null;
  onAppend: (op: ScriptOp) => void;
}

/** Operations by hand, added after the current step (the session becomes a sandbox whose script is in the URL). */
export function SlabOps(p: SlabOpsProps) {
  const [opCpu, setOpCpu] = useState(0);
  const [count, setCount] = useState(1);
  const [ms, setMs] = useState(2000);
  const cpu = Math.min(opCpu, p.cpus - 1);
  const sel = p.selection;
  return (
    <section className="slab-ops" aria-labelledby="slab-ops-title">
      <h3 id="slab-ops-title">Operations by hand</h3>
      <p className="lab-hint">Inserted after the current step (the later steps stay); the session becomes a sandbox, still in the URL.</p>
      <div className="slab-op-buttons">
        <ChoicePicker label="As CPU" value={cpu} choices={range(0, p.cpus - 1)} onPick={setOpCpu} />
        <label>
          Times <input type="number" min={1} max={MAX_COUNT} value={count} aria-label="Times" onChange={(e) => setCount(Math.max(1, Math.min(MAX_COUNT, Math.floor(Number(e.target.value)) || 1)))} />
        </label>
        <button type="button" onClick={() => p.onAppend({ kind: 'kmalloc', cpu, size: p.size, count })}>
          kmalloc({p.size}) on CPU {cpu}
        </button>
        <button type="button" onClick={() => p.onAppend({ kind: 'alloc', cpu, cache: 0, count })}>
          kmem_cache_alloc({p.cacheName}) on CPU {cpu}
        </button>
        <button type="button" disabled={!sel} onClick={() => sel && p.onAppend({ kind: 'free', cpu, refs: [sel] })}>
          Free selected on CPU {cpu}
        </button>
        <button type="button" onClick={() => p.onAppend({ kind: 'drain', cpu })}>
          Drain CPU {cpu}
        </button>
        <label>
          at <input type="number" min={0} max={86_400_000} step={1000} value={ms} aria-label="Reap time in ms" onChange={(e) => setMs(Math.max(0, Math.floor(Number(e.target.value)) || 0))} /> ms
        </label>
        <button type="button" onClick={() => p.onAppend({ kind: 'reap', cpu, ms })}>
          cache_reap on CPU {cpu}
        </button>
        <button type="button" onClick={() => p.onAppend({ kind: 'shrink', cpu: 0 })}>
          Shrink
        </button>
      </div>
      <p className="lab-hint">Select an object on the canvas (or an array slot holding one) to free it.</p>
    </section>
  );
}

/** The scenario's title, or the sandbox's. */
export const scenarioTitle = (id: string) => scenarioById(id)?.title ?? 'sandbox';
