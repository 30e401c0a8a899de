// scenarios.ts - the guided stories of the SLUB view.  Each builds a
// driver script for the chosen CPU count (the number of objects per slab
// depends on it, as calculate_order makes it) with one caption per
// operation.  Objects are named symbolically ("the 3rd object op 2
// allocated"), resolved to places by the model adapter (worker.ts), so the
// stories stay deterministic and linkable: the same URL always shows the
// same states.

import { StoryBuilder as LabStoryBuilder } from '../lab/story';
import type { Scenario as LabScenario, Story as LabStory } from '../lab/view';
import type { NumaConfig, WorldConfig } from './protocol';
import { eraOf, type EraName, type KernelParams, type KernelVersion } from './slub-api';
import { PreemptPoint, type AnyRef, type Script, type ScriptOp } from './script';
import type { BulkForm, Fastpath } from './snapshot';

export interface StoryContext {
  cpus: number;
  /** Objects per slab for this cache and CPU count. */
  objects: number;
}

export type Story = LabStory<Script<AnyRef>>;

export interface Scenario extends LabScenario<Script<AnyRef>, StoryContext> {
  objectSize: number;
  defaultFastpath: Fastpath;
  defaultBulk: BulkForm;
  /**
   * The variant switch the story invites (shown as a button at the end), and
   * the fast paths its side by side shows (default: this one and the story's).
   */
  contrast?: { fastpath?: Fastpath; bulkFree?: BulkForm; label: string; sideBySide?: readonly Fastpath[] };
  /** The eras whose SLUB the story tells (its captions name their functions). */
  eras: readonly EraName[];
  /** Why the story does not fit the eras it leaves out, in words ("7.0 has no tid"). */
  notFor?: string;
  /** A small sheaf capacity (6.18's request, given exactly in 7.0) so the sheaves fill within a few steps. */
  sheafCapacity?: number;
  /** 7.0: a kmalloc cache created before bootstrap_cache_sheaves. */
  earlyBoot?: boolean;
  /** The story that tells the same thing in the eras this one leaves out (its "see ..."): where a kernel it does not fit lands. */
  instead?: string;
  /** The kernels the story compares side by side ("what changed after 7.0"): picking it shows them. */
  kernels?: readonly string[];
  /** The NUMA machine the story runs on, for the chosen CPU count (absent: the URL's nodes). */
  numa?: (cpus: number) => NumaConfig;
  /** Objects the captions name, labelled on the picture: 'interrupt', the object an interrupt handler allocates (X) and the next on its freelist (Y) (render.ts interruptNames). */
  objectNames?: 'interrupt';
}

/** Every era before 7.0: the stories of the per-CPU slab. */
const CPU_SLAB_ERAS: readonly EraName[] = ['frozen-partial', 'cpu-slab', 'opt-in-sheaves'];
/** The eras with sheaves. */
export const SHEAF_ERAS: readonly EraName[] = ['opt-in-sheaves', 'sheaves'];

/** Why scenario `s` does not tell what kernel `version` does, or null when it does. */
export function misfit(s: Scenario, version: KernelVersion): string | null {
  return s.eras.includes(eraOf(version)) ? null : `"${s.title}" does not apply to Linux ${version.major}.${version.minor}: ${s.notFor ?? 'its kernel works otherwise'}.`;
}

/**
 * The story to show for `s` on `versions`: `s` itself when it tells one of them, else the first of
 * its counterparts (`instead`, followed) that does, else the first story that tells the first version.
 * Never a story that fits none of them: a kernel chosen where the story does not apply lands on one that does.
 */
export function storyFor(s: Scenario, versions: readonly KernelVersion[], all: readonly Scenario[]): Scenario {
  const fits = (c: Scenario) => versions.some((v) => misfit(c, v) === null);
  // Follow the counterparts ("see ...") until one fits: refill-partial -> sheaf-refill -> slow-path.
  const seen = new Set<string>();
  for (let c: Scenario | undefined = s; c && !seen.has(c.id); c = all.find((x) => x.id === c?.instead)) {
    if (fits(c)) return c;
    seen.add(c.id);
  }
  const first = versions[0];
  return all.find((c) => first !== undefined && misfit(c, first) === null) ?? s;
}

const sym = (allocOf: number, nth = 0): AnyRef => ({ allocOf, nth });

class StoryBuilder extends LabStoryBuilder<ScriptOp<AnyRef>> {
  readonly irqs: Script<AnyRef>['irqs'] = [];
  story(intro: string, outro: string): Story {
    return { script: { ops: this.ops, irqs: this.irqs }, captions: this.captions, intro, outro, ...(this.setups ? { setup: this.setups } : {}) };
  }
}

