// worker.ts - the SLUB model's adapter for the lab engine, in the bridge
// worker only (web/models.ts): worlds of wasm-core/bindings/api_slub.c driven
// by the deterministic driver (src/sched/sched.h) for step-by-step sessions,
// free runs on the CPU threads of api_bench_wasm.c, and the Benchmarks page's
// timed rows.  Everything a request carries is checked here before it
// reaches C.

import { EVENT_LAYOUT, EVENT_SIZE, EventKind } from '../core/events.generated';
import { BadRequest, checkOneOf, checkRecord, checkWhole } from '../core/requests';
import { replaySessions } from '../lab/session';
import { CoreWorld, type FreeRunWorld, type ModelAdapter, type ModelWorld, type SessionModel } from '../lab/model';
import { mergeRings } from '../lab/stops';
import { FREERUN_COUNTERS, WORKLOADS, type FreerunStartParams, type NumaConfig, type SlubLoadExtra, type SlubWorldInfo, type WorldConfig } from './protocol';
import { scenarioConfig } from './scenarios';
import { checkScript, isSym, isTune, TUNE_OPCODE, type AnyRef, type ObjRef, type Script, type ScriptOp, type TuneKind } from './script';
import { parseKernelVersion, SlubApi, SlubError, type KernelParams, type KernelVersion, type SlubModule } from './slub-api';
import { BULK_FORMS, decodeSnapshot, FASTPATHS, ObjState, SheafPlace, STAT_NAMES } from './snapshot';
import { encodeNuma, NUMA_MAX_NODES, type NumaState } from './numa';

const MAX_CPUS = 8;
/** Events each CPU's ring holds (sl_api_slub_world_create). */
const RING_EVENTS = 1 << 15;
/** Operations the walker runs between drains while it skips ahead. */
const WALK_CHUNK = 256;

/** The kernel a world's cache lives in (boot parameters, CONFIG_NR_CPUS, preemption), each field optional. */
function checkKernel(raw: unknown, cpus: number): KernelParams {
  const k = checkRecord('kernel', raw);
  const out: KernelParams = {};
  if (k.minOrder !== undefined) out.minOrder = checkWhole('kernel.minOrder (slub_min_order)', k.minOrder, 0, 10);
  if (k.maxOrder !== undefined) out.maxOrder = checkWhole('kernel.maxOrder (slub_max_order)', k.maxOrder, 0, 255);
  if (k.minObjects !== undefined) out.minObjects = checkWhole('kernel.minObjects (slub_min_objects)', k.minObjects, 0, 32767);
  if (k.nrCpus !== undefined) out.nrCpus = checkWhole(`kernel.nrCpus (CONFIG_NR_CPUS, at least the world's ${cpus} CPUs)`, k.nrCpus, cpus, 8192);
  if (k.noPreempt !== undefined) {
    if (typeof k.noPreempt !== 'boolean') throw new BadRequest(`kernel.noPreempt must be true or false, got ${String(k.noPreempt)}`);
    out.noPreempt = k.noPreempt;
  }
  return out;
}

function checkWorld(raw: unknown): WorldConfig {
  const c = checkRecord('world', raw);
  const cpus = checkWhole('cpus', c.cpus, 1, MAX_CPUS);
  return {
    cpus,
    objectSize: checkWhole('objectSize', c.objectSize, 8, 1 << 20),
    fastpath: checkOneOf('fastpath', c.fastpath, FASTPATHS),
    bulkFree: checkOneOf('bulkFree', c.bulkFree, BULK_FORMS),
    seed: checkWhole('seed', c.seed, 0, 0x7fffffff),
    arenaBytes: checkWhole('arenaBytes', c.arenaBytes, 1 << 16, 256 << 20),
    ...(c.kernel === undefined ? {} : { kernel: checkKernel(c.kernel, cpus) }),
    ...(c.hardened === undefined ? {} : { hardened: checkTrue('hardened', c.hardened) }),
    ...(c.version === undefined ? {} : { version: checkVersion(c.version) }),
    ...(c.sheafCapacity === undefined ? {} : { sheafCapacity: checkWhole('sheafCapacity', c.sheafCapacity, 1, 0xffff) }),
    ...(c.exactCapacity === undefined ? {} : { exactCapacity: checkTrue('exactCapacity', c.exactCapacity) }),
    ...(c.earlyBoot === undefined ? {} : { earlyBoot: checkTrue('earlyBoot', c.earlyBoot) }),
    ...(c.kernelSeed === undefined ? {} : { kernelSeed: checkWords('kernelSeed', c.kernelSeed) }),
    ...(c.numa === undefined ? {} : { numa: checkNuma(c.numa, cpus) }),
  };
}

