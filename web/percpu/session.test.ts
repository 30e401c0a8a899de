// The percpu model adapter (worker.ts) under the engine's deterministic
// sessions, against the real core (the slablab-node build of the same C
// sources): every scenario on every allocator ends in the state of a fresh
// world that made the same calls directly, Back (a replay from a fresh
// world) and Step forward agree with it at every step, a step is one stop
// however many areas it holds, the stories show what their captions say,
// and side by side runs through the engine's request handlers.
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind } from '../core/events.generated';
import { replaySessions, type Session } from '../lab/session';
import { alignStops } from '../lab/stops';
import { labHandlers } from '../lab/worker-host';
import { loadNodeBridgeCore, loadNodeCore } from '../test/node-core';
import { runFigures, type StepFigures } from './figures';
import { PercpuApi, type PercpuConfig, type PercpuModule, type PercpuRef } from './percpu-api';
import { labWorld, SCENARIOS } from './scenarios';
import { parseScript, type PercpuScript } from './script';
import { ALLOCATORS, decodePercpuSnapshot, type Allocator } from './snapshot';
import { percpuModel, percpuSessions } from './worker';

let api: PercpuApi;
let open: (world: unknown, script: unknown) => Session;

beforeAll(async () => {
  api = new PercpuApi(await loadNodeCore<PercpuModule>());
  open = replaySessions(percpuSessions(api));
});

/** The header's "last operation number": the step brackets take numbers the direct calls do not. */
const LAST_OP = 64;
const withoutOpCount = (b: Uint8Array | ArrayBuffer) => {
  const u = new Uint8Array(b instanceof Uint8Array ? b : new Uint8Array(b)).slice();
  u.fill(0, LAST_OP, LAST_OP + 4);
  return u;
};

/**
 * The same script made as plain calls on a fresh world, without the adapter:
 * the snapshot after each step.  Frees are worked out here from the step
 * fields, not with the adapter's helpers.
 */
function reference(config: PercpuConfig, script: PercpuScript): Uint8Array[] {
  const w = api.create(config, 0);
  try {
    const made: PercpuRef[][] = [];
    return script.steps.map((s, i) => {
      if (s.kind === 'alloc') {
        made[i] = [];
        for (let k = 0; k < s.count; k++) {
          const r = api.alloc(w, s.cpu, s.size, s.align, s.reserved);
          if (r.rc !== 0 || !r.ref) break;
          made[i]?.push(r.ref);
        }
      } else if (s.kind === 'free') {
        const order = Array.from({ length: s.count }, (_, k) => (s.reverse ? s.count - 1 - k : k));
        for (const k of order) {
          const ref = made[s.of]?.[s.first + k * s.stride];
          if (!ref || api.free(w, s.cpu, ref) !== 0) break;
        }
      } else api.free(w, s.cpu, { chunk: s.chunk, offset: s.offset });
      return withoutOpCount(api.snapshot(w));
    });
  } finally {
    api.destroyWorld(w);
  }
}

/** The step figures of a loaded session's run. */
const figuresOf = (events: Uint8Array) => runFigures(decodeEvents(events)).steps;
const sum = (steps: StepFigures[], k: keyof StepFigures, from = 0, to = steps.length) => steps.slice(from, to).reduce((n, f) => n + (f[k] as number), 0);

describe('every scenario on every allocator', () => {
  for (const sc of SCENARIOS)
    for (const allocator of ALLOCATORS)
      it(`${sc.id} on ${allocator}: each step's state is a fresh world's after the same calls, forward and back`, () => {
        const config = labWorld(allocator, 2);
        const { script } = sc.build({ cpus: 2 });
        const session = open(config, script);
        try {
          const r = session.load();
          // One stop per step, and the start: a step is one operation however many areas it holds.
          expect(r.stops).toHaveLength(script.steps.length + 1);
          expect(r.stops.every((s) => s.micro === 0)).toBe(true);
          // Every step did all it asked for.
          expect(r.ops.map((o) => o.result)).toEqual(script.steps.map((s) => (s.kind === 'freeAt' ? 1 : s.count)));
          const want = reference(config, script);
          const at = (k: number) => {
            const reply = session.at(k);
            expect(reply.check).toEqual({ rc: 0, message: '' });
            return withoutOpCount(reply.snapshot);
          };
          // Forward from the kept world, then Back from a fresh one, step by step.
          for (let k = 1; k <= script.steps.length; k++) expect(at(k), `step ${k} forward`).toEqual(want[k - 1]);
          for (let k = script.steps.length - 1; k >= 1; k--) expect(at(k), `step ${k} back`).toEqual(want[k - 1]);
        } finally {
          session.dispose();
        }
        // Back over ten thousand area-map allocations with scans, twenty times: seconds on a loaded 2-core machine.
      }, 60_000);
});

