// The inspector's addresses and "find address", on snapshots of the real
// core (the Node build): the modelled direct-map addresses, the free pointer
// as a FREELIST_HARDENED cache stores it and decoded, and an address read
// back to its slab, object, list and state.
import { beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { describeAddresses, findAddress, hex, objectAddress, PAGE_OFFSET, storedFreePointer, swab64 } from './addresses';
import type { WorldConfig } from './protocol';
import { SlubApi, type SlubModule } from './slub-api';
import { decodeSnapshot, FREELIST_HARDENED, ObjState, type SlubSnapshot } from './snapshot';

let api: SlubApi;
beforeAll(async () => {
  api = new SlubApi(await loadNodeCore<SlubModule>());
});

const config: WorldConfig = { cpus: 2, objectSize: 512, fastpath: 'cmpxchg', bulkFree: 'detached', seed: 7, arenaBytes: 1 << 20 };

/** A world where CPU 0 allocated three objects of its first slab and CPU 1 freed the second (onto the slab's freelist). */
function state(c: WorldConfig): SlubSnapshot {
  const w = api.createWorld(c);
  try {
    api.run(w, { ops: [{ kind: 'alloc', cpu: 0 }, { kind: 'alloc', cpu: 0 }, { kind: 'alloc', cpu: 0 }], irqs: [] }, 3, 0);
    const s = decodeSnapshot(api.snapshot(w));
    expect(api.m._sl_api_slub_free(w, 1, s.slab.pfn[0] ?? 0, 1)).toBe(0);
    return decodeSnapshot(api.snapshot(w));
  } finally {
    api.destroyWorld(w);
  }
}

describe('addresses', () => {
  it("swab reverses a word's bytes; the hardened encoding is undone by itself", () => {
    expect(swab64(0x0102030405060708n)).toBe(0x0807060504030201n);
    const s = { geometry: { flags: FREELIST_HARDENED }, random: 0x1234n } as unknown as SlubSnapshot;
    const next = PAGE_OFFSET + 0x2400n;
    const stored = storedFreePointer(s, next, PAGE_OFFSET + 0x2000n);
    expect(stored).not.toBe(next);
    expect(storedFreePointer(s, stored, PAGE_OFFSET + 0x2000n)).toBe(next);
  });

  it('a hardened cache: its s->random in the snapshot, the stored free pointer decoded to the next object', () => {
    const s = state({ ...config, hardened: true });
    expect(s.geometry.flags & FREELIST_HARDENED).toBe(FREELIST_HARDENED);
    expect(s.random).not.toBe(0n);
    expect(state({ ...config, hardened: true }).random).toBe(s.random); // seeded: the same every time
    expect(state({ ...config, hardened: true, seed: 8 }).random).not.toBe(s.random);
    const first = s.slab.firstObj[0] ?? 0;
    expect(s.obj.state[first + 1]).toBe(ObjState.SLAB_FREE);
    const text = describeAddresses(s, 0, 1);
    expect(text).toContain(`Address ${hex(objectAddress(s, 0, 1))}.`);
    expect(text).toContain(`^ s->random ${hex(s.random)}`);
    // Object 1 is the only object on the slab's freelist: its free pointer is NULL, the tail.
    expect(text).toContain('it is NULL (the tail of its freelist)');
    // A CPU freelist object's pointer names the next one, stored encoded.
    const cpuFree = Array.from({ length: s.geometry.objects }, (_, i) => i).find((i) => s.obj.state[first + i] === ObjState.CPU_FREE && (s.obj.next[first + i] ?? 0) < s.geometry.objects) ?? -1;
    const next = s.obj.next[first + cpuFree] ?? 0;
    const where = objectAddress(s, 0, cpuFree) + BigInt(s.geometry.offset);
    expect(describeAddresses(s, 0, cpuFree)).toContain(`stores ${hex(storedFreePointer(s, objectAddress(s, 0, next), where))}: hardened`);
    expect(describeAddresses(s, 0, cpuFree)).toContain(`${hex(objectAddress(s, 0, next))}, object ${next}`);
    // An allocated object has no free pointer to show.
    expect(describeAddresses(s, 0, 0)).toBe(`Address ${hex(objectAddress(s, 0, 0))}.`);
  });

  it('a plain cache holds the next address as it is', () => {
    const s = state(config);
    expect(describeAddresses(s, 0, 1)).toContain('holds NULL (the tail of its freelist)');
  });

  it('finds an address: object, byte inside it, padding, another page, outside, not an address', () => {
    // 700-byte objects leave bytes over at the end of their slabs.
    const s = state({ ...config, objectSize: 700 });
    const a = objectAddress(s, 0, 1);
    expect(findAddress(s, hex(a), null)).toContain(`is the start of object 1 of slab pfn ${s.slab.pfn[0]} in the cache of 700-byte objects`);
    expect(findAddress(s, hex(a), null)).toContain('on the slab freelist');
    expect(findAddress(s, (a + 17n).toString(16), null)).toContain('is byte 17 of object 1');
    const slabEnd = PAGE_OFFSET + BigInt(((s.slab.pfn[0] ?? 0) + 2 ** (s.slab.order[0] ?? 0)) * 4096);
    expect(s.geometry.objects * s.geometry.size).toBeLessThan(4096 * 2 ** (s.slab.order[0] ?? 0));
    expect(findAddress(s, hex(slabEnd - 1n), null)).toContain("in no object (the slab's padding)");
    expect(findAddress(s, hex(PAGE_OFFSET + BigInt((s.npages - 1) * 4096)), null)).toContain('holds no slab');
    expect(findAddress(s, '0x1000', null)).toContain("outside the model's memory");
    expect(findAddress(s, 'kmalloc', null)).toBe('"kmalloc" is not an address: give up to 16 hex digits, e.g. 0xffff888000000000.');
  });
});