/** A NUMA topology the core accepts (cache.c set_topology): 2 to 4 nodes, each CPU on one, some node with memory. */
function checkNuma(raw: unknown, cpus: number): NumaConfig {
  const n = checkRecord('numa', raw);
  const nodes = checkWhole('numa.nodes', n.nodes, 2, NUMA_MAX_NODES);
  if (!Array.isArray(n.cpuNode) || n.cpuNode.length !== cpus) throw new BadRequest(`numa.cpuNode must give each of the ${cpus} CPUs a node`);
  const cpuNode = n.cpuNode.map((x, c) => checkWhole(`numa.cpuNode[${c}]`, x, 0, nodes - 1));
  const memoryless = checkWhole('numa.memoryless (a mask of nodes)', n.memoryless, 0, (1 << nodes) - 2);
  return { nodes, cpuNode, memoryless, ...(n.offline === undefined ? {} : { offline: checkWhole('numa.offline (a mask of CPUs)', n.offline, 0, (1 << cpus) - 1) }) };
}

/** An array of u32 words (at most 4 Mi of them), as the core reads them. */
function checkWords(what: string, raw: unknown): number[] {
  if (!Array.isArray(raw) || raw.length > 1 << 22 || !raw.every((v) => Number.isInteger(v) && v >= 0 && v <= 0xffffffff))
    throw new BadRequest(`${what} must be an array of whole numbers 0..2^32-1`);
  return raw as number[];
}

/** A Linux version the model knows, as {major, minor}. */
function checkVersion(raw: unknown): KernelVersion {
  const v = checkRecord('version', raw);
  const text = `${checkWhole('version.major', v.major, 0, 255)}.${checkWhole('version.minor', v.minor, 0, 255)}`;
  try {
    return parseKernelVersion(text);
  } catch (e) {
    throw new BadRequest((e as Error).message);
  }
}

function checkTrue(what: string, raw: unknown): true {
  if (raw !== true) throw new BadRequest(`${what} must be true or absent, got ${JSON.stringify(raw)}`);
  return true;
}

/**
 * Operations the worker runs between driver calls, each bracketed by OP_BEGIN/OP_END records of
 * its own: sysfs writes and the page shortage (the core brackets none).  CPU hotplug is the
 * driver's (SL_SCHED_CPU_DEAD / CPU_ONLINE, bracketed by the core, with micro-steps).
 */
const outOfDriver = (kind: ScriptOp['kind']): boolean => isTune(kind);
const isHotplug = (kind: ScriptOp['kind']): boolean => kind === 'cpuDead' || kind === 'cpuOnline';

/** Ops [from, to) of a script and the interrupts aimed at them, renumbered from 0. */
function slice(s: Script, from: number, to: number): Script {
  if (from === 0 && to === s.ops.length) return s;
  return { ops: s.ops.slice(from, to), irqs: s.irqs.filter((q) => q.atOp >= from && q.atOp < to).map((q) => ({ ...q, atOp: q.atOp - from })) };
}

