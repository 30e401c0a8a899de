import { describe, expect, it } from 'vitest';
import { movedItems } from './LabCanvas';

describe('motion between two layouts', () => {
  const item = (key: string, x: number, y: number) => ({ key, x, y, w: 10, h: 10 });

  it('pairs the items that moved by key; new, gone and unmoved ones just cross-fade', () => {
    const before = [item('slab 0', 0, 0), item('slab 4', 50, 0), item('slab 8', 100, 0)];
    const after = [item('slab 0', 0, 0), item('slab 4', 50, 80), item('slab 12', 100, 0)];
    expect(movedItems(before, after)).toEqual([{ from: item('slab 4', 50, 0), to: item('slab 4', 50, 80) }]);
    expect(movedItems(undefined, after)).toEqual([]);
    expect(movedItems(before, undefined)).toEqual([]);
  });
});
