// script.ts - what the percpu view runs: a list of steps, each acting as one
// CPU, each recorded as ONE operation of the lab however many areas it
// allocates or frees (sl_api_pcpu_step_begin/end; the model's own alloc and
// free calls are nested inside with all their events).  A step allocates
// `count` areas of one size and alignment, frees a selection of the areas an
// earlier step allocated (named by what made them, so the same script runs
// on every allocator side by side: each world frees its own areas), or frees
// a place (chunk id, offset): the way to try a bad free.
//
// Script text, the form a hand-made script takes in the URL (`ops=`): steps
// joined by '.', e.g.  a0-4-4-256.f0-0-0-1.f0-0-1.x1-2-40
//   a<cpu>-<size>[-<align>[-<count>]][r]      alloc count x size bytes, aligned (default 4, 1 area); r: reserved
//   f<cpu>-<step>[-<first>[-<count>[-<stride>]]][r]
//                                             free areas first, first + stride, ... of that (earlier,
//                                             0-based) step's; default all of them in order; r: last first
//   x<cpu>-<chunk>-<offset>                   free the area at that place (a foreign, misaligned or double
//                                             free is refused by the model and said so)
// (only unreserved URL characters, so it is never percent-encoded).

import { BadRequest, checkOneOf, checkRecord, checkWhole } from '../core/requests';
import { numberText as fmt } from '../lab/describe';

/** CPUs (units) a lab world may have: each has an event ring, allocated whether it records or not (worker.ts). */
export const MAX_UNITS = 4;
/** Areas one step may allocate or free: a step's events must fit one CPU's ring (worker.ts). */
export const MAX_AREAS = 4096;
/** Steps a script may hold. */
export const MAX_STEPS = 100_000;
/** sl_pcpu_alloc's limits: PCPU_MIN_UNIT_SIZE caps a size, a page an alignment. */
export const MAX_SIZE = 32 * 1024;
export const MAX_ALIGN = 4096;
export const DEFAULT_ALIGN = 4;

export interface AllocStep {
  kind: 'alloc';
  cpu: number;
  size: number;
  align: number;
  count: number;
  /** __alloc_reserved_percpu: from the reserved chunk. */
  reserved: boolean;
}

/** Areas of step `of` (an alloc step): indices first, first + stride, ... (count of them), last first when `reverse`. */
export interface FreeStep {
  kind: 'free';
  cpu: number;
  of: number;
  first: number;
  count: number;
  stride: number;
  reverse: boolean;
}

/** free_percpu of whatever is at (chunk, offset). */
export interface FreeAtStep {
  kind: 'freeAt';
  cpu: number;
  chunk: number;
  offset: number;
}

export type Step = AllocStep | FreeStep | FreeAtStep;

export interface PercpuScript {
  steps: Step[];
}

/** The area indices (into step `of`'s areas) a free step frees, in the order it frees them. */
export function freedIndices(s: FreeStep): number[] {
  const out = Array.from({ length: s.count }, (_, k) => s.first + k * s.stride);
  return s.reverse ? out.reverse() : out;
}

/** How many areas a free of step `alloc` from `first` by `stride` takes when it names no count: all that are left. */
function allLeft(alloc: AllocStep, first: number, stride: number): number {
  return Math.max(0, Math.ceil((alloc.count - first) / stride));
}

const isPow2 = (n: number) => n > 0 && (n & (n - 1)) === 0;

/**
 * Checks steps one by one as they are added: CPUs, sizes, counts, and that
 * a free names areas an earlier alloc step made and no earlier step freed
 * (the model would free whatever lives there by then: a use after free of
 * the caller's, which only a free by place may try on purpose).
 */
class StepChecker {
  readonly steps: Step[] = [];
  /** Per alloc step: which of its areas a free step has named. */
  private readonly freed = new Map<number, Uint8Array>();
  constructor(private readonly cpus: number) {}