const EV_OP = EVENT_LAYOUT.op.offset;
/**
 * The page allocator running short is no operation of the core (it takes no
 * operation number and is not traced): its brackets carry this plus its
 * index in the script, a number the core's counter does not reach in a
 * session, so the timeline names it as the step it is.
 */
const UNTRACED_OP = 0x80000000;
const EV_KIND = EVENT_LAYOUT.kind.offset;
const EV_SEQ = EVENT_LAYOUT.seq.offset;

/** An OP_BEGIN or OP_END record for a tuning operation (fields as the core's own brackets: sli_slub_op_event). */
function bracket(kind: number, op: number, opcode: number, result: number, seq: number): Uint8Array {
  const b = new Uint8Array(EVENT_SIZE);
  const v = new DataView(b.buffer);
  v.setUint32(EV_OP, op, true);
  v.setUint16(EV_KIND, kind, true);
  v.setUint16(EVENT_LAYOUT.cache.offset, 1, true);
  v.setUint32(EVENT_LAYOUT.slab.offset, 0xffffffff, true);
  v.setUint32(EVENT_LAYOUT.obj.offset, 0xffffffff, true);
  v.setUint32(EVENT_LAYOUT.arg0.offset, opcode, true);
  v.setInt32(EVENT_LAYOUT.arg1.offset, result, true);
  v.setUint32(EV_SEQ, seq, true);
  return b;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.byteLength), 0);
  return out;
}

/**
 * A world of the engine's sessions.  The driver runs the script's
 * operations; a tuning operation (script.ts) is run here between driver
 * calls, and its events are bracketed by OP_BEGIN/OP_END records of its own
 * (the core writes none for a sysfs write), so it is one operation with one
 * stop like any other.  Inside it, the flushes `flush_all` runs (each its
 * own operation in the core, possibly on other CPUs) are steps of the
 * tuning operation: their brackets are left out and their events stay.
 * The page allocator running short is not traced (it takes and gives back
 * every page of the zone).  So the events drain as one merged ring.
 */
