// scenarios.ts - the guided stories of the SLAB view.  Each names the caches
// its world creates and builds a script with one caption per step from what
// worldInfo says about a fresh world of that configuration under both rule
// sets (objects per slab, limit, batchcount, free_limit, when the reap timer
// is due), so the numbers in the words are the model's own.  Side by side
// (rules=both) both panes run the same script; the captions speak of both.

import { StoryBuilder as LabStoryBuilder } from '../lab/story';
import type { Scenario, Story } from '../lab/view';
import type { CacheFacts, CacheSpec, SlabWorldInfo } from './protocol';
import { CACHE_FLAGS } from './slab-api';
import type { Script, ScriptOp } from './script';

export interface StoryContext {
  cpus: number;
  /** The `size` parameter: the object size a story allocates. */
  size: number;
  /** The caches the world creates (the script's `alloc` names them by number). */
  caches: readonly CacheSpec[];
  info: SlabWorldInfo;
}

export interface SlabScenario extends Scenario<Script, StoryContext> {
  /** The caches its world creates, for an object size and the `cache` parameters. */
  caches(size: number, own: CacheSpec): CacheSpec[];
  /** The arena its world needs (MiB). */
  arenaMb(size: number): number;
  /** Object sizes it can run with (a message for others), if it limits them. */
  sizeProblem?(size: number): string | null;
}

/** seed 002's slab_test: this many kmallocs, then as many kfrees. */
export const SEED_ROUND = 10_000;
const MIB = 1 << 20;
/** The smallest arena a SLAB world takes (sl_slab_create). */
export const ARENA_MIN_MB = 8;

class StoryBuilder extends LabStoryBuilder<ScriptOp> {
  story(intro: string, outro: string): Story<Script> {
    return { script: { ops: this.ops }, captions: this.captions, intro, outro, ...(this.setups ? { setup: this.setups } : {}) };
  }
}

/** The kmalloc cache a size lands in (the smallest whose objects are at least that big), under one rule set. */
export function kmallocFacts(facts: readonly CacheFacts[], size: number): CacheFacts | undefined {
  return facts.filter((c) => c.id < 20 && c.objectSize >= size).sort((a, b) => a.objectSize - b.objectSize)[0];
}

/** A created cache's facts under one rule set. */
const createdFacts = (facts: readonly CacheFacts[], name: string) => facts.find((c) => c.id >= 20 && c.name === name);

/** Where a management type keeps a slab's freelist array, in words. */
const HOME: Record<CacheFacts['mgmt'], string> = {
  OBJFREELIST: 'inside a free object of the slab (the last one, handed out last)',
  'NORMAL(leftover)': 'at the end of the page, in bytes the slab leaves over anyway',
  NORMAL: 'at the end of the page, where it costs space an object could have used',
  OFF: 'in an object of another (kmalloc) cache',
};

function typeWords(f: CacheFacts | undefined): string {
  if (!f) return '?';
  return `${f.mgmt}: the array ${HOME[f.mgmt]}${f.freelistCache ? ` (${f.freelistCache})` : ''}, ${f.waste} B per slab wasted`;
}

/** "kmalloc-256: 16 objects per order-0 slab; before: OFF ...; after: OBJFREELIST ..." */
function bothRules(info: SlabWorldInfo, pick: (f: readonly CacheFacts[]) => CacheFacts | undefined): string {
  const before = pick(info.before);
  const after = pick(info.after);
  const f = after ?? before;
  if (!f) return '';
  const same = before?.mgmt === after?.mgmt && before?.num === after?.num;
  const geometry = `${f.name}: ${f.num} objects of ${f.size} B per order-${f.order} slab`;
  return same ? `${geometry}; under both rule sets ${typeWords(f)}.` : `${geometry} after OBJFREELIST; before it ${before?.num} objects, ${typeWords(before)}; after it ${typeWords(after)}.`;
}

/** The first refill of an untouched array: min(batchcount, 16), and no more than a new slab holds. */
const firstRefill = (f: CacheFacts) => Math.min(f.batchcount, 16, f.num);