const fastPath: Scenario = {
  id: 'fast-path',
  instead: 'sheaf-hit',
  title: 'The fast path',
  objectSize: 512,
  defaultFastpath: 'cmpxchg',
  defaultBulk: 'detached',
  eras: CPU_SLAB_ERAS,
  notFor: 'Linux 7.0 removed struct kmem_cache_cpu, its tid and the cmpxchg fast path this story steps through: an allocation pops the CPU\'s main sheaf under a local trylock (see "A sheaf hit")',
  build() {
    const b = new StoryBuilder();
    const first = b.setup({ kind: 'alloc', cpu: 0 }, 'CPU 0 has allocated once. Its freelist was empty, so that first alloc took the slow path: a new slab from the page allocator became the CPU slab and its freelist moved to the CPU.');
    const a = b.op({ kind: 'alloc', cpu: 0 }, 'The fast path: read tid and the freelist head, then one this_cpu_cmpxchg_double swaps (head, tid) for (next, tid + TID_STEP). No lock, no interrupt disabling.');
    b.op({ kind: 'alloc', cpu: 0 }, 'Again: the head object leaves the CPU freelist and tid advances by one TID_STEP (a power of two at least the CPU count, so tid % TID_STEP is always the CPU).');
    b.op({ kind: 'free', cpu: 0, refs: [sym(a)] }, 'CPU 0 frees an object of its own CPU slab: the fast-path free pushes it on the CPU freelist with the same double-word cmpxchg, and tid advances again.');
    b.op({ kind: 'alloc', cpu: 0 }, 'The freelist is LIFO: the object just freed comes straight back, still hot in the cache.');
    b.op({ kind: 'free', cpu: 0, refs: [sym(first)] }, 'Every fast-path operation, alloc or free, moves tid on: that is what lets a cmpxchg notice that anything happened on this CPU in between.');
    return b.story(
      'One CPU allocating and freeing 512-byte objects. Watch CPU 0\'s lane: the freelist head, the tid, and the chain of free objects in its CPU slab (blue arrows).',
      'Each operation was one cmpxchg on (freelist, tid). The next story shows why the tid is in that double word.',
    );
  },
};

const whyTid: Scenario = {
  id: 'why-tid',
  instead: 'sheaf-irq',
  title: 'Why the tid',
  objectSize: 512,
  defaultFastpath: 'cmpxchg',
  defaultBulk: 'detached',
  eras: CPU_SLAB_ERAS,
  notFor: 'Linux 7.0 has no tid and no cmpxchg fast path to interrupt: an interrupt inside the sheaf section makes the trylock fail and the slab path run (see "An interrupt in the sheaf section")',
  contrast: { fastpath: 'plain', label: 'Replay with the RFC\'s plain writes', sideBySide: ['cmpxchg', 'plain', 'rt'] },
  objectNames: 'interrupt',
  build() {
    const b = new StoryBuilder();
    b.setup({ kind: 'alloc', cpu: 0 }, 'Set-up: CPU 0 got a CPU slab (slow path).');
    b.op({ kind: 'alloc', cpu: 0 }, 'A plain fast-path alloc, for reference.');
    const hit = b.op(
      { kind: 'alloc', cpu: 0 },
      'CPU 0 allocates again. Micro-step into it: it has read tid, the head object X and X\'s next pointer Y; an interrupt arrives before the cmpxchg (with rt: before local_lock is taken), and the handler allocates on the same CPU, taking X.',
    );
    b.irqs.push({ atOp: hit, point: PreemptPoint.ALLOC_BEFORE_CAS, nth: 0, handler: { kind: 'alloc' } });
    b.op(
      { kind: 'alloc', cpu: 0 },
      'Back in the interrupted code the outcome depends on the variant. With cmpxchg, tid had moved on, the cmpxchg failed and the alloc retried (one CMPXCHG_DOUBLE_CPU_FAIL), so everyone got a different object. With plain writes the stale head X was handed out a second time, and the checker reports the corrupt freelist. ' +
        'With rt (PREEMPT_RT) there is no lockless fast path: there local_lock_irqsave does not disable interrupts, so a lockless fast path in an interrupt handler could run inside a slow path that holds the lock; every alloc therefore runs ___slab_alloc under the CPU\'s local_lock (and do_slab_free takes it too). The interrupted alloc took the lock after the handler had finished and read the freelist again under it: it got Y, with no retry.',
    );
    return b.story(
      'Seed 001 asked whether SLUB\'s fast path could use plain writes instead of this_cpu_cmpxchg_double. Here an interrupt lands between reading the freelist and the cmpxchg.',
      'The tid is a sequence number for the CPU\'s freelist: a handler that ran in between changes it, so the interrupted cmpxchg cannot succeed on stale data. Plain writes have no such check. PREEMPT_RT writes plainly too, but only under the CPU\'s local_lock: the lock, not the tid, keeps the freelist whole there.',
    );
  },
};

const slowPath: Scenario = {
  id: 'slow-path',
  instead: 'sheaf-refill',
  title: 'Slow path',
  objectSize: 512,
  defaultFastpath: 'cmpxchg',
  defaultBulk: 'detached',
  eras: CPU_SLAB_ERAS,
  notFor: 'Linux 7.0 has no CPU slab and no CPU partial list: an empty sheaf is refilled from node partial slabs under list_lock (see "A refill from slabs")',
  build({ objects: n, cpus }) {
    const b = new StoryBuilder();
    const a0 = b.setup({ kind: 'alloc', cpu: 0 }, 'CPU 0 allocated with no CPU slab yet, so ___slab_alloc took a new slab (A) and froze it.');
    b.setup({ kind: 'allocBulk', cpu: 0, count: n - 1 }, `CPU 0 then took the remaining ${n - 1} objects of A: its freelist is empty.`);
    b.op({ kind: 'alloc', cpu: 0 }, 'Freelist exhausted. A has no free object left, no CPU partial slab, no node partial slab: refill from a new slab (B). A is now full and on no list at all (the kernel does not track full slabs).');
    b.op({ kind: 'free', cpu: 0, refs: [sym(a0)] }, 'CPU 0 frees an object of full slab A. A is not its CPU slab, so this is __slab_free; A was full, so it goes onto CPU 0\'s per-CPU partial list (put_cpu_partial).');
    b.op({ kind: 'free', cpu: 0, refs: [sym(1, 0)] }, 'A second free into A: A stays on the CPU partial list, its slab freelist grows.');
    b.op({ kind: 'allocBulk', cpu: 0, count: n - 1 }, 'CPU 0 uses up B.');
    b.op({ kind: 'alloc', cpu: 0 }, 'Freelist exhausted again: this time the refill comes from the CPU partial list. A becomes the CPU slab, its slab freelist becomes the CPU freelist.');
    const other = cpus > 1 ? 1 : 0;
    b.op({ kind: 'alloc', cpu: other }, `CPU ${other} allocates and gets a slab (C) of its own.`);
    b.op({ kind: 'flush', cpu: other }, `CPU ${other} is flushed (as on CPU hot-unplug or cache shrinking): deactivate_slab puts C, which has free objects, on the node partial list.`);
    b.op({ kind: 'alloc', cpu: 0 }, 'CPU 0 takes A\'s last free object (fast path).');
    b.op({ kind: 'alloc', cpu: 0 }, 'Exhausted, nothing on the CPU partial list: get_partial_node takes C from the node partial list under the node\'s list_lock and freezes it for CPU 0.');
    return b.story(
      'The slow path ___slab_alloc runs when the CPU freelist is empty. It refills, in order, from the CPU slab\'s own freelist, the CPU partial list, the node partial list, and finally a new slab.',
      'Three refill sources in one story: a new slab, the CPU partial list and the node partial list. The timeline names the source of each refill.',
    );
  },
};

