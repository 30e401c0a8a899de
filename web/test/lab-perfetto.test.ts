// lab-perfetto.test.ts - a lab session exported to Perfetto (web/lab/perfetto.ts) and parsed
// back, for the SLUB and percpu models through their own sessions and event words: a track per
// CPU, a slice per operation, the live-object and slab (chunk) counters against what the script
// did, and a flow for each free on another CPU than its allocation's.  It lives here, not in
// web/lab/, because it runs real views (the engine may not import them).
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeEvents, EventKind } from '../core/events.generated';
import { OpNames } from '../lab/describe';
import { labPerfetto } from '../lab/perfetto';
import { type Loaded, replaySessions } from '../lab/session';
import { PERCPU_EVENT_WORDS } from '../percpu/describe';
import { PercpuApi, type PercpuModule } from '../percpu/percpu-api';
import { labWorld } from '../percpu/scenarios';
import type { PercpuScript } from '../percpu/script';
import { percpuSessions } from '../percpu/worker';
import { SLUB_EVENT_WORDS } from '../slub/describe';
import type { AnyRef, Script, SymRef } from '../slub/script';
import { SlubApi, type SlubModule } from '../slub/slub-api';
import { slubSessions } from '../slub/worker';
import { loadNodeCore } from './node-core';

interface Ev {
  ph: string;
  name?: string;
  pid: number;
  tid?: number;
  ts: number;
  id?: number;
  args?: Record<string, number | string>;
}

let slub: SlubApi;
let percpu: PercpuApi;
beforeAll(async () => {
  slub = new SlubApi(await loadNodeCore<SlubModule>());
  percpu = new PercpuApi(await loadNodeCore<PercpuModule>());
});

function exportOf(r: Loaded, words: typeof SLUB_EVENT_WORDS, label: string) {
  const events = decodeEvents(r.events);
  const names = new OpNames(r.ops, (i) => `op ${i}`);
  const doc = JSON.parse(labPerfetto('test', [{ label, events, names }], words)) as { traceEvents: Ev[] };
  return { events, doc: doc.traceEvents };
}

const lastCounter = (doc: Ev[], name: string, key: string) => doc.filter((e) => e.ph === 'C' && e.name === name).at(-1)?.args?.[key];

describe('lab sessions exported to Perfetto', () => {
  it('SLUB: CPU tracks, operation slices, live objects and slabs, flows for remote frees', () => {
    // 40 allocations alternating CPUs, then 30 frees, each on the CPU after its allocation's: every free remote.
    const allocs = Array.from({ length: 40 }, (_, i) => ({ kind: 'alloc' as const, cpu: i % 2 }));
    const frees = Array.from({ length: 30 }, (_, i) => ({ kind: 'free' as const, cpu: (i + 1) % 2, refs: [{ allocOf: i, nth: 0 } satisfies SymRef] }));
    const script: Script<AnyRef> = { ops: [...allocs, ...frees], irqs: [] };
    const session = replaySessions(slubSessions(slub))({ cpus: 2, objectSize: 256, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 1, arenaBytes: 1 << 20 }, script);
    const { events, doc } = exportOf(session.load(), SLUB_EVENT_WORDS, 'cmpxchg');
    session.dispose();
    expect(doc.filter((e) => e.ph === 'M' && e.name === 'thread_name').map((e) => e.args?.name)).toEqual(['CPU 0', 'CPU 1']);
    expect(doc.filter((e) => e.ph === 'B')).toHaveLength(events.filter((e) => e.kind === EventKind.OP_BEGIN).length);
    expect(doc.filter((e) => e.ph === 'E')).toHaveLength(doc.filter((e) => e.ph === 'B').length);
    expect(doc.filter((e) => e.ph === 'B' && e.tid === 1).length).toBe(20 + 15);
    const cache = events.find((e) => e.kind === EventKind.SLUB_NEW_SLAB)!.cache;
    expect(lastCounter(doc, `cache ${cache} live objects`, 'live')).toBe(10);
    const slabs = events.filter((e) => e.kind === EventKind.SLUB_NEW_SLAB).length - events.filter((e) => e.kind === EventKind.SLUB_DISCARD_SLAB).length;
    expect(lastCounter(doc, `cache ${cache} slabs`, 'slabs')).toBe(slabs);
    const starts = doc.filter((e) => e.ph === 's');
    const ends = doc.filter((e) => e.ph === 'f');
    expect(starts).toHaveLength(30);
    expect(ends.map((e) => e.id)).toEqual(starts.map((e) => e.id));
    // Each flow runs from the allocating CPU to the other one, forward in time.
    starts.forEach((s, i) => {
      expect(ends[i]!.tid).toBe(1 - s.tid!);
      expect(ends[i]!.ts).toBeGreaterThan(s.ts);
    });
  });

  it('percpu: areas live and chunks, no flow for frees on the allocating CPU', () => {
    const script: PercpuScript = {
      steps: [
        { kind: 'alloc', cpu: 0, size: 64, align: 8, count: 12, reserved: false },
        { kind: 'alloc', cpu: 0, size: 4096, align: 8, count: 3, reserved: false },
        { kind: 'free', cpu: 0, of: 0, first: 0, count: 5, stride: 2, reverse: false },
      ],
    };
    const session = replaySessions(percpuSessions(percpu))(labWorld('scanhint', 2), script);
    const { events, doc } = exportOf(session.load(), PERCPU_EVENT_WORDS, '');
    session.dispose();
    const allocs = events.filter((e) => e.kind === EventKind.PCPU_ALLOC).length;
    expect(allocs).toBe(15);
    expect(lastCounter(doc, 'percpu live objects', 'live')).toBe(15 - 5);
    const chunks = events.filter((e) => e.kind === EventKind.PCPU_CHUNK_CREATE).length - events.filter((e) => e.kind === EventKind.PCPU_CHUNK_DESTROY).length;
    expect(lastCounter(doc, 'percpu chunks', 'chunks')).toBe(chunks);
    expect(doc.filter((e) => e.ph === 's')).toHaveLength(0);
    expect(doc.find((e) => e.ph === 'M' && e.name === 'process_name')?.args?.name).toBe('test');
  });
});
