// wire.test.ts - the page's decoder of `slablab serve`'s stream against a stream the real server
// wrote on this project's machine (fixtures/stream-filp.bin: `slablab serve --caches filp
// --snapshot-interval 1`, a page watching filp for 2.6 s while 200 files were opened and closed
// every 50 ms), fed in every chunking; and malformed streams refused with what is wrong.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeKernelSnapshot } from '../kernel/snapshot-file';
import { ev, F, FrameReader, K, WireError, type Frame } from './wire';

const stream = new Uint8Array(readFileSync(new URL('./fixtures/stream-filp.bin', import.meta.url)));

function readAll(chunk: number): Frame[] {
  const r = new FrameReader();
  const out: Frame[] = [];
  for (let i = 0; i < stream.length; i += chunk) out.push(...r.push(stream.subarray(i, i + chunk)));
  expect(r.pending).toBe(0);
  return out;
}

describe('wire', () => {
  it('reads the real stream: HELLO first, filp named before its events, filp allocations and frees, snapshots of filp', () => {
    const frames = readAll(65536);
    expect(frames[0]?.type).toBe(F.HELLO);
    const names = new Map<number, string>();
    const counts = new Map<number, number>();
    let snapshots = 0;
    for (const f of frames) {
      if (f.type === F.CACHE) names.set(f.cache.id, f.cache.name);
      if (f.type === F.EVENTS) {
        for (let i = 0; i < f.batch.count; i++) {
          const c = ev.cache(f.batch.records, i);
          expect(names.has(c)).toBe(true);
          counts.set(ev.kind(f.batch.records, i), (counts.get(ev.kind(f.batch.records, i)) ?? 0) + 1);
        }
      }
      if (f.type === F.SNAPSHOT) {
        snapshots++;
        expect(f.takenNs[0]).toBeLessThanOrEqual(f.takenNs[1]);
        const doc = decodeKernelSnapshot(f.snapshot);
        expect(doc.caches.map((c) => c.name)).toEqual(['filp']);
      }
    }
    expect([...names.values()]).toEqual(['filp']);
    expect(counts.get(K.ALLOC) ?? 0).toBeGreaterThan(1000);
    expect(counts.get(K.FREE) ?? 0).toBeGreaterThan(1000);
    expect(snapshots).toBeGreaterThanOrEqual(2);
  });

  it('gives the same frames however the bytes are cut (1, 7, 4096 bytes at a time)', () => {
    const whole = readAll(stream.length);
    const kinds = (fs: Frame[]) => fs.map((f) => (f.type === F.EVENTS ? `${f.type}:${f.batch.count}:${ev.objLo(f.batch.records, 0)}` : String(f.type)));
    for (const chunk of [4096, 7]) expect(kinds(readAll(chunk))).toEqual(kinds(whole));
    expect(kinds(readAll(1)).slice(0, 40)).toEqual(kinds(whole).slice(0, 40));
  });

  it('refuses an EVENTS frame whose length does not match its count, a huge frame, and a foreign format', () => {
    const bad = new Uint8Array(8 + 24 + 10);
    const v = new DataView(bad.buffer);
    v.setUint32(0, 24 + 10, true);
    bad[4] = F.EVENTS;
    v.setUint32(8, 1, true);
    expect(() => new FrameReader().push(bad)).toThrow(/an EVENTS frame of 34 bytes says 1 events/);
    const huge = new Uint8Array(8);
    new DataView(huge.buffer).setUint32(0, 0xffffffff, true);
    expect(() => new FrameReader().push(huge)).toThrow(WireError);
    const hello = new TextEncoder().encode('{"format":"slablab-live/9"}');
    const h = new Uint8Array(8 + hello.length);
    new DataView(h.buffer).setUint32(0, hello.length, true);
    h[4] = F.HELLO;
    h.set(hello, 8);
    expect(() => new FrameReader().push(h)).toThrow(/speaks slablab-live\/9/);
  });

  it('reads a recording\'s restart snapshot (serve --from --loop) and a plain one, the snapshot text kept as it is', () => {
    const frame = (json: string) => {
      const b = new TextEncoder().encode(json);
      const f = new Uint8Array(8 + b.length);
      new DataView(f.buffer).setUint32(0, b.length, true);
      f[4] = F.SNAPSHOT;
      f.set(b, 8);
      return f;
    };
    const [a] = new FrameReader().push(frame('{"taken_ns":[5,6],"restart":true,"snapshot":{"format":"slablab-snapshot/1"}}'));
    const [b] = new FrameReader().push(frame('{"taken_ns":[7,8],"snapshot":{"format":"slablab-snapshot/1"}}'));
    expect(a).toEqual({ type: F.SNAPSHOT, takenNs: [5, 6], restart: true, snapshot: '{"format":"slablab-snapshot/1"}' });
    expect(b).toEqual({ type: F.SNAPSHOT, takenNs: [7, 8], restart: false, snapshot: '{"format":"slablab-snapshot/1"}' });
    expect(() => new FrameReader().push(frame('{"taken_ns":[5,6],"restart":false,"snapshot":{}}'))).toThrow(/without its taken_ns wrapper/);
  });
});