const ctorFlags = CACHE_FLAGS.ctor;

const types: SlabScenario = {
  id: 'types',
  title: 'Where the freelist lives: the four management types',
  caches: (size) => [
    { name: `plain-${size}`, objectSize: size, align: 0, flags: 0 },
    { name: `ctor-${size}`, objectSize: size, align: 0, flags: ctorFlags },
    { name: 'ctor-192', objectSize: 192, align: 0, flags: ctorFlags },
    { name: 'plain-48', objectSize: 48, align: 0, flags: 0 },
  ],
  arenaMb: (size) => Math.min(96, 8 + Math.ceil((8 * Math.max(size, 4096) * 4) / MIB)),
  build({ caches, info }) {
    const b = new StoryBuilder();
    const [seedCache] = caches;
    caches.forEach((c, i) => {
      const f = createdFacts(info.after, c.name);
      const why =
        c.flags & ctorFlags
          ? 'It has a constructor, so OBJFREELIST is refused: a constructed free object may not hold anything else.'
          : f?.mgmt === 'NORMAL'
            ? `${f.num} one-byte indexes do not fit in one ${c.objectSize}-byte object (num > object size), and an off-slab array would need a kmalloc cache bigger than half the object.`
            : '';
      b.op(
        { kind: 'alloc', cpu: 0, cache: i, count: 1 },
        `CPU 0 allocates from ${bothRules(info, (k) => createdFacts(k, c.name))} ${why} Its array was empty and untouched, so the refill took ${f ? firstRefill(f) : '?'} objects of a new slab into CPU 0's array and handed one out.`,
      );
    });
    const seed = seedCache ? createdFacts(info.after, seedCache.name) : undefined;
    b.op(
      { kind: 'drain', cpu: 0 },
      `drain_cpu: every object in CPU 0's arrays goes back to its slab (free_block). ${seed && seed.num <= firstRefill(seed) ? `${seed.name}'s slab was full, and a full OBJFREELIST slab has no array at all (it went out with the last object): the first object put back becomes its new home.` : 'Watch each slab\'s active cursor go back to 0.'}`,
    );
    b.op({ kind: 'alloc', cpu: 0, cache: 0, count: 1 }, `CPU 0 allocates from ${seedCache?.name ?? 'the first cache'} again: the refill takes the slab's objects in freelist order, the object holding an OBJFREELIST array last.`);
    return b.story(
      `Seed 002 (b03a017bebc4, "introduce new slab management type, OBJFREELIST_SLAB") lets a slab keep its freelist array, one index byte per object, inside one of its own free objects. Four caches show the four places the array can live; rules=both runs them before the commit (left) and after it (right).`,
      `Before the commit, ${seedCache?.name ?? 'the plain cache'} needed an off-slab array (a kmalloc object per slab, ${createdFacts(info.before, seedCache?.name ?? '')?.waste ?? '?'} B per slab); after it the array lives in a free object and the waste disappears (${createdFacts(info.after, seedCache?.name ?? '')?.waste ?? '?'} B). A constructor keeps a cache off OBJFREELIST; tiny objects stay NORMAL.`,
    );
  },
};

/** The kmalloc cache of a story's size, with a message when the kernel has none for it. */
function kmallocOf(info: SlabWorldInfo, size: number): CacheFacts {
  const f = kmallocFacts(info.after, size);
  if (!f) throw new Error(`size=${size} has no kmalloc cache in this kernel (kmalloc_large takes it): pick a size up to the largest kmalloc cache`);
  return f;
}

/** A shared array, or why there is none. */
const sharedWords = (f: CacheFacts, cpus: number) =>
  f.sharedLimit ? `to the node's shared array (${f.sharedLimit} entries)` : cpus === 1 ? 'back to their slabs (free_block): with one CPU there is no shared array' : 'back to their slabs (free_block): this cache has no shared array';

const smallArena = (size: number) => Math.min(96, 8 + Math.ceil((300 * Math.min(size, 32768)) / MIB));