  /** Adds a step; returns what is wrong with it, or null. */
  add(s: Step): string | null {
    const i = this.steps.length;
    this.steps.push(s);
    if (s.cpu >= this.cpus) return `it acts as CPU ${s.cpu}, there are ${this.cpus}`;
    switch (s.kind) {
      case 'alloc':
        if (s.size < 1 || s.size > MAX_SIZE) return `size ${s.size} is not 1 to ${MAX_SIZE} bytes`;
        if (!isPow2(s.align) || s.align > MAX_ALIGN) return `alignment ${s.align} is not a power of two up to ${MAX_ALIGN}`;
        if (s.count < 1 || s.count > MAX_AREAS) return `${s.count} areas, a step takes 1 to ${MAX_AREAS}`;
        this.freed.set(i, new Uint8Array(s.count));
        return null;
      case 'free': {
        const alloc = this.steps[s.of];
        const freed = this.freed.get(s.of);
        if (s.of >= i || !alloc || alloc.kind !== 'alloc' || !freed) return `it frees areas of step ${s.of}, which is not an earlier alloc step`;
        if (s.stride < 1 || s.count < 1 || s.first + (s.count - 1) * s.stride >= alloc.count)
          return `it names areas past the ${alloc.count} step ${s.of} allocates`;
        for (let k = 0, at = s.first; k < s.count; k++, at += s.stride) {
          if (freed[at]) return `area ${at} of step ${s.of} is already freed by then`;
          freed[at] = 1;
        }
        return null;
      }
      case 'freeAt':
        return null;
    }
  }
}

/** A script from a request, checked: known kinds, CPUs below `cpus`, sizes, counts and the steps a free names. */
export function checkScript(raw: unknown, cpus: number): PercpuScript {
  const r = checkRecord('script', raw);
  if (!Array.isArray(r.steps)) throw new BadRequest('script must hold a steps array');
  if (r.steps.length > MAX_STEPS) throw new BadRequest(`script has ${r.steps.length} steps, at most ${MAX_STEPS}`);
  const checker = new StepChecker(cpus);
  r.steps.forEach((rawStep, i) => {
    const what = `step ${i}`;
    const o = checkRecord(what, rawStep);
    const kind = checkOneOf(`${what}'s kind`, o.kind, ['alloc', 'free', 'freeAt'] as const);
    const cpu = checkWhole(`${what}'s cpu`, o.cpu, 0, cpus - 1);
    const n = (k: string, max: number) => checkWhole(`${what}'s ${k}`, o[k], 0, max);
    const step: Step =
      kind === 'alloc'
        ? { kind, cpu, size: n('size', MAX_SIZE), align: n('align', MAX_ALIGN), count: n('count', MAX_AREAS), reserved: o.reserved === true }
        : kind === 'free'
          ? { kind, cpu, of: n('of', MAX_STEPS), first: n('first', MAX_AREAS), count: n('count', MAX_AREAS), stride: n('stride', MAX_AREAS), reverse: o.reverse === true }
          : { kind, cpu, chunk: n('chunk', 0xffffffff), offset: n('offset', 0xffffffff) };
    const wrong = checker.add(step);
    if (wrong) throw new BadRequest(`${what}: ${wrong}`);
  });
  return { steps: checker.steps };
}

const plural = (n: number, one: string, many = `${one}s`) => `${fmt(n)} ${n === 1 ? one : many}`;