const remoteFrees: Scenario = {
  id: 'remote-frees',
  instead: 'sheaf-hit',
  title: 'Remote frees',
  objectSize: 512,
  defaultFastpath: 'cmpxchg',
  defaultBulk: 'detached',
  eras: CPU_SLAB_ERAS,
  notFor: "Linux 7.0 has no CPU slab for a remote free to miss: every free goes into the freeing CPU's sheaf, and only what misses the sheaves reaches __slab_free",
  build({ objects: n, cpus }) {
    const b = new StoryBuilder();
    const r = cpus > 1 ? 1 : 0;
    b.setup({ kind: 'alloc', cpu: 0 }, 'CPU 0 got a CPU slab A');
    const bulk = b.setup({ kind: 'allocBulk', cpu: 0, count: 3 }, 'and allocated three more objects of it.');
    b.op({ kind: 'free', cpu: r, refs: [sym(bulk, 0)] }, `CPU ${r} frees one of them: a remote free. A is CPU 0's frozen CPU slab, so the object goes onto A's own slab freelist (orange) with a cmpxchg on the slab, not onto CPU 0's freelist.`);
    b.op({ kind: 'free', cpu: r, refs: [sym(bulk, 1)] }, `Another remote free from CPU ${r}: A's slab freelist now has two objects; CPU 0's freelist is untouched.`);
    b.op({ kind: 'allocBulk', cpu: 0, count: n - 4 }, 'CPU 0 empties its CPU freelist.');
    b.op({ kind: 'alloc', cpu: 0 }, 'Slow path, first source: the CPU slab\'s own freelist. get_freelist takes the remotely freed objects in one cmpxchg.');
    b.op({ kind: 'alloc', cpu: 0 }, 'The other one, on the fast path.');
    b.op({ kind: 'alloc', cpu: 0 }, 'A is fully used: CPU 0 moves to a new slab B; A is full and on no list.');
    b.op({ kind: 'free', cpu: r, refs: [sym(bulk, 2)] }, `CPU ${r} frees an object of the full slab A: A moves onto CPU ${r}'s partial list. The slab has changed hands.`);
    b.op({ kind: 'flush', cpu: r }, `CPU ${r} is flushed: A moves to the node partial list.`);
    b.op({ kind: 'alloc', cpu: r }, `CPU ${r} allocates: it takes A back from the node partial list as its CPU slab.`);
    return b.story(
      'Any CPU may free any object. A free into a slab that is not the freeing CPU\'s CPU slab goes through __slab_free, lock-free on the slab\'s freelist and counters, and may move the slab between lists.',
      `Slab A went from CPU 0's slab to no list (full), to CPU ${r}'s partial list, to the node, to CPU ${r}'s slab.`,
    );
  },
};

const bulkFree: Scenario = {
  id: 'bulk-free',
  instead: 'barn-full-flush',
  title: 'Bulk free, detached freelist',
  objectSize: 512,
  defaultFastpath: 'cmpxchg',
  defaultBulk: 'detached',
  eras: CPU_SLAB_ERAS,
  notFor: 'in Linux 7.0 kmem_cache_free_bulk fills the CPU\'s sheaves first; detached freelists are built only when a sheaf is flushed (see "A flush to slabs")',
  contrast: { bulkFree: 'generic', label: 'Replay with the generic loop (one free per object)' },
  build({ objects: n }) {
    const b = new StoryBuilder();
    const all = b.setup({ kind: 'allocBulk', cpu: 0, count: 2 * n }, `CPU 0 bulk-allocated ${2 * n} objects: two whole slabs.`);
    // Objects of the two slabs, interleaved as callers free them: runs of the same slab broken up.
    const lo = (k: number) => sym(all, k);
    const hi = (k: number) => sym(all, n + k);
    const p = [lo(0), hi(0), lo(1), lo(2), hi(1), hi(2), lo(3), hi(3), hi(4), lo(4), lo(5), hi(5)];
    b.op(
      { kind: 'freeBulk', cpu: 0, refs: p },
      `kmem_cache_free_bulk of ${p.length} objects from the two slabs, interleaved. The detached form scans p[] from the end and gathers objects of one slab into a private freelist (purple arrows), looking ahead past up to three objects of other slabs, then frees each group with one cmpxchg. Micro-step to watch each group form.`,
    );
    return b.story(
      'Seed 000 added build_detached_freelist: instead of one kmem_cache_free per object, group the objects of a bulk free by slab and free each group at once.',
      'The counts below compare the cmpxchgs of the two forms for the same p[].',
    );
  },
};