class SlubWorld extends CoreWorld<Script> {
  /** Merged events since the last drain, up to the last tuning operation. */
  private drained: Uint8Array[] = [];
  constructor(
    private readonly api: SlubApi,
    w: number,
    cpus: number,
    /** More than one NUMA node: snapshots carry the nodes (numa.ts). */
    private readonly nodes = 1,
  ) {
    super(api, w, cpus);
  }
  /** The nodes with every CPU quiet (exact counts; barn sheaves by node). */
  private numaNow(): NumaState {
    const t = this.api.topology(this.w);
    const barnSheafNode = new Map<number, number>();
    const states = Array.from({ length: this.nodes }, (_, nid) => this.api.nodeState(this.w, nid));
    // The barns' sheaves come in node order, each barn's full ones then its empty ones (sli_sheaves_walk).
    const snap = decodeSnapshot(this.api.snapshot(this.w));
    const barn: number[] = [];
    for (let i = 0; i < snap.sheaves.nsheaves; i++) {
      const place = snap.sheaves.sheaf.place[i];
      if (place === SheafPlace.BARN_FULL || place === SheafPlace.BARN_EMPTY) barn.push(snap.sheaves.sheaf.id[i] ?? 0);
    }
    let at = 0;
    states.forEach((st, nid) => {
      for (let k = 0; k < (st?.barnFull ?? 0) + (st?.barnEmpty ?? 0); k++) barnSheafNode.set(barn[at++] ?? 0, nid);
    });
    return {
      nodes: states.map((st, nid) => ({
        nid, hasMemory: ((t.memNodes >> nid) & 1) === 1, hasBarn: ((t.barnNodes >> nid) & 1) === 1,
        nrPartial: st?.nrPartial ?? null, nrSlabs: st?.nrSlabs ?? null, totalObjects: st?.totalObjects ?? null, barnFull: st?.barnFull ?? null, barnEmpty: st?.barnEmpty ?? null,
      })),
      exact: states.every((st) => st !== null),
      onlineCpus: t.onlineCpus, cpuNode: t.cpuNode, cpuMemNode: t.cpuMemNode, cpuBarnNode: t.cpuBarnNode, barnSheafNode,
    };
  }
  override snapshot(): Uint8Array {
    const bytes = super.snapshot();
    return this.nodes > 1 ? concat([bytes, encodeNuma(this.numaNow())]) : bytes;
  }
  /**
   * A stop's snapshot with its nodes, `before` read with every CPU quiet just before the driver run
   * holding the stopped operation `op` (runs are cut at CPU hotplug, the only operations that change
   * the topology): the node counts are unknown inside an operation (a slab's node is in the snapshot
   * itself), a CPU going offline is offline from its operation's start (slub_cpu_dead runs after the
   * CPU died), and a barn sheaf not in a barn before is in the barn of the stopped operation's CPU
   * (get_barn: the only barn an operation puts a sheaf into).
   */
  private withNodes(stop: Uint8Array, before: NumaState, op: ScriptOp): Uint8Array {
    const snap = decodeSnapshot(stop);
    const barnSheafNode = new Map<number, number>();
    for (let i = 0; i < snap.sheaves.nsheaves; i++) {
      const place = snap.sheaves.sheaf.place[i];
      const id = snap.sheaves.sheaf.id[i] ?? 0;
      if (place === SheafPlace.BARN_FULL || place === SheafPlace.BARN_EMPTY) barnSheafNode.set(id, before.barnSheafNode.get(id) ?? before.cpuBarnNode[op.cpu] ?? 0);
    }
    const unknown = { nrPartial: null, nrSlabs: null, totalObjects: null, barnFull: null, barnEmpty: null };
    const nodes = before.nodes.map((n) => ({ ...n, ...unknown }));
    const onlineCpus = op.kind === 'cpuDead' ? before.onlineCpus & ~(1 << op.cpu) : before.onlineCpus;
    return concat([stop, encodeNuma({ ...before, nodes, onlineCpus, exact: false, barnSheafNode })]);
  }
  run(script: Script, from: number, to: number, stopAt: number) {
    const results: number[] = [];
    let micro = 0;
    const numa = this.nodes > 1 && stopAt > 0;
    for (let at = from; at < to; ) {
      const op = script.ops[at];
      if (op && outOfDriver(op.kind)) {
        results.push(this.tune(op.kind as TuneKind, op.value ?? 0, at));
        at++;
        continue;
      }
      // One driver run up to the next tuning operation; on NUMA nodes a hotplug operation is a run of its own.
      const cut = (k: ScriptOp['kind']) => outOfDriver(k) || (numa && isHotplug(k));
      let end = at + 1;
      if (!(numa && op && isHotplug(op.kind))) while (end < to && !cut(script.ops[end]?.kind ?? 'alloc')) end++;
      const before = numa ? this.numaNow() : null;
      const r = this.api.run(this.w, slice(script, at, end), end - at, stopAt > 0 ? stopAt - micro : 0);
      results.push(...r.results);
      const stopped = script.ops[at + r.stopOp];
      if (r.stopSnapshot) return { results, stopSnapshot: before && stopped ? this.withNodes(r.stopSnapshot, before, stopped) : r.stopSnapshot };
      micro += r.microsteps;
      at = end;
    }
    return { results, stopSnapshot: null };
  }
  /**
   * Runs tuning operation `index` of the script; returns its result (shrink: 1 if slabs remain;
   * zoneShort: pages held; bootstrap: 0; or an sl_err).
   */
  private tune(kind: TuneKind, value: number, index: number): number {
    const m = this.api.m;
    this.drained.push(mergeRings(this.api.drain(this.w, this.cpus)).events);
    let rc: number;
    if (kind === 'zoneShort') {
      m._sl_api_slub_trace_enable(this.w, 0);
      rc = m._sl_api_slub_fragment(this.w, value);
      m._sl_api_slub_trace_enable(this.w, 1);
    } else if (kind === 'minPartial') rc = m._sl_api_slub_set_min_partial(this.w, value);
    else if (kind === 'cpuPartial') rc = m._sl_api_slub_set_cpu_partial(this.w, value);
    else if (kind === 'bootstrap') rc = m._sl_api_slub_bootstrap_sheaves(this.w);
    else rc = m._sl_api_slub_shrink(this.w);
    const events = mergeRings(this.api.drain(this.w, this.cpus)).events;
    const v = new DataView(events.buffer, events.byteOffset, events.byteLength);
    const kept: number[] = [];
    let op = UNTRACED_OP + index;
    for (let at = 0; at < events.byteLength; at += EVENT_SIZE) {
      const k = v.getUint16(at + EV_KIND, true);
      if (k === EventKind.OP_BEGIN || k === EventKind.OP_END) continue;
      if (k === EventKind.SLUB_TUNE) op = v.getUint32(at + EV_OP, true);
      kept.push(at);
    }
    const seq = (at: number | undefined) => (at === undefined ? 0 : v.getUint32(at + EV_SEQ, true));
    const code = TUNE_OPCODE[kind];
    this.drained.push(
      bracket(EventKind.OP_BEGIN, op, code, 0, seq(kept[0])),
      ...kept.map((at) => events.subarray(at, at + EVENT_SIZE)),
      bracket(EventKind.OP_END, op, code, rc, seq(kept.at(-1))),
    );
    return rc;
  }
  override drain() {
    const rings = [...this.drained, mergeRings(this.api.drain(this.w, this.cpus)).events];
    this.drained = [];
    return [concat(rings)];
  }
}

