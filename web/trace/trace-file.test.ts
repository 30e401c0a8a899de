// trace-file.test.ts - the trace view's worker side through the Node core: the 6.18 capture
// replayed a chunk per advance, the overview's bins against the report, one cache's op records
// and its model scrubbed forward and back (the same state either way), the Perfetto pass, and a
// refused file's message.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeSnapshot } from '../slub/snapshot';
import { loadNodeCore } from '../test/node-core';
import type { ByteSource } from '../lab/model';
import { decodeOps, OpKind, opLayout, type ReplayModule } from './replay-api';
import type { LoadedCore } from '../core/bridge-server';
import { traceModel } from './worker';
import { FILE_SLICE_BYTES } from '../lab/file-feed';
import { type AtReply, type CacheOps, TraceFile, type TraceProgress, type TraceReport } from './trace-file';

const fixtures = fileURLToPath(new URL('../../wasm-core/tests/fixtures/replay/', import.meta.url));
const capture = readFileSync(`${fixtures}capture-6.18.slabcap.gz`);
const source = (b: Uint8Array): ByteSource => ({ size: b.length, read: (o, n) => b.subarray(o, o + n) });

let m: ReplayModule;
beforeAll(async () => {
  m = await loadNodeCore<ReplayModule>();
});

function run(bytes: Uint8Array, kernel?: string): { f: TraceFile; steps: TraceProgress[] } {
  const f = new TraceFile(m, source(bytes), kernel);
  const steps: TraceProgress[] = [];
  let offset = 0;
  do {
    const slice = bytes.subarray(offset, offset + FILE_SLICE_BYTES);
    steps.push(f.advance(offset, slice));
    offset += slice.length;
  } while (!steps.at(-1)!.done);
  return { f, steps };
}

