// code.ts - which line of the model's C is running at a stop, for the code
// panel (CodePanel.tsx).  The map of functions, preemption points and event
// sites is read from the C sources at build time (scripts/c-source.mjs,
// served as virtual:slablab/c-source); this file only looks things up:
//   - at a micro-step, the PREEMPT_POINT event the scheduler recorded names
//     the point and its source line (arg2), so the site is exact even where
//     one point id sits at several places (the rt and cmpxchg fast paths);
//   - at an operation's end, the place that recorded the last event of the
//     model's own between the operation's OP_BEGIN and OP_END; where that
//     kind is recorded at several places, the one in the function most of
//     those events came from (then the first).

import type { Stop } from '../core/bridge-protocol';
import { EventKind, eventKindInfo, type SlEvent } from '../core/events.generated';

export interface CFunction {
  name: string;
  /** The kernel function it stands for (Elixir's identifier), or null. */
  kernel: string | null;
  /** Repository path, e.g. wasm-core/src/slub/alloc.c. */
  file: string;
  /** Line of the signature's first line in the file (1-based). */
  first: number;
  lines: string[];
}

/** A place: a function of the map and an absolute line of its file. */
export interface CSite {
  fn: number;
  line: number;
}

/** One model folder's map (keys: point ids and event kind numbers). */
export interface ModelSource {
  functions: CFunction[];
  points: Record<string, CSite[]>;
  pointNames: Record<string, string>;
  events: Record<string, CSite[]>;
}

export interface CSource {
  models: Record<string, ModelSource>;
}

export interface CodeAt {
  fn: CFunction;
  line: number;
  /** Why this line, in words. */
  reason: string;
}

/** The last event before `count` that `pred` accepts, searching back. */
function lastBefore(events: readonly SlEvent[], count: number, pred: (e: SlEvent) => boolean): SlEvent | undefined {
  for (let i = Math.min(count, events.length) - 1; i >= 0; i--) {
    const e = events[i];
    if (e && pred(e)) return e;
  }
  return undefined;
}

/** The site of `stop` in `src`, or null (the start, an operation that recorded none of the model's events). */
export function codeAt(src: ModelSource, stop: Stop, events: readonly SlEvent[]): CodeAt | null {
  if (stop.micro > 0) {
    const pp = lastBefore(events, stop.eventCount, (e) => e.kind === EventKind.PREEMPT_POINT);
    const site = pp && src.points[pp.arg0]?.find((s) => s.line === pp.arg2);
    const fn = site && src.functions[site.fn];
    if (!pp || !site || !fn) return null;
    return { fn, line: site.line, reason: `the preemption point CPU ${pp.cpu} stopped at (${src.pointNames[pp.arg0] ?? `point ${pp.arg0}`})` };
  }
  const end = lastBefore(events, stop.eventCount, (e) => e.kind === EventKind.OP_END);
  if (!end) return null;
  // The model's events between the operation's brackets (a step may run operations of its own inside: SLAB's kmalloc test).
  const ofOp: SlEvent[] = [];
  for (let i = Math.min(stop.eventCount, events.length) - 1; i >= 0; i--) {
    const e = events[i];
    if (!e || (e.kind === EventKind.OP_BEGIN && e.op === end.op)) break;
    if (src.events[e.kind]) ofOp.push(e);
  }
  const last = ofOp[0];
  if (!last) return null;
  const fnsOfOp = ofOp.flatMap((e) => (src.events[e.kind] ?? []).map((s) => s.fn));
  const score = (s: CSite) => fnsOfOp.filter((f) => f === s.fn).length;
  const best = (src.events[last.kind] ?? []).reduce<CSite | undefined>((b, s) => (!b || score(s) > score(b) ? s : b), undefined);
  const fn = best && src.functions[best.fn];
  if (!best || !fn) return null;
  return { fn, line: best.line, reason: `where the operation's last event, ${eventKindInfo(last.kind)?.name ?? last.kind}, was recorded` };
}

/** Bootlin's Elixir: an identifier at a release (tag "v6.17"), or a file there when there is no identifier. */
export function elixirUrl(version: string, kernelFile: string, ident: string | null): string {
  const base = `https://elixir.bootlin.com/linux/${encodeURIComponent(version)}`;
  return ident ? `${base}/C/ident/${encodeURIComponent(ident)}` : `${base}/source/${kernelFile}`;
}
