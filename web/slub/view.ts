// view.ts - the SLUB view for the lab engine (web/lab/view.ts's StepView):
// its parameters, its worlds (one pane per fast-path variant and bulk-free
// form listed: `variant=cmpxchg,plain,rt` shows them side by side on the
// same script; the kernel's boot parameters and options shape every
// world's geometry), its stories, and how its snapshots are decoded, laid
// out, drawn, hit and put into words.

import { slubPath } from './path';
import { listOf, oneOf, text, whole, type ParamSpec, type ParamValues } from '../lab/params';
import { STEP_PARAM } from '../lab/use-step-lab';
import type { Pane, StepView } from '../lab/view';
import { describeAddresses, findAddress, hex, objectAddress } from './addresses';
import { describeObject, describeSheaf, describeSlab, SLUB_EVENT_WORDS } from './describe';
import { hitTest, layoutSnapshot, type Hit, type Layout } from './layout';
import { LiveMirror } from './live-mirror';
import type { NumaConfig, SlubWorldInfo, WorldConfig } from './protocol';
import { drawSnapshot, type Overlay } from './render';
import { misfit, scenarioById, scenarioConfig, SCENARIO_IDS, SCENARIOS, storyFor, type Scenario } from './scenarios';
import { describeOp, parseScript, POINT_TEXT, scriptToText, type AnyRef, type Script } from './script';
import { eraOf, kernelNotice, KERNEL_FORMS, NEWEST_KERNEL, parseKernelVersion, type KernelParams } from './slub-api';
import { BULK_FORMS, decodeSnapshot, FASTPATHS, type BulkForm, type Fastpath, type SlubSnapshot } from './snapshot';

/** The scenario value of a hand-made script (`ops=`). */
import { SANDBOX } from '../lab/step-glue';
export { SANDBOX };

/** `bulk`: the forms to show; the seeds' name of the generic loop, "fallback", gets a message naming the new one. */
function bulkParam(): ParamSpec<readonly BulkForm[]> {
  const list = listOf(BULK_FORMS, ['detached'], BULK_FORMS.length);
  return {
    ...list,
    parse: (raw) => {
      const r = list.parse(raw);
      return r.ok || !raw.split(',').includes('fallback')
        ? r
        : { ok: false, expected: `${r.expected}; "fallback" is now called "generic" (slab_common.c's generic loop of one kmem_cache_free per object)` };
    },
  };
}

/** The default kernel: the model's base, SLUB before sheaves. */
export const DEFAULT_KERNEL = '6.17';
/** Kernels a view compares side by side at most. */
export const MAX_KERNELS = 4;

/**
 * `kernel`: the Linux version each pane follows ("X.Y" from 4.3: eras.h), or a comma list of
 * up to MAX_KERNELS different ones to compare side by side.
 */
function kernelParam(): ParamSpec<readonly string[]> {
  const expected = `${ONE_KERNEL}, or a comma list of up to ${MAX_KERNELS} different ones`;
  return {
    parse: (raw) => {
      const items = raw.split(',');
      if (items.length > MAX_KERNELS || new Set(items).size !== items.length) return { ok: false, expected };
      const out: string[] = [];
      for (const item of items) {
        const one = canonicalKernel(item);
        if (typeof one !== 'string') return { ok: false, expected: `${expected} (${one.error})` };
        out.push(one);
      }
      return new Set(out).size === out.length ? { ok: true, value: out } : { ok: false, expected };
    },
    format: (v) => v.join(','),
    fallback: [DEFAULT_KERNEL],
  };
}

const ONE_KERNEL = `a Linux version from 4.3, written ${KERNEL_FORMS} (newer than ${NEWEST_KERNEL.major}.${NEWEST_KERNEL.minor}: its rules, said on the page)`;

/** "X.Y" as the model reads it, or why it is not one. */
function canonicalKernel(raw: string): string | { error: string } {
  try {
    const v = parseKernelVersion(raw);
    return `${v.major}.${v.minor}`;
  } catch (e) {
    return { error: (e as Error).message };
  }
}

/** `kernel` of the free-running view: the one Linux version its cache follows. */
export function oneKernelParam(): ParamSpec<string> {
  return {
    parse: (raw) => {
      const one = canonicalKernel(raw);
      return typeof one === 'string' ? { ok: true, value: one } : { ok: false, expected: `${ONE_KERNEL}; free-running runs one version at a time (${one.error})` };
    },
    format: (v) => v,
    fallback: DEFAULT_KERNEL,
  };
}