const refillFlush: SlabScenario = {
  id: 'refill-flush',
  title: 'Refill and flush by batchcount',
  caches: () => [],
  arenaMb: smallArena,
  build({ size, cpus, info }) {
    const f = kmallocOf(info, size);
    const b = new StoryBuilder();
    const first = b.setup(
      { kind: 'kmalloc', cpu: 0, size, count: 1 },
      `kmalloc(${size}) on CPU 0 went to ${f.name}. CPU 0's array_cache was empty and untouched: cache_alloc_refill asked for min(batchcount ${f.batchcount}, 16) objects; the node had none, so it grew one slab and took ${firstRefill(f)} of its ${f.num} objects, then popped the top one.`,
    );
    const many = b.op(
      { kind: 'kmalloc', cpu: 0, size, count: f.limit },
      `${f.limit} more kmalloc(${size}) (the array's limit): pops from the top until the array is empty, then refills. Now the array is touched, so a refill asks for the full batchcount, ${f.batchcount}; with the node empty each refill grows one slab and takes at most its ${f.num} objects.`,
    );
    b.op(
      { kind: 'free', cpu: 0, refs: [{ op: many, first: 0, count: f.limit }, { op: first, first: 0, count: 1 }] },
      `CPU 0 frees them all (${f.limit + 1}): each is pushed on top of CPU 0's array. When the array holds its limit of ${f.limit}, the next free calls cache_flusharray: the bottom ${f.batchcount} (the oldest, the batchcount marked on the strip) go ${sharedWords(f, cpus)}, and the rest slide down.`,
    );
    b.op({ kind: 'kmalloc', cpu: 0, size, count: 1 }, 'kmalloc again: LIFO, the object freed last comes straight back from the top, still hot in the CPU cache.');
    b.op({ kind: 'drain', cpu: 0 }, `drain_cpu: all of CPU 0's array goes back to the slabs (free_block). Slabs with every object back move to slabs_free; beyond free_limit (${f.freeLimit} free objects) free slabs are destroyed.`);
    b.op(
      { kind: 'kmalloc', cpu: 0, size, count: 1 },
      `kmalloc on an empty array again: the refill asks for ${f.batchcount} (touched), ${f.sharedLimit ? 'from the shared array first, then' : 'from'} partial slabs, then free slabs, without growing one.`,
    );
    return b.story(
      `SLAB keeps, per CPU, an array_cache: a LIFO stack of up to limit free objects (${f.limit} for ${f.name}). Allocation pops, freeing pushes; only an empty array (refill) or a full one (flush) goes to the node, and then by batchcount (${f.batchcount}).`,
      'Every trip to the node moved a batch: refills asked for batchcount (16 when untouched), flushes moved the bottom batchcount.',
    );
  },
};

const shared: SlabScenario = {
  id: 'shared',
  title: 'The shared array between two CPUs',
  caches: () => [],
  arenaMb: smallArena,
  build({ size, cpus, info }) {
    const f = kmallocOf(info, size);
    const other = cpus > 1 ? 1 : 0;
    const b = new StoryBuilder();
    const many = b.setup({ kind: 'kmalloc', cpu: 0, size, count: f.limit }, `CPU 0 allocated ${f.limit} objects of ${f.name} (refilling from new slabs).`);
    b.op(
      { kind: 'free', cpu: 0, refs: [{ op: many, first: 0, count: f.limit }] },
      `CPU 0 frees them: its array fills up, and the flush moves the bottom ${f.batchcount} ${sharedWords(f, cpus)}.`,
    );
    const one = b.op(
      { kind: 'kmalloc', cpu: other, size, count: 1 },
      `CPU ${other} allocates: its array is empty and untouched, so the refill asks for ${Math.min(f.batchcount, 16)}. ${f.sharedLimit ? 'transfer_objects takes them from the top of the shared array (the objects CPU 0 freed last of that batch), without touching a slab or the page allocator.' : 'There is no shared array: it takes them from the slabs.'}`,
    );
    const more = b.op(
      { kind: 'kmalloc', cpu: other, size, count: 16 },
      `CPU ${other} allocates 16 more: it pops its array empty, and the next refill (touched now) asks for ${f.batchcount}, again ${f.sharedLimit ? 'from the shared array' : 'from the slabs'}.`,
    );
    b.op(
      { kind: 'free', cpu: other, refs: [{ op: one, first: 0, count: 1 }, { op: more, first: 0, count: 16 }] },
      `CPU ${other} frees what it took: into its own array. SLAB has no idea which CPU allocated an object; a "remote" free is a free like any other.`,
    );
    return b.story(
      `${cpus === 1 ? 'With one CPU there is no shared array: set cpus=2 to see it. ' : ''}With more than one CPU, each node keeps a shared array (8 batches, ${f.sharedLimit} entries for ${f.name}): a CPU flushing its array leaves objects there, and another CPU's refill takes them back before it goes to the slabs.`,
      'Objects went from CPU 0 to CPU 1 through the shared array; the slabs never saw them.',
    );
  },
};

