// describe.ts - the words for what the canvas shows: the inspector's account
// of a byte, a metadata block, an area map entry or a chunk, and one line per
// event for the timeline.  Everything a reader sees on the canvas is also
// said here, as text, so the view works with a screen reader and the e2e
// tests can read it.

import { eventKindInfo, EventKind, NONE32, type SlEvent } from '../core/events.generated';
import { describeTraceEvent, numberText as fmt, timelineGroups, type OpNames, type TraceWords } from '../lab/describe';
import type { EventEffect, EventWords } from '../lab/view';
import { areaAt, BIT_BYTES, region, runAt, RunState } from './areas';
import type { Maker } from './figures';
import type { PercpuHit } from './layout';
import { STEP_OPCODE } from './percpu-api';
import { chunkById, mapEntryInUse, mapEntryOffset, testBit, type Allocator, type PercpuChunk, type PercpuSnapshot } from './snapshot';

/** Each allocator's name and the kernel release whose code it follows (docs/percpu.md). */
export const ALLOCATOR_TITLES: Record<Allocator, string> = {
  areamap: 'area map (v4.13)',
  bitmap: 'bitmap (v4.14)',
  scanhint: 'scan hints (v5.2)',
};

const plural = (n: number, one: string, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;
const ordinal = (n: number) => `${n}${n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th'}`;

function chunkName(c: PercpuChunk): string {
  return c.first ? `the first chunk (${c.id})` : c.reserved ? `the reserved chunk (${c.id})` : `chunk ${c.id}`;
}
const capital = (t: string) => `${t[0]?.toUpperCase() ?? ''}${t.slice(1)}`;

function placeOnLists(c: PercpuChunk): string {
  if (c.slot === null) return 'on no slot list (the reserved chunk serves only reserved allocations)';
  const pos = c.position === 0 ? 'at its head' : `number ${(c.position ?? 0) + 1}`;
  return `on slot list ${c.slot}, ${pos}${c.relegated ? `: relegated (its state calls for slot ${c.computedSlot}, but it failed a small allocation)` : ''}`;
}

/** The chunk's own hints in words, as the allocator keeps them. */
function chunkHints(s: PercpuSnapshot, c: PercpuChunk): string {
  if (c.map)
    return `Area map: ${c.mapUsed + 1} of ${c.mapAlloc} entries used (the sentinel included); contig_hint ${fmt(c.contigHint)} bytes (an upper bound of the largest free area), first_free at map entry ${c.firstFree}.`;
  const start = c.contigHintStart === null ? '' : ` at bit ${fmt(c.contigHintStart)}`;
  if (s.allocator === 'bitmap') return `Chunk hint: contig_bits ${fmt(c.contigHint)}${start}, first_bit ${fmt(c.firstFree)}.`;
  return `chunk_md: contig_hint ${fmt(c.contigHint)}${start}, scan_hint ${fmt(c.scanHint)} at bit ${fmt(c.scanHintStart)}, first_free ${fmt(c.firstFree)}, left_free ${fmt(c.leftFree)}, right_free ${fmt(c.rightFree)} (in 4-byte bits).`;
}

export function describeChunk(s: PercpuSnapshot, c: PercpuChunk): string {
  const { start, end } = region(s, c);
  return [
    `${capital(chunkName(c))} is ${placeOnLists(c)}.`,
    `It serves bytes ${fmt(start)} to ${fmt(end)} of each ${fmt(s.unitSize)}-byte unit (one unit per CPU, ${s.nrUnits} units); ${fmt(c.freeBytes)} bytes free in it, ${plural(c.nrAlloc, 'area')} in use.`,
    `Pages: ${c.nrPopulated} of ${c.nrPages} populated, ${c.nrEmptyPopPages} empty and populated.`,
    chunkHints(s, c),
  ].join(' ');
}

/** A bitmap chunk's metadata block k (struct pcpu_block_md) in words. */
export function describeBlock(s: PercpuSnapshot, c: PercpuChunk, k: number): string {
  const b = c.blocks;
  const first = k * s.blockBits;
  const page = `Block ${k} covers bits ${fmt(first)} to ${fmt(first + s.blockBits - 1)} (page ${k}, ${testBit(c.populated, k) ? 'populated' : 'not populated'}).`;
  if (!b) return page;
  const scan = s.allocator === 'scanhint' ? ` scan_hint ${b.scanHint[k] ?? 0} at ${b.scanHintStart[k] ?? 0};` : '';
  return `${page} contig_hint ${b.contigHint[k] ?? 0} bits at ${b.contigHintStart[k] ?? 0};${scan} left_free ${b.leftFree[k] ?? 0}, right_free ${b.rightFree[k] ?? 0}, first_free ${b.firstFree[k] ?? 0} (block-relative bits).`;
}

function describeEntry(s: PercpuSnapshot, c: PercpuChunk, i: number): string {
  const map = c.map;
  if (!map) return '';
  const e = map[i] ?? 0;
  const off = mapEntryOffset(e);
  if (i === map.length - 1) return `Map entry ${i} of ${chunkName(c)} is the sentinel, ${e} = ${fmt(off)} | 1: the chunk's region ends at byte ${fmt(off)}. ${chunkHints(s, c)}`;
  const next = mapEntryOffset(map[i + 1] ?? 0);
  const hidden = c.first && i === 0 && off < c.startOffset;
  return `Map entry ${i} of ${chunkName(c)} holds ${e} = offset ${fmt(off)}${mapEntryInUse(e) ? ' | 1 (in use)' : ' (free)'}: the ${fmt(next - off)}-byte area from ${fmt(off)} to ${fmt(next)}${hidden ? ', the static and reserved regions hidden as one area in use' : ''}. ${chunkHints(s, c)}`;
}

function describeByte(s: PercpuSnapshot, c: PercpuChunk, offset: number, maker: Maker | null, stepName: (i: number) => string): string {
  const run = runAt(s, c, offset);
  const page = Math.floor(offset / (s.blockBits * BIT_BYTES));
  const where = `Byte ${fmt(offset)} of ${chunkName(c)}${c.map ? '' : ` (bit ${fmt(Math.floor(offset / BIT_BYTES))})`}, page ${page} (${testBit(c.populated, page) ? 'populated' : 'not populated'})`;
  const out: string[] = [];
  if (!run || run.state === RunState.HIDDEN) {
    const { start, end } = region(s, c);
    out.push(`${where} is hidden: outside bytes ${fmt(start)} to ${fmt(end)}, the region this chunk serves, so no allocation from it can take it.`);
  } else if (run.state === RunState.FREE) {
    out.push(`${where} is free, in a free run of ${fmt(run.end - run.start)} bytes from ${fmt(run.start)} to ${fmt(run.end)}.`);
  } else {
    const area = areaAt(s, c, offset);
    const a = area ?? run;
    const by = maker
      ? ` It was allocated by ${stepName(maker.step)}, the ${ordinal(maker.nth + 1)} area of that step (${maker.size} bytes asked for after rounding, aligned ${maker.align}).`
      : ' No step of this run allocated it: the boot did.';
    out.push(`${where} belongs to the ${fmt(a.end - a.start)}-byte area at offset ${fmt(a.start)} (to ${fmt(a.end)}), in use.${by}`);
  }
  if (c.map) {
    const i = Array.from(c.map).findIndex((e, k) => mapEntryOffset(e) <= offset && offset < mapEntryOffset(c.map?.[k + 1] ?? 0));
    if (i >= 0) out.push(`Its area is map entry ${i}.`);
  } else out.push(describeBlock(s, c, page));
  return out.join(' ');
}

/**
 * What was hit, in words.  `maker` says which step allocated the area at a
 * byte (figures.ts; null for none or unknown), `stepName` names a step.
 */
export function describeHit(s: PercpuSnapshot, h: PercpuHit, maker: Maker | null, stepName: (i: number) => string): string {
  const c = chunkById(s, h.chunk);
  if (!c) return `Chunk ${h.chunk} does not exist at this moment.`;
  switch (h.kind) {
    case 'chunk':
      return describeChunk(s, c);
    case 'block':
      return `${describeBlock(s, c, h.block)} ${chunkHints(s, c)}`;
    case 'entry':
      return describeEntry(s, c, h.entry);
    case 'byte':
      return describeByte(s, c, h.offset, maker, stepName);
  }
}

const K = EventKind;
/** Timeline categories for the kind filter; no micro-steps or interrupts in this model (no preemption points). */
const TIMELINE = timelineGroups({
  areas: { name: 'areas taken and freed', kinds: [K.PCPU_ALLOC, K.PCPU_FREE] },
  scan: { name: 'scanning and hints', kinds: [K.PCPU_ALLOC_SCAN, K.PCPU_HINT_REFRESH] },
  map: { name: 'area map memmoves', kinds: [K.PCPU_MAP_MEMMOVE, K.PCPU_MAP_EXTEND] },
  chunks: {
    name: 'chunks, pages and slot lists',
    kinds: [
      K.PCPU_CHUNK_CREATE, K.PCPU_CHUNK_DESTROY, K.PCPU_POPULATE, K.PCPU_SLOT_MOVE, K.PCPU_BALANCE,
    ],
  },
});

/** The model's calls (sl_pcpu_alloc, sl_pcpu_free) and the script's steps that bracket them (script.ts). */
const OPCODES: Record<number, string> = { 1: 'alloc', 2: 'free', [STEP_OPCODE]: 'step (allocations)', [STEP_OPCODE + 1]: 'step (frees)' };
const PERCPU_TRACE_WORDS: TraceWords = {
  opcode: (code) => OPCODES[code] ?? `operation ${code}`,
  point: (id) => `point ${id} (the percpu model has no preemption points)`,
};

const CREATED_BY = ['at boot', 'by an allocation that found no room', 'by the balance step'];
const REFRESH = ['a block\'s hints rebuilt from its first_free', 'a block scanned forward from its promoted scan hint', 'the chunk hint rebuilt by a full scan', 'the chunk hint scanned forward from a promoted scan hint'];

/** One line for an event, in words. */
function describeEvent(e: SlEvent, names: OpNames | null): string {
  const chunk = `chunk ${e.slab}`;
  switch (e.kind) {
    // The model's own calls nest inside a step: their brackets are said briefly, the step's by the engine.
    case K.OP_BEGIN:
      if (e.arg0 === 1) return `  alloc of ${e.arg1} B aligned ${e.arg2}${e.flags & 1 ? ' (reserved)' : ''}`;
      if (e.arg0 === 2) return `  free of ${chunk}, offset ${e.obj}`;
      break;
    case K.OP_END:
      if (e.arg0 === 1 || e.arg0 === 2) return (e.arg1 | 0) < 0 ? `  refused: error ${e.arg1 | 0}` : `  done${e.arg0 === 1 ? `: ${chunk}, offset ${e.obj}` : ''}`;
      if (e.arg0 >= STEP_OPCODE) return `${OPCODES[e.arg0] ?? 'step'} ends: ${(e.arg1 | 0) < 0 ? `error ${e.arg1 | 0}` : `${plural(e.arg1, 'area')}`}, ${(e.arg2 / 1000).toFixed(0)} µs in the model`;
      break;
    case K.PCPU_ALLOC:
      return `pcpu_alloc: ${e.arg1} B at ${chunk}, offset ${e.arg0} (aligned ${e.arg2})${e.flags & 1 ? ', from the reserved chunk' : ''}`;
    case K.PCPU_FREE:
      return `free_percpu: ${e.arg1} B at ${chunk}, offset ${e.arg0}`;
    case K.PCPU_CHUNK_CREATE:
      return `${chunk} created ${CREATED_BY[e.arg1] ?? ''}; ${plural(e.arg0, 'chunk')} now`;
    case K.PCPU_CHUNK_DESTROY:
      return `${chunk} destroyed by the balance step (${plural(e.arg0, 'populated page')} depopulated)`;
    case K.PCPU_MAP_EXTEND:
      return `${chunk}'s area map grows from ${e.arg1} to ${e.arg0} entries`;
    case K.PCPU_POPULATE:
      return `${chunk}: ${plural(e.arg0, 'page')} from page ${e.arg1} populated ${e.arg2 === 1 ? 'for an allocation' : 'by the balance step'}`;
    case K.PCPU_SLOT_MOVE:
      return `${chunk} ${e.arg0 === NONE32 ? 'goes' : `moves from slot ${e.arg0}`} to slot ${e.arg1}${e.arg2 === 1 ? ' (list tail)' : e.arg2 === 2 ? ': relegated after failing a small allocation' : ''}`;
    case K.PCPU_HINT_REFRESH:
      return `${chunk}: ${REFRESH[e.arg0] ?? 'a hint rebuilt'} (${e.arg0 < 2 ? `block ${e.arg1}, ${plural(e.arg2, 'bit')} scanned` : `from bit ${e.arg1}, ${plural(e.arg2, 'block')} walked`})`;
    case K.PCPU_MAP_MEMMOVE: {
      const shift = e.arg1 | 0;
      return `${chunk}'s area map: memmove of ${plural(e.arg0, 'entry', 'entries')} (${fmt(4 * e.arg0)} bytes) from entry ${e.arg2}, ${shift > 0 ? `${shift} to the right (a split)` : `${-shift} to the left (a merge)`}`;
    }
    case K.PCPU_ALLOC_SCAN:
      return `the allocation tried ${plural(e.arg0, 'chunk')}: ${fmt(e.arg1)} blocks (area map: map entries) visited, ${plural(e.arg2, 'bit')} searched`;
    case K.PCPU_BALANCE:
      return `balance step: ${plural(e.arg0, 'empty chunk')} destroyed, ${plural(e.arg1, 'page')} populated, ${plural(e.arg2, 'empty populated page')} now`;
    default:
      break;
  }
  return describeTraceEvent(e, names, PERCPU_TRACE_WORDS, NONE32) ?? `${eventKindInfo(e.kind)?.name ?? `kind ${e.kind}`} ${e.arg0} ${e.arg1} ${e.arg2}`;
}

/** The timeline's words for the percpu events. */
/** For the Perfetto export: areas taken and freed (by chunk and offset), chunks created and destroyed. */
function percpuEffect(e: SlEvent): EventEffect | null {
  const area = (alloc: boolean) => ({ track: 'percpu', object: { key: `${e.slab}:${e.arg0}`, alloc } });
  switch (e.kind) {
    case K.PCPU_ALLOC:
      return area(true);
    case K.PCPU_FREE:
      return area(false);
    case K.PCPU_CHUNK_CREATE:
      return { track: 'percpu', slabs: { delta: 1, noun: 'chunks' } };
    case K.PCPU_CHUNK_DESTROY:
      return { track: 'percpu', slabs: { delta: -1, noun: 'chunks' } };
    default:
      return null;
  }
}

export const PERCPU_EVENT_WORDS: EventWords<OpNames> = { event: describeEvent, ...TIMELINE, effect: percpuEffect };
