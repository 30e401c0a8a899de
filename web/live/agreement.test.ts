// agreement.test.ts - the live view's agreement through the C core (check-api.ts over
// wasm-core/bindings/api_check.c, the Node build of the same C the page loads): hand-built
// snapshots, each class of disagreement on its own, and the real stream of
// fixtures/stream-filp.bin (two real snapshots of filp and the events between them, kept in step
// by pick.ts as the worker does: every disagreement has a cause).
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { CAUSES, Check, CheckError, PATHS, type Agreement, type CheckEvents, type CheckModule } from './check-api';
import { Picked } from './pick';
import { ev, F, FrameReader, isAlloc, K } from './wire';

const PER = 16;
const SIZE = 256;
const base = (i: number) => 0xffff888100000000n + BigInt(i) * 4096n;
const obj = (slab: number, i: number) => base(slab) + BigInt(i * SIZE);
const hex = (v: bigint) => `"0x${v.toString(16)}"`;

/** A slab: its index, 16 object states ('a' allocated, 'f' free, in freelist order), torn, and the CPU whose CPU slab it is. */
interface S {
  i: number;
  state: string;
  torn?: boolean;
  cpu?: number;
}

function slabJson(s: S, cpuSlab: boolean): string {
  const free = [...s.state].flatMap((c, k) => (c === 'a' ? [] : [hex(obj(s.i, k))]));
  const inuse = cpuSlab ? PER : PER - free.length;
  return `{"base": ${hex(base(s.i))}, "objects": ${PER}, "inuse": ${inuse}, "torn": ${s.torn ? 'true' : 'false'}, "freelist": [${cpuSlab ? '' : free.join(', ')}]}`;
}

/** A slablab-snapshot/1 document of one 6.18 cache on 2 CPUs: CPU slabs as given, the other slabs node partial. */
function snapshot(slabs: S[], full = 4): string {
  const cpus = [0, 1].map((k) => {
    const s = slabs.find((x) => x.cpu === k);
    const fl = s ? [...s.state].flatMap((c, j) => (c === 'a' ? [] : [hex(obj(s.i, j))])) : [];
    return `{"cpu": ${k}, "partial": [], "freelist": [${fl.join(', ')}], "slab": ${s ? slabJson(s, true) : 'null'}}`;
  });
  const partial = slabs.filter((s) => s.cpu === undefined).map((s) => slabJson(s, false));
  return `{"format": "slablab-snapshot/1", "kernel": {"release": "6.18.0-test", "nr_cpus": 2, "page_size": 4096}, "caches": [{"name": "test", "object_size": ${SIZE}, "size": ${SIZE}, "inuse": ${SIZE}, "red_left_pad": 0, "order": 0, "objects_per_slab": ${PER}, "min_partial": 5, "cpu_partial": 52, "sheaf_capacity": 0, "cpus": [${cpus.join(', ')}], "nodes": [{"node": 0, "nr_slabs": ${slabs.length + full}, "partial_left_out": 0, "barn": null, "partial": [${partial.join(', ')}]}]}]}`;
}

interface E {
  t: number;
  cpu: number;
  alloc: boolean;
  addr: bigint;
}

function events(list: E[]): CheckEvents {
  return {
    n: list.length,
    tNs: Float64Array.from(list, (e) => e.t),
    cpu: Uint8Array.from(list, (e) => e.cpu),
    alloc: Uint8Array.from(list, (e) => (e.alloc ? 1 : 0)),
    hi: Uint32Array.from(list, (e) => Number(e.addr >> 32n)),
    lo: Uint32Array.from(list, (e) => Number(e.addr & 0xffffffffn)),
  };
}

let core: CheckModule;
beforeAll(async () => {
  core = await loadNodeCore<CheckModule>();
});

const BEFORE: [number, number] = [0, 10];
const AFTER: [number, number] = [1000, 1010];
const A = 'a'.repeat(PER);
const FREE = 'f'.repeat(PER);
const set = (s: string, i: number, c: string) => s.slice(0, i) + c + s.slice(i + 1);

