// worker-handlers.ts - the bridge worker's handlers for the visualizer's
// requests (protocol.ts).  bridge.worker.ts mounts them with bindSlubHandlers;
// they run one at a time, in the worker that owns the core.
//
// Two engines live here: the deterministic session (session.ts: scenarios,
// Step / Micro-step / Back by replay) and the free-run (a separate world in
// which the CPUs run a workload at full speed: on one CPU thread each in the
// threads build, interleaved in rounds on this worker in the single build;
// the view samples it at display rate).

import type { SlubRequests, FreerunCpu, FreerunStartParams, Workload } from './protocol';
import { WORKLOADS } from './protocol';
import { SlubSession } from './session';
import { SlubApi, SlubError, type SlubModule } from './slub-api';
import { STAT_NAMES } from './snapshot';

export class SlubBadRequest extends Error {}

type Reply<T> = { result: T; transfer?: Transferable[] };
export type SlubHandlerSet<C> = {
  [K in keyof SlubRequests]: (params: SlubRequests[K]['params'], core: C) => Reply<SlubRequests[K]['result']>;
};

function whole(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new SlubBadRequest(`${name} must be a whole number from ${min} to ${max}, got ${String(v)}`);
  return v;
}

const STAT = (name: (typeof STAT_NAMES)[number]) => STAT_NAMES.indexOf(name);

class FreeRun {
  readonly started = performance.now();
  private readonly interleavedOps: number[];
  private round = 0;

  constructor(
    private readonly api: SlubApi,
    readonly w: number,
    readonly cpus: number,
    readonly mode: 'threads' | 'interleaved',
    private readonly kind: number,
    private readonly seed: number,
  ) {
    this.interleavedOps = new Array<number>(cpus).fill(0);
  }

  /** In the single build: runs the CPUs in turn for about `budgetMs`. */
  advance(budgetMs: number): void {
    if (this.mode !== 'interleaved') return;
    const t0 = performance.now();
    do {
      for (let k = 0; k < this.cpus; k++)
        this.interleavedOps[k] = (this.interleavedOps[k] ?? 0) + Math.max(0, this.api.m._sl_api_slub_workload(this.w, k, this.kind, 256, this.seed + this.round));
      this.round++;
    } while (performance.now() - t0 < budgetMs);
  }

  cpu(k: number): FreerunCpu {
    const m = this.api.m;
    const s = (name: (typeof STAT_NAMES)[number]) => m._sl_api_slub_stat(this.w, k, STAT(name));
    return {
      ops: this.mode === 'threads' ? m._sl_api_freerun_ops(k) : (this.interleavedOps[k] ?? 0),
      allocFast: s('ALLOC_FASTPATH'),
      allocSlow: s('ALLOC_SLOWPATH'),
      freeFast: s('FREE_FASTPATH'),
      freeSlow: s('FREE_SLOWPATH'),
      cpuCasFail: s('CMPXCHG_DOUBLE_CPU_FAIL'),
      slabCasFail: s('CMPXCHG_DOUBLE_FAIL'),
      threadId: this.mode === 'threads' ? m._sl_api_freerun_thread(k) : 0,
    };
  }

