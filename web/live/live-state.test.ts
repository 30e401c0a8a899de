// live-state.test.ts - the worker's counting on built batches: per-second bins per cache over the
// window (old seconds fall out), remote frees (freed on another CPU than the allocating one),
// percpu and page-sized kmalloc counted apart, busiest call sites, names kept across a restart.
// The counting is the core's C (wasm-core/src/replay/live_count.c) as WebAssembly: these cases
// test it through the page's wrapper (wasm-core/tests/test_live_count.c tests the C natively).
// The worker's path (push: the stream's chunks cut into frames and counted in C) against a stream
// the real server wrote (fixtures/stream-filp.bin, wire.test.ts says how), read as wire.ts reads it.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LiveState, OWNERS, TABLE_CACHES, WINDOW_S } from './live-state';
import { ev, EVENT_BYTES, F, FrameReader, K, WireError, type EventBatch, type Frame } from './wire';

interface E {
  kind: number;
  cpu: number;
  cache: number;
  site?: number;
  tS: number;
  obj: number;
}

function batch(events: E[], baseS: number): EventBatch {
  const buf = new ArrayBuffer(events.length * EVENT_BYTES);
  const v = new DataView(buf);
  events.forEach((e, i) => {
    const o = i * EVENT_BYTES;
    v.setUint8(o, e.kind);
    v.setUint8(o + 1, e.cpu);
    v.setUint16(o + 2, e.cache, true);
    v.setUint32(o + 4, e.site ?? 0, true);
    v.setUint32(o + 8, Math.round((e.tS - baseS) * 1e6), true);
    v.setUint32(o + 16, e.obj, true);
    v.setUint32(o + 20, 0xffff8881, true);
  });
  return { count: events.length, baseNs: BigInt(baseS) * 1_000_000_000n, kernelLost: 7, records: v };
}

