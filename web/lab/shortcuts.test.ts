import { describe, expect, it } from 'vitest';
import { route, type Shortcut } from './shortcuts';

/** An element that contains itself and its children. */
function element(...children: object[]) {
  const el = { contains: (n: unknown) => n === el || children.includes(n as object) };
  return el;
}
const keys = (name: string, ...k: string[]): Shortcut[] => k.map((key) => ({ key, description: `${name} ${key}`, run: () => undefined }));
const hit = (list: Shortcut[], key: string) => list.find((s) => s.key === key)?.description;

describe('shortcut scopes', () => {
  const buttonA = {};
  const buttonB = {};
  const labA = element(buttonA);
  const labB = element(buttonB);
  const regs = [
    { list: keys('shell', '?', 'r'), scope: null, scoped: false },
    { list: keys('A', 'ArrowRight', 'r'), scope: labA, scoped: true },
    { list: keys('B', 'ArrowRight', 'r'), scope: labB, scoped: true },
  ];

  it('sends a key to the lab that has the focus, before the unscoped keys', () => {
    expect(hit(route(regs, buttonB, labA), 'ArrowRight')).toBe('B ArrowRight');
    expect(hit(route(regs, buttonA, null), 'r')).toBe('A r');
    expect(hit(route(regs, buttonA, null), '?')).toBe('shell ?');
    // Nothing of the other lab is reachable from inside one.
    expect(route(regs, buttonA, labB).map((s) => s.description)).toEqual(['A ArrowRight', 'A r', 'shell ?', 'shell r']);
  });

  it('sends a key pressed outside every lab to the one used last, else to the first mounted', () => {
    const body = {};
    expect(hit(route(regs, body, labB), 'ArrowRight')).toBe('B ArrowRight');
    expect(hit(route(regs, body, null), 'ArrowRight')).toBe('A ArrowRight');
    expect(hit(route([regs[0] as (typeof regs)[number]], body, null), 'r')).toBe('shell r');
  });
});

describe('scopes that need the focus (several <slab-lab> elements among prose)', () => {
  const inA = {};
  const labA = element(inA);
  const labB = element();
  const regs = [
    { list: keys('A', ' '), scope: labA, scoped: true, needsFocus: true },
    { list: keys('B', ' '), scope: labB, scoped: true, needsFocus: true },
  ];

  it('gets keys only with the focus inside, never as the lab used last or mounted first', () => {
    expect(hit(route(regs, inA, null), ' ')).toBe('A  ');
    expect(route(regs, {}, labA)).toEqual([]);
    expect(route(regs, {}, null)).toEqual([]);
  });
});
