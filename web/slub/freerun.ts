// freerun.ts - the free-running engine, in the bridge worker (and under Node in
// the tests): a world whose CPUs run a workload on their own, and whose
// per-CPU event rings the view drains once per frame.
//
// With threads (a cross-origin isolated page) each CPU is a pthread of the
// core running the workload in rounds (bindings/api_bench_wasm.c), capped at
// `rate` operations per second so that one frame's events fit its ring.
// Without, `advance` runs the CPUs in turn on this worker, each as many
// operations as `rate` allows for the time since the last frame.
//
// The view anchors its mirror (live-mirror.ts) on the snapshot `start`
// returns and applies each `drain`'s events; it asks for a new snapshot
// (`drain(true)`) only when the mirror cannot follow: the rings dropped
// events, or events contradicted it.

import type { FreerunCpu, FreerunDrain, FreerunStartParams, Workload } from './protocol';
import { SlubBadRequest, whole } from './params';
import { WORKLOADS } from './protocol';
import { mergeRings } from './session';
import { SlubApi, SlubError } from './slub-api';
import { STAT_NAMES } from './snapshot';

const STAT = (name: (typeof STAT_NAMES)[number]) => STAT_NAMES.indexOf(name);
/** Events a drain takes from one ring at most: its capacity (sl_api_slub_world_create). */
const RING_EVENTS = 1 << 15;
/** Operations per CPU per frame when rate is 0 in the interleaved mode (no threads to cap). */
const UNCAPPED_ROUND = 4096;

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

export class FreeRun {
  readonly started = performance.now();
  readonly cpus: number;
  readonly mode: 'threads' | 'interleaved';
  readonly rate: number;
  /** The world's state when the CPUs started, for the view's mirror. */
  readonly anchor: Uint8Array;
  private readonly w: number;
  private readonly kind: number;
  private readonly seed: number;
  private readonly interleavedOps: number[];
  private readonly dropped: number[];
  private lastAdvance = performance.now();
  private round = 0;

  constructor(
    private readonly api: SlubApi,
    p: FreerunStartParams,
    threads: boolean,
  ) {
    this.cpus = whole('cpus', p.cpus, 1, 8);
    this.kind = WORKLOADS.indexOf(p.workload as Workload);
    if (this.kind < 0) throw new SlubBadRequest(`workload must be one of ${WORKLOADS.join(', ')}, got ${String(p.workload)}`);
    const slabs = whole('prefillSlabs', p.prefillSlabs, 0, 2048);
    const objectSize = whole('objectSize', p.objectSize, 8, 4096);
    const duty = whole('duty', p.duty, 1, 100);
    this.rate = whole('rate', p.rate, 0, 10_000_000);
    this.seed = whole('seed', p.seed, 0, 0x7fffffff);
    const objects = api.geometry(objectSize, this.cpus)[7] ?? 1;
    const arenaBytes = Math.min(192 << 20, Math.max(16 << 20, 2 * slabs * objects * objectSize + (8 << 20)));
    this.w = api.createWorld({ cpus: this.cpus, objectSize, fastpath: 'cmpxchg', bulkFree: 'detached', seed: this.seed, arenaBytes }, false);
    this.interleavedOps = new Array<number>(this.cpus).fill(0);
    this.dropped = new Array<number>(this.cpus).fill(0);
    try {
      api.m._sl_api_slub_trace_enable(this.w, 0);
      prefill(api, this.w, this.cpus, objects, slabs);
      this.anchor = api.snapshot(this.w);
      api.m._sl_api_slub_trace_enable(this.w, 1);
      this.mode = threads ? 'threads' : 'interleaved';
      if (threads) {
        const rc = api.m._sl_api_freerun_start(this.w, this.cpus, this.kind, this.seed, duty, this.rate);
        if (rc !== 0) throw new SlubError(rc, `could not start the CPU threads: ${api.strerror(rc)}`);
      }
    } catch (e) {
      api.destroyWorld(this.w);
      throw e;
    }
  }

  /** In the interleaved mode: runs each CPU for the operations `rate` allows since the last call. */
  private advance(): void {
    // With threads each CPU's own thread runs it: acting as it here too would break its per-CPU state.
    if (this.mode !== 'interleaved') return;
    const now = performance.now();
    const due = this.rate ? Math.min(UNCAPPED_ROUND, Math.round((this.rate * (now - this.lastAdvance)) / 1000)) : UNCAPPED_ROUND;
    if (due < 1) return;
    this.lastAdvance = now;
    for (let k = 0; k < this.cpus; k++) {
      const n = this.api.m._sl_api_slub_workload(this.w, k, this.kind, due, this.seed + this.round);
      if (n < 0) throw new SlubError(n, `CPU ${k}'s workload failed: ${this.api.strerror(n)}`);
      this.interleavedOps[k] = (this.interleavedOps[k] ?? 0) + n;
    }
    this.round++;
  }

  private cpu(k: number): FreerunCpu {
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

  /**
   * Everything since the last drain: the rings' events merged into operation
   * order, the events the rings dropped, the CPUs' counters, and with
   * `snapshot` the whole state after those events (to re-anchor on).
   */
  drain(snapshot: boolean): FreerunDrain {
    this.advance();
    const { events } = mergeRings(this.api.drain(this.w, this.cpus, RING_EVENTS));
    let dropped = 0;
    for (let k = 0; k < this.cpus; k++) {
      const d = this.api.m._sl_api_slub_events_dropped(this.w, k);
      dropped += d - (this.dropped[k] ?? 0);
      this.dropped[k] = d;
    }
    return {
      mode: this.mode,
      elapsedMs: performance.now() - this.started,
      cpus: Array.from({ length: this.cpus }, (_, k) => this.cpu(k)),
      events: events.buffer as ArrayBuffer,
      dropped,
      snapshot: snapshot ? (this.api.snapshot(this.w).buffer as ArrayBuffer) : null,
    };
  }

  /** Stops the CPUs, frees what the workloads hold and destroys the world. */
  stop(): void {
    if (this.mode === 'threads') this.api.m._sl_api_freerun_stop(this.w);
    else for (let k = 0; k < this.cpus; k++) this.api.m._sl_api_slub_workload_drain(this.w, k);
    this.api.destroyWorld(this.w);
  }
}