/** The sheaf stories' common ground: 512-byte objects, sheaves of 4 (so they fill within a few steps, said in each intro). */
const sheafStory = { objectSize: 512, defaultFastpath: 'cmpxchg', defaultBulk: 'detached', eras: SHEAF_ERAS, sheafCapacity: 4 } as const;
const SMALL = 'The cache\'s sheaves hold 4 objects here (vm_area_struct asks for 32 in 6.18; 7.0 sizes them from the object size), so they fill within a few steps.';

const sheafHit: Scenario = {
  ...sheafStory,
  id: 'sheaf-hit',
  instead: 'fast-path',
  title: 'A sheaf hit',
  notFor: 'before 6.18 there are no sheaves: an allocation comes from the CPU freelist (see "The fast path")',
  build() {
    const b = new StoryBuilder();
    b.setup({ kind: 'alloc', cpu: 0 }, 'CPU 0 allocated once. Its main sheaf was empty and the barn had no full one (barn_get_fail), so __pcs_replace_empty_main refilled a sheaf from slabs in bulk (refill_sheaf: sheaf_refill counts it) and alloc_from_pcs popped one object.');
    const hit = b.op({ kind: 'alloc', cpu: 0 }, 'A sheaf hit: alloc_from_pcs takes the local trylock, pops the top object of main and drops the lock (alloc_cpu_sheaf in 6.18; 7.0 counts it as alloc_fastpath). No cmpxchg, no tid.');
    b.op({ kind: 'free', cpu: 0, refs: [sym(hit)] }, 'CPU 0 frees it: free_to_pcs pushes the object back on main (free_cpu_sheaf in 6.18, free_fastpath in 7.0). The slab still counts it in use: objects in sheaves are allocated as far as their slab knows.');
    b.op({ kind: 'alloc', cpu: 0 }, 'A sheaf is a stack: the object just freed comes straight back, still hot in the cache.');
    return b.story(`Allocation and free through CPU 0's main sheaf. ${SMALL}`, 'Every hit was one array push or pop under a per-CPU lock: that is the sheaves\' fast path.');
  },
};

const spareSwap: Scenario = {
  ...sheafStory,
  id: 'spare-swap',
  instead: 'fast-path',
  title: 'Main empty, spare swapped in',
  notFor: 'before 6.18 there are no sheaves to swap',
  build() {
    const b = new StoryBuilder();
    const all = b.setup({ kind: 'allocBulk', cpu: 0, count: 8 }, 'CPU 0 bulk-allocates 8 objects: its main sheaf is empty, so kmem_cache_alloc_bulk takes them from slabs.');
    for (let k = 0; k < 4; k++)
      b.op({ kind: 'free', cpu: 0, refs: [sym(all, k)] }, k < 3 ? `Free ${k + 1}: free_to_pcs pushes it on main.` : 'Free 4: main is full now (4 of 4).');
    b.op({ kind: 'free', cpu: 0, refs: [sym(all, 4)] }, 'Main is full and there is no spare yet: __pcs_replace_full_main makes the full main the spare and an empty sheaf main (sheaf_alloc), then pushes on it.');
    for (let k = 0; k < 2; k++) b.op({ kind: 'alloc', cpu: 0 }, k === 0 ? 'Allocations pop the new main.' : 'Main is empty again.');
    b.op({ kind: 'alloc', cpu: 0 }, 'Main is empty and the spare is full: __pcs_replace_empty_main swaps them and the allocation pops the old full main.');
    return b.story(`Each CPU keeps two sheaves, main and spare. ${SMALL}`, 'A swap is the cheapest refill: two pointers exchanged under the CPU\'s local lock.');
  },
};

const barnExchange: Scenario = {
  ...sheafStory,
  id: 'barn-exchange',
  instead: 'slow-path',
  title: 'The barn exchange',
  notFor: 'before 6.18 there is no barn: the node keeps partial slabs only',
  build({ cpus }) {
    const b = new StoryBuilder();
    const other = cpus > 1 ? 1 : 0;
    const all = b.setup({ kind: 'allocBulk', cpu: 0, count: 12 }, 'CPU 0 bulk-allocates 12 objects (from slabs: its main sheaf is empty).');
    b.op({ kind: 'freeBulk', cpu: 0, refs: [0, 1, 2, 3].map((k) => sym(all, k)) }, 'It frees 4 in bulk: they fill main (4 of 4).');
    b.op({ kind: 'free', cpu: 0, refs: [sym(all, 4)] }, 'Main is full and there is no spare: the full main becomes the spare and an empty sheaf becomes main (sheaf_alloc: the barn has none to give).');
    b.op({ kind: 'freeBulk', cpu: 0, refs: [5, 6, 7].map((k) => sym(all, k)) }, 'Three more fill main again.');
    b.op({ kind: 'free', cpu: 0, refs: [sym(all, 8)] }, 'Main and spare are both full: barn_put gives the full main to the node\'s barn under its lock (barn_put), and an empty sheaf takes its place.');
    b.op({ kind: 'alloc', cpu: other }, `CPU ${other} allocates with an empty main: barn_get hands it the full sheaf CPU 0 put there (barn_get), and the allocation pops it.`);
    b.op({ kind: 'alloc', cpu: other }, `CPU ${other} allocates again from the sheaf CPU 0 filled: objects freed on one CPU are reused on another without touching a slab.`);
    return b.story(`The barn is the node's store of full and empty sheaves (at most 10 of each), under its own spinlock. ${SMALL}`, 'The barn moves whole sheaves between CPUs: one lock round trip per sheaf instead of per object.');
  },
};

