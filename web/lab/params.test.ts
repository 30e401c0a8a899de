import { describe, expect, it } from 'vitest';
import { flag, formatParams, listOf, oneOf, parseParams, text, whole } from './params';

const SPECS = {
  n: whole(1, 8, 4),
  kind: oneOf(['a', 'b'] as const, 'a'),
  list: listOf(['x', 'y', 'z'] as const, ['x'], 2),
  note: text((raw) => (raw.length <= 3 ? null : 'at most 3 characters'), ''),
};

describe('parameters', () => {
  it('reads each key on its own: a bad one costs only itself', () => {
    const q = new URLSearchParams('n=9&kind=b&list=y,z&note=abcd');
    const { values, problems } = parseParams(SPECS, (k) => q.get(k));
    expect(values).toEqual({ n: 4, kind: 'b', list: ['y', 'z'], note: '' });
    expect(problems).toEqual([
      'URL parameter n="9" is not valid: expected a whole number from 1 to 8. Using 4.',
      'URL parameter note="abcd" is not valid: expected at most 3 characters. Using .',
    ]);
  });

  it('takes one value or a comma list of different ones, no more than the maximum', () => {
    const list = SPECS.list;
    expect(list.parse('z')).toEqual({ ok: true, value: ['z'] });
    expect(list.parse('z,x')).toEqual({ ok: true, value: ['z', 'x'] });
    for (const bad of ['x,y,z', 'x,x', 'w', '', 'x,']) expect(list.parse(bad).ok, bad).toBe(false);
  });

  it('writes back only what differs from the default, and reads back what it wrote', () => {
    const raw = formatParams(SPECS, { n: 4, kind: 'b', list: ['x', 'y'] });
    expect(raw).toEqual({ n: null, kind: 'b', list: 'x,y' });
    const q = new URLSearchParams(Object.entries(raw).filter((e): e is [string, string] => e[1] !== null));
    expect(parseParams(SPECS, (k) => q.get(k)).values).toMatchObject({ n: 4, kind: 'b', list: ['x', 'y'] });
    expect(formatParams(SPECS, { list: ['x'] })).toEqual({ list: null });
  });

  it('reads a boolean attribute: present or "true", "false", nothing else', () => {
    const f = flag(false);
    expect(f.parse('')).toEqual({ ok: true, value: true });
    expect(f.parse('true')).toEqual({ ok: true, value: true });
    expect(f.parse('false')).toEqual({ ok: true, value: false });
    expect(f.parse('yes')).toEqual({ ok: false, expected: 'present (or "true"), or "false"' });
    expect(parseParams({ autoplay: f }, () => null).values.autoplay).toBe(false);
  });

  it('names the source of the values in its messages', () => {
    expect(parseParams({ kind: SPECS.kind }, () => 'c', 'attribute').problems).toEqual(['attribute kind="c" is not valid: expected one of a, b. Using a.']);
  });
});