/** Loads a scenario on one allocator: its per-step figures and its end state. */
function run(id: string, allocator: Allocator) {
  const sc = SCENARIOS.find((s) => s.id === id);
  if (!sc) throw new Error(`no scenario ${id}`);
  const session = open(labWorld(allocator, 2), sc.build({ cpus: 2 }).script);
  try {
    const r = session.load();
    return { steps: figuresOf(r.events), end: decodePercpuSnapshot(session.at(r.stops.length - 1).snapshot) };
  } finally {
    session.dispose();
  }
}

describe('what the stories say', () => {
  it('in order: the area map memmoves more per free the longer its map; the bitmaps move nothing', () => {
    const area = run('in-order', 'areamap').steps;
    // Step 2 frees the first area (no merge), step 3 the second (a merge that moves the rest of the map).
    expect(area[1]?.entriesMoved).toBe(0);
    expect(area[2]?.memmoves).toBe(1);
    expect(area[2]?.lastMemmove[0]?.shift).toBe(-1);
    const small = area[3]?.entriesMoved ?? 0;
    const big = area[5]?.entriesMoved ?? 0;
    // 254 then 2048 areas freed in order: the work grows with the square of the map.
    expect(small).toBeGreaterThan((254 * 253) / 2 - 254);
    expect(big / small).toBeGreaterThan(50);
    for (const a of ['bitmap', 'scanhint'] as const) expect(sum(run('in-order', a).steps, 'entriesMoved')).toBe(0);
  });

  it('free orders: every other area merges nothing, the rest merge both neighbours, reverse moves almost nothing', () => {
    const s = run('free-orders', 'areamap').steps;
    expect(s[1]?.entriesMoved).toBe(0);
    expect(s[2]?.lastMemmove[0]?.shift).toBe(-2);
    expect(s[2]?.entriesMoved).toBeGreaterThan(100 * (s[4]?.entriesMoved ?? 0));
  });

  it('second half filled: the area map\'s allocations into the first half move the second half right', () => {
    const s = run('second-half', 'areamap').steps;
    expect(s[2]?.lastMemmove[0]?.shift).toBeGreaterThan(0);
    expect(s[2]?.entriesMoved).toBeGreaterThan(1000 * 1024);
    expect(sum(run('second-half', 'bitmap').steps, 'entriesMoved')).toBe(0);
  });

  it('8-byte-aligned 4-byte areas: the area map scans every full chunk, the bitmap rejects them at their hints, scan hints relegate them', () => {
    const area = run('align8', 'areamap');
    const bitmap = run('align8', 'bitmap');
    const scan = run('align8', 'scanhint');
    // Steps 7 and 8: one aligned allocation each.
    for (const k of [6, 7]) {
      expect(area.steps[k]?.blocksScanned, 'map entries visited').toBeGreaterThan(10_000);
      expect(bitmap.steps[k]?.blocksScanned).toBeLessThan(4);
      expect(bitmap.steps[k]?.chunksScanned).toBe(4);
    }
    expect(scan.steps[6]?.chunksScanned).toBe(3);
    expect(scan.steps[7]?.chunksScanned).toBe(1);
    expect(scan.steps[6]?.slotMoves.filter((m) => m.relegated)).toHaveLength(2);
    // The three full chunks stay relegated to slot 0; the 2017 bitmap keeps them where their free size puts them.
    const full = (s: typeof scan.end) => s.chunks.filter((c) => c.nrAlloc > 2000);
    expect(full(scan.end).map((c) => c.slot)).toEqual([0, 0, 0]);
    expect(full(scan.end).filter((c) => c.relegated).length).toBeGreaterThanOrEqual(2);
    expect(full(bitmap.end).every((c) => !c.relegated)).toBe(true);
  });

  it('a BPF map\'s burst: chunks are created for it and destroyed by the balance step when it goes', () => {
    for (const a of ALLOCATORS) {
      const { steps, end } = run('bpf-burst', a);
      expect(sum(steps, 'chunksCreated', 0, 2)).toBeGreaterThanOrEqual(1);
      expect(sum(steps, 'chunksDestroyed', 2)).toBeGreaterThanOrEqual(1);
      expect(sum(steps, 'pagesPopulated', 0, 2)).toBeGreaterThan(0);
      expect(end.chunks.filter((c) => !c.first && !c.reserved).every((c) => c.nrAlloc === 0)).toBe(true);
    }
  });
});

