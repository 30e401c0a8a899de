// figures.ts - what each step of a loaded run did, read from its events:
// the counters the view shows beside each world (entries memmoved, blocks
// and chunks scanned, time in the model), the moves to animate (the last
// memmove of each chunk, the chunks that changed slot lists), and which
// step allocated the area at each place (the inspector's "allocated by").
// Pure: decoded events in, plain data out.

import { EventKind, NONE32, type SlEvent } from '../core/events.generated';

/** One memmove of an area map's tail (PCPU_MAP_MEMMOVE). */
export interface Memmove {
  chunk: number;
  /** Entries moved. */
  entries: number;
  /** +1/+2 right (a split), -1/-2 left (a merge). */
  shift: number;
  /** Index of the first entry moved, before the move. */
  first: number;
}

export interface SlotMove {
  chunk: number;
  /** null: a new chunk. */
  from: number | null;
  to: number;
  relegated: boolean;
}

export interface StepFigures {
  /** Areas the step's model calls took or gave back. */
  allocs: number;
  frees: number;
  memmoves: number;
  entriesMoved: number;
  /** ALLOC_SCAN: chunks tried, metadata blocks visited (area map: map entries visited), alloc_map bits searched. */
  chunksScanned: number;
  blocksScanned: number;
  bitsSearched: number;
  hintRefreshes: number;
  chunksCreated: number;
  chunksDestroyed: number;
  pagesPopulated: number;
  /** Nanoseconds the step's calls took in the model (measured around them by the worker, at the clock's resolution). */
  ns: number;
  /** The last memmove of each chunk in the step. */
  lastMemmove: Memmove[];
  /** The areas the step took and gave back (the drawing outlines them: what the step changed). */
  areas: { chunk: number; offset: number; size: number; freed: boolean }[];
  slotMoves: SlotMove[];
  /** Entries moved by this step and every step before it. */
  entriesMovedSoFar: number;
}

/** Who made an area: the step, and which of that step's areas it is (0-based). */
export interface Maker {
  step: number;
  nth: number;
  size: number;
  align: number;
  /** The event's index in the run (an area made after the moment on screen is not there yet). */
  event: number;
}

export interface RunFigures {
  steps: StepFigures[];
  /** Allocations by place, "chunk:offset", in event order. */
  makers: Map<string, Maker[]>;
}

const empty = (): StepFigures => ({
  allocs: 0, frees: 0, memmoves: 0, entriesMoved: 0, chunksScanned: 0, blocksScanned: 0, bitsSearched: 0, hintRefreshes: 0,
  chunksCreated: 0, chunksDestroyed: 0, pagesPopulated: 0, ns: 0, lastMemmove: [], areas: [], slotMoves: [], entriesMovedSoFar: 0,
});

export const placeKey = (chunk: number, offset: number) => `${chunk}:${offset}`;

/** The figures of every step of a run, from its merged events. */
export function runFigures(events: readonly SlEvent[]): RunFigures {
  const steps: StepFigures[] = [];
  const makers = new Map<string, Maker[]>();
  let depth = 0;
  let cur = empty();
  let soFar = 0;
  events.forEach((e, j) => {
    switch (e.kind) {
      case EventKind.OP_BEGIN:
        if (depth++ === 0) cur = empty();
        break;
      case EventKind.OP_END:
        if (depth > 0 && --depth === 0) {
          cur.ns = e.arg2;
          soFar += cur.entriesMoved;
          cur.entriesMovedSoFar = soFar;
          steps.push(cur);
        }
        break;
      case EventKind.PCPU_ALLOC: {
        const key = placeKey(e.slab, e.arg0);
        const list = makers.get(key) ?? [];
        list.push({ step: steps.length, nth: cur.allocs, size: e.arg1, align: e.arg2, event: j });
        makers.set(key, list);
        cur.allocs++;
        cur.areas.push({ chunk: e.slab, offset: e.arg0, size: e.arg1, freed: false });
        break;
      }
      case EventKind.PCPU_FREE:
        cur.frees++;
        cur.areas.push({ chunk: e.slab, offset: e.arg0, size: e.arg1, freed: true });
        break;
      case EventKind.PCPU_MAP_MEMMOVE: {
        const m: Memmove = { chunk: e.slab, entries: e.arg0, shift: e.arg1 | 0, first: e.arg2 };
        cur.memmoves++;
        cur.entriesMoved += m.entries;
        const at = cur.lastMemmove.findIndex((x) => x.chunk === m.chunk);
        if (at < 0) cur.lastMemmove.push(m);
        else cur.lastMemmove[at] = m;
        break;
      }
      case EventKind.PCPU_ALLOC_SCAN:
        cur.chunksScanned += e.arg0;
        cur.blocksScanned += e.arg1;
        cur.bitsSearched += e.arg2;
        break;
      case EventKind.PCPU_HINT_REFRESH:
        cur.hintRefreshes++;
        break;
      case EventKind.PCPU_CHUNK_CREATE:
        cur.chunksCreated++;
        break;
      case EventKind.PCPU_CHUNK_DESTROY:
        cur.chunksDestroyed++;
        break;
      case EventKind.PCPU_POPULATE:
        cur.pagesPopulated += e.arg0;
        break;
      case EventKind.PCPU_SLOT_MOVE: {
        const move: SlotMove = { chunk: e.slab, from: e.arg0 === NONE32 ? null : e.arg0, to: e.arg1, relegated: e.arg2 === 2 };
        const at = cur.slotMoves.findIndex((x) => x.chunk === move.chunk);
        // A chunk that moves several times in a step: from where it was before the step to where it ended.
        if (at < 0) cur.slotMoves.push(move);
        else cur.slotMoves[at] = { ...move, from: cur.slotMoves[at]?.from ?? null };
        break;
      }
      default:
        break;
    }
  });
  return { steps, makers };
}

/** The step that allocated the area starting at (chunk, offset) and live before event `before`, if any. */
export function makerOf(run: RunFigures, chunk: number, offset: number, before: number): Maker | null {
  const list = run.makers.get(placeKey(chunk, offset));
  let best: Maker | null = null;
  for (const m of list ?? []) if (m.event < before) best = m;
  return best;
}