const refillFromSlabs: Scenario = {
  ...sheafStory,
  id: 'sheaf-refill',
  instead: 'slow-path',
  title: 'A refill from slabs',
  notFor: 'before 6.18 there are no sheaves: the slow path refills the CPU freelist (see "The slow path")',
  build({ cpus, objects }) {
    const b = new StoryBuilder();
    const other = cpus > 1 ? 1 : 0;
    const all = b.setup({ kind: 'allocBulk', cpu: other, count: 2 * objects }, `Set-up: CPU ${other} bulk-allocates ${2 * objects} objects, two slabs' worth (A and B, full and on no list: its sheaves were empty, so they came from slabs).`);
    b.op({ kind: 'freeBulk', cpu: other, refs: [sym(all, 0), sym(all, 1), sym(all, objects)] }, `It frees 2 objects of slab A and 1 of slab B in bulk: they land in CPU ${other}'s main sheaf, not yet in their slabs.`);
    b.op({ kind: 'flush', cpu: other }, `Flushing CPU ${other} (pcs_flush_all, as a CPU going offline or a cache shrink does) frees its sheaves' objects to their slabs: A (2 free) and B (1 free) are on the node partial list now.`);
    b.op({ kind: 'alloc', cpu: 0 }, 'CPU 0 allocates. Its main sheaf is empty, there is no spare, and the barn holds no sheaf at all (barn_get_fail): a sheaf is refilled from slabs in bulk (refill_sheaf, sheaf_refill counts 4). In 7.0 __refill_objects_node takes the node partial slabs A and B off the list under list_lock and empties their freelists with one cmpxchg each (3 objects), then a new slab gives the 4th and goes on the list with the rest (alloc_slab); 6.18 fills the sheaf with a bulk allocation from its per-CPU slab, which takes the same slabs. The allocation pops the top object.');
    b.op({ kind: 'alloc', cpu: 0 }, 'The next allocation is a sheaf hit: A and B have no free object left, and the objects they gave wait in CPU 0\'s sheaf.');
    return b.story(`When a CPU's sheaves are empty and the barn has no full one, a sheaf is filled from slabs in one go. ${SMALL}`, 'One list_lock round trip and one cmpxchg per slab fill a whole sheaf: the slabs\' freelists shrink by a sheaf at a time.');
  },
};

/** The barn's limit of full sheaves (MAX_FULL_SHEAVES, mm/slub.c; the model has no knob for it). */
const MAX_FULL_SHEAVES = 10;

const flushBarnFull: Scenario = {
  ...sheafStory,
  id: 'barn-full-flush',
  instead: 'bulk-free',
  title: 'A flush to slabs when the barn is full',
  notFor: 'before 6.18 there are no sheaves to flush: a free goes to the CPU freelist or the slab',
  build() {
    const b = new StoryBuilder();
    let next = 0;
    const all = b.setup({ kind: 'allocBulk', cpu: 0, count: 4 + 4 + 4 * MAX_FULL_SHEAVES + 1 }, `Set-up: CPU 0 bulk-allocates ${4 + 4 + 4 * MAX_FULL_SHEAVES + 1} objects to free one by one and in fours.`);
    const take = (n: number) => Array.from({ length: n }, () => sym(all, next++));
    b.op({ kind: 'freeBulk', cpu: 0, refs: take(4) }, 'Four frees in bulk fill the main sheaf (4 of 4).');
    b.op({ kind: 'free', cpu: 0, refs: take(1) }, 'Main is full and there is no spare: a new sheaf becomes main, the full one the spare.');
    b.op({ kind: 'freeBulk', cpu: 0, refs: take(3) }, 'Three more fill main again: main and spare are both full.');
    for (let k = 1; k <= MAX_FULL_SHEAVES; k++) {
      b.op({ kind: 'free', cpu: 0, refs: take(1) }, k === 1
        ? 'Main and spare full, the barn holds no empty sheaf: a new sheaf is allocated and the full main goes to the barn (barn_put). The barn is at 1 of its 10 full sheaves.'
        : `Again: barn_put, ${k} of 10 full sheaves in the barn.`);
      b.op({ kind: 'freeBulk', cpu: 0, refs: take(3) }, k < MAX_FULL_SHEAVES ? 'Three frees fill main.' : 'Three frees fill main: main and spare full, the barn at its limit.');
    }
    b.op({ kind: 'free', cpu: 0, refs: take(1) }, 'Main and spare full, and the barn already holds 10 full sheaves (MAX_FULL_SHEAVES): barn_put_fail. __pcs_replace_full_main flushes the full spare to slabs in bulk (sheaf_flush counts its 4 objects, freed by detached freelists), makes the emptied sheaf main and the full main the spare, and pushes the object.');
    return b.story(
      `The barn keeps at most 10 full sheaves; past that, a free that finds main and spare full sends a sheaf's objects back to their slabs. ${SMALL} The kernel's limit of 10 has no knob in the model, so the first ${2 * MAX_FULL_SHEAVES + 3} steps only fill the barn, two per sheaf: jump to the end to see the flush.`,
      'Flushing the spare rather than main keeps the hottest objects, the ones just freed, in the CPU\'s sheaf.',
    );
  },
};