describe('hand-made scripts and bad steps', () => {
  it('a refused free is the step\'s result, with its events, and the state is unchanged', () => {
    // (Not 6145: v4.13's pcpu_free_area searches for `offset | 1`, so an odd offset names the area one byte before it.)
    const p = parseScript('a0-4-4-3.f0-0-1-1.x0-0-6148.x0-0-6146.x0-7-0', 2);
    if (!p.ok) throw new Error(p.error);
    for (const allocator of ALLOCATORS) {
      const session = open(labWorld(allocator, 2), p.script);
      try {
        const r = session.load();
        const [, , dbl, interior, foreign] = r.ops;
        // A second free of the freed area, a free inside one, a free in no chunk.
        expect(dbl?.error).toMatch(/^double free/);
        expect(interior?.error).toMatch(/^misaligned pointer/);
        expect(foreign?.error).toMatch(/^foreign pointer/);
        expect(withoutOpCount(session.at(5).snapshot)).toEqual(withoutOpCount(session.at(2).snapshot));
        const errors = decodeEvents(r.events).filter((e) => e.kind === EventKind.ERROR);
        expect(errors.length).toBeGreaterThanOrEqual(3);
      } finally {
        session.dispose();
      }
    }
  });

  it('refuses worlds and scripts it cannot run, naming the field', () => {
    const script = { steps: [] };
    expect(() => open({ ...labWorld('bitmap', 2), cpus: 9 }, script)).toThrow(/cpus must be a whole number from 1 to 4/);
    expect(() => open({ ...labWorld('bitmap', 2), allocator: 'slab' }, script)).toThrow(/allocator must be one of areamap, bitmap, scanhint/);
    expect(() => open({ ...labWorld('bitmap', 2), unitSize: 5000 }, script)).toThrow(/multiple of 4096/);
    expect(() => open(labWorld('bitmap', 1), { steps: [{ kind: 'alloc', cpu: 1, size: 4, align: 4, count: 1 }] })).toThrow(/cpu must be/);
    // A layout the model refuses is the core's error.
    const s = open({ ...labWorld('bitmap', 2), staticSize: 16384, dynSize: 4096 }, script);
    expect(() => s.load()).toThrow(/could not create a percpu world/);
  });
});

describe('side by side through the engine', () => {
  it('loads one script on the three allocators and steps them together', async () => {
    const core = await loadNodeBridgeCore();
    const h = labHandlers([percpuModel]);
    const { script } = SCENARIOS[0]?.build({ cpus: 2 }) ?? { script: { steps: [] } };
    const loads = ALLOCATORS.map((a) => h.load({ model: 'percpu', world: labWorld(a, 2), script }, core).result);
    const aligned = alignStops(loads.map((l) => l.stops));
    expect(aligned).toHaveLength(script.steps.length + 1);
    const end = aligned.at(-1);
    const snaps = loads.map((l, i) => decodePercpuSnapshot(h.at({ session: l.session, stop: end?.panes[i] ?? 0 }, core).result.snapshot));
    expect(snaps.map((s) => s.allocator)).toEqual(ALLOCATORS);
    // Every world allocated and freed the same areas, each its own way.
    for (const s of snaps) expect([s.nrAllocs, s.nrFrees]).toEqual([256 + 2048, 256 + 2048]);
    for (const l of loads) h.dispose({ session: l.session }, core);
  });
});
