// describe.ts - the words for what the SLAB canvas shows: the inspector's
// account of a selected cache, array slot, slab, object or freelist
// position, and one line per event for the timeline.  Everything a reader
// sees on the canvas is also said here, as text, so the view works with a
// screen reader and the e2e tests can read it.

import { eventKindInfo, EventKind, NONE32, type SlEvent } from '../core/events.generated';
import { describeTraceEvent, eventPlace, timelineGroups, type OpNames, type TraceWords } from '../lab/describe';
import type { EventEffect, EventWords } from '../lab/view';
import { cacheFigures, freelistWords, hitObject, type Hit } from './layout';
import { arraySlotOf, objKey, Place, PLACE_NAMES, placeOf, placesOf } from './places';
import { SLAB_LISTS, type SlabCacheState, type SlabSnapshot } from './snapshot';

const cacheName = (s: SlabSnapshot, id: number) => s.caches.find((c) => c.id === id)?.name ?? `cache ${id}`;
const owner = (o: number) => (o < 0 ? 'the shared array' : `CPU ${o}'s array_cache`);

function describeCache(c: SlabCacheState): string {
  const lists = SLAB_LISTS.map((l) => `${c.slabs.filter((s) => s.list === l).length} ${l}`).join(', ');
  const counters = c.cpus.map((a, k) => `CPU ${k}: ${a.allocHit} alloc hits, ${a.allocMiss} misses, ${a.freeHit} free hits, ${a.freeMiss} misses`).join('; ');
  return `Cache ${c.name}: ${cacheFigures(c)}. Node: ${lists} slabs; free_objects ${c.freeObjects} of free_limit ${c.freeLimit}. Slabs grown ${c.grown}, destroyed ${c.destroyed}. ${counters}.`;
}

function describeEntry(c: SlabCacheState, o: number, slot: number): string {
  const a = o < 0 ? c.shared : c.cpus[o];
  if (!a) return `${owner(o)} of ${c.name} does not exist.`;
  const head = `Slot ${slot} of ${owner(o)} for ${c.name} (avail ${a.avail}, limit ${a.limit}${o < 0 ? '' : `, batchcount ${a.batchcount}`}${a.touched ? ', touched' : ''}).`;
  const e = a.entries[slot];
  if (!e) return `${head} It is empty.${slot === a.avail ? ' The next free on this CPU pushes its object here.' : ''}`;
  const where = slot === a.avail - 1 ? 'the top: the next allocation on this CPU pops it' : `${slot + 1}${['st', 'nd', 'rd'][slot] ?? 'th'} from the bottom${o >= 0 && slot < a.batchcount ? `: a flush moves the bottom ${a.batchcount}, this one among them` : ''}`;
  return `${head} It holds object ${e.index} of slab ${e.pfn}, ${where}.`;
}

function describeSlab(s: SlabSnapshot, c: SlabCacheState, pfn: number): string {
  const i = c.slabs.findIndex((k) => k.pfn === pfn);
  const sl = c.slabs[i];
  if (!sl) return `Slab ${pfn} is no longer a slab of ${c.name}.`;
  const free = Array.from(sl.freelistArray.subarray(sl.active, c.num));
  const kinds = placesOf(s).byCache.get(c.id)?.kinds[i] ?? new Uint8Array();
  const count = (k: number) => kinds.reduce((n, x) => n + (x === k ? 1 : 0), 0);
  return [
    `Slab ${pfn} of ${c.name} is on the ${sl.list} list (position ${sl.position + 1}), order ${sl.order}: ${c.num} objects of ${c.size} bytes from byte ${sl.sMemOffset} (colour ${sl.colour} × ${c.colourOff} B).`,
    `active ${sl.active}: ${sl.active} taken, ${c.num - sl.active} free${free.length ? ` (handed out in this order: ${free.join(', ')})` : ''}.`,
    `Of the taken: ${count(Place.CPU)} in CPU arrays, ${count(Place.SHARED)} in the shared array, ${count(Place.USER) + count(Place.HOSTS_ARRAY)} held by users${count(Place.HOSTS_ARRAY) ? ` (${count(Place.HOSTS_ARRAY)} holding off-slab freelist arrays)` : ''}.`,
    `${freelistWords(s, c, i)}.`,
  ].join(' ');
}

