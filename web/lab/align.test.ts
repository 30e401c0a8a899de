import { describe, expect, it } from 'vitest';
import { alignedLayout, rowHeight, tallestRows } from './align';

/** A toy drawing: one row per entry, as tall as its number (or the tallest beside it). */
function lay(s: Record<string, number>, minH?: ReadonlyMap<string, number>) {
  let y = 0;
  const rows = Object.entries(s).map(([key, h]) => {
    const row = { key, y, h: rowHeight(minH, key, h) };
    y += row.h;
    return row;
  });
  return { rows, height: y };
}

describe('panes aligned row by row', () => {
  it('takes the tallest of each key', () => {
    expect(tallestRows([[{ key: 'a', h: 10 }, { key: 'b', h: 5 }], [{ key: 'a', h: 7 }, { key: 'c', h: 3 }]])).toEqual(new Map([['a', 10], ['b', 5], ['c', 3]]));
  });

  it('puts the rows the panes share at the same height, and the panes at the same height', () => {
    const left = { cpu0: 20, cpu1: 40, node: 10 };
    const right = { cpu0: 30, cpu1: 15, node: 25 };
    const a = alignedLayout(left, [left, right], lay, (l) => l.rows);
    const b = alignedLayout(right, [left, right], lay, (l) => l.rows);
    expect(a.rows.map((r) => r.y)).toEqual(b.rows.map((r) => r.y));
    expect(a.height).toBe(b.height);
    expect(a.rows.map((r) => r.h)).toEqual([30, 40, 25]);
  });

  it('leaves a pane alone as it is', () => {
    const left = { cpu0: 20 };
    expect(alignedLayout(left, [left], lay, (l) => l.rows)).toEqual(lay(left));
    expect(alignedLayout(left, [], lay, (l) => l.rows)).toEqual(lay(left));
  });
});
