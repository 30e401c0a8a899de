// view.ts - the percpu view for the lab engine (web/lab/view.ts's StepView):
// its parameters, its worlds (one pane per allocator listed:
// `allocator=areamap,bitmap,scanhint` shows the three generations side by
// side on the same script), its stories, and how its snapshots are decoded,
// laid out, drawn, hit and put into words.

import { percpuPath } from './path';
import { listOf, oneOf, text, whole } from '../lab/params';
import { STEP_PARAM } from '../lab/use-step-lab';
import type { StepView } from '../lab/view';
import { ALLOCATOR_TITLES, describeHit, PERCPU_EVENT_WORDS } from './describe';
import { hitTest, layoutSnapshot, type PercpuHit, type PercpuLayout } from './layout';
import type { PercpuConfig } from './percpu-api';
import { drawSnapshot, type Overlay } from './render';
import { labWorld, scenarioById, SCENARIO_IDS, SCENARIOS } from './scenarios';
import { describeStep, MAX_UNITS, parseScript, scriptToText, type PercpuScript } from './script';
import { ALLOCATORS, decodePercpuSnapshot, type PercpuSnapshot } from './snapshot';

/** The scenario value of a hand-made script (`ops=`). */
import { SANDBOX } from '../lab/step-glue';
export { SANDBOX };

/** What is wrong with the URL's script (null: nothing); the last answer is kept, as every change of the URL asks again. */
let lastOps: { raw: string; wrong: string | null } = { raw: '', wrong: null };
function opsProblem(raw: string): string | null {
  if (raw !== lastOps.raw) {
    const r = parseScript(raw, MAX_UNITS);
    lastOps = { raw, wrong: r.ok ? null : `a script like a0-4-4-256.f0-0 (${r.error})` };
  }
  return lastOps.wrong;
}

/** The percpu view's parameters. */
/** The release each allocator's code follows (docs/percpu.md): the area map's last, the bitmap's first, the scan hints' code as in v5.4. */
const KERNEL_OF: Record<(typeof ALLOCATORS)[number], string> = { areamap: 'v4.13', bitmap: 'v4.14', scanhint: 'v5.4' };

export const PERCPU_PARAMS = {
  scenario: oneOf<string>([...SCENARIO_IDS, SANDBOX], 'in-order'),
  step: STEP_PARAM,
  allocator: listOf(ALLOCATORS, ALLOCATORS, ALLOCATORS.length),
  units: whole(1, MAX_UNITS, 2),
  ops: text(opsProblem, ''),
};

export const percpuStepView: StepView<typeof PERCPU_PARAMS, PercpuConfig, PercpuScript, PercpuSnapshot, PercpuLayout, PercpuHit, Overlay, unknown> = {
  model: 'percpu',
  // The code panel's links: mm/percpu.c in the release each pane's allocator follows.
  kernel: { file: 'mm/percpu.c', version: (v, pane) => KERNEL_OF[v.allocator[pane] ?? 'scanhint'] },
  params: PERCPU_PARAMS,
  panes: (v) => v.allocator.map((a) => ({ label: v.allocator.length > 1 ? ALLOCATOR_TITLES[a] : '', world: labWorld(a, v.units) })),
  scenarios: SCENARIOS,
  script: { parse: (t, world) => parseScript(t, world.cpus), format: scriptToText },
  story(v) {
    const scenario = scenarioById(v.scenario);
    if (scenario) return Promise.resolve(scenario.build({ cpus: v.units }));
    const p = parseScript(v.ops, v.units);
    if (!p.ok) return Promise.reject(new Error(`the script in the URL cannot run with ${v.units} units: ${p.error}`));
    return Promise.resolve({
      script: p.script,
      captions: p.script.steps.map((s) => `You: ${describeStep(s)}.`),
      intro: 'Sandbox: add steps with the form below; select an area on the canvas to free it.',
      outro: '',
    });
  },
  decode: decodePercpuSnapshot,
  layout: (s, width, o) => layoutSnapshot(s, width, o.zoom, o.alignWith),
  draw: drawSnapshot,
  hit: hitTest,
  describe: {
    stop: () => 'the percpu model has no preemption points',
    op: (script, i) => {
      const s = script.steps[i];
      return s ? describeStep(s) : '?';
    },
    hit: (s, h) => describeHit(s, h, null, (i) => `step ${i + 1}`),
    path: percpuPath,
    events: PERCPU_EVENT_WORDS,
  },
};