function describeObject(s: SlabSnapshot, c: SlabCacheState, pfn: number, index: number): string {
  const sl = c.slabs.find((k) => k.pfn === pfn);
  const place = placeOf(s, c.id, pfn, index);
  if (!sl || place === null) return `Object ${index} of slab ${pfn} is no longer an object of ${c.name}.`;
  const out = [`Object ${index} of slab ${pfn} (${c.name}, bytes ${sl.sMemOffset + index * c.size}–${sl.sMemOffset + index * c.size + c.objectSize - 1} of the slab) is ${PLACE_NAMES[place]}.`];
  const slot = arraySlotOf(c, pfn, index);
  if (slot) out.push(`It is in slot ${slot.slot} of ${owner(slot.owner)}.`);
  const pos = sl.freelistArray.indexOf(index);
  if (pos >= sl.active) out.push(`It is at position ${pos} of the freelist array: ${pos - sl.active} free object${pos - sl.active === 1 ? '' : 's'} go out before it.`);
  const hosted = placesOf(s).hosted.get(objKey(c.id, pfn, index));
  if (hosted) out.push(`It holds the freelist array of slab ${hosted.pfn} of ${cacheName(s, hosted.cacheId)}.`);
  return out.join(' ');
}

function describePosition(c: SlabCacheState, pfn: number, pos: number): string {
  const sl = c.slabs.find((k) => k.pfn === pfn);
  const idx = sl?.freelistArray[pos];
  if (!sl || idx === undefined) return `Slab ${pfn} of ${c.name} has no freelist position ${pos}.`;
  const state = pos < sl.active ? `before the active cursor (${sl.active}): taken, its index is stale` : `free: slab_get_obj hands object ${idx} out after ${pos - sl.active} other${pos - sl.active === 1 ? '' : 's'}`;
  return `Position ${pos} of slab ${pfn}'s freelist array holds index ${idx}: ${state}.`;
}

/** The inspector's text for what a click or the arrow keys selected. */
export function describeHit(s: SlabSnapshot, h: Hit): string {
  const c = s.caches.find((k) => k.id === h.cacheId);
  if (!c) return `Cache ${h.cacheId} does not exist in this world.`;
  switch (h.kind) {
    case 'cache':
      return describeCache(c);
    case 'entry': {
      const text = describeEntry(c, h.owner, h.slot);
      const o = hitObject(s, h);
      return o ? `${text} ${describeObject(s, c, o.pfn, o.index)}` : text;
    }
    case 'slab':
      return describeSlab(s, c, h.pfn);
    case 'object':
      return describeObject(s, c, h.pfn, h.index);
    case 'position':
      return describePosition(c, h.pfn, h.pos);
  }
}

/** The model's operation codes (OP_BEGIN/OP_END arg0): its own (slab.h) and the script's steps (api_slab.c). */
const OPCODES: Record<number, string> = {
  201: 'kmem_cache_alloc',
  202: 'kmem_cache_free',
  203: 'kmalloc',
  204: 'kfree',
  205: 'kmem_cache_shrink',
  206: 'drain_cpu',
  207: 'cache_reap',
  220: 'kmalloc batch',
  221: 'kmem_cache_alloc batch',
  222: 'free batch',
  223: 'drain',
  224: 'reap',
  225: 'shrink',
};
/** Where the script's step codes start (SL_API_SLAB_SCRIPT_OPCODE). */
const SCRIPT_OPCODE = 220;

const SLAB_TRACE_WORDS: TraceWords = {
  opcode: (code) => OPCODES[code] ?? `operation ${code}`,
  point: (id) => `point ${id}`,
};

const K = EventKind;
/**
 * Timeline categories for the kind filter.  SLAB has no micro-steps (a trace-level event of that group
 * would be an operation's); kmalloc_large is the page allocator's, under pages and errors.
 */
const TIMELINE = timelineGroups({
  hits: { name: 'array pops and pushes', kinds: [K.SLAB_ALLOC_HIT, K.SLAB_FREE_HIT] },
  refill: { name: 'refills', kinds: [K.SLAB_REFILL, K.SLAB_REFILL_SHARED, K.SLAB_GET_OBJ] },
  flush: { name: 'flushes and drains', kinds: [K.SLAB_ARRAY_MOVE, K.SLAB_FLUSH, K.SLAB_DRAIN, K.SLAB_PUT_OBJ] },
  slabs: { name: 'slabs grown, moved, destroyed', kinds: [K.SLAB_LIST, K.SLAB_GROW, K.SLAB_DESTROY, K.SLAB_SHRINK, K.SLAB_CACHE_CREATE] },
  reap: { name: 'cache_reap', kinds: [K.SLAB_REAP_NODE] },
});
const where = (e: SlEvent) => eventPlace(e, NONE32);
const arrayName = (o: number) => (o === 0xffff ? 'the shared array' : `CPU ${o}'s array`);
/** An off-slab freelist object named in one word (pfn << 8 | index). */
const offObject = (w: number) => (w === NONE32 ? '' : `, its freelist array in object ${w & 0xff} of slab ${w >>> 8}`);
const LIST_WORDS = ['slabs_free', 'slabs_partial', 'slabs_full', 'no list (to be destroyed)'];