/** A boot parameter or kernel option: a whole number from min to max, or `default` (not given). */
function kernelWord(min: number, max: number): ParamSpec<number | null> {
  const w = whole(min, max, min);
  return {
    parse: (raw) => (raw === 'default' ? { ok: true, value: null } : w.parse(raw).ok ? { ok: true, value: Number(raw) } : { ok: false, expected: `a whole number from ${min} to ${max}, or default` }),
    format: (v) => (v === null ? 'default' : String(v)),
    fallback: null,
  };
}

/** Up to this many NUMA nodes (SL_SLUB_MAX_NODES). */
export const MAX_NODES = 4;

/** A comma list of node numbers 0 .. MAX_NODES - 1 (`memoryless`: each at most once; `cpu_nodes`: one per CPU), or "" for none. */
function nodeList(what: string, distinct: boolean, max: number): ParamSpec<readonly number[]> {
  const expected = `${what}: a comma list of node numbers 0 to ${MAX_NODES - 1}${distinct ? ', each once' : ''} (at most ${max}), or empty`;
  return {
    parse: (raw) => {
      if (raw === '') return { ok: true, value: [] };
      const items = raw.split(',');
      const ok = items.length <= max && items.every((x) => /^\d$/.test(x) && Number(x) < MAX_NODES) && (!distinct || new Set(items).size === items.length);
      return ok ? { ok: true, value: items.map(Number) } : { ok: false, expected };
    },
    format: (v) => v.join(','),
    fallback: [],
  };
}

/** The SLUB view's parameters. */
export const SLUB_PARAMS = {
  scenario: oneOf<string>([...SCENARIO_IDS, SANDBOX], 'fast-path'),
  step: STEP_PARAM,
  cpus: whole(2, 8, 4),
  variant: listOf(FASTPATHS, ['cmpxchg'], FASTPATHS.length),
  bulk: bulkParam(),
  ops: text((raw) => {
    const r = parseScript(raw, 8);
    return r.ok ? null : `a script like a0.a0.f1-12-3 (${r.error})`;
  }, ''),
  // The kernel the cache lives in: boot parameters (slub_max_order is clamped to 10 as the kernel
  // clamps it), CONFIG_NR_CPUS (TID_STEP; default: the CPU count) and CONFIG_PREEMPTION.
  slub_min_order: kernelWord(0, 10),
  slub_max_order: kernelWord(0, 255),
  slub_min_objects: kernelWord(0, 32767),
  nr_cpus: kernelWord(1, 8192),
  preemption: oneOf(['on', 'off'] as const, 'on'),
  hardened: oneOf(['off', 'on'] as const, 'off'),
  kernel: kernelParam(),
  // NUMA nodes (docs/slub.md "NUMA nodes"): how many, which have CPUs but no memory, and each CPU's node (default: spread evenly).
  nodes: whole(1, MAX_NODES, 1),
  memoryless: nodeList('the nodes with CPUs and no memory', true, MAX_NODES - 1),
  cpu_nodes: nodeList("each CPU's node in CPU order", false, 8),
};

/** CPU c's node when `cpus` CPUs spread evenly over `nodes` nodes (CPUs 0, 1 on node 0 and 2, 3 on node 1 for 4 on 2). */
export const spreadNode = (c: number, cpus: number, nodes: number) => Math.floor((c * nodes) / cpus);

/**
 * The NUMA topology the values ask for, undefined for one node; throws an Error that names the
 * parameters when they do not fit together (a memoryless node past the last, every node
 * memoryless, a CPU list of the wrong length or naming a node past the last).
 */
