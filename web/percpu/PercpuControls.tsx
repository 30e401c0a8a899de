// PercpuControls.tsx - the percpu view's own controls around the engine's
// frame: the pickers (scenario, units, allocator, or back to one world from
// side by side), the zoom bar, the colour legend, and steps by hand (the
// sandbox: allocate, free the selected area, free a place).

import { useContext, useState } from 'react';
import type { ParamValues } from '../lab/params';
import { ChoicePicker, range, ScenarioPicker } from '../lab/pickers';
import { ThemeContext } from '../lab/theme';
import { ALLOCATOR_TITLES } from './describe';
import type { Zoom } from './layout';
import { legend, palette } from './render';
import { SCENARIOS } from './scenarios';
import { DEFAULT_ALIGN, MAX_AREAS, MAX_SIZE, MAX_UNITS, type FreeStep, type Step } from './script';
import { ALLOCATORS } from './snapshot';
import { SANDBOX, type PERCPU_PARAMS } from './view';
import { numberText as fmt } from '../lab/describe';

type Values = ParamValues<typeof PERCPU_PARAMS>;
type Update = (patch: Partial<Values>) => void;

export function PercpuPickers({ values, update }: { values: Values; update: Update }) {
  const many = values.allocator.length > 1;
  return (
    <>
      <ScenarioPicker scenarios={SCENARIOS} value={values.scenario} sandbox={SANDBOX} onPick={(scenario) => update({ scenario, step: 0, ops: '' })} />
      <ChoicePicker label="Units (CPUs)" value={values.units} choices={range(1, MAX_UNITS)} onPick={(units) => update({ units, step: 0, ...(values.scenario === SANDBOX ? { ops: '' } : {}) })} />
      {many ? (
        <button type="button" onClick={() => update({ allocator: values.allocator.slice(0, 1) })}>
          Show one world
        </button>
      ) : (
        <>
          <ChoicePicker label="Allocator" value={values.allocator[0] ?? ALLOCATORS[0]} choices={ALLOCATORS} text={(a) => ALLOCATOR_TITLES[a]} onPick={(a) => update({ allocator: [a] })} />
          <button type="button" onClick={() => update({ allocator: ALLOCATORS })}>
            Compare all three side by side
          </button>
        </>
      )}
    </>
  );
}

export interface ZoomControls {
  zoom: Zoom;
  unitSize: number;
  zoomIn: () => void;
  zoomOut: () => void;
  whole: () => void;
  panTo: (center: number) => void;
}

export function ZoomBar({ z }: { z: ZoomControls }) {
    return (
    <div className="lab-controls percpu-zoom" role="group" aria-label="Zoom">
      <button type="button" onClick={z.zoomOut} disabled={z.zoom.span >= z.unitSize}>
        Zoom out
      </button>
      <button type="button" onClick={z.zoomIn}>
        Zoom in
      </button>
      <button type="button" onClick={z.whole} disabled={z.zoom.span >= z.unitSize}>
        Whole unit
      </button>
      <label>
        Pan{' '}
        <input
          type="range"
          min={0}
          max={z.unitSize}
          step={4}
          value={z.zoom.from + z.zoom.span / 2}
          disabled={z.zoom.span >= z.unitSize}
          aria-label="Pan along the unit"
          onChange={(e) => z.panTo(Number(e.target.value))}
        />
      </label>
      <span className="lab-position" data-testid="percpu-zoom">
        bytes {fmt(z.zoom.from)} to {fmt(z.zoom.from + z.zoom.span)} of the {fmt(z.unitSize)}-byte unit ({fmt(z.zoom.span / 4)} bits across)
      </span>
    </div>
  );
}

export function PercpuLegend() {
  const theme = useContext(ThemeContext);
  return (
    <>
      <ul className="lab-legend" aria-label="Colours">
        {legend(palette(theme)).map(([color, name]) => (
          <li key={name}>
            <span className="swatch" style={{ background: color }} /> {name}
          </li>
        ))}
      </ul>
      <p className="lab-hint">
        Under each chunk's strip: its own hints, then per metadata block (a page) the contig hint, the scan hint and the left and right free runs; for the area
        map, its entries. The percpu model has no preemption points: Micro-step moves one whole step, as Step does. Keys: + and - zoom, 0 the whole unit,
        &lt; and &gt; pan.
      </p>
    </>
  );
}

/** Steps by hand: each is inserted after the step on screen (the later steps stay) and makes the script a sandbox. */
export function PercpuOps({ units, onAppend, selected }: {
  units: number;
  onAppend: (s: Step) => void;
  /** What a free of the selection would be: by the step that made the area, or by place (null: nothing selected). */
  selected: { area: Omit<FreeStep, 'cpu'> | null; place: { chunk: number; offset: number } | null } | null;
}) {
  const [cpu, setCpu] = useState(0);
  const [size, setSize] = useState(8);
  const [align, setAlign] = useState(8);
  const [count, setCount] = useState(16);
  const [reserved, setReserved] = useState(false);
  const c = Math.min(cpu, units - 1);
  const aligns = Array.from({ length: 13 }, (_, i) => 1 << i);
  return (
    <section className="percpu-ops" aria-labelledby="percpu-ops-title">
      <h3 id="percpu-ops-title">Steps by hand</h3>
      <div className="lab-controls">
        <ChoicePicker label="As CPU" value={c} choices={range(0, units - 1)} onPick={setCpu} />
        <label>
          Size{' '}
          <input type="number" min={1} max={MAX_SIZE} value={size} onChange={(e) => setSize(Math.max(1, Math.min(MAX_SIZE, Number(e.target.value) || 1)))} />
        </label>
        <ChoicePicker label="Align" value={align} choices={aligns} onPick={setAlign} />
        <label>
          Areas{' '}
          <input type="number" min={1} max={MAX_AREAS} value={count} onChange={(e) => setCount(Math.max(1, Math.min(MAX_AREAS, Number(e.target.value) || 1)))} />
        </label>
        <label>
          <input type="checkbox" checked={reserved} onChange={(e) => setReserved(e.target.checked)} /> reserved
        </label>
        <button type="button" onClick={() => onAppend({ kind: 'alloc', cpu: c, size, align: align || DEFAULT_ALIGN, count, reserved })}>
          Allocate
        </button>
      </div>
      <div className="lab-controls">
        <button type="button" disabled={!selected?.area} onClick={() => selected?.area && onAppend({ ...selected.area, cpu: c })}>
          Free the selected area
        </button>
        <button type="button" disabled={!selected?.place} onClick={() => selected?.place && onAppend({ kind: 'freeAt', cpu: c, ...selected.place })}>
          Free at the selected place
        </button>
      </div>
      <p className="lab-hint">
        "Free the selected area" names it by the step that allocated it, so each world side by side frees its own; "free at the selected place" passes
        the offset as it is, the way to try a free of a free area or of the middle of one (the model refuses it and says why).
      </p>
    </section>
  );
}