function describeBracket(e: SlEvent, names: OpNames | null): string | null {
  if (e.kind !== K.OP_BEGIN && e.kind !== K.OP_END) return null;
  const name = SLAB_TRACE_WORDS.opcode(e.arg0);
  const step = names?.has(e.op) ? names.name(e.op) : null;
  if (e.kind === K.OP_END) {
    const rc = e.arg1 | 0;
    const result = rc < 0 ? `error ${rc}` : e.arg0 === 220 || e.arg0 === 221 ? `${rc} allocated` : `result ${rc}`;
    return step ? `${step} ends: ${result}` : `  ${name} ends: ${result}`;
  }
  if (step) return `${step} begins`;
  if (e.arg0 >= SCRIPT_OPCODE) return `${name} begins`;
  return `  ${name}${e.arg0 === 203 ? `(${e.arg1})` : ''} on ${e.cache === 0xffff ? 'every cache' : `cache ${e.cache}`}`;
}

/** One line for an event, in words. */
function describeEvent(e: SlEvent, names: OpNames | null): string {
  const bracket = describeBracket(e, names);
  if (bracket !== null) return bracket;
  const common = describeTraceEvent(e, names, SLAB_TRACE_WORDS, NONE32);
  if (common !== null) return common;
  switch (e.kind) {
    case K.SLAB_ALLOC_HIT:
      return `pop${where(e)} off the top of this CPU's array (avail ${e.arg0})`;
    case K.SLAB_FREE_HIT:
      return `push${where(e)} onto this CPU's array (avail ${e.arg0})`;
    case K.SLAB_REFILL:
      return `array empty: cache_alloc_refill asks for ${e.arg0}${e.arg1 ? '' : ' (untouched: at most 16)'}`;
    case K.SLAB_REFILL_SHARED:
      return `refill from the shared array: ${e.arg0} objects (${e.arg1} left there)`;
    case K.SLAB_GET_OBJ:
      return `slab_get_obj${where(e)} (active ${e.arg0})`;
    case K.SLAB_FLUSH:
      return `array full: cache_flusharray moves the bottom ${e.arg0} ${e.arg1 ? 'to the shared array' : 'back to their slabs (free_block)'}`;
    case K.SLAB_PUT_OBJ:
      return `slab_put_obj${where(e)} (active ${e.arg0})${e.arg1 ? ': the freelist array moves into this object' : ''}`;
    case K.SLAB_LIST:
      return `slab ${e.slab} to ${LIST_WORDS[e.arg0] ?? `list ${e.arg0}`}`;
    case K.SLAB_GROW:
      return `cache_grow: new slab ${e.slab}, order ${e.arg0}, colour offset ${e.arg1} B${offObject(e.arg2)}`;
    case K.SLAB_DESTROY:
      return `slab ${e.slab} destroyed (order ${e.arg0})${offObject(e.arg1)}`;
    case K.SLAB_SHRINK:
      return `drain_freelist: ${e.arg0} free slab${e.arg0 === 1 ? '' : 's'} given back`;
    case K.SLAB_DRAIN:
      return `drain: the bottom ${e.arg0} of ${e.arg1 ? 'the shared array' : "this CPU's array"} back to their slabs`;
    case K.SLAB_CACHE_CREATE:
      return `cache created: ${e.arg0} B buffers, ${e.arg1} per slab`;
    case K.SLAB_ARRAY_MOVE:
      return `${where(e).trim()} from ${arrayName(e.arg0)} to ${arrayName(e.arg1)} slot ${e.arg2}`;
    case K.SLAB_REAP_NODE:
      return `cache_reap's node part at ${e.arg0} ms (next at ${e.arg1} ms): ${e.arg2 ? `up to ${e.arg2} free slabs go back` : 'a free slab was used since the last run: none go back'}`;
    case K.SLAB_KMALLOC_LARGE:
      return `kmalloc_large: order-${e.arg1} pages at pfn ${e.arg0} ${e.arg2 ? 'taken' : 'given back'}`;
    default:
      return `${eventKindInfo(e.kind)?.name ?? `kind ${e.kind}`}${where(e)} ${e.arg0} ${e.arg1} ${e.arg2}`;
  }
}

/** The timeline's words for SLAB's events. */
/** For the Perfetto export: slabs grown and destroyed per cache (an allocation's object has no event of its own: moves.ts). */
function slabEffect(e: SlEvent): EventEffect | null {
  if (e.kind !== K.SLAB_GROW && e.kind !== K.SLAB_DESTROY) return null;
  return { track: `cache ${e.cache}`, slabs: { delta: e.kind === K.SLAB_GROW ? 1 : -1, noun: 'slabs' } };
}

export const SLAB_EVENT_WORDS: EventWords<OpNames> = { event: describeEvent, ...TIMELINE, effect: slabEffect };
