// worker-handlers.ts - the bridge worker's handlers for the visualizer's
// requests (protocol.ts).  bridge.worker.ts mounts them with bindSlubHandlers;
// they run one at a time, in the worker that owns the core.
//
// Two engines live here: the deterministic session (session.ts: scenarios,
// Step / Micro-step / Back by replay) and the free-run (freerun.ts: a
// separate world whose CPUs run a workload on their own, its event rings
// drained once per frame).

import { FreeRun } from './freerun';
import { SlubBadRequest, whole } from './params';
import type { SlubRequests } from './protocol';
import { SlubSession } from './session';
import { SlubApi, SlubError, type SlubModule } from './slub-api';

type Reply<T> = { result: T; transfer?: Transferable[] };
export type SlubHandlerSet<C> = {
  [K in keyof SlubRequests]: (params: SlubRequests[K]['params'], core: C) => Reply<SlubRequests[K]['result']>;
};

let session: SlubSession | undefined;
let freerun: FreeRun | undefined;

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
      freerun = new FreeRun(apiOf(c), p, hasThreads(c));
      const anchor = freerun.anchor.buffer as ArrayBuffer;
      return { result: { mode: freerun.mode, duty: p.duty, rate: freerun.rate, anchor }, transfer: [anchor] };
    },
    freerunDrain: (p) => {
      if (!freerun) throw new SlubBadRequest('no free-run is going');
      const r = freerun.drain(p.snapshot === true);
      return { result: r, transfer: r.snapshot ? [r.events, r.snapshot] : [r.events] };
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