/** The words a person would use for a step. */
export function describeStep(s: Step): string {
  switch (s.kind) {
    case 'alloc':
      return `alloc ${s.count === 1 ? '' : `${fmt(s.count)} × `}${s.size} B${s.align !== DEFAULT_ALIGN ? ` aligned ${s.align}` : ''}${s.reserved ? ' (reserved)' : ''} on CPU ${s.cpu}`;
    case 'free': {
      const which =
        s.count === 1
          ? `area ${s.first + 1}`
          : s.stride === 1
            ? `areas ${s.first + 1}-${s.first + s.count}`
            : `${plural(s.count, 'area')} (every ${s.stride === 2 ? 'other' : `${s.stride}th`} from area ${s.first + 1})`;
      return `free ${which} of step ${s.of + 1}${s.count > 1 ? (s.reverse ? ', last first' : ', in order') : ''} on CPU ${s.cpu}`;
    }
    case 'freeAt':
      return `free the area at chunk ${s.chunk}, offset ${s.offset} on CPU ${s.cpu}`;
  }
}

const STEP_RE = /^(?:a(\d)-(\d{1,5})(?:-(\d{1,4})(?:-(\d{1,4}))?)?(r?)|f(\d)-(\d{1,6})(?:-(\d{1,4})(?:-(\d{1,4})(?:-(\d{1,4}))?)?)?(r?)|x(\d)-(\d{1,10})-(\d{1,10}))$/;

/** Parses script text (the URL's `ops=`); every CPU must be below `cpus`. */
export function parseScript(text: string, cpus: number): { ok: true; script: PercpuScript } | { ok: false; error: string } {
  const checker = new StepChecker(cpus);
  const steps = checker.steps;
  if (text === '') return { ok: true, script: { steps } };
  if (text.length > 20_000) return { ok: false, error: 'too long' };
  for (const part of text.split('.')) {
    const m = STEP_RE.exec(part);
    if (!m) return { ok: false, error: `"${part}" is not a step` };
    const num = (k: number, dflt: number) => (m[k] === undefined ? dflt : Number(m[k]));
    let step: Step;
    if (m[1] !== undefined) {
      step = { kind: 'alloc', cpu: num(1, 0), size: num(2, 0), align: num(3, DEFAULT_ALIGN), count: num(4, 1), reserved: m[5] === 'r' };
    } else if (m[6] !== undefined) {
      const of = num(7, 0);
      const alloc = steps[of];
      const first = num(8, 0);
      const stride = num(10, 1);
      const count = m[9] === undefined ? (alloc?.kind === 'alloc' ? allLeft(alloc, first, stride) : 1) : num(9, 1);
      step = { kind: 'free', cpu: num(6, 0), of, first, count, stride, reverse: m[11] === 'r' };
    } else {
      step = { kind: 'freeAt', cpu: num(12, 0), chunk: num(13, 0), offset: num(14, 0) };
    }
    const wrong = checker.add(step);
    if (wrong) return { ok: false, error: `"${part}": ${wrong}` };
    if (steps.length > MAX_STEPS) return { ok: false, error: `more than ${MAX_STEPS} steps` };
  }
  return { ok: true, script: { steps } };
}

/** The text form of a script (parseScript reads it back), as short as the defaults allow. */
export function scriptToText(s: PercpuScript): string {
  return s.steps
    .map((st) => {
      switch (st.kind) {
        case 'alloc': {
          const tail = st.count !== 1 ? `-${st.align}-${st.count}` : st.align !== DEFAULT_ALIGN ? `-${st.align}` : '';
          return `a${st.cpu}-${st.size}${tail}${st.reserved ? 'r' : ''}`;
        }
        case 'free': {
          const alloc = s.steps[st.of];
          const all = alloc?.kind === 'alloc' && st.count === allLeft(alloc, st.first, st.stride);
          const parts = [st.of, st.first, st.count, st.stride];
          // Drop what the parser would supply: the stride 1, then the count "all that are left", then the first 0.
          const n = st.stride !== 1 ? 4 : !all ? 3 : st.first !== 0 ? 2 : 1;
          return `f${st.cpu}-${parts.slice(0, n).join('-')}${st.reverse ? 'r' : ''}`;
        }
        case 'freeAt':
          return `x${st.cpu}-${st.chunk}-${st.offset}`;
      }
    })
    .join('.');
}
