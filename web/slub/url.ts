// url.ts - the SLUB view's URL parameters (merged into the shell's PARAMS in
// web/app/url-state.ts) and the compact text form of a hand-made script, so a
// sandbox session is as linkable as a scenario.
//
// Script text: operations joined by '.', interrupts after them, e.g.
//   a0.a0.f1-12-3.b0-8.F0-12-4-12-5.x1.i2-1-0-a
//   a<cpu>                 alloc           f<cpu>-<pfn>-<index>     free
//   b<cpu>-<n>             bulk alloc      F<cpu>-<pfn>-<index>...  bulk free
//   x<cpu>                 flush           i<op>-<point>-<nth>-a | i<op>-<point>-<nth>-f-<pfn>-<index>
// (only unreserved URL characters, so it is never percent-encoded).

import { SCENARIO_IDS } from './scenarios';
import { MAX_BULK, MAX_IRQS, type ObjRef, type Script, type ScriptIrq, type ScriptOp } from './script';
import { BULK_FORMS, FASTPATHS, type BulkForm, type Fastpath } from './snapshot';
import { WORKLOADS, type Workload } from './protocol';

type Parsed<T> = { ok: true; value: T } | { ok: false; expected: string };
interface Spec<T> {
  parse(raw: string): Parsed<T>;
  fallback: T;
}

function oneOf<T extends string>(values: readonly T[], fallback: T): Spec<T> {
  return {
    parse: (raw) =>
      (values as readonly string[]).includes(raw) ? { ok: true, value: raw as T } : { ok: false, expected: `one of ${values.join(', ')}` },
    fallback,
  };
}
function whole(min: number, max: number, fallback: number): Spec<number> {
  return {
    parse: (raw) => {
      const v = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
      return v >= min && v <= max ? { ok: true, value: v } : { ok: false, expected: `a whole number from ${min} to ${max}` };
    },
    fallback,
  };
}

export const LAB_MODES = ['slub', 'free', 'selftest'] as const;
export type LabMode = (typeof LAB_MODES)[number];
export const SANDBOX = 'sandbox';

const scriptSpec: Spec<string> = {
  parse: (raw) => {
    const r = parseScript(raw, 8);
    return r.ok ? { ok: true, value: raw } : { ok: false, expected: `a script like a0.a0.f1-12-3 (${r.error})` };
  },
  fallback: '',
};

/** The SLUB view's parameters. */
export const SLUB_PARAMS = {
  mode: oneOf<LabMode>(LAB_MODES, 'slub'),
  scenario: oneOf<string>([...SCENARIO_IDS, SANDBOX], 'fast-path'),
  step: whole(0, 1_000_000, 0),
  variant: oneOf<Fastpath>(FASTPATHS, 'cmpxchg'),
  bulk: oneOf<BulkForm>(BULK_FORMS, 'detached'),
  ops: scriptSpec,
  workload: oneOf<Workload>(WORKLOADS, 'local'),
  slabs: whole(0, 2048, 64),
  /** Free-running: operations per second per CPU, 0 for no cap. */
  rate: whole(0, 1_000_000, 10_000),
};
export const SLUB_KEYS = ['mode', 'scenario', 'step', 'variant', 'bulk', 'ops', 'workload', 'slabs', 'rate'] as const;

const OP_RE = /^([abfFx])(\d)((?:-\d{1,9})*)$/;
const IRQ_RE = /^i(\d{1,6})-(\d)-(\d{1,4})-(a|f-\d{1,9}-\d{1,6})$/;

/** Parses script text; every CPU must be below `cpus`. */
export function parseScript(text: string, cpus: number): { ok: true; script: Script } | { ok: false; error: string } {
  const script: Script = { ops: [], irqs: [] };
  if (text === '') return { ok: true, script };
  if (text.length > 20_000) return { ok: false, error: 'too long' };
  for (const part of text.split('.')) {
    const irq = IRQ_RE.exec(part);
    if (irq) {
      const [, at, point, nth, h] = irq;
      const handler: ScriptIrq['handler'] =
        h === 'a' ? { kind: 'alloc' } : { kind: 'free', refs: [{ pfn: Number(h?.split('-')[1]), index: Number(h?.split('-')[2]) }] };
      if (Number(at) >= script.ops.length) return { ok: false, error: `interrupt "${part}" names op ${at}, which does not exist yet` };
      if (script.irqs.length >= MAX_IRQS) return { ok: false, error: `at most ${MAX_IRQS} interrupts` };
      script.irqs.push({ atOp: Number(at), point: Number(point), nth: Number(nth), handler });
      continue;
    }
    const m = OP_RE.exec(part);
    if (!m) return { ok: false, error: `"${part}" is not an operation` };
    const [, k, c, rest] = m;
    const cpu = Number(c);
    if (cpu >= cpus) return { ok: false, error: `"${part}" names CPU ${cpu}, there are ${cpus}` };
    const nums = (rest ?? '').split('-').slice(1).map(Number);
    const refs = (): ObjRef[] => {
      const out: ObjRef[] = [];
      for (let i = 0; i + 1 < nums.length; i += 2) out.push({ pfn: nums[i] ?? 0, index: nums[i + 1] ?? 0 });
      return out;
    };
    let op: ScriptOp | null = null;
    if (k === 'a' && nums.length === 0) op = { kind: 'alloc', cpu };
    else if (k === 'x' && nums.length === 0) op = { kind: 'flush', cpu };
    else if (k === 'b' && nums.length === 1 && (nums[0] ?? 0) >= 1 && (nums[0] ?? 0) <= MAX_BULK) op = { kind: 'allocBulk', cpu, count: nums[0] ?? 1 };
    else if (k === 'f' && nums.length === 2) op = { kind: 'free', cpu, refs: refs() };
    else if (k === 'F' && nums.length >= 2 && nums.length % 2 === 0 && nums.length / 2 <= MAX_BULK) op = { kind: 'freeBulk', cpu, refs: refs() };
    if (!op) return { ok: false, error: `"${part}" has the wrong numbers for its kind` };
    script.ops.push(op);
  }
  return { ok: true, script };
}

export function scriptToText(s: Script): string {
  const r = (refs: ObjRef[] | undefined) => (refs ?? []).map((x) => `-${x.pfn}-${x.index}`).join('');
  const ops = s.ops.map((o) => {
    switch (o.kind) {
      case 'alloc':
        return `a${o.cpu}`;
      case 'flush':
        return `x${o.cpu}`;
      case 'allocBulk':
        return `b${o.cpu}-${o.count ?? 1}`;
      case 'free':
        return `f${o.cpu}${r(o.refs)}`;
      case 'freeBulk':
        return `F${o.cpu}${r(o.refs)}`;
    }
  });
  const irqs = s.irqs.map((q) => `i${q.atOp}-${q.point}-${q.nth}-${q.handler.kind === 'alloc' ? 'a' : `f${r(q.handler.refs)}`}`);
  return [...ops, ...irqs].join('.');
}