export function numaOf(v: Pick<ParamValues<typeof SLUB_PARAMS>, 'nodes' | 'memoryless' | 'cpu_nodes' | 'cpus'>): NumaConfig | undefined {
  const all = Array.from({ length: v.nodes }, (_, n) => n).join(', ');
  if (v.nodes === 1) {
    if (v.memoryless.length || v.cpu_nodes.length) throw new Error(`memoryless= and cpu_nodes= need more than one node (nodes=2 to ${MAX_NODES}); nodes=1 has node 0 only, with memory`);
    return undefined;
  }
  const past = v.memoryless.find((n) => n >= v.nodes);
  if (past !== undefined) throw new Error(`memoryless=${v.memoryless.join(',')} names node ${past}, but nodes=${v.nodes} has nodes ${all}`);
  if (v.memoryless.length === v.nodes) throw new Error(`memoryless=${v.memoryless.join(',')} leaves no node with memory: at least one of nodes ${all} must have some`);
  if (v.cpu_nodes.length && v.cpu_nodes.length !== v.cpus) throw new Error(`cpu_nodes=${v.cpu_nodes.join(',')} gives ${v.cpu_nodes.length} CPU${v.cpu_nodes.length === 1 ? '' : 's'} a node, but there are ${v.cpus} (cpus=${v.cpus})`);
  const far = v.cpu_nodes.find((n) => n >= v.nodes);
  if (far !== undefined) throw new Error(`cpu_nodes=${v.cpu_nodes.join(',')} names node ${far}, but nodes=${v.nodes} has nodes ${all}`);
  const cpuNode = v.cpu_nodes.length ? [...v.cpu_nodes] : Array.from({ length: v.cpus }, (_, c) => spreadNode(c, v.cpus, v.nodes));
  return { nodes: v.nodes, cpuNode, memoryless: v.memoryless.reduce((m, n) => m | (1 << n), 0) };
}

/** numaOf, or one node when the values do not fit together. */
function numaOrNone(v: ParamValues<typeof SLUB_PARAMS>): NumaConfig | undefined {
  try {
    return numaOf(v);
  } catch {
    return undefined;
  }
}

/** The kernel the URL describes; undefined when it is the default one. */
export function kernelOf(v: ParamValues<typeof SLUB_PARAMS>): KernelParams | undefined {
  const k: KernelParams = {};
  if (v.slub_min_order !== null) k.minOrder = v.slub_min_order;
  if (v.slub_max_order !== null) k.maxOrder = v.slub_max_order;
  if (v.slub_min_objects !== null) k.minObjects = v.slub_min_objects;
  if (v.nr_cpus !== null) k.nrCpus = v.nr_cpus;
  if (v.preemption === 'off') k.noPreempt = true;
  return Object.keys(k).length ? k : undefined;
}

/** The fast paths a kernel's panes show: 7.0 has no CPU-slab fast path, so one pane (its sheaves). */
function fastpathsOf(v: ParamValues<typeof SLUB_PARAMS>, version: string): readonly Fastpath[] {
  return eraOf(parseKernelVersion(version)) === 'sheaves' ? ['cmpxchg'] : v.variant;
}

/** The kernel version of each pane, in panes() order. */
export function paneKernels(v: ParamValues<typeof SLUB_PARAMS>): string[] {
  return v.kernel.flatMap((version) => fastpathsOf(v, version).flatMap(() => v.bulk.map(() => version)));
}

/**
 * The story the values show: the `scenario` parameter's, unless it tells none of the chosen
 * kernels; then its counterpart for their era, or their first story (scenarios.ts storyFor), so
 * choosing a kernel never lands on a story that cannot run.  Undefined for the sandbox.
 */
export function scenarioFor(v: ParamValues<typeof SLUB_PARAMS>): Scenario | undefined {
  const asked = scenarioById(v.scenario);
  return asked && storyFor(asked, v.kernel.map(parseKernelVersion), SCENARIOS);
}

/** What the page says before a story: the notices of kernels newer than the newest modelled, and a story swapped for the kernel. */
export function kernelNotes(v: ParamValues<typeof SLUB_PARAMS>): string[] {
  const notes = v.kernel.map((k) => kernelNotice(parseKernelVersion(k))).filter((n): n is string => n !== null).map((n) => `${n}.`);
  const asked = scenarioById(v.scenario);
  const shown = scenarioFor(v);
  if (asked && shown && shown !== asked) {
    const first = parseKernelVersion(v.kernel[0] ?? DEFAULT_KERNEL);
    notes.push(`${misfit(asked, first) ?? ''} Showing "${shown.title}" instead.`.trim());
  }
  return notes;
}

