// describe.ts - the words for what the canvas shows: the inspector's account
// of a selected object or slab, and one line per event for the timeline.
// Everything a reader sees on the canvas is also said here, as text, so the
// view works with a screen reader and the e2e tests can read it.

import { eventKindInfo, NONE32 as EV_NONE, type SlEvent } from '../core/events.generated';
import type { OpInfo } from './protocol';
import { describeOp, POINT_TEXT, type Script } from './script';
import { NEXT_CORRUPT, NONE32, ObjState, SlabList, type SlubSnapshot } from './snapshot';
import { STATE_NAMES } from './render';

/** Maps trace operation numbers to what the script did. */
export class OpNames {
  private readonly byNum = new Map<number, number>();
  constructor(
    private readonly ops: OpInfo[],
    private readonly script: Script,
  ) {
    ops.forEach((o, i) => this.byNum.set(o.opNum, i));
  }
  /** "op 4 (alloc on CPU 0)", or "op #12 (an interrupt handler)". */
  name(opNum: number): string {
    const i = this.byNum.get(opNum);
    if (i === undefined) return `operation #${opNum} (an interrupt handler)`;
    const op = this.script.ops[i];
    return `step ${i + 1} (${op ? describeOp(op) : '?'})`;
  }
  get count(): number {
    return this.ops.length;
  }
}

function listName(s: SlubSnapshot, slab: number): string {
  const cpu = s.slab.cpu[slab] ?? 0xff;
  switch (s.slab.list[slab]) {
    case SlabList.CPU_SLAB:
      return `CPU ${cpu}'s CPU slab`;
    case SlabList.CPU_PARTIAL:
      return `CPU ${cpu}'s partial list (position ${(s.slab.position[slab] ?? 0) + 1})`;
    case SlabList.NODE_PARTIAL:
      return `the node partial list (position ${(s.slab.position[slab] ?? 0) + 1})`;
    default:
      return (s.slab.inuse[slab] ?? 0) === (s.slab.objects[slab] ?? 0) ? 'no list (full)' : 'no list';
  }
}

export function describeSlab(s: SlubSnapshot, slab: number): string {
  const inuse = s.slab.inuse[slab] ?? 0;
  const objects = s.slab.objects[slab] ?? 0;
  const parts = [
    `Slab pfn ${s.slab.pfn[slab]} (order ${s.geometry.order}) is on ${listName(s, slab)}.`,
    `inuse ${inuse}, objects ${objects}, frozen ${s.slab.frozen[slab] ? 'yes' : 'no'}.`,
    `${s.slab.slabFreeCount[slab]} free on its own freelist, ${s.slab.cpuFreeCount[slab]} on a CPU freelist.`,
  ];
  if (s.slab.freelistHead[slab] === NEXT_CORRUPT) parts.push('Its freelist head does not point at one of its objects: corrupt.');
  return parts.join(' ');
}