describe('a trace file in the worker', () => {
  it('replays a chunk per advance, and the overview adds up to the report', () => {
    const { f, steps } = run(capture);
    expect(steps.length).toBe(Math.max(1, Math.ceil(capture.length / FILE_SLICE_BYTES)));
    const last = steps.at(-1)!;
    expect(last.error).toBeNull();
    expect(last.bytesIn).toBe(capture.length);
    const { result, overview } = f.ask({ type: 'result' }).result as TraceReport;
    expect(result.model.errors).toBe(0);
    expect(last.events).toBe(result.events.parsed);
    const sum = (xs: number[]) => xs.reduce((a, n) => a + n * overview.binS, 0);
    const allocs = overview.series.reduce((a, s) => a + sum(s.allocs), 0);
    const named = result.caches.reduce((a, c) => a + c.allocs, 0);
    expect(Math.round(allocs)).toBe(named);
    expect(overview.series.length).toBeLessThanOrEqual(9);
    expect(overview.series.at(-1)!.name).toBe('other');
    expect(overview.bins).toBeLessThanOrEqual(1024);
    f.dispose();
  });

  it('follows the capture\'s kernel unless told another: 6.18 opts vm_area_struct into sheaves, 6.17 has none, 7.0 gives every cache them', () => {
    const rulesOf = (kernel?: string) => {
      const { f } = run(capture, kernel);
      const { result } = f.ask({ type: 'result' }).result as TraceReport;
      f.dispose();
      expect(result.model.errors).toBe(0);
      const vma = result.caches.find((c) => c.name === 'vm_area_struct')!;
      return { slub: result.model.slub_kernel, sheafCaches: result.model.sheaves.caches, vmaCapacity: vma.sheaf_capacity, vmaRefills: vma.sheaf_refills };
    };
    const captured = rulesOf();
    expect(captured.slub).toBe('6.18');
    expect(captured.vmaCapacity).toBe(32);
    expect(captured.vmaRefills).toBeGreaterThan(0);
    expect(rulesOf('6.17')).toMatchObject({ slub: '6.17', sheafCaches: 0, vmaCapacity: 0, vmaRefills: 0 });
    const v7 = rulesOf('7.0');
    expect(v7.slub).toBe('7.0');
    expect(v7.sheafCaches).toBeGreaterThan(captured.sheafCaches);
  });

  it('takes the slices in order only, and answers done again after the end', () => {
    const f = new TraceFile(m, source(capture));
    const half = capture.length >> 1;
    expect(() => f.advance(1, capture.subarray(1, half))).toThrow(/in order: the next starts at byte 0 of/);
    expect(() => f.advance(0, new Uint8Array(0))).toThrow(/is not empty/);
    expect(() => f.advance(0, new Uint8Array(capture.length + 1))).toThrow(/got \d+ bytes at 0/);
    expect(f.advance(0, capture.subarray(0, half)).done).toBe(false);
    expect(() => f.advance(0, capture.subarray(0, half))).toThrow(new RegExp(`starts at byte ${half} of`));
    const end = f.advance(half, capture.subarray(half));
    expect(end).toMatchObject({ done: true, error: null, bytesIn: capture.length });
    expect(f.advance(0, new Uint8Array(0))).toEqual(end);
    f.dispose();
  });

  it('the worker takes one option, a kernel version, and names what is wrong with any other', () => {
    const open = traceModel.bind({ module: m } as LoadedCore).openFile!;
    const refused = (options: unknown) => {
      try {
        open(source(capture), options).dispose();
        return '';
      } catch (e) {
        return (e as Error).message;
      }
    };
    expect(refused(null)).toBe('');
    expect(refused({ kernel: '7.0' })).toBe('');
    expect(refused({ cpus: 4 })).toContain('takes one option, kernel');
    expect(refused({ kernel: '6.17,7.0' })).toContain('one kernel at a time');
    expect(refused({ kernel: 'seven' })).toMatch(/^kernel: ./);
  });

  it('scrubs a cache: its op records, the model at event N forward and back, N in words', () => {
    // 6.17: each allocation that takes a new slab takes exactly one (a sheaf refill may take several).
    const { f } = run(capture, '6.17');
    const { result } = f.ask({ type: 'result' }).result as TraceReport;
    const vma = result.caches.find((c) => c.name === 'vm_area_struct')!;
    const { ops: bytes, truncated } = f.ask({ type: 'cacheOps', cache: vma.index }).result as CacheOps;
    const ops = decodeOps(bytes, opLayout(m));
    expect((f.ask({ type: 'cacheOps', cache: vma.index }).result as CacheOps).layout).toEqual(opLayout(m));
    expect(truncated).toBe(false);
    expect(ops.filter((o) => o.kind === OpKind.alloc)).toHaveLength(vma.allocs);
    expect(ops.every((o, i) => i === 0 || o.event > ops[i - 1]!.event)).toBe(true);
    const at = (event: number) => f.ask({ type: 'at', cache: vma.index, event }).result as AtReply;
    const k = ops.findIndex((o, i) => i > 0 && o.kind === OpKind.alloc && o.flags & 8); // one that took a new slab
    const before = at(ops[k - 1]!.event);
    const after = at(ops[k]!.event);
    expect(after.line).toContain(ops[k]!.ptr.toString(16));
    expect(after.line).toContain('vm_area_struct');
    expect(decodeSnapshot(after.snapshot!).nslabs).toBe(decodeSnapshot(before.snapshot!).nslabs + 1);
    // Back: replayed from the start, the same state.
    const again = at(ops[k - 1]!.event);
    expect(new Uint8Array(again.snapshot!)).toEqual(new Uint8Array(before.snapshot!));
    expect(() => f.ask({ type: 'at', cache: 0xfffe, event: 1 })).toThrow(/not in this trace/);
    f.dispose();
  });

  it('exports the whole replay to Perfetto in a second pass', () => {
    const { f } = run(capture);
    const { result } = f.ask({ type: 'result' }).result as TraceReport;
    const doc = JSON.parse(f.ask({ type: 'perfetto' }).result as string) as { traceEvents: { ph: string }[] };
    const slices = doc.traceEvents.filter((e) => e.ph === 'X').length;
    expect(slices).toBe(result.pairs.matched + result.pairs.freed_unknown + result.caches.reduce((a, c) => a + c.allocs, 0) + result.percpu.allocs + result.percpu.frees + result.percpu.freed_unknown);
    f.dispose();
  });

  it('says why a file is refused and answers no questions about it', () => {
    const { f, steps } = run(readFileSync(`${fixtures}trace-cmd-6.18.dat.head`));
    expect(steps.at(-1)!.error).toContain('run `trace-cmd report');
    expect(() => f.ask({ type: 'result' })).toThrow(/refused/);
    f.dispose();
    const empty = run(new Uint8Array(0));
    expect(empty.steps.at(-1)!.error).toMatch(/empty/);
    empty.f.dispose();
  });
});