const reap: SlabScenario = {
  id: 'reap',
  title: 'cache_reap',
  caches: () => [],
  arenaMb: smallArena,
  build({ size, info }) {
    const f = kmallocOf(info, size);
    const n = Math.min(40, f.limit);
    const drained = Math.floor((f.limit + 4) / 5);
    const b = new StoryBuilder();
    const made = b.setup({ kind: 'kmalloc', cpu: 0, size, count: n }, `CPU 0 allocated ${n} objects of ${f.name}`);
    b.setup({ kind: 'free', cpu: 0, refs: [{ op: made, first: 0, count: n }] }, 'and freed them: they sit in CPU 0\'s array, which is touched.');
    b.op({ kind: 'reap', cpu: 0, ms: 0 }, 'cache_reap on CPU 0 (the kernel runs it every 2 s per CPU). The array was used since the last run (touched): this run only clears touched.');
    b.op({ kind: 'reap', cpu: 0, ms: 2000 }, `2 s later: untouched since, so drain_array sends (limit + 4) / 5 = ${drained} objects from the bottom back to their slabs (at most half of what is there).`);
    b.op({ kind: 'reap', cpu: 0, ms: 4000 }, `4 s: another ${drained} (or half of what is left). The node part of this cache is first due at ${f.nextReap} ms (4 s after its creation, staggered by the cache's id).`);
    b.op(
      { kind: 'reap', cpu: 0, ms: 6000 },
      `6 s: the node part is due (next_reap ${f.nextReap} ms): the shared array is drained likewise unless touched, and up to (free_limit + 5·num − 1) / (5·num) = ${Math.ceil(f.freeLimit / (5 * f.num))} free slabs go back to the page allocator, unless a free slab was used since the last run (free_touched). Then the node waits another 4 s.`,
    );
    b.op({ kind: 'reap', cpu: 0, ms: 8000 }, '8 s: the CPU part again; the node part waits for its 4 s.');
    b.op({ kind: 'reap', cpu: 0, ms: 10000 }, '10 s: both parts; with nothing used, the free slabs keep going back.');
    return b.story(
      'cache_reap is the timer that gives memory back from idle caches: every 2 s per CPU it drains a fifth of an untouched array; every 4 s per node it drains the shared array and frees some free slabs. Here the timer is the script\'s clock.',
      'An idle cache shrinks step by step; a cache in use only has its touched flags cleared.',
    );
  },
};