/** Position of an object on its chain and its predecessor, walking from the chain's head. */
function chainPlace(s: SlubSnapshot, slab: number, index: number, head: number): { pos: number; prev: number } | null {
  const first = s.slab.firstObj[slab] ?? 0;
  let prev = NONE32;
  let at = head;
  for (let n = 0; at !== NONE32 && at < s.geometry.objects && n <= s.geometry.objects; n++) {
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
  if (s.tracked) {
    const aop = s.obj.allocOp[first + index] ?? 0;
    const fop = s.obj.freeOp[first + index] ?? 0;
    out.push(
      aop ? `Last allocated by ${names ? names.name(aop) : `operation #${aop}`} on CPU ${s.obj.allocCpu[first + index]}.` : 'Never allocated.',
    );
    if (fop) out.push(`Last freed by ${names ? names.name(fop) : `operation #${fop}`} on CPU ${s.obj.freeCpu[first + index]}.`);
  }
  out.push(`Slab counters: inuse ${s.slab.inuse[slab]}, objects ${s.slab.objects[slab]}, frozen ${s.slab.frozen[slab] ? 'yes' : 'no'}.`);
  return out.join(' ');
}

/** Timeline categories for the kind filter. */
export const EVENT_GROUPS = {
  ops: 'operations',
  fast: 'fast path',
  slow: 'slow path and refills',
  lists: 'list moves',
  cas: 'cmpxchg retries',
  micro: 'micro-steps and interrupts',
  bulk: 'bulk',
  pages: 'pages and errors',
} as const;
export type EventGroup = keyof typeof EVENT_GROUPS;

export function eventGroup(kind: number): EventGroup {
  if (kind === 1 || kind === 2) return 'ops';
  if (kind === 100 || kind === 101) return 'fast';
  if (kind === 104 || kind === 105) return 'cas';
  if (kind >= 4 && kind <= 6) return 'micro';
  if (kind === 119 || kind === 120 || kind === 121) return 'bulk';
  if ([102, 103, 106, 107, 108, 109, 117, 118, 122].includes(kind)) return 'slow';
  if ([110, 111, 112, 113, 114, 115, 116, 124].includes(kind)) return 'lists';
  return 'pages';
}

const OPCODES = ['', 'alloc', 'free', 'bulk alloc', 'bulk free', 'flush'];
const where = (e: SlEvent) => (e.slab === EV_NONE ? '' : e.obj === EV_NONE ? ` slab ${e.slab}` : ` ${e.slab}:${e.obj}`);

/** One line for an event, in words. */
export function describeEvent(e: SlEvent, names: OpNames | null): string {
  const name = eventKindInfo(e.kind)?.name ?? `kind ${e.kind}`;
  switch (e.kind) {
    case 1:
      return `${OPCODES[e.arg0] ?? 'op'} begins${names ? ` — ${names.name(e.op)}` : ''}`;
    case 2:
      return `${OPCODES[e.arg0] ?? 'op'} ends: ${(e.arg1 | 0) < 0 ? `error ${e.arg1 | 0}` : `result ${e.arg1}`}`;
    case 3:
      return `error ${e.arg0 | 0} detected${where(e)}`;
    case 4:
      return `micro-step: ${POINT_TEXT[e.arg0] ?? `point ${e.arg0}`}`;
    case 5:
      return 'interrupt: a handler runs on this CPU';
    case 6:
      return `interrupt handler returns ${e.arg1 | 0}`;
    case 10:
      return `page allocator: order-${e.arg0} pages at pfn ${e.slab}`;
    case 11:
      return `pages at pfn ${e.slab} back to the page allocator`;
    case 100:
      return `fast-path alloc of${where(e)}, tid ${e.arg0} → ${e.arg1}`;
    case 101:
      return `fast-path free of${where(e)} (${e.arg0} object${e.arg0 === 1 ? '' : 's'}), tid → ${e.arg1}`;
    case 102:
      return 'slow path: the CPU freelist is empty';
    case 103:
      return `remote free (__slab_free) of${where(e)}, inuse now ${e.arg1}${e.arg2 ? ', slab frozen' : ''}`;
    case 104:
      return `CPU cmpxchg failed (${e.arg0 ? 'free' : 'alloc'}): tid was ${e.arg1}, now ${e.arg2}; retry`;
    case 105:
      return `slab cmpxchg lost a race (site ${e.arg0}); retry`;
    case 106:
      return `refill from the CPU slab's own freelist: ${e.arg0} objects`;
    case 107:
      return `refill from the CPU partial list:${where(e)}, ${e.arg0} objects`;
    case 108:
      return `refill from the node partial list:${where(e)}, ${e.arg0} objects`;
    case 109:
      return `refill from a new slab:${where(e)} (order ${e.arg0}, ${e.arg1} objects)`;
    case 110:
      return `deactivate${where(e)}: ${['stays full', 'to node partial (head)', 'to node partial (tail)', 'discarded'][e.arg1] ?? ''}, inuse ${e.arg2}`;
    case 111:
      return `${where(e).trim()} onto this CPU's partial list (${e.arg0} slabs)`;
    case 112:
      return `CPU partial list drained to the node: ${e.arg0} slabs`;
    case 113:
      return `${where(e).trim()} onto the node partial list (${e.arg1} now)`;
    case 114:
      return `${where(e).trim()} off the node partial list (${e.arg1} left)`;
    case 115:
      return `${where(e).trim()} discarded (empty beyond min_partial)`;
    case 116:
      return `${where(e).trim()} from the node to this CPU's partial list`;
    case 117:
      return 'the CPU slab is used up: dropped without deactivation';
    case 118:
      return `remote free into a frozen slab${where(e)}: no list change`;
    case 119:
      return `bulk alloc: ${e.arg1} of ${e.arg0} objects`;
    case 120:
      return `bulk free of ${e.arg0} (${e.arg1 ? 'fallback' : 'detached'}): ${e.arg2} cmpxchg${e.arg2 === 1 ? '' : 's'}`;
    case 121:
      return `detached freelist built: head${where(e)}, ${e.arg0} objects`;
    case 122:
      return 'the CPU slab is flushed to make room for the new one';
    case 123:
      return `object${where(e)} quarantined (error ${e.arg0 | 0}): never handed out again`;
    case 124:
      return `flush_cpu_slab: the CPU slab${e.slab === EV_NONE ? ' (none)' : ` (pfn ${e.slab})`} deactivated, the partial list moved to the node`;
    default:
      return `${name}${where(e)} ${e.arg0} ${e.arg1} ${e.arg2}`;
  }
}
