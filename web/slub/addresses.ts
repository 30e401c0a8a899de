// addresses.ts - the kernel addresses the inspector shows.  The model's
// pages are page frames 0..npages-1 of its arena; the lab gives each the
// address it would have in x86-64's direct map (PAGE_OFFSET with 4-level
// paging and no KASLR), so an object is
//   PAGE_OFFSET + pfn * 4096 + red_left_pad + index * size
// (the slab's first page is its pfn; a slab of order n spans 2^n pages).
// A free object's free pointer (at s->offset in the object) holds the next
// object's address; with FREELIST_HARDENED the kernel stores
//   next ^ s->random ^ swab(address of the free pointer)
// (freelist_ptr_encode), with the cache's own s->random, which the snapshot
// carries.  "Find address" reads such an address back: which slab, object,
// list and state.

import type { OpNames } from '../lab/describe';
import { describeObject, describeSlab } from './describe';
import { FREELIST_HARDENED, NEXT_CORRUPT, NONE32, ObjState, type SlubSnapshot } from './snapshot';

export const PAGE_OFFSET = 0xffff888000000000n;
export const PAGE_SIZE = 4096;

const MASK64 = (1n << 64n) - 1n;
export const hex = (a: bigint) => `0x${a.toString(16).padStart(16, '0')}`;

/** The address of object `index` of slab record `slab`. */
export function objectAddress(s: SlubSnapshot, slab: number, index: number): bigint {
  const g = s.geometry;
  return PAGE_OFFSET + BigInt((s.slab.pfn[slab] ?? 0) * PAGE_SIZE + g.redLeftPad + index * g.size);
}

/** swab() of a 64-bit value: its bytes in reverse order. */
export function swab64(v: bigint): bigint {
  let out = 0n;
  for (let i = 0n; i < 8n; i++) out |= ((v >> (8n * i)) & 0xffn) << (8n * (7n - i));
  return out;
}

/** What the kernel stores for free pointer value `next` at address `where`: hardened or as it is. */
export function storedFreePointer(s: SlubSnapshot, next: bigint, where: bigint): bigint {
  return s.geometry.flags & FREELIST_HARDENED ? (next ^ s.random ^ swab64(where)) & MASK64 : next;
}

/** The inspector's addresses for an object: where it is and, if it is free, what its free pointer holds. */
export function describeAddresses(s: SlubSnapshot, slab: number, index: number): string {
  const addr = objectAddress(s, slab, index);
  const out = [`Address ${hex(addr)}.`];
  const at = (s.slab.firstObj[slab] ?? 0) + index;
  const next = s.obj.next[at] ?? NONE32;
  const st = s.obj.state[at];
  const onAChain = st === ObjState.SLAB_FREE || st === ObjState.CPU_FREE || st === ObjState.DUP || next !== NONE32;
  if (next === NEXT_CORRUPT) out.push('Its free pointer points outside its slab.');
  else if (onAChain) {
    const where = addr + BigInt(s.geometry.offset);
    const target = next === NONE32 ? 0n : objectAddress(s, slab, next);
    const stored = storedFreePointer(s, target, where);
    const what = next === NONE32 ? 'NULL (the tail of its freelist)' : `${hex(target)}, object ${next}`;
    out.push(
      s.geometry.flags & FREELIST_HARDENED
        ? `Its free pointer at +${s.geometry.offset} stores ${hex(stored)}: hardened, decoded (^ s->random ${hex(s.random)} ^ swab(${hex(where)})) it is ${what}.`
        : `Its free pointer at +${s.geometry.offset} holds ${what}.`,
    );
  }
  return out.join(' ');
}

/** Which cache, slab, list and state an address (hex, 0x optional) is, in words. */
export function findAddress(s: SlubSnapshot, text: string, names: OpNames | null): string {
  const t = text.trim().toLowerCase().replace(/^0x/, '');
  if (!/^[0-9a-f]{1,16}$/.test(t)) return `"${text.trim()}" is not an address: give up to 16 hex digits, e.g. ${hex(PAGE_OFFSET)}.`;
  const a = BigInt(`0x${t}`);
  const cache = `the cache of ${s.geometry.objectSize}-byte objects (id ${s.geometry.id})`;
  if (a < PAGE_OFFSET || a >= PAGE_OFFSET + BigInt(s.npages * PAGE_SIZE))
    return `${hex(a)} is outside the model's memory (${hex(PAGE_OFFSET)} to ${hex(PAGE_OFFSET + BigInt(s.npages * PAGE_SIZE) - 1n)}).`;
  const off = Number(a - PAGE_OFFSET);
  const pfn = Math.floor(off / PAGE_SIZE);
  for (let i = 0; i < s.nslabs; i++) {
    const start = (s.slab.pfn[i] ?? 0) * PAGE_SIZE;
    const end = start + PAGE_SIZE * 2 ** (s.slab.order[i] ?? 0);
    if (off < start || off >= end) continue;
    const rel = off - start - s.geometry.redLeftPad;
    const index = Math.floor(rel / s.geometry.size);
    if (rel < 0 || index >= (s.slab.objects[i] ?? 0)) return `${hex(a)} is in slab pfn ${s.slab.pfn[i]} of ${cache}, in no object (the slab's padding). ${describeSlab(s, i)}`;
    const within = rel - index * s.geometry.size;
    const part = within === 0 ? 'the start of' : within < s.geometry.objectSize ? `byte ${within} of` : `the metadata after (byte ${within} of the slot)`;
    return `${hex(a)} is ${part} object ${index} of slab pfn ${s.slab.pfn[i]} in ${cache}. ${describeObject(s, i, index, names)}`;
  }
  return `${hex(a)} is in page frame ${pfn}, which holds no slab of ${cache} now (free, or another cache's).`;
}
