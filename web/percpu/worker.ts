// worker.ts - the percpu model's adapter for the lab engine, in the bridge
// worker only (web/models.ts): worlds of wasm-core/bindings/api_percpu.c
// stepped through a script for the engine's deterministic sessions, and the
// Benchmarks page's rows of seed 003's experiment.  Everything a request
// carries is checked here before it reaches C.
//
// Each step of a script is one top-level operation (sl_api_pcpu_step_begin
// and _end around the step's own alloc and free calls), so the engine sees
// one stop per step.  The percpu model has no preemption points: a step has
// no micro-steps.  A free names areas by the step that allocated them; each
// world keeps what its own steps allocated, so one script runs on every
// allocator, side by side, each freeing its own areas.

import { BadRequest, checkOneOf, checkRecord, checkWhole } from '../core/requests';
import { CoreWorld, type ModelAdapter, type SessionModel } from '../lab/model';
import { replaySessions } from '../lab/session';
import { PercpuApi, StepKind, type PercpuConfig, type PercpuModule, type PercpuRef } from './percpu-api';
import { benchFigures, checkBenchRow } from './bench';
import { checkScript, freedIndices, MAX_UNITS, type PercpuScript, type Step } from './script';
import { ALLOCATORS, NONE32 } from './snapshot';

/** Events each CPU's ring holds: a step of MAX_AREAS allocations records about six each. */
const RING_EVENTS = 1 << 15;
/** Where a free goes when the step it names allocated fewer areas than that: no chunk (SL_EFOREIGN). */
const NOWHERE: PercpuRef = { chunk: NONE32, offset: NONE32 };

export function checkWorld(raw: unknown): PercpuConfig {
  const c = checkRecord('world', raw);
  const unitSize = checkWhole('unitSize', c.unitSize, 4096, 1 << 20);
  if (unitSize % 4096) throw new BadRequest(`unitSize must be a multiple of 4096, got ${unitSize}`);
  const region = (k: string) => checkWhole(k, c[k], 0, unitSize);
  return {
    allocator: checkOneOf('allocator', c.allocator, ALLOCATORS),
    cpus: checkWhole('cpus', c.cpus, 1, MAX_UNITS),
    unitSize,
    staticSize: region('staticSize'),
    reservedSize: region('reservedSize'),
    dynSize: region('dynSize'),
  };
}

class PercpuWorld extends CoreWorld<PercpuScript> {
  /** Per step: the areas it allocated, in order (what later frees name). */
  private readonly made: PercpuRef[][] = [];

  constructor(
    private readonly api: PercpuApi,
    w: number,
    cpus: number,
  ) {
    super(api, w, cpus);
  }

  run(script: PercpuScript, from: number, to: number) {
    const results: number[] = [];
    for (let i = from; i < to; i++) {
      const s = script.steps[i];
      if (!s) throw new BadRequest(`step ${i} is past the script's end`);
      results.push(this.step(s, i));
    }
    return { results, stopSnapshot: null };
  }

  /** One step as one operation: the areas done (>= 0), or the first sl_err (the calls after it are not made). */
  private step(s: Step, i: number): number {
    const { api, w } = this;
    const kind = s.kind === 'alloc' ? StepKind.ALLOC : StepKind.FREE;
    const op = api.stepBegin(w, s.cpu, kind, s.kind === 'freeAt' ? 1 : s.count, s.kind === 'alloc' ? s.size : 0);
    const t0 = performance.now();
    let result = 0;
    if (s.kind === 'alloc') {
      const got: PercpuRef[] = [];
      for (let k = 0; k < s.count; k++) {
        const { rc, ref } = api.alloc(w, s.cpu, s.size, s.align, s.reserved);
        if (rc !== 0 || !ref) {
          result = rc;
          break;
        }
        got.push(ref);
        result++;
      }
      this.made[i] = got;
    } else {
      const refs = s.kind === 'free' ? freedIndices(s).map((k) => this.made[s.of]?.[k] ?? NOWHERE) : [{ chunk: s.chunk, offset: s.offset }];
      for (const ref of refs) {
        const rc = api.free(w, s.cpu, ref);
        if (rc !== 0) {
          result = rc;
          break;
        }
        result++;
      }
    }
    api.stepEnd(w, s.cpu, op, kind, result, (performance.now() - t0) * 1e6);
    return result;
  }
}

/** The percpu model's sessions over one core's percpu bindings. */
export function percpuSessions(api: PercpuApi): SessionModel<PercpuConfig, PercpuScript, PercpuScript> {
  return {
    checkWorld,
    checkScript: (raw, world) => checkScript(raw, world.cpus),
    create: (config) => new PercpuWorld(api, api.create(config, RING_EVENTS), config.cpus),
    prepare: (_config, script) => script,
    opCount: (script) => script.steps.length,
    strerror: (rc) => api.strerror(rc),
  };
}

export const percpuModel: ModelAdapter = {
  id: 'percpu',
  bind(core) {
    const api = new PercpuApi(core.module as PercpuModule);
    return {
      openSession: replaySessions(percpuSessions(api)),
      benchRow: (p, onThread) => {
        const r = api.benchRow(checkBenchRow(p), onThread);
        return { nsPerOp: ((r.allocMs + r.freeMs) * 1e6) / Math.max(1, r.allocated), ops: r.allocated + r.freed, figures: benchFigures(r) };
      },
    };
  },
};
