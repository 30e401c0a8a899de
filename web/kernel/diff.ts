// diff.ts - two snapshots of a kernel compared: which caches grew or shrank
// (slabs, bytes, objects in use), and within a cache which slabs filled or
// emptied, by slab address (a slab keeps its struct slab address while it
// lives; one freed and allocated again may come back at the same address,
// which a snapshot cannot tell apart).  A slab the second snapshot no longer
// lists left the lists it was on: it became full (no list holds those), was
// freed, or lay past --max-slabs; one it lists anew came from those.

import { cacheMemory, type CacheMemory } from './accounting';
import type { KCache, KernelSnapshot, KSlab } from './snapshot-file';

export interface CacheDelta {
  name: string;
  /** Null: the cache is not in that snapshot. */
  before: CacheMemory | null;
  after: CacheMemory | null;
  slabs: number;
  bytes: number;
  inUse: number;
  waste: number;
}

export type SlabChangeKind = 'filled' | 'emptied' | 'moved' | 'appeared' | 'left';

export interface SlabChange {
  address: string;
  kind: SlabChangeKind;
  /** Where it was and how full (null: not listed then). */
  before: { list: string; inuse: number; objects: number } | null;
  after: { list: string; inuse: number; objects: number } | null;
}

/** The caches of both snapshots, the changed ones first by bytes changed (largest change first), then the rest by name. */
export function diffCaches(a: KernelSnapshot, b: KernelSnapshot): CacheDelta[] {
  const before = new Map(a.caches.map((c) => [c.name, cacheMemory(c, a.kernel.pageSize)]));
  const after = new Map(b.caches.map((c) => [c.name, cacheMemory(c, b.kernel.pageSize)]));
  const names = [...new Set([...before.keys(), ...after.keys()])];
  const deltas = names.map((name): CacheDelta => {
    const x = before.get(name) ?? null;
    const y = after.get(name) ?? null;
    const d = (f: (m: CacheMemory) => number) => (y ? f(y) : 0) - (x ? f(x) : 0);
    return { name, before: x, after: y, slabs: d((m) => m.slabs), bytes: d((m) => m.slabBytes), inUse: d((m) => m.inUse), waste: d((m) => m.wasteBytes) };
  });
  const size = (d: CacheDelta) => Math.abs(d.bytes) + Math.abs(d.inUse);
  return deltas.sort((p, q) => size(q) - size(p) || p.name.localeCompare(q.name));
}

/** Every slab a cache's snapshot lists, by address, with its list in words. */
export function listedSlabs(c: KCache): Map<string, { list: string; slab: KSlab }> {
  const out = new Map<string, { list: string; slab: KSlab }>();
  for (const cpu of c.cpus) {
    if (cpu.slab) out.set(cpu.slab.address, { list: `CPU ${cpu.cpu} slab`, slab: cpu.slab });
    for (const s of cpu.partial) out.set(s.address, { list: `CPU ${cpu.cpu} partial`, slab: s });
  }
  for (const n of c.nodes) for (const s of n.partial) out.set(s.address, { list: `node ${n.node} partial`, slab: s });
  return out;
}

/** The slabs of one cache that changed between two snapshots (either may be absent), by address; unchanged ones are left out. */
export function diffSlabs(a: KCache | undefined, b: KCache | undefined): SlabChange[] {
  const x = a ? listedSlabs(a) : new Map<string, { list: string; slab: KSlab }>();
  const y = b ? listedSlabs(b) : new Map<string, { list: string; slab: KSlab }>();
  const out: SlabChange[] = [];
  const state = (v: { list: string; slab: KSlab } | undefined) => (v ? { list: v.list, inuse: v.slab.inuse, objects: v.slab.objects } : null);
  for (const address of new Set([...x.keys(), ...y.keys()])) {
    const p = state(x.get(address));
    const q = state(y.get(address));
    let kind: SlabChangeKind;
    if (!p) kind = 'appeared';
    else if (!q) kind = 'left';
    else if (q.inuse > p.inuse) kind = 'filled';
    else if (q.inuse < p.inuse) kind = 'emptied';
    else if (q.list !== p.list) kind = 'moved';
    else continue;
    out.push({ address, kind, before: p, after: q });
  }
  const order: Record<SlabChangeKind, number> = { filled: 0, emptied: 1, moved: 2, appeared: 3, left: 4 };
  return out.sort((p, q) => order[p.kind] - order[q.kind] || p.address.localeCompare(q.address));
}

/** A change in words: "filled 12 -> 30 of 32 (node 0 partial)". */
export function slabChangeText(c: SlabChange): string {
  const at = (s: { list: string; inuse: number; objects: number }) => `${s.inuse}/${s.objects} on ${s.list}`;
  if (c.kind === 'appeared' && c.after) return `listed anew: ${at(c.after)}`;
  if (c.kind === 'left' && c.before) return `no longer listed (full, freed or past --max-slabs); was ${at(c.before)}`;
  if (c.before && c.after) return `${c.kind}: ${at(c.before)} → ${at(c.after)}`;
  return c.kind;
}
