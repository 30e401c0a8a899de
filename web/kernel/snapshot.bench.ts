// How long the kernel view takes to read the recorded snapshot of this
// machine (2.1 MB of JSON, 235 caches, 3,528 listed slabs), to count
// where every cache's memory goes, and to turn the cache with the most
// slabs read (buffer_head: 512 node partial slabs, 400 drawn) and a cache with
// sheaves (maple_node) into the SLUB drawing's snapshot.  Prints figures;
// run with `npx vitest bench --run web/kernel/snapshot.bench.ts`.
import { readFileSync } from 'node:fs';
import { bench, describe } from 'vitest';
import { snapshotMemory } from './accounting';
import { decodeKernelSnapshot } from './snapshot-file';
import { toSlub } from './to-slub';

const text = readFileSync(new URL('../../public/samples/snapshot-6.18.json', import.meta.url), 'utf8');
const snap = decodeKernelSnapshot(text);
const cache = (name: string) => snap.caches.find((c) => c.name === name) ?? snap.caches[0]!;

describe(`the sample snapshot (${(text.length / 1e6).toFixed(1)} MB, ${snap.caches.length} caches)`, () => {
  bench('decode and check every field', () => void decodeKernelSnapshot(text), { iterations: 10 });
  bench('where the memory goes, every cache', () => void snapshotMemory(snap), { iterations: 20 });
  bench('buffer_head to the SLUB drawing', () => void toSlub(snap, cache('buffer_head')), { iterations: 10 });
  bench('maple_node (sheaves, barn) to the SLUB drawing', () => void toSlub(snap, cache('maple_node')), { iterations: 20 });
});
