// describe.ts - the words for what the canvas shows: the inspector's account
// of a selected object or slab, and one line per event for the timeline.
// Everything a reader sees on the canvas is also said here, as text, so the
// view works with a screen reader and the e2e tests can read it.

import { eventKindInfo, EventKind, NONE32 as EV_NONE, type SlEvent } from '../core/events.generated';
import { describeTraceEvent, eventPlace, timelineGroups, TRACE_GROUPS, type OpNames, type TraceWords } from '../lab/describe';
import type { EventEffect, EventWords } from '../lab/view';
import { KIND_CODE, POINT_TEXT, TUNE_OPCODE } from './script';
import { barnNodeOf, nodePartialOf, SHEAF_ROLES } from './layout';
import { NEXT_CORRUPT, NO_CPU, NONE32, ObjState, SheafPlace, SlabList, type SlubSnapshot } from './snapshot';
import { STATE_NAMES } from './render';

function listName(s: SlubSnapshot, slab: number): string {
  const cpu = s.slab.cpu[slab] ?? NO_CPU;
  switch (s.slab.list[slab]) {
    case SlabList.CPU_SLAB:
      return `CPU ${cpu}'s CPU slab`;
    case SlabList.CPU_PARTIAL:
      return `CPU ${cpu}'s partial list (position ${(s.slab.position[slab] ?? 0) + 1})`;
    case SlabList.NODE_PARTIAL: {
      if (!s.numa) return `the node partial list (position ${(s.slab.position[slab] ?? 0) + 1})`;
      // NUMA nodes: the snapshot's one list is every node's in node order; name the slab's node and its place on that node's list.
      const nid = s.slab.nid[slab] ?? 0;
      return `node ${nid}'s partial list (position ${nodePartialOf(s, nid).indexOf(slab) + 1})`;
    }
    default:
      return (s.slab.inuse[slab] ?? 0) === (s.slab.objects[slab] ?? 0) ? 'no list (full)' : 'no list';
  }
}

/** " (order k, n objects)", and why when the slab is a fallback one. */
function slabSize(s: SlubSnapshot, slab: number): string {
  const order = s.slab.order[slab] ?? s.geometry.order;
  const objects = s.slab.objects[slab] ?? 0;
  const fallback = order === s.geometry.order ? '' : `: a fallback slab, made when the page allocator had no order-${s.geometry.order} block for the cache's ${s.geometry.objects}-object slabs`;
  return ` (order ${order}, ${objects} objects${fallback})`;
}

export function describeSlab(s: SlubSnapshot, slab: number): string {
  const inuse = s.slab.inuse[slab] ?? 0;
  const objects = s.slab.objects[slab] ?? 0;
  const parts = [
    `Slab pfn ${s.slab.pfn[slab]}${slabSize(s, slab)} is on ${listName(s, slab)}.`,
    `inuse ${inuse}, objects ${objects}, frozen ${s.slab.frozen[slab] ? 'yes' : 'no'}.`,
    `${s.slab.slabFreeCount[slab]} free on its own freelist, ${s.slab.cpuFreeCount[slab]} on a CPU freelist.`,
  ];
  if (s.slab.freelistHead[slab] === NEXT_CORRUPT) parts.push('Its freelist head does not point at one of its objects: corrupt.');
  if (s.numa) parts.push(`Its memory is node ${s.slab.nid[slab] ?? 0}'s (slab_nid).`);
  return parts.join(' ');
}

/** Position of an object on its chain and its predecessor, walking from the chain's head. */
function chainPlace(s: SlubSnapshot, slab: number, index: number, head: number): { pos: number; prev: number } | null {
  const first = s.slab.firstObj[slab] ?? 0;
  const objects = s.slab.objects[slab] ?? 0;
  let prev = NONE32;
  let at = head;
  for (let n = 0; at !== NONE32 && at < objects && n <= objects; n++) {
    if (at === index) return { pos: n, prev };
    prev = at;
    at = s.obj.next[first + at] ?? NONE32;
  }
  return null;
}

