// anomalies.ts - what in a cache's snapshot does not hold together, in
// words: a freelist whose length is not objects - inuse, a free pointer
// outside its slab or not on an object's boundary, an object twice on the
// lists, a CPU freelist outside its CPU slab, a partial count that is not
// the slabs listed.  On a live kernel these come from lists read while they
// changed (the snapshot marks such reads torn) or from a corrupted slab; the
// view shows them beside the drawing, it never refuses the file for them.

import type { KCache, KSlab } from './snapshot-file';

/** At most this many anomalies are described per cache (the rest are counted). */
const MAX = 200;

export function anomalies(c: KCache, pageSize: number): string[] {
  const out: string[] = [];
  let more = 0;
  const say = (t: string) => (out.length < MAX ? out.push(t) : more++);
  const size = BigInt(c.size);
  const slabEnd = BigInt(pageSize << c.order);
  const seen = new Set<string>();
  const pad = BigInt(c.redLeftPad);
  const inside = (s: KSlab, a: string, what: string) => {
    if (s.base === null) return;
    const off = BigInt(a) - s.base - pad;
    if (off < 0n || off >= slabEnd || off >= BigInt(s.objects) * size) say(`${what}: ${a} is outside slab ${s.address}`);
    else if (off % size !== 0n) say(`${what}: ${a} is not on an object's boundary in slab ${s.address}`);
    if (seen.has(a)) say(`${what}: ${a} is on the lists twice`);
    seen.add(a);
  };
  const slab = (s: KSlab, where: string) => {
    if (s.base === null) say(`${where} slab ${s.address}: where its memory starts is unknown (the snapshot found no direct map)`);
    const claimed = s.state ? s.state.split('!').length - 1 : 0;
    if (claimed) say(`${where} slab ${s.address}: ${claimed} object${claimed === 1 ? '' : 's'} claimed by two lists (read while they changed)`);
    if (s.freelistError) say(`${where} slab ${s.address}: its freelist walk stopped: ${s.freelistError}`);
    else if (s.freelist.length !== s.objects - s.inuse) say(`${where} slab ${s.address}: ${s.freelist.length} objects on its freelist, but objects - inuse = ${s.objects - s.inuse}`);
    for (const a of s.freelist) inside(s, a, `${where} slab ${s.address}'s freelist`);
  };
  for (const cpu of c.cpus) {
    if (cpu.slab) slab(cpu.slab, `CPU ${cpu.cpu}'s`);
    if (cpu.freelistError) say(`CPU ${cpu.cpu}: its freelist walk stopped: ${cpu.freelistError}`);
    if (!cpu.slab && cpu.freelist.length) say(`CPU ${cpu.cpu}: ${cpu.freelist.length} objects on its freelist, but no CPU slab`);
    if (cpu.slab) for (const a of cpu.freelist) inside(cpu.slab, a, `CPU ${cpu.cpu}'s freelist`);
    cpu.partial.forEach((s) => slab(s, `CPU ${cpu.cpu}'s partial`));
    if (cpu.sheaves)
      for (const [name, sh] of Object.entries(cpu.sheaves))
        if (sh && c.sheafCapacity && sh.size > c.sheafCapacity) say(`CPU ${cpu.cpu}'s ${name} sheaf holds ${sh.size} objects, more than its capacity ${c.sheafCapacity}`);
  }
  for (const n of c.nodes) {
    n.partial.forEach((s) => slab(s, `node ${n.node} partial`));
    if (n.nrPartial !== n.partial.length + n.partialLeftOut) say(`node ${n.node}: nr_partial is ${n.nrPartial}, but ${n.partial.length} were read and ${n.partialLeftOut} left out`);
  }
  if (more) out.push(`and ${more} more`);
  return out;
}
