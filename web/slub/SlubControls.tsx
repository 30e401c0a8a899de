// SlubControls.tsx - the SLUB view's own controls around the engine's frame:
// the pickers (scenario, CPUs, fast path, bulk-free form, or back to one
// world from side by side), the contrast a story invites at its end, and the
// colour legend with the "show full slabs" switch.

import type { ParamValues } from '../lab/params';
import { NumberPicker, range, ScenarioPicker } from '../lab/pickers';
import { COLORS, STATE_COLORS, STATE_NAMES } from './render';
import type { Scenario } from './scenarios';
import { SCENARIOS } from './scenarios';
import { SANDBOX, type SLUB_PARAMS } from './view';

type Values = ParamValues<typeof SLUB_PARAMS>;
type Update = (patch: Partial<Values>) => void;

export function SlubPickers({ values, update, sideBySide }: { values: Values; update: Update; sideBySide: boolean }) {
  return (
    <>
      <ScenarioPicker scenarios={SCENARIOS} value={values.scenario} sandbox={SANDBOX} onPick={(scenario) => update({ scenario, step: 0, ops: '' })} />
      <NumberPicker label="CPUs" value={values.cpus} choices={range(2, 8)} onPick={(cpus) => update({ cpus, step: 0, ...(values.scenario === SANDBOX ? { ops: '' } : {}) })} />
      {sideBySide ? (
        <button type="button" onClick={() => update({ variant: values.variant.slice(0, 1), bulk: values.bulk.slice(0, 1) })}>
          Show one world
        </button>
      ) : (
        <>
          <label>
            Fast path{' '}
            <select value={values.variant[0]} onChange={(e) => update({ variant: [e.target.value as Values['variant'][number]] })}>
              <option value="cmpxchg">cmpxchg (kernel)</option>
              <option value="locked">locked cmpxchg</option>
              <option value="plain">plain writes (RFC)</option>
            </select>
          </label>
          <label>
            Bulk free{' '}
            <select value={values.bulk[0]} onChange={(e) => update({ bulk: [e.target.value as Values['bulk'][number]] })}>
              <option value="detached">detached freelist</option>
              <option value="fallback">fallback</option>
            </select>
          </label>
        </>
      )}
    </>
  );
}

/** At a story's end: replay it with the variant it contrasts, or show both side by side. */
export function SlubContrast({ scenario, values, update }: { scenario: Scenario; values: Values; update: Update }) {
  const c = scenario.contrast;
  if (!c) return null;
  const on = (c.fastpath !== undefined && values.variant[0] === c.fastpath) || (c.bulkFree !== undefined && values.bulk[0] === c.bulkFree);
  return (
    <p>
      <button
        type="button"
        onClick={() =>
          update({
            ...(c.fastpath ? { variant: [values.variant[0] === c.fastpath ? scenario.defaultFastpath : c.fastpath] } : {}),
            ...(c.bulkFree ? { bulk: [values.bulk[0] === c.bulkFree ? scenario.defaultBulk : c.bulkFree] } : {}),
            step: 0,
          })
        }
      >
        {on ? "Replay with the kernel's version" : c.label}
      </button>{' '}
      <button
        type="button"
        onClick={() =>
          update({
            ...(c.fastpath ? { variant: [scenario.defaultFastpath, c.fastpath] } : {}),
            ...(c.bulkFree ? { bulk: [scenario.defaultBulk, c.bulkFree] } : {}),
            step: 0,
          })
        }
      >
        Compare both side by side
      </button>
    </p>
  );
}

export function SlubLegend({ showFull, setShowFull }: { showFull: boolean; setShowFull: (on: boolean) => void }) {
  return (
    <ul className="lab-legend" aria-label="Colours">
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
  );
}