export function describeObject(s: SlubSnapshot, slab: number, index: number, names: OpNames | null): string {
  const first = s.slab.firstObj[slab] ?? 0;
  const pfn = s.slab.pfn[slab] ?? 0;
  const st = s.obj.state[first + index] ?? ObjState.ALLOCATED;
  const out = [`Object ${index} of slab pfn ${pfn} is ${STATE_NAMES[st] ?? 'unknown'}; the slab is on ${listName(s, slab)}.`];
  const nb = (head: number, what: string) => {
    const place = chainPlace(s, slab, index, head);
    if (!place) return;
    const next = s.obj.next[first + index] ?? NONE32;
    const nextText = next === NONE32 ? 'none (the tail)' : next === NEXT_CORRUPT ? 'a pointer outside the slab (corrupt)' : `object ${next}`;
    out.push(`It is number ${place.pos + 1} on ${what}: previous ${place.prev === NONE32 ? 'none (the head)' : `object ${place.prev}`}, next ${nextText}.`);
  };
  if (st === ObjState.SLAB_FREE || st === ObjState.DUP) nb(s.slab.freelistHead[slab] ?? NONE32, "the slab's freelist");
  if (st === ObjState.CPU_FREE || st === ObjState.DUP) {
    const c = s.cpus[s.slab.cpu[slab] ?? 0];
    if (c && c.freelistPfn === pfn) nb(c.freelistIndex, `CPU ${c.cpu}'s freelist`);
  }
  const holder = sheafHolding(s, pfn, index);
  if (holder) out.push(`It is in slot ${holder.slot} of ${sheafName(s, holder.sheaf)}.`);
  if (s.tracked) {
    const aop = s.obj.allocOp[first + index] ?? 0;
    const fop = s.obj.freeOp[first + index] ?? 0;
    out.push(
      aop ? `Last allocated by ${names ? names.name(aop) : `operation #${aop}`} on CPU ${s.obj.allocCpu[first + index]}.` : 'Never allocated.',
    );
    if (fop) out.push(`Last freed by ${names ? names.name(fop) : `operation #${fop}`} on CPU ${s.obj.freeCpu[first + index]}.`);
  }
  out.push(`Slab${slabSize(s, slab)} counters: inuse ${s.slab.inuse[slab]}, objects ${s.slab.objects[slab]}, frozen ${s.slab.frozen[slab] ? 'yes' : 'no'}.`);
  return out.join(' ');
}

/** The sheaf record and slot holding object (pfn, index), or null. */
export function sheafHolding(s: SlubSnapshot, pfn: number, index: number): { sheaf: number; slot: number } | null {
  const sh = s.sheaves;
  for (let rec = 0; rec < sh.nsheaves; rec++) {
    const first = sh.sheaf.first[rec] ?? 0;
    for (let k = 0; k < (sh.sheaf.size[rec] ?? 0); k++) if (sh.entryPfn[first + k] === pfn && sh.entryIndex[first + k] === index) return { sheaf: rec, slot: k };
  }
  return null;
}

/** "CPU 0's main sheaf #3 (5 of 28 objects)". */
function sheafName(s: SlubSnapshot, rec: number): string {
  const sh = s.sheaves;
  const place = sh.sheaf.place[rec] ?? 0;
  const cpu = sh.sheaf.cpu[rec] ?? NO_CPU;
  const owner = cpu === NO_CPU ? '' : `CPU ${cpu}'s `;
  const what =
    place === SheafPlace.BARN_FULL || place === SheafPlace.BARN_EMPTY
      ? `a ${place === SheafPlace.BARN_FULL ? 'full' : 'empty'} sheaf in the barn`
      : place === SheafPlace.PREFILLED
        ? 'a prefilled sheaf out with its caller'
        : place === SheafPlace.RCU_WAIT
          ? `${owner}objects waiting alone for a grace period`
          : place === SheafPlace.RCU_PENDING
            ? `${owner}rcu sheaf handed to call_rcu`
            : `${owner}${SHEAF_ROLES[place]} sheaf`;
  return `${what} #${sh.sheaf.id[rec]} (${sh.sheaf.size[rec]} of ${sh.sheaf.capacity[rec]} objects)`;
}

/** A sheaf in words: where it is, how full, what happens to it next. */
export function describeSheaf(s: SlubSnapshot, rec: number): string {
  const sh = s.sheaves;
  const size = sh.sheaf.size[rec] ?? 0;
  const capacity = sh.sheaf.capacity[rec] ?? 0;
  const place = sh.sheaf.place[rec] ?? 0;
  const name = sheafName(s, rec);
  const parts = [`${name.charAt(0).toUpperCase()}${name.slice(1)}.`];
  if (s.numa && (place === SheafPlace.BARN_FULL || place === SheafPlace.BARN_EMPTY)) parts.push(`It is in node ${barnNodeOf(s, rec)}'s barn.`);
  if (place === SheafPlace.MAIN) parts.push(size ? `alloc_from_pcs pops slot ${size - 1} next; free_to_pcs pushes into slot ${size}.` : 'It is empty: the next allocation swaps in the spare, or asks the barn, or refills it from slabs.');
  else if (place === SheafPlace.SPARE) parts.push(size === capacity ? 'A full spare: swapped in when main runs empty.' : size ? 'The spare.' : 'An empty spare: swapped in when main fills up.');
  else if (place === SheafPlace.RCU_FREE) parts.push(`kfree_rcu batches objects here; when full it goes to call_rcu, and after the grace period to the barn (or to slabs).`);
  else if (sh.sheaf.rcuFlush[rec]) parts.push('After the grace period it is flushed to slabs, not put in the barn.');
  return parts.join(' ');
}

const K = EventKind;
/**
 * Timeline categories for the kind filter (micro-steps and interrupts among them, where the filter lists
 * them).  A hardened double free and a disabled slab are errors, under pages and errors.
 */
const TIMELINE = timelineGroups({
  fast: { name: 'fast path', kinds: [K.SLUB_SHEAF_ALLOC, K.SLUB_SHEAF_FREE, K.SLUB_ALLOC_FASTPATH, K.SLUB_FREE_FASTPATH, K.SLUB_RT_REDO] },
  slow: {
    name: 'slow path and refills',
    kinds: [
      K.SLUB_ALLOC_SLOWPATH, K.SLUB_FREE_SLOWPATH, K.SLUB_REFILL_FREELIST, K.SLUB_REFILL_CPU_PARTIAL, K.SLUB_REFILL_NODE_PARTIAL,
      K.SLUB_NEW_SLAB, K.SLUB_DEACTIVATE_BYPASS, K.SLUB_FREE_FROZEN, K.SLUB_CPUSLAB_FLUSH, K.SLUB_ORDER_FALLBACK,
    ],
  },
  lists: {
    name: 'list moves',
    kinds: [
      K.SLUB_DEACTIVATE, K.SLUB_CPU_PARTIAL_ADD, K.SLUB_CPU_PARTIAL_DRAIN, K.SLUB_NODE_PARTIAL_ADD, K.SLUB_NODE_PARTIAL_REMOVE,
      K.SLUB_DISCARD_SLAB, K.SLUB_CPU_PARTIAL_NODE, K.SLUB_FLUSH_CPU,
    ],
  },
  cas: { name: 'cmpxchg retries', kinds: [K.SLUB_CPU_CAS_FAIL, K.SLUB_SLAB_CAS_FAIL] },
  micro: { name: TRACE_GROUPS.micro },
  bulk: { name: 'bulk', kinds: [K.SLUB_BULK_ALLOC, K.SLUB_BULK_FREE, K.SLUB_DETACHED_FREELIST] },
  tune: { name: 'tuning (sysfs) and the page allocator', kinds: [K.SLUB_TUNE] },
  nolock: { name: 'non-blocking contexts, kmalloc_nolock and kfree_nolock', kinds: [K.SLUB_SHEAF_NO_REFILL, K.SLUB_TRYLOCK_BUSY, K.SLUB_DEFER_FREE, K.SLUB_IRQ_WORK] },
  sheaves: {
    name: 'sheaves, the barn and RCU',
    kinds: [
      K.SLUB_SHEAF_SWAP, K.SLUB_BARN_GET, K.SLUB_BARN_GET_FAIL, K.SLUB_BARN_PUT, K.SLUB_BARN_PUT_FAIL, K.SLUB_SHEAF_REFILL,
      K.SLUB_SHEAF_FLUSH, K.SLUB_SHEAF_NEW, K.SLUB_SHEAF_DROP, K.SLUB_SHEAF_TRYLOCK_FAIL, K.SLUB_RCU_SHEAF_ADD, K.SLUB_RCU_GRACE_PERIOD,
      K.SLUB_SHEAF_PREFILL, K.SLUB_SHEAF_RETURN, K.SLUB_BARN_SHRINK, K.SLUB_PCS_FLUSH, K.SLUB_SHEAVES_BOOTSTRAP, K.SLUB_RCU_WAIT,
      K.SLUB_RCU_FREE, K.SLUB_SHEAF_FILL, K.SLUB_PCS_SHEAVES,
    ],
  },
});

/** The driver's operation codes (sl_sched_kind) and the tuning operations' (script.ts), in words. */
const OPCODE_WORDS: Record<number, string> = {
  [KIND_CODE.alloc]: 'alloc',
  [KIND_CODE.free]: 'free',
  [KIND_CODE.allocBulk]: 'bulk alloc',
  [KIND_CODE.freeBulk]: 'bulk free',
  [KIND_CODE.flush]: 'flush',
  [KIND_CODE.kfreeRcu]: 'kfree_rcu',
  [KIND_CODE.gracePeriod]: 'RCU grace period',
  [KIND_CODE.prefill]: 'kmem_cache_prefill_sheaf',
  [KIND_CODE.allocFromSheaf]: 'kmem_cache_alloc_from_sheaf',
  [KIND_CODE.refillSheaf]: 'kmem_cache_refill_sheaf',
  [KIND_CODE.returnSheaf]: 'kmem_cache_return_sheaf',
  [KIND_CODE.irqWork]: 'irq_work (free_deferred_objects)',
  [KIND_CODE.cpuDead]: 'CPU offline (slub_cpu_dead)',
  [KIND_CODE.cpuOnline]: 'CPU online (slub_cpu_setup)',
  [KIND_CODE.kfreeRcuNolock]: 'kfree_rcu_nolock',
  [TUNE_OPCODE.bootstrap]: 'bootstrap_cache_sheaves',
  [TUNE_OPCODE.minPartial]: 'min_partial write',
  [TUNE_OPCODE.cpuPartial]: 'cpu_partial write',
  [TUNE_OPCODE.shrink]: 'shrink',
  [TUNE_OPCODE.zoneShort]: 'page allocator change',
};

/** SLUB_HARDENED_DOUBLE_FREE's arg0: where set_freepointer's BUG_ON(object == fp) fired. */
const HARDENED_SITES = ['do_slab_free', '__slab_free', 'deactivate_slab', 'build_detached_freelist', 'free_to_partial_list'];

/** The driver's operation codes (OP_BEGIN/OP_END arg0; sl_sched_kind) and preemption points in words. */
const SLUB_TRACE_WORDS: TraceWords = {
  opcode: (code) => OPCODE_WORDS[code] ?? 'op',
  point: (id) => POINT_TEXT[id] ?? `point ${id}`,
};

const where = (e: SlEvent) => eventPlace(e, EV_NONE);

const PREFILL_HOW = ['the spare (fast)', 'the barn or a new sheaf (slow)', 'an oversize sheaf'];
const RETURN_HOW = ['became the spare', 'went to the barn', 'was flushed and freed'];
const GRACE_HOW = ['goes to the barn full', 'is flushed to slabs', 'was empty'];
const NO_REFILL_WHY = ['', 'GFP_ATOMIC/GFP_NOWAIT may not block, and 6.18 refills a sheaf only when blocking is allowed', 'kmalloc_nolock may not spin'];
const BUSY_LOCK = ["the node's list_lock", "the barn's lock", "the CPU slab's local_lock"];
const BUSY_SITE = ['taking a partial slab', "a new slab's add_partial (the slab is given back)", 'barn_replace_empty_sheaf', 'barn_get_empty_sheaf', 'barn_replace_full_sheaf', '__slab_alloc (-EBUSY)'];

/** The events of a non-blocking context and of kmalloc_nolock/kfree_nolock (events.def 173-176) in words, or null for another kind. */
function describeNolockEvent(e: SlEvent): string | null {
  switch (e.kind) {
    case K.SLUB_SHEAF_NO_REFILL:
      return `no refill: main #${e.arg0} is empty and the barn has no full sheaf, but ${NO_REFILL_WHY[e.arg1] ?? 'this context may not refill'}: the allocation takes the slab path`;
    case K.SLUB_TRYLOCK_BUSY:
      return `trylock of ${BUSY_LOCK[e.arg0] ?? 'a lock'} failed in ${BUSY_SITE[e.arg1] ?? 'the no-lock path'}: the no-lock path backs off instead of waiting`;
    case K.SLUB_DEFER_FREE:
      return e.arg1 === 1
        ? `defer_kfree_rcu:${where(e)} missed the rcu sheaf (kfree_rcu_nolock): queued for this CPU's irq_work, which will kfree_rcu it${e.arg0 ? ' (the first: irq_work_queue)' : ''}`
        : `defer_free:${where(e)} cannot be freed without a lock: queued for this CPU's irq_work${e.arg0 ? ' (the first: irq_work_queue)' : ''}`;
    case K.SLUB_IRQ_WORK:
      return `irq_work (free_deferred_objects): ${e.arg0} deferred object${e.arg0 === 1 ? '' : 's'} freed with __slab_free${e.arg1 ? `, ${e.arg1} handed to kfree_rcu` : ''}${e.arg2 ? `, ${e.arg2} full rcu sheaf${e.arg2 === 1 ? '' : 'ves'} to call_rcu` : ''}`;
  }
  return null;
}

/** The sheaves' events (events.def 150-170) in words, or null for another kind. */
function describeSheafEvent(e: SlEvent): string | null {
  const n = (k: number, what = 'object') => `${k} ${what}${k === 1 ? '' : 's'}`;
  switch (e.kind) {
    case K.SLUB_SHEAF_ALLOC:
      return `alloc_from_pcs: popped${where(e)} off sheaf #${e.arg0}, ${n(e.arg1)} left${e.arg2 ? ` (${e.arg2} at once, bulk)` : ''}`;
    case K.SLUB_SHEAF_FREE:
      return `free_to_pcs: pushed${where(e)} on main #${e.arg0}, ${n(e.arg1)} now${e.arg2 ? ` (${e.arg2} at once, bulk)` : ''}`;
    case K.SLUB_SHEAF_SWAP:
      return `main and spare swapped (${e.arg2 ? 'main was full' : 'main was empty'}): main is #${e.arg0} with ${n(e.arg1)}`;
    case K.SLUB_BARN_GET:
      return `barn_get: full sheaf #${e.arg0} from the barn becomes main, empty #${e.arg1} goes to the barn; ${n(e.arg2, 'full sheaf')} left there`;
    case K.SLUB_BARN_GET_FAIL:
      return `barn_get_fail: the barn has no full sheaf for empty main #${e.arg0}`;
    case K.SLUB_BARN_PUT:
      return `barn_put: full sheaf #${e.arg0} to the barn${e.arg1 ? `, empty #${e.arg1} taken` : ''}; ${n(e.arg2, 'full sheaf')} there`;
    case K.SLUB_BARN_PUT_FAIL:
      return `barn_put_fail: full main #${e.arg0} cannot go to the barn (${e.arg2 ? 'no empty sheaf to be had: main is flushed' : 'it holds its maximum of full sheaves: the spare is flushed'})`;
    case K.SLUB_SHEAF_REFILL:
      return `refill_sheaf: ${n(e.arg1)} from slabs into sheaf #${e.arg0}, ${e.arg2} now`;
    case K.SLUB_SHEAF_FLUSH:
      return `sheaf_flush: ${n(e.arg1)} of sheaf #${e.arg0} freed to their slabs (${e.arg2 ? 'a batch of main' : 'the whole sheaf'})`;
    case K.SLUB_SHEAF_NEW:
      return `a new sheaf #${e.arg0} of capacity ${e.arg1}`;
    case K.SLUB_SHEAF_DROP:
      return `empty sheaf #${e.arg0} freed`;
    case K.SLUB_SHEAF_TRYLOCK_FAIL:
      return `local_trylock of the CPU's sheaves failed (an interrupt inside the sheaf section): the ${e.arg0 ? 'free' : 'allocation'} takes the slab path`;
    case K.SLUB_RCU_SHEAF_ADD:
      return `kfree_rcu:${where(e)} batched in rcu_free sheaf #${e.arg0}, ${n(e.arg1)} now${e.arg2 === 2 ? '; full, left for the irq_work to call_rcu (interrupts are off)' : e.arg2 ? '; full, handed to call_rcu' : ''}`;
    case K.SLUB_RCU_GRACE_PERIOD:
      return `grace period over for rcu sheaf #${e.arg0} (${n(e.arg1)}): it ${GRACE_HOW[e.arg2] ?? '?'}`;
    case K.SLUB_SHEAF_PREFILL:
      return `kmem_cache_prefill_sheaf: sheaf #${e.arg0} with ${n(e.arg1)}, from ${PREFILL_HOW[e.arg2] ?? '?'}`;
    case K.SLUB_SHEAF_RETURN:
      return `kmem_cache_return_sheaf: sheaf #${e.arg0} (${n(e.arg1)}) ${RETURN_HOW[e.arg2] ?? '?'}`;
    case K.SLUB_BARN_SHRINK:
      return `barn_shrink: ${n(e.arg0, 'full sheaf')} flushed (${n(e.arg2)}), ${n(e.arg1, 'empty one')} freed`;
    case K.SLUB_PCS_FLUSH:
      return `pcs_flush_all: main ${e.arg0}, spare ${e.arg1}, rcu_free ${e.arg2} objects to slabs`;
    case K.SLUB_SHEAVES_BOOTSTRAP:
      return `bootstrap_cache_sheaves: every CPU's main becomes a real sheaf of capacity ${e.arg0}`;
    case K.SLUB_RCU_WAIT:
      return `kfree_rcu:${where(e)} waits alone for a grace period (${n(e.arg0)} waiting on this CPU)`;
    case K.SLUB_RCU_FREE:
      return `grace period over for ${n(e.arg0)} that waited alone: each is freed`;
    case K.SLUB_SHEAF_FILL:
      return `refill_sheaf:${where(e)} into slot ${e.arg1} of sheaf #${e.arg0}`;
    case K.SLUB_PCS_SHEAVES:
      return `the CPU's sheaves now: main #${e.arg0}, ${e.arg1 ? `spare #${e.arg1}` : 'no spare'}${e.arg2 ? `, rcu_free #${e.arg2}` : ''}`;
  }
  return null;
}

/** One line for an event, in words. */
function describeEvent(e: SlEvent, names: OpNames | null): string {
  const common = describeTraceEvent(e, names, SLUB_TRACE_WORDS, EV_NONE);
  if (common !== null) return common;
  const sheaf = describeSheafEvent(e) ?? describeNolockEvent(e);
  if (sheaf !== null) return sheaf;
  switch (e.kind) {
    case K.SLUB_ALLOC_FASTPATH:
      return `fast-path alloc of${where(e)}, tid ${e.arg0} → ${e.arg1}`;
    case K.SLUB_FREE_FASTPATH:
      return `fast-path free of${where(e)} (${e.arg0} object${e.arg0 === 1 ? '' : 's'}), tid → ${e.arg1}`;
    case K.SLUB_ALLOC_SLOWPATH:
      return 'slow path: the CPU freelist is empty';
    case K.SLUB_FREE_SLOWPATH:
      return `remote free (__slab_free) of${where(e)}, inuse now ${e.arg1}${e.arg2 ? ', slab frozen' : ''}`;
    case K.SLUB_CPU_CAS_FAIL:
      return `CPU cmpxchg failed (${e.arg0 ? 'free' : 'alloc'}): tid was ${e.arg1}, now ${e.arg2}; retry`;
    case K.SLUB_SLAB_CAS_FAIL:
      return `slab cmpxchg lost a race (site ${e.arg0}); retry`;
    case K.SLUB_REFILL_FREELIST:
      return `refill from the CPU slab's own freelist: ${e.arg0} objects`;
    case K.SLUB_REFILL_CPU_PARTIAL:
      return `refill from the CPU partial list:${where(e)}, ${e.arg0} objects`;
    case K.SLUB_REFILL_NODE_PARTIAL:
      return `refill from the node partial list:${where(e)}, ${e.arg0} objects`;
    case K.SLUB_NEW_SLAB:
      return `refill from a new slab:${where(e)} (order ${e.arg0}, ${e.arg1} objects)`;
    case K.SLUB_DEACTIVATE:
      return `deactivate${where(e)}: ${['stays full', 'to node partial (head)', 'to node partial (tail)', 'discarded'][e.arg1] ?? ''}, inuse ${e.arg2}`;
    case K.SLUB_CPU_PARTIAL_ADD:
      return `${where(e).trim()} onto this CPU's partial list (${e.arg0} slabs)`;
    case K.SLUB_CPU_PARTIAL_DRAIN:
      return `CPU partial list drained to the node: ${e.arg0} slabs`;
    case K.SLUB_NODE_PARTIAL_ADD:
      return `${where(e).trim()} onto the node partial list (${e.arg1} now)`;
    case K.SLUB_NODE_PARTIAL_REMOVE:
      return `${where(e).trim()} off the node partial list (${e.arg1} left)`;
    case K.SLUB_DISCARD_SLAB:
      return `${where(e).trim()} discarded: empty, its order-${e.arg0} pages go back to the page allocator`;
    case K.SLUB_CPU_PARTIAL_NODE:
      return `${where(e).trim()} from the node to this CPU's partial list`;
    case K.SLUB_DEACTIVATE_BYPASS:
      return 'the CPU slab is used up: dropped without deactivation';
    case K.SLUB_FREE_FROZEN:
      return `remote free into a frozen slab${where(e)}: no list change`;
    case K.SLUB_BULK_ALLOC:
      return `bulk alloc: ${e.arg1} of ${e.arg0} objects`;
    case K.SLUB_BULK_FREE:
      return `bulk free of ${e.arg0} (${e.arg1 ? 'generic loop' : 'detached'}): ${e.arg2} cmpxchg${e.arg2 === 1 ? '' : 's'}`;
    case K.SLUB_DETACHED_FREELIST:
      return `detached freelist built: head${where(e)}, ${e.arg0} objects`;
    case K.SLUB_CPUSLAB_FLUSH:
      return 'the CPU slab is flushed to make room for the new one';
    case K.SLUB_QUARANTINE:
      return `object${where(e)} quarantined (error ${e.arg0 | 0}): never handed out again`;
    case K.SLUB_FLUSH_CPU:
      return `flush_cpu_slab: the CPU slab${e.slab === EV_NONE ? ' (none)' : ` (pfn ${e.slab})`} deactivated, the partial list moved to the node`;
    case K.SLUB_HARDENED_DOUBLE_FREE:
      return `FREELIST_HARDENED: object${where(e)} would be linked to itself in ${HARDENED_SITES[e.arg0] ?? `site ${e.arg0}`} (a double free); the kernel BUG()s here, the model refuses the free`;
    case K.SLUB_SLAB_DISABLED:
      return `slab${where(e)} taken out of use by a failed consistency check: its ${e.arg0} free object${e.arg0 === 1 ? '' : 's'} leak; the allocation goes on with the next slab`;
    case K.SLUB_ORDER_FALLBACK:
      return `ORDER_FALLBACK: no free order-${e.arg0} block, so${where(e)} is an order-${e.arg1} slab of ${e.arg2} objects`;
    case K.SLUB_RT_REDO:
      return `rt: the CPU slab changed before local_lock was taken; the free of${where(e)} starts over`;
    case K.SLUB_TUNE:
      return e.arg0 === 0
        ? `sysfs min_partial = ${e.arg1}: empty slabs stay on the node list while it holds fewer`
        : e.arg0 === 1
          ? `sysfs cpu_partial = ${e.arg1} objects: cpu_partial_slabs recomputed, every CPU flushed (flush_all)`
          : `sysfs shrink: every CPU flushed, ${e.arg1} empty slab${e.arg1 === 1 ? '' : 's'} discarded, the node list sorted fullest first`;
    default:
      return `${eventKindInfo(e.kind)?.name ?? `kind ${e.kind}`}${where(e)} ${e.arg0} ${e.arg1} ${e.arg2}`;
  }
}

/**
 * For the Perfetto export: allocations (a single one's object is in its OP_END, a bulk one's each in
 * a fast-path event), single frees (the object in OP_BEGIN), slabs made and discarded.  Bulk frees
 * and objects a bulk allocation took on its slow path are not counted.
 */
function slubEffect(e: SlEvent): EventEffect | null {
  const track = `cache ${e.cache}`;
  const object = (alloc: boolean) => (e.obj === EV_NONE ? null : { track, object: { key: `${e.slab}:${e.obj}`, alloc } });
  switch (e.kind) {
    case K.OP_END:
      return e.arg0 === KIND_CODE.alloc && (e.arg1 | 0) >= 0 ? object(true) : null;
    case K.OP_BEGIN:
      return e.arg0 === KIND_CODE.free ? object(false) : null;
    case K.SLUB_ALLOC_FASTPATH:
      return e.arg2 === 1 ? object(true) : null;
    case K.SLUB_NEW_SLAB:
      return { track, slabs: { delta: 1, noun: 'slabs' } };
    case K.SLUB_DISCARD_SLAB:
      return { track, slabs: { delta: -1, noun: 'slabs' } };
    default:
      return null;
  }
}

/** The timeline's words for SLUB's events. */
export const SLUB_EVENT_WORDS: EventWords<OpNames> = { event: describeEvent, ...TIMELINE, effect: slubEffect };