/**
 * Names every symbolic object ("the 2nd object op 3 allocated") by place,
 * walking one world through the script: right after each operation a later
 * free refers to, the objects it allocated are read from a snapshot.
 * Handlers name objects by place only (an interrupt is injected into a state
 * already on screen).
 */
function resolve(input: Script<AnyRef>, walker: () => ModelWorld<Script>): Script {
  const irqs = input.irqs.map((q) => ({ ...q, handler: { ...q.handler, refs: (q.handler.refs ?? []).filter((r): r is ObjRef => !isSym(r)) } }));
  const ops: ScriptOp[] = [];
  const script: Script = { ops, irqs };
  const wanted = new Set(input.ops.flatMap((o) => (o.refs ?? []).filter(isSym).map((r) => r.allocOf)));
  const made = new Map<number, ObjRef[]>();
  let ran = 0;
  input.ops.forEach((o, i) => {
    const refs = (o.refs ?? []).map((r): ObjRef => {
      if (!isSym(r)) return r;
      if (r.allocOf >= i) throw new BadRequest(`op ${i + 1} frees an object of op ${r.allocOf + 1}, which comes later`);
      const got = made.get(r.allocOf)?.[r.nth];
      if (!got) throw new BadRequest(`op ${i + 1} frees object ${r.nth + 1} of op ${r.allocOf + 1}, which has no such object`);
      return got;
    });
    ops.push(o.refs ? { ...o, refs } : (o as ScriptOp));
    if (!wanted.has(i)) return;
    const w = walker();
    for (; ran < i; ran = Math.min(i, ran + WALK_CHUNK)) {
      w.run(script, ran, Math.min(i, ran + WALK_CHUNK), 0);
      w.drain();
    }
    w.run(script, i, i + 1, 0);
    ran = i + 1;
    const opNum = mergeRings(w.drain()).topOps[0];
    const snap = decodeSnapshot(w.snapshot());
    const out: ObjRef[] = [];
    for (let s = 0; s < snap.nslabs; s++) {
      const first = snap.slab.firstObj[s] ?? 0;
      for (let j = 0; j < (snap.slab.objects[s] ?? 0); j++)
        if (snap.obj.state[first + j] === ObjState.ALLOCATED && snap.obj.allocOp[first + j] === opNum) out.push({ pfn: snap.slab.pfn[s] ?? 0, index: j });
    }
    made.set(i, out);
  });
  return script;
}