function run(before: S[], after: S[], list: E[], lost = 0): Agreement {
  const c = Check.create(core, snapshot(before), 'test', BEFORE);
  try {
    c.events(events(list));
    return c.compare(snapshot(after), AFTER, lost);
  } finally {
    c.destroy();
  }
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((x, y) => x + y, 0);

describe('agreement (the C check)', () => {
  it('agrees fully when the events explain every change, and the model predicts each allocation', () => {
    const a = run([{ i: 0, state: FREE }], [{ i: 0, state: set(set(FREE, 0, 'a'), 1, 'a'), cpu: 0 }], [
      { t: 100, cpu: 0, alloc: true, addr: obj(0, 0) },
      { t: 110, cpu: 0, alloc: true, addr: obj(0, 1) },
      { t: 120, cpu: 0, alloc: false, addr: obj(0, 1) },
      { t: 130, cpu: 0, alloc: true, addr: obj(0, 1) },
    ]);
    expect(a.slabs_compared).toBe(1);
    expect(a.slabs_agreeing).toBe(1);
    expect(a.objects_agreeing).toBe(PER);
    expect(a.allocs).toBe(3);
    expect(a.hits).toBe(3);
    expect(a.paths.slow).toEqual({ allocs: 1, hits: 1 });
    expect(a.paths.fast).toEqual({ allocs: 2, hits: 2 });
    expect(a.kernel_rules).toBe('6.18');
  });

  it('follows the kernel after a miss: the model takes the kernel’s object and its slab', () => {
    const a = run([{ i: 0, state: FREE }, { i: 1, state: FREE }], [{ i: 0, state: FREE }, { i: 1, state: set(FREE, 7, 'a'), cpu: 1 }], [{ t: 100, cpu: 1, alloc: true, addr: obj(1, 7) }]);
    expect(a.hits).toBe(0);
    expect(a.corrections).toBe(1);
    expect(a.cpu_slab_corrections).toBe(1);
    expect(a.objects_agreeing).toBe(2 * PER);
  });

  it('puts a free the events do not show down to an untraced free, and an unseen allocation to an untraced allocation', () => {
    const a = run([{ i: 0, state: set(A, 15, 'f') }, { i: 1, state: FREE }], [{ i: 0, state: set(set(A, 15, 'f'), 2, 'f') }, { i: 1, state: set(FREE, 4, 'a') }], []);
    expect(a.slabs_agreeing).toBe(0);
    expect(a.causes.untraced_free).toBe(1);
    expect(a.causes.untraced_alloc).toBe(1);
    expect(a.objects_compared - a.objects_agreeing).toBe(2);
  });

  it('blames a torn slab, an event during a read, and lost events before an untraced change', () => {
    const before = [0, 1, 2].map((i) => ({ i, state: set(A, 15, 'f') }));
    const after = [
      { i: 0, state: set(set(A, 15, 'f'), 0, 'f'), torn: true },
      { i: 1, state: set(set(A, 15, 'f'), 1, 'f') },
      { i: 2, state: set(set(A, 15, 'f'), 2, 'f') },
    ];
    const list = [
      { t: 1005, cpu: 0, alloc: false, addr: obj(1, 1) },
      { t: 1006, cpu: 0, alloc: true, addr: obj(1, 1) },
    ];
    const a = run(before, after, list);
    expect(a.causes.torn).toBe(1);
    expect(a.causes.during_read).toBe(1);
    expect(a.causes.untraced_free).toBe(1);
    const lost = run(before, after, list, 3);
    expect(lost.causes.lost).toBe(1);
    expect(lost.causes.untraced_free).toBe(0);
  });

  it('takes a slab first met in a free as full before, and one first met in an allocation as new', () => {
    const a = run([], [{ i: 7, state: set(A, 9, 'f') }, { i: 8, state: set(FREE, 0, 'a'), cpu: 0 }], [
      { t: 200, cpu: 1, alloc: false, addr: obj(7, 9) },
      { t: 210, cpu: 0, alloc: true, addr: obj(8, 0) },
    ]);
    expect(a.slabs_adopted_full).toBe(1);
    expect(a.slabs_bound_new).toBe(1);
    expect(a.objects_agreeing).toBe(2 * PER);
  });

  it('puts the untouched objects of a slab the earlier snapshot did not list down to the guess, or to the read it was met in', () => {
    const after = [{ i: 9, state: set(set(A, 1, 'f'), 0, 'f') }];
    const guessed = run([], after, [{ t: 300, cpu: 0, alloc: false, addr: obj(9, 0) }]);
    expect(guessed.causes.unlisted).toBe(1);
    expect(guessed.causes.untraced_free).toBe(0);
    const inRead = run([], after, [{ t: 5, cpu: 0, alloc: false, addr: obj(9, 0) }]);
    expect(inRead.causes.during_read).toBe(1);
    expect(inRead.causes.unlisted).toBe(0);
  });

  it('counts events outside the geometry or the CPUs instead of applying them, and frees of free objects', () => {
    const s = [{ i: 0, state: set(A, 15, 'f') }];
    const a = run(s, s, [
      { t: 50, cpu: 0, alloc: false, addr: obj(0, 0) + 8n },
      { t: 60, cpu: 9, alloc: false, addr: obj(0, 1) },
      { t: 70, cpu: 0, alloc: false, addr: obj(0, 15) },
    ]);
    expect(a.events_outside).toBe(2);
    expect(a.free_misses.untraced_alloc).toBe(1);
    expect(a.objects_agreeing).toBe(PER);
  });

  it('refuses what it cannot check, with the core’s reason', () => {
    expect(() => Check.create(core, '{"format": "other"}', 'test', BEFORE)).toThrow(CheckError);
    expect(() => Check.create(core, snapshot([]).slice(0, 100), 'test', BEFORE)).toThrow(/JSON/);
    expect(() => Check.create(core, snapshot([]), 'nope', BEFORE)).toThrow(/no cache named 'nope'/);
  });

  it('a looped recording starting again (a restart snapshot) is seeded from, not compared with the pass before', () => {
    // Pass 1: the start state, two allocations, the end state; pass 2 starts from the start state again.
    const start = snapshot([{ i: 0, state: FREE }]);
    const end = snapshot([{ i: 0, state: set(set(FREE, 0, 'a'), 1, 'a'), cpu: 0 }]);
    const pass = (t0: number, p: Picked) => {
      p.push(t0 + 100, 0, true, 0xffff8881, Number(obj(0, 0) & 0xffffffffn));
      p.push(t0 + 110, 0, true, 0xffff8881, Number(obj(0, 1) & 0xffffffffn));
    };
    for (const restart of [true, false]) {
      const p = new Picked('test', core);
      try {
        expect(p.snapshot(start, [0, 10], 0)).toBeNull();
        pass(0, p);
        expect(p.snapshot(end, [1000, 1010], 0)?.a.slabs_agreeing).toBe(1);
        // The end state against the start state, with no event between: only a restart skips that window.
        const back = p.snapshot(start, [2000, 2010], 0, restart);
        if (restart) expect(back).toBeNull();
        else expect(back?.a.objects_agreeing).toBe(PER - 2);
        pass(2000, p);
        const again = p.snapshot(end, [3000, 3010], 0);
        expect(again?.a.slabs_agreeing).toBe(1);
        expect(again?.a.objects_agreeing).toBe(PER);
        expect(p.history.length).toBe(restart ? 2 : 3);
      } finally {
        p.close();
      }
    }
  });

  it('on the real stream: every disagreement between two real snapshots of filp has a cause', () => {
    const r = new FrameReader();
    const frames = r.push(new Uint8Array(readFileSync(new URL('./fixtures/stream-filp.bin', import.meta.url))));
    let filp = -1;
    const p = new Picked('filp', core);
    const points = [];
    for (const f of frames) {
      if (f.type === F.CACHE && f.cache.name === 'filp') filp = f.cache.id;
      else if (f.type === F.EVENTS) {
        const rec = f.batch.records;
        for (let i = 0; i < f.batch.count; i++) {
          const k = ev.kind(rec, i);
          if (k !== K.PCPU_ALLOC && k !== K.PCPU_FREE && ev.cache(rec, i) === filp) p.push(Number(f.batch.baseNs) + ev.dtUs(rec, i) * 1000, ev.cpu(rec, i), isAlloc(k), ev.objHi(rec, i), ev.objLo(rec, i));
        }
      } else if (f.type === F.SNAPSHOT) {
        const point = p.snapshot(f.snapshot, f.takenNs, 0);
        if (point) points.push(point);
      }
    }
    p.close();
    expect(points.length).toBeGreaterThanOrEqual(1);
    const { a, events: n } = points[0] ?? { a: null, events: 0 };
    if (!a) throw new Error('an agreement point');
    expect(n).toBeGreaterThan(100);
    expect(a.slabs_compared).toBeGreaterThan(10);
    expect(a.events_outside).toBe(0);
    expect(a.model_errors).toBe(0);
    expect(sum(a.causes)).toBe(a.objects_compared - a.objects_agreeing);
    expect(sum(a.slab_causes)).toBe(a.slabs_compared - a.slabs_agreeing);
    expect(PATHS.reduce((x, k) => x + a.paths[k].allocs, 0)).toBe(a.allocs);
    expect(a.allocs + a.frees).toBe(n);
    // What this recorded window reaches (10 of 17 slabs, 88 % of the objects, 98 % of the
    // allocations predicted): the disagreements are events during the snapshots' reads.
    expect(a.slabs_agreeing).toBeGreaterThanOrEqual(10);
    expect(a.objects_agreeing / a.objects_compared).toBeGreaterThan(0.85);
    expect(a.hits / a.allocs).toBeGreaterThan(0.95);
    expect(a.causes.during_read).toBeGreaterThan((a.objects_compared - a.objects_agreeing) / 2);
    expect(CAUSES.length).toBe(Object.keys(a.causes).length);
  });
});