describe('LiveState', () => {
  it('bins allocations and frees per second per cache and counts remote frees', () => {
    const s = new LiveState();
    s.nameCache(1, 'filp');
    s.nameSite(5, 'alloc_empty_file+0x3c');
    s.add(
      batch(
        [
          { kind: K.ALLOC, cpu: 0, cache: 1, site: 5, tS: 100.1, obj: 0x1000 },
          { kind: K.ALLOC, cpu: 0, cache: 1, site: 5, tS: 100.2, obj: 0x2000 },
          { kind: K.FREE, cpu: 1, cache: 1, tS: 101.5, obj: 0x1000 }, // remote
          { kind: K.FREE, cpu: 0, cache: 1, tS: 101.6, obj: 0x2000 }, // local
          { kind: K.PCPU_ALLOC, cpu: 0, cache: 0, tS: 101.7, obj: 0x30 },
          { kind: K.KMALLOC, cpu: 1, cache: 0, tS: 101.8, obj: 0x4000 },
        ],
        100,
      ),
    );
    const sum = s.summary();
    const filp = sum.caches.find((c) => c.name === 'filp');
    expect(filp?.allocs.slice(-2)).toEqual([2, 0]);
    expect(filp?.frees.slice(-2)).toEqual([0, 2]);
    expect(filp?.remote.slice(-2)).toEqual([0, 1]);
    expect(sum.caches.map((c) => c.name).sort()).toEqual(['filp', 'kmalloc (pages)', 'percpu']);
    expect(sum.sites[0]?.name).toBe('alloc_empty_file+0x3c');
    expect(sum.sites[0]?.allocs).toBeCloseTo(2 * 0.5 ** (1 / 10), 5);
    expect(sum.kernelLost).toBe(7);
    expect(sum.events).toBe(6);
  });

  it("reports what the server left out as its own, and by which rule, from its status (#21)", () => {
    const s = new LiveState();
    expect(s.summary().ownByContext).toBeNull(); // no status yet, or a server that does not say
    const status = { events_in: 9, sent: 9, kernel_lost: 0, server_dropped: 1, snapshots_dropped: 0, queued_bytes: 0, pages: 1, attached: true, error: '' };
    s.status = status;
    expect(s.summary().ownByContext).toBeNull();
    s.status = { ...status, server_own: 42, own_by_context: false, own_note: 'the per-CPU places did not check out on CPU 0' };
    const sum = s.summary();
    expect([sum.serverOwn, sum.ownByContext, sum.ownNote, sum.serverDropped]).toEqual([42, false, 'the per-CPU places did not check out on CPU 0', 1]);
  });

  it('lets seconds older than the window fall out, and skips events older than it', () => {
    const s = new LiveState();
    s.nameCache(1, 'dentry');
    s.add(batch([{ kind: K.ALLOC, cpu: 0, cache: 1, tS: 10, obj: 0x10 }], 10));
    s.add(batch([{ kind: K.ALLOC, cpu: 0, cache: 1, tS: 10 + WINDOW_S + 5, obj: 0x20 }], 10 + WINDOW_S + 5));
    const c = s.summary().caches.find((x) => x.name === 'dentry');
    expect(c?.allocs.reduce((a, b) => a + b, 0)).toBe(1);
    s.add(batch([{ kind: K.ALLOC, cpu: 0, cache: 1, tS: 12, obj: 0x30 }], 12));
    expect(s.summary().caches.find((x) => x.name === 'dentry')?.allocs.reduce((a, b) => a + b, 0)).toBe(1);
  });

  it('keeps the history by name when a restarted server numbers caches anew', () => {
    const s = new LiveState();
    s.nameCache(1, 'filp');
    s.add(batch([{ kind: K.ALLOC, cpu: 0, cache: 1, tS: 50, obj: 0x10 }], 50));
    s.resetNames();
    s.nameCache(3, 'filp');
    expect(s.cacheName(3)).toBe('filp');
    s.add(batch([{ kind: K.ALLOC, cpu: 0, cache: 3, tS: 51, obj: 0x20 }], 51));
    expect(s.summary().caches.find((x) => x.name === 'filp')?.total).toBe(2);
  });

  it('stays bounded over a long stream: objects never freed, caches that come and go, many seconds', () => {
    // 2.5 windows of seconds; each second 4 steady caches, one cache of its own (created and
    // gone, as per-mount or per-device caches are), and 700 allocations of objects never freed:
    // 525,000 owners offered against the two generations' 2 * OWNERS.
    const s = new LiveState();
    for (let id = 1; id <= 4; id++) s.nameCache(id, `steady-${id}`);
    const seconds = Math.round(WINDOW_S * 2.5);
    let obj = 0x1000;
    for (let sec = 0; sec < seconds; sec++) {
      const own = 5 + sec;
      s.nameCache(own, `gone-${sec}`);
      const events: E[] = [];
      for (let i = 0; i < 700; i++) events.push({ kind: K.ALLOC, cpu: i & 3, cache: i % 5 === 4 ? own : 1 + (i % 4), site: 1 + (i % 100), tS: sec + i / 1000, obj: (obj += 64) });
      s.add(batch(events, sec));
    }
    const sizes = s.sizes();
    expect(700 * seconds).toBeGreaterThan(2 * OWNERS);
    expect(sizes.owners).toBeLessThanOrEqual(2 * OWNERS);
    // Only caches with an event in the window are kept: the 4 steady ones and the last WINDOW_S seconds' own.
    expect(sizes.caches).toBeLessThanOrEqual(4 + WINDOW_S);
    expect(sizes.cacheIds).toBeLessThanOrEqual(4 + WINDOW_S);
    expect(sizes.sites).toBe(100);
    const sum = s.summary();
    expect(sum.caches.length).toBe(TABLE_CACHES);
    expect(sum.caches.every((c) => c.allocs.length === WINDOW_S)).toBe(true);
    expect(sum.caches.slice(0, 4).map((c) => c.name).sort()).toEqual(['steady-1', 'steady-2', 'steady-3', 'steady-4']);
    expect(sum.events).toBe(700 * seconds);
  }, 60_000);

  it('tells remote frees as a Map of owners in two generations would, over 600,000 random events', () => {
    // The owner table (open addressing, deletion by shifting back) against the plain reference:
    // objects from a pool small enough to be freed and reused, large enough to rotate generations.
    const s = new LiveState();
    s.nameCache(1, 'kmalloc-64');
    let owners = new Map<number, number>();
    let old = new Map<number, number>();
    let remote = 0;
    let rotations = 0;
    let seed = 12345;
    const rnd = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
    for (let sec = 0; sec < 60; sec++) {
      const events: E[] = [];
      for (let i = 0; i < 10_000; i++) {
        const obj = 0x100000 + Math.floor(rnd() * 1_000_000) * 64;
        const cpu = Math.floor(rnd() * 4);
        const alloc = rnd() < 0.65;
        events.push({ kind: alloc ? K.ALLOC : K.FREE, cpu, cache: 1, tS: sec + i / 20_000, obj });
        const key = 0x0881 * 4294967296 + obj;
        if (alloc) {
          owners.set(key, cpu);
          if (owners.size >= OWNERS) {
            old = owners;
            owners = new Map();
            rotations++;
          }
        } else {
          const o = owners.get(key) ?? old.get(key);
          if (o !== undefined && o !== cpu) remote++;
          owners.delete(key);
          old.delete(key);
        }
      }
      s.add(batch(events, sec));
    }
    const counted = s.summary().caches.find((c) => c.name === 'kmalloc-64')?.remote.reduce((a, b) => a + b, 0);
    expect(remote).toBeGreaterThan(10_000);
    expect(rotations).toBeGreaterThan(0);
    expect(counted).toBe(remote);
    expect(s.sizes().owners).toBe(owners.size + old.size);
  }, 60_000); // a second alone; minutes on a machine shared with other builds

  it('hands each event to the callback, records at any alignment, and frees its C side on dispose', () => {
    const s = new LiveState();
    s.nameCache(2, 'kmalloc-32');
    const b = batch(
      [
        { kind: K.ALLOC, cpu: 3, cache: 2, tS: 7.25, obj: 0xabc0 },
        { kind: K.FREE, cpu: 1, cache: 2, tS: 7.5, obj: 0xabc0 },
      ],
      7,
    );
    // The same records one byte into a buffer: not 4-byte aligned, as a frame cut across chunks can be.
    const odd = new Uint8Array(b.records.byteLength + 1);
    odd.set(new Uint8Array(b.records.buffer), 1);
    const seen: [number, number, boolean, number, number][] = [];
    s.add({ ...b, records: new DataView(odd.buffer, 1, b.records.byteLength) }, (cid, t, alloc, hi, lo) => seen.push([cid, t, alloc, hi, lo]));
    expect(seen).toEqual([
      [2, 7.25e9, true, 0xffff8881, 0xabc0],
      [2, 7.5e9, false, 0xffff8881, 0xabc0],
    ]);
    expect(s.summary().caches.find((c) => c.name === 'kmalloc-32')?.remote.at(-1)).toBe(1);
    expect(s.sizes().owners).toBe(0);
    s.dispose();
    s.dispose(); // a second dispose does nothing
  });

  describe('reading the stream in C (push, the worker\'s path)', () => {
    const stream = new Uint8Array(readFileSync(new URL('./fixtures/stream-filp.bin', import.meta.url)));
    // The reference: wire.ts's reader in JavaScript, each EVENTS frame counted with add.
    const ref = new LiveState();
    const frames: Frame[] = new FrameReader().push(stream);
    const filpEvents: string[] = [];
    let newest = 0;
    for (const f of frames) {
      if (f.type === F.CACHE) ref.nameCache(f.cache.id, f.cache.name);
      if (f.type === F.EVENTS) {
        ref.add(f.batch);
        const r = f.batch.records;
        const base = Number(f.batch.baseNs);
        for (let i = 0; i < f.batch.count; i++) {
          if (ev.kind(r, i) !== K.PCPU_ALLOC && ev.kind(r, i) !== K.PCPU_FREE) filpEvents.push(`${ev.kind(r, i)}:${ev.cpu(r, i)}:${base + ev.dtUs(r, i) * 1000}:${ev.objLo(r, i)}`);
          newest = Math.max(newest, base + ev.dtUs(r, i) * 1000);
        }
      }
    }
    const others = (fs: Frame[]) => fs.filter((f) => f.type !== F.EVENTS).map((f) => f.type);

    it('counts as wire.ts plus add do, hands back the other frames in order, however the bytes are cut', () => {
      expect(filpEvents.length).toBeGreaterThan(2000);
      for (const chunk of [65536, 4096, 7]) {
        const s = new LiveState();
        const got: Frame[] = [];
        for (let i = 0; i < stream.length; i += chunk) got.push(...s.push(stream.subarray(i, i + chunk)));
        expect(s.pending).toBe(0);
        expect(s.events).toBe(ref.events);
        expect(s.summary().caches).toEqual(ref.summary().caches);
        expect(s.kernelLost).toBe(frames.findLast((f) => f.type === F.EVENTS)?.batch.kernelLost);
        expect(s.newestEventNs).toBe(newest);
        // No events come back unwatched; every other frame does.
        expect(got.filter((f) => f.type === F.EVENTS)).toEqual([]);
        expect(others(got)).toEqual(others(frames));
        expect(got[0]?.type).toBe(F.HELLO);
        expect(s.cacheName(frames.find((f) => f.type === F.CACHE)?.cache.id ?? -1)).toBe('filp');
        s.dispose();
      }
    });

    it('hands back the watched cache\'s events, the same records in the same order, and none once unwatched', () => {
      const s = new LiveState();
      s.watch('filp');
      const got: string[] = [];
      const half = stream.length >> 1;
      for (let i = 0; i < half; i += 4096)
        for (const f of s.push(stream.subarray(i, Math.min(i + 4096, half)))) {
          if (f.type !== F.EVENTS) continue;
          const r = f.batch.records;
          const base = Number(f.batch.baseNs);
          for (let k = 0; k < f.batch.count; k++) got.push(`${ev.kind(r, k)}:${ev.cpu(r, k)}:${base + ev.dtUs(r, k) * 1000}:${ev.objLo(r, k)}`);
        }
      expect(got.length).toBeGreaterThan(500);
      expect(got).toEqual(filpEvents.slice(0, got.length));
      s.watch(null);
      expect(s.push(stream.subarray(half)).filter((f) => f.type === F.EVENTS)).toEqual([]);
      expect(s.events).toBe(ref.events);
      s.watch('dentry'); // named nowhere in this stream
      s.restart();
      expect(s.push(stream).filter((f) => f.type === F.EVENTS)).toEqual([]);
    });

    it('refuses a malformed stream with what is wrong, until restart', () => {
      const s = new LiveState();
      const bad = new Uint8Array(8 + 24 + 10);
      const v = new DataView(bad.buffer);
      v.setUint32(0, 24 + 10, true);
      bad[4] = F.EVENTS;
      v.setUint32(8, 1, true);
      expect(() => s.push(bad.subarray(0, 5))).not.toThrow();
      expect(() => s.push(bad.subarray(5))).toThrow(new WireError('an EVENTS frame of 34 bytes says 1 events'));
      expect(() => s.push(stream)).toThrow(WireError);
      const huge = new Uint8Array(8);
      new DataView(huge.buffer).setUint32(0, 0xffffffff, true);
      s.restart();
      expect(() => s.push(huge)).toThrow(/a frame of 4294967295 bytes \(more than 67108864\)/);
      s.restart();
      s.push(stream);
      expect(s.events).toBe(ref.events);
      s.dispose();
    });
  });
});