const kmallocTest: SlabScenario = {
  id: 'kmalloc-test',
  title: "The seed's kmalloc test",
  caches: () => [],
  // 10,000 objects in buffers of at most 4 KiB, and room for the off-slab arrays.
  arenaMb: (size) => Math.max(ARENA_MIN_MB, Math.ceil((SEED_ROUND * Math.max(32, 2 ** Math.ceil(Math.log2(Math.max(1, size)))) * 1.05) / MIB) + 4),
  sizeProblem: (size) => (size > 4096 ? `the kmalloc test runs sizes 1 to 4096 (the seed's 32 to 4096), not ${size}` : null),
  build({ size, info }) {
    const f = kmallocOf(info, size);
    const before = kmallocFacts(info.before, size);
    const b = new StoryBuilder();
    const all = b.setup(
      { kind: 'kmalloc', cpu: 0, size, count: SEED_ROUND },
      `${SEED_ROUND.toLocaleString('en')} × kmalloc(${size}) on CPU 0, as seed 002's slab_test does (its calls record no events of their own; the figures above each pane count them). Most calls pop the array (alloc hits); each miss refills up to ${f.batchcount}, growing slabs of ${f.num}. ${before?.mgmt === 'OFF' ? `Before OBJFREELIST every new slab also kmallocs its freelist array from ${before.freelistCache}: look for that cache's section in the left pane.` : ''}`,
    );
    b.op(
      { kind: 'free', cpu: 0, refs: [{ op: all, first: 0, count: SEED_ROUND }] },
      `${SEED_ROUND.toLocaleString('en')} × kfree: pushes (free hits) until the array holds ${f.limit}, then a flush of ${f.batchcount} per miss; free slabs beyond free_limit (${f.freeLimit} objects) go back to the page allocator as they empty.`,
    );
    b.op({ kind: 'shrink', cpu: 0 }, 'kmem_cache_shrink: the arrays are drained and every free slab is destroyed.');
    return b.story(
      `Seed 002 measured this loop, 10,000 kmalloc then 10,000 kfree, before and after OBJFREELIST. The figures above each pane count what it moves: alloc and free hits and misses per CPU, slabs grown and destroyed. ${f.name}: ${typeWords(f)} after; ${typeWords(before)} before.`,
      'Both rule sets grow and destroy the same slabs; only where each slab keeps its array differs, and with it the kmalloc-32 objects the off-slab arrays took.',
    );
  },
};

const oneCache: SlabScenario = {
  id: 'cache',
  title: 'One cache, laid out',
  caches: (_size, own) => [own],
  arenaMb: (size) => Math.min(96, 8 + Math.ceil((16 * Math.max(size, 4096)) / MIB)),
  build({ caches, info }) {
    const own = caches[0];
    const f = own ? createdFacts(info.after, own.name) : undefined;
    if (!own || !f) throw new Error('the cache scenario needs its cache');
    const b = new StoryBuilder();
    const first = b.op({ kind: 'alloc', cpu: 0, cache: 0, count: 1 }, `CPU 0 allocates one object from ${bothRules(info, (k) => createdFacts(k, own.name))} The first refill took ${firstRefill(f)} objects of a new slab.`);
    const more = b.op({ kind: 'alloc', cpu: 0, cache: 0, count: f.num }, `${f.num} more (one slab's worth): the first slab fills up and a second one grows, ${f.colour > 1 ? `coloured: its objects start ${f.colourOff} B further in` : 'at the same offset (this cache has no room for colouring)'}.`);
    b.op({ kind: 'free', cpu: 0, refs: [{ op: more, first: 0, count: f.num }, { op: first, first: 0, count: 1 }] }, 'CPU 0 frees them all: into its array, flushing by batchcount when it is full.');
    b.op({ kind: 'drain', cpu: 0 }, 'drain_cpu: everything goes back to the slabs; watch each freelist array and its active cursor.');
    return b.story(`The slab layout of ${own.name}, ${own.objectSize}-byte objects${own.flags ? ' with the flags the caches panel read' : ''}, under each rule set.`, 'Click a slab, an object or a freelist cell to read what it is.');
  },
};

export const SCENARIOS: readonly SlabScenario[] = [types, refillFlush, shared, reap, kmallocTest, oneCache];
export const SCENARIO_IDS = SCENARIOS.map((s) => s.id);

export function scenarioById(id: string): SlabScenario | undefined {
  return SCENARIOS.find((s) => s.id === id);
}