const kfreeRcu: Scenario = {
  ...sheafStory,
  id: 'kfree-rcu',
  instead: 'fast-path',
  title: 'kfree_rcu batching',
  notFor: 'before 6.18 kfree_rcu batches in kfree_rcu_cpu\'s pages, which the model does not show: there are no rcu_free sheaves',
  build() {
    const b = new StoryBuilder();
    const all = b.setup({ kind: 'allocBulk', cpu: 0, count: 5 }, 'CPU 0 allocates 5 objects.');
    for (let k = 0; k < 4; k++)
      b.op({ kind: 'kfreeRcu', cpu: 0, refs: [sym(all, k)] }, k === 0 ? 'kfree_rcu: __kfree_rcu_sheaf puts the object in CPU 0\'s rcu_free sheaf (free_rcu_sheaf). Readers may still hold it: it waits for a grace period.' : k < 3 ? 'Another kfree_rcu, batched in the same sheaf.' : 'The rcu_free sheaf is full: it is handed to call_rcu as a whole, one callback for 4 objects.');
    b.op({ kind: 'gracePeriod', cpu: 0 }, 'The grace period ends (the model makes it a step): the sheaf\'s callback puts it in the barn as a full sheaf, its objects ready for allocation again (or flushes it to slabs when the barn is full).');
    return b.story(`kfree_rcu frees an object after an RCU grace period. With sheaves the objects are batched per CPU in an rcu_free sheaf. ${SMALL}`, 'One call_rcu per sheaf instead of one per object.');
  },
};

const prefill: Scenario = {
  ...sheafStory,
  id: 'prefill',
  instead: 'fast-path',
  title: 'The prefill API',
  notFor: 'kmem_cache_prefill_sheaf came with sheaves in 6.18',
  build() {
    const b = new StoryBuilder();
    b.setup({ kind: 'alloc', cpu: 0 }, 'Set-up: CPU 0 allocates, so its sheaves exist.');
    b.op({ kind: 'prefill', cpu: 0, slot: 0, count: 3 }, 'kmem_cache_prefill_sheaf asks for 3 objects up front (as the maple tree does before taking a lock): it gets a sheaf of its own, filled from the spare or the barn or slabs (sheaf_prefill_fast or _slow).');
    b.op({ kind: 'allocFromSheaf', cpu: 0, slot: 0 }, 'kmem_cache_alloc_from_sheaf: an allocation that cannot fail, popped from the caller\'s sheaf (no counter moves).');
    b.op({ kind: 'refillSheaf', cpu: 0, slot: 0, count: 4 }, 'kmem_cache_refill_sheaf tops it up to 4 objects.');
    b.op({ kind: 'returnSheaf', cpu: 0, slot: 0 }, 'kmem_cache_return_sheaf: the caller is done; the sheaf goes back to the CPU as its spare or to the barn (sheaf_return_fast), or is flushed (sheaf_return_slow).');
    b.op({ kind: 'prefill', cpu: 0, slot: 1, count: 9 }, 'A prefill larger than the cache\'s sheaves: an oversize sheaf made for the request (sheaf_prefill_oversize).');
    b.op({ kind: 'returnSheaf', cpu: 0, slot: 1 }, 'Returned, an oversize sheaf is flushed to slabs and freed.');
    return b.story(`The prefill API lets a caller reserve objects before entering a section where it cannot allocate. ${SMALL}`, 'Prefilled sheaves are sheaves out with a caller: drawn under "Prefilled sheaves" while they are out.');
  },
};

const sheafIrq: Scenario = {
  ...sheafStory,
  id: 'sheaf-irq',
  instead: 'why-tid',
  title: 'An interrupt in the sheaf section',
  notFor: 'before 6.18 there is no sheaf section: see "Why the tid" for an interrupt in the fast path',
  build() {
    const b = new StoryBuilder();
    b.setup({ kind: 'alloc', cpu: 0 }, 'Set-up: CPU 0 gets a main sheaf.');
    const hit = b.op({ kind: 'alloc', cpu: 0 }, 'CPU 0 allocates. Micro-step into it: alloc_from_pcs holds the local trylock (the lane is marked) when an interrupt arrives and the handler allocates on the same CPU.');
    b.irqs.push({ atOp: hit, point: PreemptPoint.SHEAF_ALLOC, nth: 0, handler: { kind: 'alloc' } });
    b.op({ kind: 'alloc', cpu: 0 }, 'Looking back at the interrupted allocation: the handler\'s local_trylock failed (the interrupted code held it), so the handler took the slab path (alloc_slowpath in 7.0, the CPU slab in 6.18) instead of the sheaf, and the interrupted allocation then popped main as if nothing had happened. This one is an ordinary sheaf hit.');
    return b.story(`The sheaves' lock is a local_trylock_t: an interrupt handler that finds it taken falls back to the slabs instead of spinning. ${SMALL}`, 'The trylock replaces the tid: no retry, no cmpxchg, just a fallback when the CPU\'s sheaves are busy.');
  },
};

const bootstrap: Scenario = {
  ...sheafStory,
  id: 'bootstrap',
  instead: 'sheaf-hit',
  title: '7.0: kmalloc bootstrap',
  eras: ['sheaves'],
  earlyBoot: true,
  notFor: 'only 7.0 gives every cache sheaves, kmalloc caches too; they start with the bootstrap sheaf',
  build() {
    const b = new StoryBuilder();
    b.setup({ kind: 'alloc', cpu: 0 }, 'CPU 0 allocated once from a kmalloc cache made before bootstrap_cache_sheaves: the object came from a slab.');
    b.op({ kind: 'alloc', cpu: 0 }, 'CPU 0 allocates again. The cache still has the zero-capacity bootstrap sheaf as every CPU\'s main: nothing fits, so the allocation takes the slab path again.');
    b.op({ kind: 'bootstrap', cpu: 0 }, 'bootstrap_cache_sheaves: once slab allocations work, every CPU gets a real main sheaf.');
    b.op({ kind: 'alloc', cpu: 0 }, 'Now the allocation goes through sheaves: main is refilled from slabs and popped.');
    return b.story(`Sheaves are allocated from kmalloc caches, which need sheaves themselves: 7.0 breaks the circle with a bootstrap sheaf. ${SMALL}`, 'After bootstrap the kmalloc caches behave as every other cache.');
  },
};

