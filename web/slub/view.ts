// view.ts - the SLUB view for the lab engine (web/lab/view.ts's StepView):
// its parameters, its worlds (one pane per fast-path variant and bulk-free
// form listed: `variant=cmpxchg,plain` shows both side by side on the same
// script), its stories, and how its snapshots are decoded, laid out, drawn,
// hit and put into words.

import { listOf, oneOf, text, whole } from '../lab/params';
import { STEP_PARAM } from '../lab/use-step-lab';
import type { Pane, StepView } from '../lab/view';
import { describeObject, describeSlab, SLUB_EVENT_WORDS } from './describe';
import { hitTest, layoutSnapshot, type Hit, type Layout } from './layout';
import { LiveMirror } from './live-mirror';
import type { SlubWorldInfo, WorldConfig } from './protocol';
import { drawSnapshot, type Overlay } from './render';
import { scenarioById, scenarioConfig, SCENARIO_IDS, SCENARIOS } from './scenarios';
import { describeOp, parseScript, POINT_TEXT, scriptToText, type AnyRef, type Script } from './script';
import { BULK_FORMS, decodeSnapshot, FASTPATHS, type SlubSnapshot } from './snapshot';

/** The scenario value of a hand-made script (`ops=`). */
export const SANDBOX = 'sandbox';

/** The SLUB view's parameters. */
export const SLUB_PARAMS = {
  scenario: oneOf<string>([...SCENARIO_IDS, SANDBOX], 'fast-path'),
  step: STEP_PARAM,
  cpus: whole(2, 8, 4),
  variant: listOf(FASTPATHS, ['cmpxchg'], FASTPATHS.length),
  bulk: listOf(BULK_FORMS, ['detached'], BULK_FORMS.length),
  ops: text((raw) => {
    const r = parseScript(raw, 8);
    return r.ok ? null : `a script like a0.a0.f1-12-3 (${r.error})`;
  }, ''),
};

export const slubStepView: StepView<typeof SLUB_PARAMS, WorldConfig, Script<AnyRef>, SlubSnapshot, Layout, Hit, Overlay, SlubWorldInfo> = {
  model: 'slub',
  params: SLUB_PARAMS,
  panes(v) {
    const scenario = scenarioById(v.scenario);
    const panes: Pane<WorldConfig>[] = [];
    for (const fastpath of v.variant)
      for (const bulk of v.bulk)
        panes.push({
          label: [v.variant.length > 1 ? fastpath : '', v.bulk.length > 1 ? bulk : ''].filter(Boolean).join(' · '),
          world: scenarioConfig(scenario, v.cpus, fastpath, bulk),
        });
    return panes;
  },
  scenarios: SCENARIOS,
  script: { parse: (t, world) => parseScript(t, world.cpus), format: scriptToText },
  async story(v, worldInfo) {
    const scenario = scenarioById(v.scenario);
    if (scenario) return scenario.build({ cpus: v.cpus, objects: (await worldInfo()).objects });
    const p = parseScript(v.ops, v.cpus);
    if (!p.ok) throw new Error(`the script in the URL cannot run with ${v.cpus} CPUs: ${p.error}`);
    return {
      script: p.script,
      captions: p.script.ops.map((o) => `You: ${describeOp(o)}.`),
      intro: 'Sandbox: add operations with the buttons below; select objects on the canvas to free them.',
      outro: '',
    };
  },
  decode: decodeSnapshot,
  mirror: (anchor) => new LiveMirror(anchor),
  layout: (s, width, o) => layoutSnapshot(s, o.compact === undefined ? { width, showFull: o.showFull } : { width, showFull: o.showFull, compact: o.compact }),
  draw: drawSnapshot,
  hit: hitTest,
  describe: {
    stop: (stop, script) => `CPU ${script.ops[stop.opIndex]?.cpu ?? 0} is in ${POINT_TEXT[stop.point] ?? `point ${stop.point}`}`,
    op: (script, i) => {
      const op = script.ops[i];
      return op ? describeOp(op) : '?';
    },
    hit: (s, h, names) => (h.index < 0 ? describeSlab(s, h.slab) : describeObject(s, h.slab, h.index, names)),
    events: SLUB_EVENT_WORDS,
  },
};