/** Fills `slabs` slabs, then frees every third object from another CPU, so every list has members. */
function prefill(api: SlubApi, w: number, cpus: number, objects: number, slabs: number): void {
  const m = api.m;
  let left = slabs * objects;
  const taken: { cpu: number; pairs: Uint32Array }[] = [];
  for (let round = 0; left > 0; round++) {
    const cpu = round % cpus;
    const got = m._sl_api_slub_alloc_bulk(w, cpu, Math.min(left, 2048));
    if (got <= 0) break;
    left -= got;
    taken.push({ cpu, pairs: new Uint32Array(api.copy(m._sl_api_slub_scratch(w, cpu), 8 * got).buffer) });
  }
  for (const { cpu, pairs } of taken)
    for (let i = 0; i < pairs.length / 2; i += 3) m._sl_api_slub_free(w, (cpu + 1) % cpus, pairs[2 * i] ?? 0, pairs[2 * i + 1] ?? 0);
}

function checkFreerun(raw: unknown): FreerunStartParams {
  const p = checkRecord('params', raw);
  return {
    cpus: checkWhole('cpus', p.cpus, 1, MAX_CPUS),
    objectSize: checkWhole('objectSize', p.objectSize, 8, 4096),
    workload: checkOneOf('workload', p.workload, WORKLOADS),
    prefillSlabs: checkWhole('prefillSlabs', p.prefillSlabs, 0, 2048),
    seed: checkWhole('seed', p.seed, 0, 0x7fffffff),
    duty: checkWhole('duty', p.duty, 1, 100),
    rate: checkWhole('rate', p.rate, 0, 10_000_000),
    ...(p.version === undefined ? {} : { version: checkVersion(p.version) }),
  };
}

/** A world filled with `prefillSlabs` slabs whose CPUs run `workload` (on threads of their own when `threads`). */
export function startFreeRun(api: SlubApi, raw: unknown, threads: boolean): FreeRunWorld {
  const p = checkFreerun(raw);
  const kind = WORKLOADS.indexOf(p.workload);
  const objects = (p.version ? api.geometryAt(p.objectSize, p.cpus, p.version) : api.geometry(p.objectSize, p.cpus)).objects;
  const arenaBytes = Math.min(192 << 20, Math.max(16 << 20, 2 * p.prefillSlabs * objects * p.objectSize + (8 << 20)));
  // The cache of the sandbox in that version: 6.18 opts in to sheaves, 7.0 has them always.
  const config = { ...scenarioConfig(undefined, p.cpus, 'cmpxchg', 'detached', undefined, p.version), objectSize: p.objectSize, seed: p.seed, arenaBytes };
  const w = api.createWorld(config, false);
  const m = api.m;
  const count = (cpu: number) => FREERUN_COUNTERS.map((n) => m._sl_api_slub_stat(w, cpu, STAT_NAMES.indexOf(n)));
  let anchor: Uint8Array;
  /** The counters after the prefill: the run reports what its own operations counted. */
  let before: number[][];
  try {
    m._sl_api_slub_trace_enable(w, 0);
    prefill(api, w, p.cpus, objects, p.prefillSlabs);
    anchor = api.snapshot(w);
    before = Array.from({ length: p.cpus }, (_, k) => count(k));
    m._sl_api_slub_trace_enable(w, 1);
    if (threads) {
      const rc = m._sl_api_freerun_start(w, p.cpus, kind, p.seed, p.duty, p.rate);
      if (rc !== 0) throw new SlubError(rc, `could not start the CPU threads: ${api.strerror(rc)}`);
    }
  } catch (e) {
    api.destroyWorld(w);
    throw e;
  }
  return {
    cpus: p.cpus,
    rate: p.rate,
    anchor,
    ringEvents: RING_EVENTS,
    threads,
    runCpu: (cpu, nops, round) => m._sl_api_slub_workload(w, cpu, kind, nops, p.seed + round),
    threadOps: (cpu) => m._sl_api_freerun_ops(cpu),
    threadId: (cpu) => m._sl_api_freerun_thread(cpu),
    counters: (cpu) => {
      const now = count(cpu);
      return Object.fromEntries(FREERUN_COUNTERS.map((n, i) => [n, (now[i] ?? 0) - (before[cpu]?.[i] ?? 0)]));
    },
    drain: (limit) => api.drain(w, p.cpus, limit),
    dropped: (cpu) => api.eventsDropped(w, cpu),
    snapshot: () => (threads ? api.freeRunSnapshot(w) : api.snapshot(w)),
    stop: () => {
      if (threads) m._sl_api_freerun_stop(w);
      else for (let k = 0; k < p.cpus; k++) m._sl_api_slub_workload_drain(w, k);
      api.destroyWorld(w);
    },
  };
}