/** The stories of what changed after 7.0: 7.0 and 7.3 side by side. */
const AFTER_70 = { objectSize: 512, defaultFastpath: 'cmpxchg', defaultBulk: 'detached', eras: ['sheaves'], sheafCapacity: 4, kernels: ['7.0', '7.3'] } as const;

const refillPartial: Scenario = {
  ...AFTER_70,
  id: 'refill-partial',
  instead: 'sheaf-refill',
  title: 'After 7.0: a refill from partial slabs',
  notFor: 'it compares 7.0 with 7.2 and later, which refill sheaves from node partial slabs without a CPU slab (see "A refill from slabs")',
  build({ objects }) {
    const b = new StoryBuilder();
    const all = b.setup({ kind: 'allocBulk', cpu: 0, count: 2 * objects }, `In both kernels CPU 0 bulk-allocated ${2 * objects} objects, two slabs' worth (A and B, full and on no list).`);
    b.op({ kind: 'freeBulk', cpu: 0, refs: [0, 1, 2, objects].map((k) => sym(all, k)) }, 'It frees 3 objects of A and 1 of B in bulk: they fill CPU 0\'s main sheaf (4 of 4).');
    b.op({ kind: 'free', cpu: 0, refs: [sym(all, objects + 1)] }, 'Another of B: main is full, so it becomes the spare and a new empty sheaf becomes main.');
    b.op({ kind: 'free', cpu: 0, refs: [sym(all, objects + 2)] }, 'A third of B, onto main.');
    b.op({ kind: 'flush', cpu: 0 }, 'Flushing CPU 0 sends the 6 objects to their slabs: A and B were full, so each joins the node partial list at its tail (free_add_partial counts 2), each with 3 free objects.');
    b.op(
      { kind: 'alloc', cpu: 0 },
      'CPU 0 allocates with empty sheaves and an empty barn: a new sheaf is refilled with 4 objects from slabs (sheaf_refill 4). Both kernels take the two partial slabs off the list under list_lock (3 + 3 free objects: enough for 4) and empty their freelists with one cmpxchg each; the first gives 3, the second 1, and 2 are left over. ' +
        'Linux 7.0 gives that surplus back with __slab_free: its slab looks full, so it goes to the list\'s tail under list_lock again and free_add_partial counts a 3rd time. ' +
        'Linux 7.3 (as 7.2, "mm, slab: add an optimistic __slab_try_return_freelist()") puts it back with one cmpxchg that assumes the slab is still full (under list_lock since 7.3-rc), keeps the slab with those not needed and splices them back to the list\'s tail: no counter moves. Either way one slab stays on the list, holding the 2 objects.',
    );
    b.op({ kind: 'alloc', cpu: 0 }, 'A sheaf hit in both: the three objects left in main came from the two slabs.');
    return b.story(
      `What changed after 7.0 in __refill_objects_node, side by side (left 7.0, right 7.3). ${SMALL}`,
      'Same objects, same list: 7.3 returns a refill\'s surplus without __slab_free, so free_add_partial stays at 2 where 7.0 counts 3.',
    );
  },
};

const oversizeCounted: Scenario = {
  ...AFTER_70,
  id: 'oversize-counted',
  instead: 'prefill',
  title: 'After 7.0: oversize sheaves counted',
  notFor: 'it compares how 7.0 and 7.2 and later count the prefill API\'s oversize sheaves (see "The prefill API")',
  build() {
    const b = new StoryBuilder();
    b.setup({ kind: 'alloc', cpu: 0 }, 'Set-up: CPU 0 allocated, so its main sheaf exists (sheaf_alloc counts the one refilled).');
    b.op({ kind: 'prefill', cpu: 0, slot: 0, count: 9 }, 'kmem_cache_prefill_sheaf for 9 objects, more than the cache\'s sheaves hold (4): an oversize sheaf made for the request, filled by __kmem_cache_alloc_bulk (sheaf_prefill_oversize). Linux 7.0 kzallocs it without a counter; 7.3 (as 7.2, "mm/slub: use empty sheaf helpers for oversized sheaves") counts it in sheaf_alloc.');
    b.op({ kind: 'allocFromSheaf', cpu: 0, slot: 0 }, 'An allocation from the caller\'s sheaf: it cannot fail.');
    b.op({ kind: 'returnSheaf', cpu: 0, slot: 0 }, 'Returned, an oversize sheaf is flushed to slabs (sheaf_flush counts its 8 objects) and freed: 7.3 counts that in sheaf_free, 7.0 does not.');
    return b.story(`Oversize prefilled sheaves, counted from 7.2 on, side by side (left 7.0, right 7.3). ${SMALL}`, 'sheaf_alloc and sheaf_free now count every sheaf the cache makes, oversize ones too.');
  },
};

/**
 * A two-node machine whose node 1 has CPUs and no memory: the last CPU alone on node 1, offline
 * at first (so that its coming online is a step), the others on node 0.
 */
export const MEMORYLESS_MACHINE = (cpus: number): NumaConfig => ({
  nodes: 2,
  cpuNode: Array.from({ length: cpus }, (_, c) => (c === cpus - 1 ? 1 : 0)),
  memoryless: 0b10,
  offline: 1 << (cpus - 1),
});

