// live-state.test.ts - the worker's counting on built batches: per-second bins per cache over the
// window (old seconds fall out), remote frees (freed on another CPU than the allocating one),
// percpu and page-sized kmalloc counted apart, busiest call sites, names kept across a restart.
// The counting is the core's C (wasm-core/src/replay/live_count.c) as WebAssembly: these cases
// test it through the page's wrapper (wasm-core/tests/test_live_count.c tests the C natively).
import { describe, expect, it } from 'vitest';
import { LiveState, OWNERS, TABLE_CACHES, WINDOW_S } from './live-state';
import { EVENT_BYTES, K, type EventBatch } from './wire';

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
    expect(s.idsNamed('filp')).toEqual([3]);
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
});