export const slubStepView: StepView<typeof SLUB_PARAMS, WorldConfig, Script<AnyRef>, SlubSnapshot, Layout, Hit, Overlay, SlubWorldInfo> = {
  model: 'slub',
  // The code each pane follows: its kernel version's mm/slub.c (docs/slub.md, "Kernel eras").
  kernel: { file: 'mm/slub.c', version: (v, pane) => `v${paneKernels(v)[pane] ?? DEFAULT_KERNEL}` },
  params: SLUB_PARAMS,
  panes(v) {
    const scenario = scenarioFor(v);
    const kernel = kernelOf(v);
    // A story on NUMA nodes brings its own machine; otherwise the URL's nodes.
    // Nodes that do not fit together: one node here (panes() must not throw: the page lays out from it); story() says why.
    const numa = scenario?.numa ? undefined : numaOrNone(v);
    const panes: Pane<WorldConfig>[] = [];
    for (const version of v.kernel)
      for (const fastpath of fastpathsOf(v, version))
        for (const bulk of v.bulk)
          panes.push({
            label: [v.kernel.length > 1 ? version : '', v.variant.length > 1 ? fastpath : '', v.bulk.length > 1 ? bulk : ''].filter(Boolean).join(' · '),
            world: { ...scenarioConfig(scenario, v.cpus, fastpath, bulk, kernel, parseKernelVersion(version)), ...(v.hardened === 'on' ? { hardened: true as const } : {}), ...(numa ? { numa } : {}) },
          });
    return panes;
  },
  scenarios: SCENARIOS,
  script: { parse: (t, world) => parseScript(t, world.cpus), format: scriptToText },
  async story(v, worldInfo) {
    const scenario = scenarioFor(v);
    if (!scenario?.numa) numaOf(v); // throws what is wrong with nodes=, memoryless= and cpu_nodes= together
    const notes = kernelNotes(v);
    if (scenario) {
      const misfits = v.kernel.map((k) => misfit(scenario, parseKernelVersion(k)));
      const story = scenario.build({ cpus: v.cpus, objects: (await worldInfo()).objects });
      const others = misfits.filter((m): m is string => m !== null);
      // Side by side with a kernel the story does not tell: the same operations run there too, the captions tell the others.
      const intro = [...notes, story.intro, ...(others.length ? [`${others.join(' ')} Its pane runs the same operations for comparison.`] : [])].join(' ');
      return { ...story, intro };
    }
    const p = parseScript(v.ops, v.cpus);
    if (!p.ok) throw new Error(`the script in the URL cannot run with ${v.cpus} CPUs: ${p.error}`);
    return {
      script: p.script,
      captions: p.script.ops.map((o) => `You: ${describeOp(o)}.`),
      intro: [...notes, 'Sandbox: add operations with the buttons below; select objects on the canvas to free them.'].join(' '),
      outro: '',
    };
  },
  decode: decodeSnapshot,
  mirror: (anchor) => new LiveMirror(anchor),
  layout: (s, width, o) =>
    layoutSnapshot(s, { width, showFull: o.showFull, ...(o.compact === undefined ? {} : { compact: o.compact }), ...(o.cpus ? { cpus: o.cpus, allCpus: o.allCpus ?? false } : {}), ...(o.alignWith ? { alignWith: o.alignWith } : {}) }),
  draw: drawSnapshot,
  hit: hitTest,
  describe: {
    path: slubPath,
    stop: (stop, script) => `CPU ${script.ops[stop.opIndex]?.cpu ?? 0} is in ${POINT_TEXT[stop.point] ?? `point ${stop.point}`}`,
    op: (script, i) => {
      const op = script.ops[i];
      return op ? describeOp(op) : '?';
    },
    hit: (s, h, names) => {
      const sheaf = h.sheaf === undefined ? '' : `${describeSheaf(s, h.sheaf)} `;
      if (h.slab < 0) return `${sheaf}${h.slot !== undefined && h.slot >= 0 ? `Slot ${h.slot} is empty.` : ''}`.trim();
      return h.index < 0
        ? `${sheaf}${describeSlab(s, h.slab)} Its memory starts at ${hex(objectAddress(s, h.slab, 0) - BigInt(s.geometry.redLeftPad))}.`
        : `${sheaf}${describeObject(s, h.slab, h.index, names)} ${describeAddresses(s, h.slab, h.index)}`;
    },
    find: findAddress,
    events: SLUB_EVENT_WORDS,
  },
};