/** SLUB's sessions over one core's SLUB bindings. */
export function slubSessions(api: SlubApi): SessionModel<WorldConfig, Script<AnyRef>, Script> {
  const create = (config: WorldConfig) => {
    const w = api.createWorld(config, true, config.kernel);
    try {
      if (config.kernelSeed) api.seedWorld(w, config.kernelSeed);
    } catch (e) {
      api.destroyWorld(w);
      throw e;
    }
    return new SlubWorld(api, w, config.cpus, config.numa?.nodes ?? 1);
  };
  const runAll = (config: WorldConfig, script: Script): number[] => {
    const world = create(config);
    try {
      return world.run(script, 0, script.ops.length, 0).results;
    } finally {
      world.destroy();
    }
  };
  return {
    checkWorld,
    checkScript: (raw, world) => checkScript(raw, world.cpus),
    create,
    prepare: (_config, input, walker) => resolve(input, walker),
    opCount: (script) => script.ops.length,
    extra: (config, script): SlubLoadExtra => {
      const form = BULK_FORMS.find((f) => f !== config.bulkFree) ?? 'generic';
      return {
        otherBulkForm: { form, results: script.ops.some((o) => o.kind === 'freeBulk') ? runAll({ ...config, bulkFree: form }, script) : [] },
        statNames: api.statNames(config.version),
      };
    },
    strerror: (rc) => api.strerror(rc),
  };
}

export const slubModel: ModelAdapter = {
  id: 'slub',
  bind(core) {
    const api = new SlubApi(core.module as SlubModule);
    return {
      openSession: replaySessions(slubSessions(api)),
      worldInfo: (raw): SlubWorldInfo => {
        const c = checkWorld(raw);
        const g = c.version ? api.geometryAt(c.objectSize, c.cpus, c.version, c.kernel) : api.geometry(c.objectSize, c.cpus, c.kernel);
        return { size: g.size, order: g.order, objects: g.objects, fallbackOrder: g.fallbackOrder, fallbackObjects: g.fallbackObjects };
      },
      startFreeRun: (raw, threads) => startFreeRun(api, raw, threads),
      benchRow: (p, onThread) => {
        const on = onThread ? 1 : 0;
        if (p.experiment === 'fastpath')
          return { nsPerOp: api.m._sl_api_bench_fastpath(FASTPATHS.indexOf(checkOneOf('variant', p.variant, FASTPATHS)), p.loops, on), ops: p.loops };
        if (p.experiment === 'bulk')
          return {
            nsPerOp: api.m._sl_api_bench_bulk(BULK_FORMS.indexOf(checkOneOf('variant', p.variant, BULK_FORMS)), checkWhole('row', p.row, 1, 1024), p.loops, on),
            ops: p.loops * p.row,
          };
        throw new BadRequest(`experiment must be one of fastpath, bulk, got ${String(p.experiment)}`);
      },
    };
  },
};
