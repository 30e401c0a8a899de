// describe.ts - the trace view's words: a scrubbed event from its op record
// and its input line (task and call site are only in the line), and the
// caches table's columns with how each sorts.
import { numberText as fmt } from '../lab/describe';
import { OpFlag, OpKind, type ReplayCache, type ReplayOp } from './replay-api';

/** The task (comm-pid) and the call site of an ftrace line, when it names them. */
export function lineFields(line: string): { task: string | null; callSite: string | null } {
  // The task is everything before the "[CPU]" anchor (trace-cmd -l: before "N....." instead).
  const anchor = /^\s*(.*?)\s+\[\d+\]\s/.exec(line) ?? /^\s*(.*?)\s+\d+[.dDnNhHsSbB]{4,5}\s/.exec(line);
  const site = /\bcall_site=(\S+)/.exec(line);
  return { task: anchor?.[1] || null, callSite: site?.[1] ?? null };
}

const hex = (v: bigint) => `0x${v.toString(16)}`;

/** One scrubbed event in words: who, where, what, and whether the free was remote. */
export function eventWords(op: ReplayOp, line: string, cacheName: string): string {
  const { task, callSite } = lineFields(line);
  const who = `${task ?? 'an unnamed task'} on CPU ${op.cpu}`;
  const from = callSite ? ` from ${callSite}` : '';
  const t = `at ${(Number(op.tsNs) / 1e9).toFixed(6)} s (event ${fmt(op.event)}, line ${fmt(op.line)})`;
  const path = op.flags & OpFlag.slowPath ? 'slow path' : 'fast path';
  const slab = op.flags & OpFlag.newSlab ? ', a new slab' : op.flags & OpFlag.slabFreed ? ', its slab freed' : '';
  if (op.kind === OpKind.alloc) return `${who} allocated ${hex(op.ptr)} (${fmt(op.bytes)} bytes) from ${cacheName}${from}: ${path}${slab}; ${t}.`;
  if (op.kind === OpKind.free) {
    const remote = op.flags & OpFlag.crossCpu ? `a remote free (allocated on CPU ${op.allocCpu})` : 'a local free';
    return `${who} freed ${hex(op.ptr)} to ${cacheName}${from}: ${remote}, ${path}${slab}; ${t}.`;
  }
  return `${who} freed ${hex(op.ptr)}${from}, allocated before the trace (not in the model); ${t}.`;
}

export interface Column {
  key: string;
  title: string;
  /** Its value for sorting (numbers sort largest first). */
  value(c: ReplayCache): number | string;
  text(c: ReplayCache): string;
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const us = (x: number) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} s` : x >= 1000 ? `${(x / 1000).toFixed(1)} ms` : `${x.toFixed(0)} µs`);
const num = (key: keyof ReplayCache, title: string): Column => ({ key, title, value: (c) => Number(c[key]), text: (c) => fmt(Number(c[key])) });

/** The report's per-cache columns (docs/replay.md). */
export const COLUMNS: readonly Column[] = [
  { key: 'name', title: 'cache', value: (c) => c.name, text: (c) => c.name },
  num('allocs', 'allocs'),
  num('frees', 'frees'),
  num('bytes_req', 'bytes requested'),
  num('bytes_alloc', 'bytes allocated'),
  { key: 'internal_frag', title: 'fragmentation', value: (c) => c.internal_frag, text: (c) => pct(c.internal_frag) },
  num('peak_live', 'peak live'),
  num('cross_cpu_frees', 'cross-CPU frees'),
  { key: 'lifetime_p50_us', title: 'lifetime p50', value: (c) => c.lifetime_p50_us, text: (c) => (c.lifetimes ? us(c.lifetime_p50_us) : '-') },
  { key: 'lifetime_p99_us', title: 'lifetime p99', value: (c) => c.lifetime_p99_us, text: (c) => (c.lifetimes ? us(c.lifetime_p99_us) : '-') },
  { key: 'fastpath_share', title: 'fast-path share', value: (c) => c.fastpath_share, text: (c) => (c.modelled ? pct(c.fastpath_share) : '-') },
  { key: 'slabs_allocated', title: 'slabs allocated / freed', value: (c) => c.slabs_allocated, text: (c) => (c.modelled ? `${fmt(c.slabs_allocated)} / ${fmt(c.slabs_freed)}` : '-') },
  { key: 'max_partial', title: 'longest partial list', value: (c) => c.max_partial, text: (c) => (c.modelled ? fmt(c.max_partial) : '-') },
];

/** The caches sorted by a column: numbers largest first, names A to Z; `flip` reverses. */
export function sortCaches(caches: readonly ReplayCache[], key: string, flip: boolean): ReplayCache[] {
  const col = COLUMNS.find((c) => c.key === key) ?? COLUMNS[1]!;
  const sign = flip ? -1 : 1;
  return [...caches].sort((a, b) => {
    const x = col.value(a);
    const y = col.value(b);
    const d = typeof x === 'string' || typeof y === 'string' ? String(x).localeCompare(String(y)) : y - x;
    return sign * d || a.index - b.index;
  });
}