const memorylessBarn: Scenario = {
  ...AFTER_70,
  kernels: ['7.0', '7.1'],
  id: 'memoryless-barn',
  instead: 'barn-exchange',
  title: 'After 7.0: a barn for a memoryless node',
  notFor: 'it compares where 7.0 and 7.1 keep the barn of a node without memory; kernels before 6.18 have no barns',
  numa: MEMORYLESS_MACHINE,
  build({ cpus }) {
    const m = cpus - 1;
    const b = new StoryBuilder();
    b.setup({ kind: 'allocBulk', cpu: 0, count: 4 }, 'Set-up: CPU 0, on node 0, bulk-allocated 4 objects. Its main sheaf was empty, so kmem_cache_alloc_bulk took them from a slab, node 0\'s.');
    b.op({ kind: 'cpuOnline', cpu: m }, `CPU ${m}, node 1's only CPU, comes online (slub_cpu_setup). Node 1 has no memory. Linux 7.1 keeps barns per node in s->per_node[] and gives a node a barn when its first CPU comes up: node 1 now has one. Linux 7.0 keeps the barn in kmem_cache_node, which a memoryless node does not have: nothing is made, and CPU ${m} will use node 0's barn (get_barn: numa_mem_id).`);
    const all = b.op({ kind: 'allocBulk', cpu: m, count: 12 }, `CPU ${m} bulk-allocates 12 objects. Its sheaves and its barn are empty, so they come from slabs, all node 0's (the one CPU 0 took from first): a memoryless node's CPUs allocate from the nearest node with memory.`);
    b.op({ kind: 'freeBulk', cpu: m, refs: Array.from({ length: 4 }, (_, k) => sym(all, k)) }, `CPU ${m} frees 4 of them in bulk: their slab is node 0's, which is CPU ${m}'s memory node (numa_mem_id), so they are local and fill its main sheaf (4 of 4).`);
    b.op({ kind: 'free', cpu: m, refs: [sym(all, 4)] }, 'A fifth free finds main full and no spare: __pcs_replace_full_main makes the full main the spare and a new empty sheaf main (sheaf_alloc), then pushes on it.');
    b.op({ kind: 'freeBulk', cpu: m, refs: Array.from({ length: 3 }, (_, k) => sym(all, 5 + k)) }, 'Three more in bulk fill main again: main and spare are both full.');
    b.op({ kind: 'free', cpu: m, refs: [sym(all, 8)] }, `One more free: both sheaves are full, so the full main goes into the barn (barn_put) and an empty sheaf takes its place. Which barn: in 7.0 node 0's, the barn of CPU ${m}'s memory node; in 7.1 node 1's own.`);
    b.op({ kind: 'flush', cpu: m }, `CPU ${m}'s sheaves are flushed to their slabs; the full sheaf stays in the barn it went to.`);
    b.op({ kind: 'alloc', cpu: 0 }, 'CPU 0, on node 0, allocates with empty sheaves. In 7.0 node 0\'s barn holds the full sheaf CPU ' + m + ' left there: barn_get hands it over, a whole sheaf without touching a slab. In 7.1 node 0\'s barn is empty (the sheaf is in node 1\'s): barn_get fails and a sheaf is refilled from slabs (sheaf_refill).');
    return b.story(
      `Two NUMA nodes: node 0 with memory and CPUs 0${cpus > 2 ? `-${cpus - 2}` : ''}, node 1 with CPU ${m} and no memory (side by side: left 7.0, right 7.1). ${SMALL}`,
      'Same frees, another barn: 7.0 shares the memory node\'s barn with a memoryless node\'s CPUs, so node 0\'s CPUs get their full sheaves; 7.1 keeps them on node 1, in a barn of its own.',
    );
  },
};

export const SCENARIOS: readonly Scenario[] = [fastPath, whyTid, slowPath, remoteFrees, bulkFree, sheafHit, spareSwap, barnExchange, refillFromSlabs, flushBarnFull, kfreeRcu, prefill, sheafIrq, bootstrap, refillPartial, oversizeCounted, memorylessBarn];
export const SCENARIO_IDS = SCENARIOS.map((s) => s.id);

export function scenarioById(id: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.id === id);
}

/** 6.18's opt-in: the capacity vm_area_struct and maple_node ask for. */
export const OPT_IN_CAPACITY = 32;

/**
 * The world a scenario (or the sandbox: none) runs in, under `kernel`'s boot parameters and
 * options if any, in Linux `version` (absent or 6.17: the model's base).  In 6.18 the cache opts
 * in to sheaves as vm_area_struct does (or with the scenario's small capacity); in 7.0 every
 * cache has them (the scenario's small capacity given exactly, else calculate_sheaf_capacity's).
 * A story of the per-CPU slab (no sheafCapacity) keeps its 6.18 cache without sheaves.
 */
export function scenarioConfig(s: Scenario | undefined, cpus: number, fastpath: Fastpath, bulkFree: BulkForm, kernel?: KernelParams, version?: KernelVersion): WorldConfig {
  const era = version ? eraOf(version) : 'cpu-slab';
  const small = s?.sheafCapacity;
  // A story of the per-CPU slab leaves its 6.18 cache without sheaves, as most caches of 6.18 are.
  const optIn = !s || small !== undefined;
  const sheaves =
    era === 'opt-in-sheaves' && optIn
      ? { sheafCapacity: small ?? OPT_IN_CAPACITY }
      : era === 'sheaves' && small
        ? { sheafCapacity: small, exactCapacity: true as const }
        : {};
  return {
    cpus,
    objectSize: s?.objectSize ?? 512,
    fastpath,
    bulkFree,
    seed: 1,
    arenaBytes: 4 << 20,
    ...(kernel ? { kernel } : {}),
    ...(version && !(version.major === 6 && version.minor === 17) ? { version } : {}),
    ...sheaves,
    ...(era === 'sheaves' && s?.earlyBoot ? { earlyBoot: true as const } : {}),
    ...(s?.numa ? { numa: s.numa(cpus) } : {}),
  };
}
