// The code panel's map, read from the real C sources (scripts/c-source.mjs):
// every preemption point and every event kind of every model maps to a
// line that names it; the lookups of code.ts on records shaped as the
// scheduler writes them.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionsOf, kernelName, modelDirs, readCSource, SRC } from '../../scripts/c-source.mjs';
import { parseEventDefs } from '../../scripts/gen-events.mjs';
import type { Stop } from '../core/bridge-protocol';
import { EventKind, type SlEvent } from '../core/events.generated';
import { codeAt, elixirUrl, type ModelSource } from './code';

const source = readCSource();
const lineOf = (m: ModelSource, fn: number, line: number) => {
  const f = m.functions[fn];
  return f ? (f.lines[line - f.first] ?? '') : '';
};

describe('the C source map', () => {
  it('has every model folder, SLUB with its seven preemption points (four per-CPU slab, three sheaf)', () => {
    expect(Object.keys(source.models)).toEqual(modelDirs());
    expect(modelDirs()).toEqual(expect.arrayContaining(['percpu', 'slab', 'slub']));
    expect(Object.values(source.models.slub?.pointNames ?? {})).toEqual(['SL_SLUB_PP_ALLOC_BEFORE_CAS', 'SL_SLUB_PP_FREE_BEFORE_CAS', 'SL_SLUB_PP_SLAB_FREE', 'SL_SLUB_PP_BULK_GROUP', 'SL_SLUB_PP_SHEAF_ALLOC', 'SL_SLUB_PP_SHEAF_FREE', 'SL_SLUB_PP_SHEAF_REFILL']);
  });

  for (const id of modelDirs())
    it(`${id}: every preemption point and every event kind maps to a line that names it`, () => {
      const m = source.models[id] as ModelSource;
      for (const [num, name] of Object.entries(m.pointNames)) {
        const sites = m.points[num] ?? [];
        expect(sites.length, `${name} has no SL_PREEMPT_POINT`).toBeGreaterThan(0);
        for (const s of sites) {
          expect(lineOf(m, s.fn, s.line)).toContain('SL_PREEMPT_POINT(');
          expect(lineOf(m, s.fn, s.line)).toContain(name);
        }
        // The recorded line picks one site: no two of one id share a line.
        expect(new Set(sites.map((s) => s.line)).size).toBe(sites.length);
      }
      for (const k of parseEventDefs(join(SRC, id, 'events.def')).filter((k) => k.area === id)) {
        const sites = m.events[k.num] ?? [];
        expect(sites.length, `${k.name} is recorded nowhere`).toBeGreaterThan(0);
        for (const s of sites) expect(lineOf(m, s.fn, s.line)).toMatch(new RegExp(`\\b(SL_EV_)?${k.name}\\b`));
      }
      // A function's text is its file's, from the signature to the closing brace.
      for (const f of m.functions) {
        const file = readFileSync(join(SRC, '..', '..', f.file), 'utf8').split('\n');
        expect(file.slice(f.first - 1, f.first - 1 + f.lines.length)).toEqual(f.lines);
        expect(f.lines[f.lines.length - 1]).toBe('}');
        expect(f.lines.join('\n')).toContain(`${f.name}(`);
      }
    });

  it('reads kernel-style definitions and the kernel names their comments give', () => {
    const text = ['/* slab_alloc_node: the fast path. */', 'static int', 'slab_alloc(struct a *a,', '           int b)', '{', '    return 0;', '}', '', 'static const int t[] = {1, 2};', 'void sli_slub_put_cpu_partial(void)', '{', '}'].join('\n');
    expect(functionsOf(text)).toEqual([
      { name: 'slab_alloc', first: 2, last: 7, comment: 'slab_alloc_node: the fast path.' },
      { name: 'sli_slub_put_cpu_partial', first: 10, last: 12, comment: '' },
    ]);
    expect(kernelName('slab_alloc', 'slab_alloc_node: the fast path.')).toBe('slab_alloc_node');
    expect(kernelName('free_one', 'kmem_cache_free of one object')).toBe('kmem_cache_free');
    expect(kernelName('sli_slub_put_cpu_partial', 'Sets this CPU\'s freelist')).toBe('put_cpu_partial');
    expect(kernelName('sl_slub_alloc', 'The cache\'s leaf fast path')).toBeNull();
    expect(kernelName('sli_free_to_pcs', '')).toBe('free_to_pcs');
    expect(kernelName('sli_slub_slab_alloc_slow', 'kernel: ___slab_alloc')).toBe('___slab_alloc');
    expect(kernelName('am_alloc_area', 'Takes an area. kernel: pcpu_alloc_area.')).toBe('pcpu_alloc_area');
    expect(kernelName('sl_slub_rcu_grace_period', "kernel: none (the model's explicit RCU grace period)")).toBeNull();
  });

  it("names only the kernel's functions: no model prefix survives into an Elixir link", () => {
    for (const [id, m] of Object.entries(readCSource().models))
      for (const f of m.functions) expect(f.kernel ?? '', `${id}: ${f.name}`).not.toMatch(/^(sli?_|SLI?_|am_)|^(area_taken|chunk_link|chunk_unlink|hardened_bug|slab_alloc_slow)$/);
  });
});