  stop(): void {
    if (this.mode === 'threads') this.api.m._sl_api_freerun_stop(this.w);
    else for (let k = 0; k < this.cpus; k++) this.api.m._sl_api_slub_workload_drain(this.w, k);
    this.api.destroyWorld(this.w);
  }
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

let session: SlubSession | undefined;
let freerun: FreeRun | undefined;

function startFreerun(api: SlubApi, p: FreerunStartParams, threads: boolean): FreeRun {
  const cpus = whole('cpus', p.cpus, 1, 8);
  const kind = WORKLOADS.indexOf(p.workload as Workload);
  if (kind < 0) throw new SlubBadRequest(`workload must be one of ${WORKLOADS.join(', ')}, got ${String(p.workload)}`);
  const slabs = whole('prefillSlabs', p.prefillSlabs, 0, 2048);
  const objects = api.geometry(whole('objectSize', p.objectSize, 8, 4096), cpus)[7] ?? 1;
  const arenaBytes = Math.min(192 << 20, Math.max(16 << 20, 2 * slabs * objects * p.objectSize + (8 << 20)));
  const w = api.createWorld({ cpus, objectSize: p.objectSize, fastpath: 'cmpxchg', bulkFree: 'detached', seed: p.seed, arenaBytes }, false);
  api.m._sl_api_slub_trace_enable(w, 0);
  prefill(api, w, cpus, objects, slabs);
  if (threads) {
    const rc = api.m._sl_api_freerun_start(w, cpus, kind, p.seed, whole('duty', p.duty, 1, 100));
    if (rc !== 0) {
      api.destroyWorld(w);
      throw new SlubError(rc, `could not start the CPU threads: ${api.strerror(rc)}`);
    }
  }
  return new FreeRun(api, w, cpus, threads ? 'threads' : 'interleaved', kind, p.seed);
}

/** The handlers, for a core context C from which `module` gets the Emscripten module. */
export function bindSlubHandlers<C>(module: (core: C) => unknown, hasThreads: (core: C) => boolean): SlubHandlerSet<C> {
  const apiOf = (c: C) => new SlubApi(module(c) as SlubModule);
  return {
    slubGeometry: (p, c) => {
      const g = apiOf(c).geometry(whole('objectSize', p.objectSize, 8, 1 << 20), whole('cpus', p.cpus, 1, 8));
      return { result: { size: g[5] ?? 0, order: g[6] ?? 0, objects: g[7] ?? 0 } };
    },
    slubLoad: (p, c) => {
      whole('cpus', p.config.cpus, 1, 8);
      session = new SlubSession(apiOf(c));
      const r = session.load(p.config, p.script);
      return { result: r, transfer: [r.events] };
    },
    slubAt: (p) => {
      if (!session) throw new SlubBadRequest('no session is loaded');
      const r = session.at(whole('stop', p.stop, 0, 1 << 30));
      return { result: r, transfer: [r.snapshot] };
    },
    freerunStart: (p, c) => {
      freerun?.stop();
      freerun = undefined;
      freerun = startFreerun(apiOf(c), p, hasThreads(c));
      return { result: { mode: freerun.mode, duty: p.duty } };
    },
    freerunSample: (_p, c) => {
      if (!freerun) throw new SlubBadRequest('no free-run is going');
      freerun.advance(6);
      const api = apiOf(c);
      const cpus = Array.from({ length: freerun.cpus }, (_, k) => (freerun as FreeRun).cpu(k));
      const snapshot = api.snapshot(freerun.w).buffer as ArrayBuffer;
      return {
        result: { mode: freerun.mode, elapsedMs: performance.now() - freerun.started, cpus, snapshot },
        transfer: [snapshot],
      };
    },
    freerunStop: () => {
      freerun?.stop();
      freerun = undefined;
      return { result: { ok: true } };
    },
    benchRow: (p, c) => {
      const api = apiOf(c);
      const loops = whole('loops', p.loops, 1, 1 << 30);
      const onThread = hasThreads(c) ? 1 : 0;
      const t0 = performance.now();
      let ns: number;
      if (p.experiment === 'fastpath') {
        const v = ['cmpxchg', 'locked', 'plain'].indexOf(p.variant);
        if (v < 0) throw new SlubBadRequest(`fastpath variant must be cmpxchg, locked or plain, got ${p.variant}`);
        ns = api.m._sl_api_bench_fastpath(v, loops, onThread);
      } else if (p.experiment === 'bulk') {
        const f = ['detached', 'fallback'].indexOf(p.variant);
        if (f < 0) throw new SlubBadRequest(`bulk variant must be detached or fallback, got ${p.variant}`);
        ns = api.m._sl_api_bench_bulk(f, whole('bulk', p.bulk, 1, 1024), loops, onThread);
      } else {
        throw new SlubBadRequest(`unknown experiment ${String(p.experiment)}`);
      }
      if (ns < 0) throw new SlubError(ns, `the benchmark loop failed: ${api.strerror(ns)}`);
      return { result: { nsPerOp: ns, ops: loops * (p.experiment === 'bulk' ? p.bulk : 1), elapsedMs: performance.now() - t0, onThread: onThread === 1 } };
    },
  };
}
