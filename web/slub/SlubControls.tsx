// SlubControls.tsx - the SLUB view's own controls and panels around the
// engine's frame: the pickers (scenario, CPUs, fast path, bulk-free form, or
// back to one world from side by side; the kernel's boot parameters and
// options), the contrast a story invites at its
// end, the colour legend with the "show full slabs" switch, and the
// counters under their sysfs names.

import { Fragment } from 'react';
import type { ParamValues } from '../lab/params';
import { ChoicePicker, range, ScenarioPicker } from '../lab/pickers';
import { COLORS, SHEAF_STATES, STATE_COLORS, STATE_NAMES } from './render';
import type { Scenario } from './scenarios';
import { misfit, scenarioById, SCENARIOS, storyFor } from './scenarios';
import { eraOf, parseKernelVersion } from './slub-api';
import type { KernelStat, StatNames } from './slub-api';
import { ObjState, sysfsLine, type SlubSnapshot } from './snapshot';
import { DEFAULT_KERNEL, MAX_NODES, SANDBOX, type SLUB_PARAMS } from './view';

type Values = ParamValues<typeof SLUB_PARAMS>;
type Update = (patch: Partial<Values>) => void;

/** The kernel's boot parameters and options (URL keys of the same names); changing one restarts the story (a sandbox's objects would move). */
function KernelPicker({ values, update }: { values: Values; update: Update }) {
  const set = (patch: Partial<Values>) => update({ ...patch, step: 0, ...(values.scenario === SANDBOX ? { ops: '' } : {}) });
  const orders = (key: 'slub_min_order' | 'slub_max_order') => (
    <label>
      {key}{' '}
      <select value={values[key] ?? ''} onChange={(e) => set({ [key]: e.target.value === '' ? null : Number(e.target.value) })}>
        <option value="">default</option>
        {Array.from({ length: 11 }, (_, o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <details className="slub-kernel">
      <summary>Kernel</summary>
      {orders('slub_min_order')} {orders('slub_max_order')}{' '}
      <label>
        slub_min_objects{' '}
        <select value={values.slub_min_objects ?? ''} onChange={(e) => set({ slub_min_objects: e.target.value === '' ? null : Number(e.target.value) })}>
          <option value="">default</option>
          {[4, 8, 16, 32, 64, 128].map((n) => (
            <option key={n}>{n}</option>
          ))}
        </select>
      </label>{' '}
      <label>
        CONFIG_NR_CPUS{' '}
        <select value={values.nr_cpus ?? ''} onChange={(e) => set({ nr_cpus: e.target.value === '' ? null : Number(e.target.value) })}>
          <option value="">the CPU count</option>
          {[8, 64, 512, 8192].filter((n) => n >= values.cpus).map((n) => (
            <option key={n}>{n}</option>
          ))}
        </select>
      </label>{' '}
      <label>
        <input type="checkbox" checked={values.preemption === 'on'} onChange={(e) => set({ preemption: e.target.checked ? 'on' : 'off' })} /> CONFIG_PREEMPTION
      </label>{' '}
      <label>
        <input type="checkbox" checked={values.hardened === 'on'} onChange={(e) => set({ hardened: e.target.checked ? 'on' : 'off' })} /> CONFIG_SLAB_FREELIST_HARDENED
      </label>
    </details>
  );
}

/**
 * NUMA nodes (URL `nodes`, `memoryless`; `cpu_nodes` only in the URL): how many, the CPUs spread
 * evenly over them, and which one has no memory.  A story on a machine of its own says so instead.
 */
function NodesPicker({ values, update }: { values: Values; update: Update }) {
  const own = scenarioById(values.scenario)?.numa;
  if (own && values.scenario !== SANDBOX) return <span className="lab-hint">Nodes: this story brings its machine (2 nodes, node 1 memoryless)</span>;
  const set = (patch: Partial<Values>) => update({ ...patch, step: 0, ...(values.scenario === SANDBOX ? { ops: '' } : {}) });
  return (
    <>
      <ChoicePicker label="NUMA nodes" value={values.nodes} choices={range(1, MAX_NODES)} onPick={(nodes) => set({ nodes, memoryless: values.memoryless.filter((n) => n < nodes && nodes > 1).slice(0, nodes - 1), cpu_nodes: [] })} />
      {values.nodes > 1 ? (
        <label>
          Memoryless{' '}
          <select value={values.memoryless.join(',')} onChange={(e) => set({ memoryless: e.target.value === '' ? [] : e.target.value.split(',').map(Number) })}>
            <option value="">none</option>
            {range(1, values.nodes - 1).map((n) => (
              <option key={n} value={String(n)}>
                node {n}
              </option>
            ))}
            {values.memoryless.length > 1 || (values.memoryless.length === 1 && (values.memoryless[0] ?? 0) < 1) ? <option value={values.memoryless.join(',')}>nodes {values.memoryless.join(', ')}</option> : null}
          </select>
        </label>
      ) : null}
    </>
  );
}

/** The Linux versions the selector offers, one per era, the seeds' and each after 7.0 (any X.Y from 4.3 works in the URL; after 7.3 with a notice). */
export const KERNEL_CHOICES = [
  { version: '4.4', text: '4.4 (the seeds: frozen CPU partial slabs)' },
  { version: '6.17', text: '6.17 (per-CPU slab, before sheaves)' },
  { version: '6.18', text: '6.18 (opt-in sheaves)' },
  { version: '7.0', text: '7.0 (sheaves, no per-CPU slab)' },
  { version: '7.1', text: '7.1 (the refill relocks with a trylock)' },
  { version: '7.2', text: '7.2 (a refill returns its surplus with one cmpxchg)' },
  { version: '7.3', text: '7.3 (the newest the model follows)' },
] as const;

/** The Linux version selector (the step view's and the free run's). */
export function KernelSelect({ value, onChange, disabled = false }: { value: string; onChange: (kernel: string) => void; disabled?: boolean }) {
  const known = KERNEL_CHOICES.some((c) => c.version === value);
  return (
    <label>
      Linux{' '}
      <select value={value} disabled={disabled} onChange={(e) => onChange(e.target.value)} data-testid="slub-kernel">
        {!known && <option value={value}>{value}</option>}
        {KERNEL_CHOICES.map((c) => (
          <option key={c.version} value={c.version}>
            {c.text}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The kernel each pane follows, and comparing two side by side; changing it restarts the story (a sandbox's objects would move). */
function VersionPicker({ values, update }: { values: Values; update: Update }) {
  const set = (kernel: readonly string[]) => update({ kernel, step: 0, ...(values.scenario === SANDBOX ? { ops: '' } : storyOn(values.scenario, kernel)) });
  const one = values.kernel[0] ?? DEFAULT_KERNEL;
  const other = one === '7.0' ? DEFAULT_KERNEL : '7.0';
  return (
    <>
      <KernelSelect value={one} onChange={(k) => set([k])} />{' '}
      <button type="button" onClick={() => set(one === '7.0' ? [other, one] : [one, other])}>
        Compare with {other} side by side
      </button>
    </>
  );
}

/** A kernel chosen where the story does not apply moves to the story that does (its counterpart, or the era's first). */
function storyOn(id: string, kernel: readonly string[]): Partial<Values> {
  const sc = scenarioById(id);
  if (!sc) return {};
  const shown = storyFor(sc, kernel.map(parseKernelVersion), SCENARIOS);
  return shown === sc ? {} : { scenario: shown.id };
}

/** A story picked on kernels it does not tell moves to one it does (7.0 for the sheaf stories, 6.17 for the others); a comparison story shows its kernels. */
function kernelFor(id: string, kernel: readonly string[]): Partial<Values> {
  const sc = scenarioById(id);
  if (sc?.kernels) return { kernel: sc.kernels };
  if (!sc || kernel.some((k) => !misfit(sc, parseKernelVersion(k)))) return {};
  return { kernel: [sc.eras.includes('sheaves') ? '7.0' : DEFAULT_KERNEL] };
}

/** A story that does not fit the kernel shown: why (the error says it), and the ways to see it. */
export function SlubMisfit({ scenario, values, update }: { scenario: Scenario; values: Values; update: Update }) {
  const here = values.kernel[0] ?? DEFAULT_KERNEL;
  const home = scenario.eras.includes('sheaves') ? '7.0' : DEFAULT_KERNEL;
  return (
    <p data-testid="slub-misfit">
      <button type="button" onClick={() => update({ kernel: [home], step: 0 })}>
        Show it on Linux {home}
      </button>{' '}
      <button type="button" onClick={() => update({ kernel: [home, here], step: 0 })}>
        Compare {home} with {here} side by side (the same operations)
      </button>
    </p>
  );
}

export function SlubPickers({ values, update, sideBySide }: { values: Values; update: Update; sideBySide: boolean }) {
  return (
    <>
      <ScenarioPicker scenarios={SCENARIOS} value={values.scenario} sandbox={SANDBOX} onPick={(scenario) => update({ scenario, step: 0, ops: '', ...kernelFor(scenario, values.kernel) })} />
      <ChoicePicker
        label="CPUs"
        value={values.cpus}
        choices={range(2, 8)}
        // CONFIG_NR_CPUS is at least the CPU count: a smaller one goes back to the default.
        onPick={(cpus) => update({ cpus, step: 0, cpu_nodes: [], ...(values.scenario === SANDBOX ? { ops: '' } : {}), ...(values.nr_cpus !== null && values.nr_cpus < cpus ? { nr_cpus: null } : {}) })}
      />
      <NodesPicker values={values} update={update} />
      {sideBySide ? (
        <button type="button" onClick={() => update({ variant: values.variant.slice(0, 1), bulk: values.bulk.slice(0, 1), kernel: values.kernel.slice(0, 1) })}>
          Show one world
        </button>
      ) : (
        <>
          <VersionPicker values={values} update={update} />
          {/* 7.x has no CPU-slab fast path to choose (PREEMPT_RT comes with CONFIG_PREEMPTION's kernel, not this picker). */}
          {eraOf(parseKernelVersion(values.kernel[0] ?? DEFAULT_KERNEL)) === 'sheaves' ? (
            <span className="lab-hint">Fast path: 7.x has none to choose (no kmem_cache_cpu: an allocation pops a sheaf)</span>
          ) : (
          <label>
            Fast path{' '}
            <select value={values.variant[0]} onChange={(e) => update({ variant: [e.target.value as Values['variant'][number]] })}>
              <option value="cmpxchg">cmpxchg (kernel)</option>
              <option value="locked">locked cmpxchg</option>
              <option value="plain">plain writes (RFC)</option>
              <option value="rt">rt (PREEMPT_RT: local_lock)</option>
            </select>
          </label>
          )}
          <label>
            Bulk free{' '}
            <select value={values.bulk[0]} onChange={(e) => update({ bulk: [e.target.value as Values['bulk'][number]] })}>
              <option value="detached">detached freelist</option>
              <option value="generic">generic loop (one free per object)</option>
            </select>
          </label>
        </>
      )}
      <KernelPicker values={values} update={update} />
    </>
  );
}

/** At a story's end: replay it with the variant it contrasts, or show both side by side. */
export function SlubContrast({ scenario, values, update }: { scenario: Scenario; values: Values; update: Update }) {
  const c = scenario.contrast;
  if (!c) return null;
  const on = (c.fastpath !== undefined && values.variant[0] === c.fastpath) || (c.bulkFree !== undefined && values.bulk[0] === c.bulkFree);
  const fastpaths = c.fastpath ? (c.sideBySide ?? [scenario.defaultFastpath, c.fastpath]) : [];
  const panes = Math.max(fastpaths.length, c.bulkFree ? 2 : 1);
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
            ...(fastpaths.length ? { variant: fastpaths } : {}),
            ...(c.bulkFree ? { bulk: [scenario.defaultBulk, c.bulkFree] } : {}),
            step: 0,
          })
        }
      >
        Compare {panes === 2 ? 'both' : `all ${panes}`} side by side
      </button>
    </p>
  );
}

/** The colours; the sheaves' states only when a pane's cache has sheaves. */
/**
 * The object states a pane can show: always allocated and the slab freelist; the CPU freelist
 * where there is a CPU slab; the sheaf places where there are sheaves; "handed out twice" with
 * plain writes; whatever else is on screen now (poison, red zone, in flight).
 */
export function legendStates(snaps: readonly SlubSnapshot[], plainWrites: boolean): Set<number> {
  const out = new Set<number>([ObjState.ALLOCATED, ObjState.SLAB_FREE]);
  for (const s of snaps) {
    if (s.kernel.cpuSlab) out.add(ObjState.CPU_FREE);
    if (s.kernel.hasSheaves) for (const st of SHEAF_STATES) out.add(st);
    for (let i = 0; i < s.nobj; i++) {
      const st = s.obj.state[i] ?? ObjState.ALLOCATED;
      if (st !== ObjState.NO_OBJECT) out.add(st);
    }
  }
  if (plainWrites) out.add(ObjState.DUP);
  return out;
}

export function SlubLegend({ showFull, setShowFull, states, locked, detached }: { showFull: boolean; setShowFull: (on: boolean) => void; states: ReadonlySet<number>; locked: boolean; detached: boolean }) {
  return (
    <ul className="lab-legend" aria-label="Colours">
      {STATE_NAMES.map((n, i) => {
        const color = STATE_COLORS[i];
        return color && states.has(i) ? (
          <li key={n}>
            <span className="swatch" style={{ background: color }} /> {n}
          </li>
        ) : null;
      })}
      {locked && (
        <li>
          <span className="swatch swatch-dashed" style={{ borderColor: COLORS.locked }} /> a CPU inside its sheaf section (trylock held)
        </li>
      )}
      {detached && (
        <li>
          <span className="swatch" style={{ background: COLORS.detached }} /> a detached freelist being built
        </li>
      )}
      <li>
        <span className="swatch swatch-dashed" style={{ borderColor: COLORS.changed }} /> changed by the last step
      </li>
      <li>
        <label>
          <input type="checkbox" checked={showFull} onChange={(e) => setShowFull(e.target.checked)} /> show full slabs
        </label>
      </li>
    </ul>
  );
}

/** The CONFIG_SLUB_STATS counters as /sys/kernel/slab/<cache>/<name> prints them, then the model's own. */
export function SlubCounters({ snap, names, testId }: { snap: SlubSnapshot; names: StatNames; testId: string }) {
  const list = (of: readonly KernelStat[]) => (
    <dl>
      {of.map(({ name, stat }) => (
        <Fragment key={name}>
          <dt>{name}</dt>
          <dd>{sysfsLine(snap, stat)}</dd>
        </Fragment>
      ))}
    </dl>
  );
  return (
    <details className="slub-counters" data-testid={testId}>
      <summary>Counters under their sysfs names (CONFIG_SLUB_STATS; total, then per CPU)</summary>
      {list(names.kernel)}
      <p>The model's own:</p>
      {list(names.model)}
    </details>
  );
}
