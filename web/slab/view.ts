// view.ts - the SLAB view for the lab engine (web/lab/view.ts's StepView):
// its parameters, its worlds (one pane per rule set: `rules=both` shows the
// code before OBJFREELIST_SLAB and after it side by side on the same
// script), its stories, and how its snapshots are decoded, laid out, drawn,
// hit and put into words.

import { slabPath } from './path';
import { listOf, oneOf, text, whole, type ParamSpec, type ParamValues } from '../lab/params';
import { STEP_PARAM } from '../lab/use-step-lab';
import type { Pane, StepView } from '../lab/view';
import { describeHit, SLAB_EVENT_WORDS } from './describe';
import { hitTest, layoutSnapshot, type Hit, type Layout } from './layout';
import { CACHE_NAME, type CacheSpec, type SlabWorldInfo, type WorldConfig } from './protocol';
import { drawSnapshot, type Overlay } from './render';
import { scenarioById, SCENARIO_IDS, SCENARIOS } from './scenarios';
import { describeOp, MAX_KMALLOC, parseScript, scriptToText, type Script } from './script';
import { CACHE_FLAGS, kernelCode, KERNEL_FIRST, KERNEL_LAST, type CacheFlag } from './slab-api';
import { decodeSlabSnapshot, type Rules, type SlabSnapshot } from './snapshot';

/** The scenario value of a hand-made script (`ops=`). */
import { SANDBOX } from '../lab/step-glue';
export { SANDBOX };
export const RULES_CHOICES = ['before', 'after', 'both'] as const;
const FLAG_NAMES = Object.keys(CACHE_FLAGS) as CacheFlag[];

/** A requested alignment: 0 or a power of two up to 4 MiB. */
const alignParam: ParamSpec<number> = {
  parse: (raw) => {
    const v = /^\d{1,7}$/.test(raw) ? Number(raw) : NaN;
    return v >= 0 && v <= MAX_KMALLOC && (v & (v - 1)) === 0 ? { ok: true, value: v } : { ok: false, expected: `0 or a power of two up to ${MAX_KMALLOC}` };
  },
  format: String,
  fallback: 0,
};

/** The SLAB view's parameters. */
export const SLAB_PARAMS = {
  scenario: oneOf<string>([...SCENARIO_IDS, SANDBOX], 'types'),
  step: STEP_PARAM,
  rules: oneOf(RULES_CHOICES, 'both'),
  size: whole(1, MAX_KMALLOC, 256),
  kernel: text((raw) => (kernelCode(raw) === null ? `a kernel version from ${KERNEL_FIRST} to ${KERNEL_LAST} such as 5.4` : null), KERNEL_LAST),
  cpus: whole(1, 8, 2),
  // The cache of the `cache` scenario and of the sandbox (the caches panel fills them in).
  name: text((raw) => (CACHE_NAME.test(raw) ? null : 'a cache name of 1 to 63 letters, digits or _:.@-'), ''),
  align: alignParam,
  flags: listOf(FLAG_NAMES, [], FLAG_NAMES.length),
  ops: text((raw) => {
    const r = parseScript(raw, 8, 1);
    return r.ok ? null : `a script like m0-256-60.f0-1_1_60.d0 (${r.error})`;
  }, ''),
};
export type SlabValues = ParamValues<typeof SLAB_PARAMS>;

/** The cache the `cache` scenario and the sandbox create. */
export function ownCache(v: SlabValues): CacheSpec {
  return { name: v.name || `cache-${v.size}`, objectSize: v.size, align: v.align, flags: v.flags.reduce((f, n) => f | CACHE_FLAGS[n], 0) };
}

/** The world of every pane but for its rules. */
export function worldOf(v: SlabValues, rules: Rules): WorldConfig {
  const scenario = scenarioById(v.scenario);
  return {
    cpus: v.cpus,
    rules,
    kernel: v.kernel,
    arenaMb: scenario ? scenario.arenaMb(v.size) : Math.min(96, 16 + Math.ceil((64 * Math.max(v.size, 4096)) / (1 << 20))),
    caches: scenario ? scenario.caches(v.size, ownCache(v)) : [ownCache(v)],
  };
}

/** The panes the rules parameter asks for. */
export const rulesOf = (rules: SlabValues['rules']): Rules[] => (rules === 'both' ? ['before', 'after'] : [rules]);

export const slabStepView: StepView<typeof SLAB_PARAMS, WorldConfig, Script, SlabSnapshot, Layout, Hit, Overlay, SlabWorldInfo> = {
  model: 'slab',
  // The code panel's links: mm/slab.c at the release the URL names (SLAB was removed after 6.7).
  kernel: { file: 'mm/slab.c', version: (v) => `v${v.kernel}` },
  params: SLAB_PARAMS,
  panes(v) {
    const rules = rulesOf(v.rules);
    return rules.map((r): Pane<WorldConfig> => ({ label: rules.length > 1 ? `${r} OBJFREELIST` : '', world: worldOf(v, r) }));
  },
  scenarios: SCENARIOS,
  script: { parse: (t, world) => parseScript(t, world.cpus, world.caches.length), format: scriptToText },
  async story(v, worldInfo) {
    const scenario = scenarioById(v.scenario);
    const world = worldOf(v, 'after');
    if (scenario) {
      const problem = scenario.sizeProblem?.(v.size);
      if (problem) throw new Error(`URL parameter size=${v.size}: ${problem}`);
      return scenario.build({ cpus: v.cpus, size: v.size, caches: world.caches, info: await worldInfo() });
    }
    const p = parseScript(v.ops, v.cpus, world.caches.length);
    if (!p.ok) throw new Error(`the script in the URL cannot run with ${v.cpus} CPUs: ${p.error}`);
    const name = (i: number) => world.caches[i]?.name ?? `cache ${i}`;
    return {
      script: p.script,
      captions: p.script.ops.map((o) => `You: ${describeOp(o, name)}.`),
      intro: `Sandbox: a world with kmalloc caches and ${name(0)} (${v.size}-byte objects). Add operations with the buttons below; click objects to free them.`,
      outro: '',
    };
  },
  decode: decodeSlabSnapshot,
  layout: (s, width, o) => layoutSnapshot(s, width, o.focus, o.alignWith),
  draw: drawSnapshot,
  hit: hitTest,
  describe: {
    stop: () => 'SLAB has no preemption points: every stop is the end of a step',
    op: (script, i) => {
      const op = script.ops[i];
      return op ? describeOp(op, (k) => `cache ${k}`) : '?';
    },
    hit: (s, h) => describeHit(s, h),
    path: slabPath,
    events: SLAB_EVENT_WORDS,
  },
};