const ev = (kind: number, op: number, arg0 = 0, arg2 = 0): SlEvent => ({ op, cpu: 0, kind, cache: 0, flags: 0, slab: 0, obj: 0, arg0, arg1: op, arg2, seq: 0 });
const stop = (micro: number, eventCount: number): Stop => ({ ops: 1, micro, opIndex: 0, eventCount, point: 0, inHandler: false, arrival: 0 });

describe('codeAt', () => {
  const m: ModelSource = {
    functions: [
      { name: 'a', kernel: 'a_k', file: 'f.c', first: 10, lines: ['void a(void)', '{', 'P1', 'E7', 'E8', '}'] },
      { name: 'b', kernel: null, file: 'f.c', first: 20, lines: ['void b(void)', '{', 'P1', 'E8', '}'] },
    ],
    points: { 1: [{ fn: 0, line: 12 }, { fn: 1, line: 22 }] },
    pointNames: { 1: 'SL_X_PP_ONE' },
    events: { 107: [{ fn: 0, line: 13 }], 108: [{ fn: 1, line: 23 }, { fn: 0, line: 14 }] },
  };

  it('at a micro-step: the site of the line the PREEMPT_POINT record carries', () => {
    const events = [ev(EventKind.OP_BEGIN, 5), ev(EventKind.PREEMPT_POINT, 5, 1, 22)];
    expect(codeAt(m, stop(1, 2), events)).toMatchObject({ fn: { name: 'b' }, line: 22, reason: expect.stringContaining('SL_X_PP_ONE') });
    expect(codeAt(m, stop(1, 2), [ev(EventKind.OP_BEGIN, 5), ev(EventKind.PREEMPT_POINT, 5, 1, 12)])?.fn.name).toBe('a');
    expect(codeAt(m, stop(1, 2), [ev(EventKind.OP_BEGIN, 5), ev(EventKind.PREEMPT_POINT, 5, 1, 99)])).toBeNull();
  });

  it("at an operation's end: its last model event, in the function its other events share", () => {
    const events = [ev(EventKind.OP_BEGIN, 5), ev(107, 5), ev(108, 5), ev(EventKind.OP_END, 5)];
    expect(codeAt(m, stop(0, 4), events)).toMatchObject({ fn: { name: 'a' }, line: 14 });
    // Without the hint of 107, the first site.
    expect(codeAt(m, stop(0, 3), [ev(EventKind.OP_BEGIN, 6), ev(108, 6), ev(EventKind.OP_END, 6)])).toMatchObject({ fn: { name: 'b' }, line: 23 });
    // An earlier operation's events do not count; those of operations run inside this one do.
    expect(codeAt(m, stop(0, 5), [ev(107, 4), ev(EventKind.OP_END, 4), ev(EventKind.OP_BEGIN, 5), ev(108, 5), ev(EventKind.OP_END, 5)])?.fn.name).toBe('b');
    expect(codeAt(m, stop(0, 6), [ev(EventKind.OP_BEGIN, 5), ev(EventKind.OP_BEGIN, 6), ev(107, 6), ev(108, 6), ev(EventKind.OP_END, 6), ev(EventKind.OP_END, 5)])).toMatchObject({ fn: { name: 'a' }, line: 14 });
    expect(codeAt(m, stop(0, 0), [])).toBeNull();
  });

  it('links Elixir by identifier, or the file when there is none', () => {
    expect(elixirUrl('v6.17', 'mm/slub.c', 'slab_alloc_node')).toBe('https://elixir.bootlin.com/linux/v6.17/C/ident/slab_alloc_node');
    expect(elixirUrl('v5.4', 'mm/slab.c', null)).toBe('https://elixir.bootlin.com/linux/v5.4/source/mm/slab.c');
  });
});
