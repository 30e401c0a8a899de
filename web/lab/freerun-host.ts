// freerun-host.ts - the free-running engine, in the bridge worker (and under
// Node in the tests), for any model with a FreeRunWorld: a world whose CPUs
// run a workload on their own, and whose per-CPU event rings the view drains
// once per frame.
//
// With threads (a cross-origin isolated page) each CPU is a pthread of the
// core running the workload in rounds, capped by the model at `rate`
// operations per second so that one frame's events fit its ring.  Without,
// `advance` runs the CPUs in turn on this worker, each as many operations as
// `rate` allows for the time since the last frame.
//
// The view anchors its mirror on the snapshot the start returns and applies
// each drain's events; it asks for a new snapshot (`drain(true)`) only when
// the mirror cannot follow: the rings dropped events, or events contradicted
// it (use-free-run.ts).

import type { FreerunCpu, FreerunDrain, FreerunMode } from '../core/bridge-protocol';
import { CoreError } from '../core/core-api';
import type { FreeRunWorld } from './model';
import { mergeRings } from './stops';

/** Operations per CPU per frame when rate is 0 in the interleaved mode (no threads to cap). */
const UNCAPPED_ROUND = 4096;

export class FreeRunHost {
  readonly started = performance.now();
  private readonly interleavedOps: number[];
  private readonly droppedSeen: number[];
  private lastAdvance = performance.now();
  private round = 0;

  constructor(readonly world: FreeRunWorld) {
    this.interleavedOps = new Array<number>(world.cpus).fill(0);
    this.droppedSeen = new Array<number>(world.cpus).fill(0);
  }

  get mode(): FreerunMode {
    return this.world.threads ? 'threads' : 'interleaved';
  }

  /** In the interleaved mode: runs each CPU for the operations `rate` allows since the last call. */
  private advance(): void {
    // With threads each CPU's own thread runs it: acting as it here too would break its per-CPU state.
    if (this.world.threads) return;
    const now = performance.now();
    const rate = this.world.rate;
    const due = rate ? Math.min(UNCAPPED_ROUND, Math.round((rate * (now - this.lastAdvance)) / 1000)) : UNCAPPED_ROUND;
    if (due < 1) return;
    this.lastAdvance = now;
    for (let k = 0; k < this.world.cpus; k++) {
      const n = this.world.runCpu(k, due, this.round);
      if (n < 0) throw new CoreError(n, `CPU ${k}'s workload failed`);
      this.interleavedOps[k] = (this.interleavedOps[k] ?? 0) + n;
    }
    this.round++;
  }

  private cpu(k: number): FreerunCpu {
    const w = this.world;
    return {
      ops: w.threads ? w.threadOps(k) : (this.interleavedOps[k] ?? 0),
      threadId: w.threads ? w.threadId(k) : 0,
      counters: w.counters(k),
    };
  }

  /**
   * Everything since the last drain: the rings' events merged into emission
   * order, the events the rings dropped, the CPUs' counters, and with
   * `snapshot` the whole state after those events (to re-anchor on).
   */
  drain(snapshot: boolean): FreerunDrain {
    this.advance();
    const { events } = mergeRings(this.world.drain(this.world.ringEvents));
    let dropped = 0;
    for (let k = 0; k < this.world.cpus; k++) {
      const d = this.world.dropped(k);
      dropped += d - (this.droppedSeen[k] ?? 0);
      this.droppedSeen[k] = d;
    }
    return {
      mode: this.mode,
      elapsedMs: performance.now() - this.started,
      cpus: Array.from({ length: this.world.cpus }, (_, k) => this.cpu(k)),
      events: events.buffer as ArrayBuffer,
      dropped,
      snapshot: snapshot ? (this.world.snapshot().buffer as ArrayBuffer) : null,
    };
  }

  stop(): void {
    this.world.stop();
  }
}
