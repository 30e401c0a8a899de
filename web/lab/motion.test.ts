import { describe, expect, it } from 'vitest';
import { easeOut, flash, glidePlace, MOTION_MS, movedItems, newItems, REDUCED_MOTION_MS, Transition } from './motion';

describe('motion between two layouts', () => {
  const item = (key: string, x: number, y: number) => ({ key, x, y, w: 10, h: 10 });

  it('pairs the items that moved by key; new, gone and unmoved ones just cross-fade', () => {
    const before = [item('slab 0', 0, 0), item('slab 4', 50, 0), item('slab 8', 100, 0)];
    const after = [item('slab 0', 0, 0), item('slab 4', 50, 80), item('slab 12', 100, 0)];
    expect(movedItems(before, after)).toEqual([{ from: item('slab 4', 50, 0), to: item('slab 4', 50, 80) }]);
    expect(movedItems(undefined, after)).toEqual([]);
    expect(movedItems(before, undefined)).toEqual([]);
  });

  it('names the items that arrived (they flash), none on a first paint', () => {
    const before = [item('slab 0', 0, 0)];
    const after = [item('slab 0', 0, 0), item('slab 12', 100, 0)];
    expect(newItems(before, after).map((i) => i.key)).toEqual(['slab 12']);
    expect(newItems(undefined, after)).toEqual([]);
  });

  it('glides from the old place to the new one, fast off the mark (power4.out)', () => {
    const m = { from: item('a', 0, 0), to: item('a', 100, 200) };
    expect(glidePlace(m, easeOut(0))).toEqual({ x: 0, y: 0 });
    expect(glidePlace(m, easeOut(1))).toEqual({ x: 100, y: 200 });
    // Half way in time, well over half way in distance.
    expect(glidePlace(m, easeOut(0.5)).x).toBeGreaterThan(90);
  });

  it('flashes up by 30 % and back to nothing at both ends', () => {
    expect(flash(0)).toBe(0);
    expect(flash(0.3)).toBeCloseTo(1);
    expect(flash(0.65)).toBeCloseTo(0.5);
    expect(flash(1)).toBe(0);
  });

  it('lasts ~0.5 s, and a short plain cross-fade under reduced motion', () => {
    const from = {} as HTMLCanvasElement;
    expect(new Transition(0, from, [], false).duration).toBe(MOTION_MS);
    expect(MOTION_MS).toBeGreaterThanOrEqual(400);
    expect(new Transition(0, from, [], true).duration).toBe(REDUCED_MOTION_MS);
    expect(REDUCED_MOTION_MS).toBeLessThan(MOTION_MS / 2);
    const t = new Transition(1000, from, [], false);
    expect(t.progress(1000)).toBe(0);
    expect(t.progress(1000 + MOTION_MS / 2)).toBeCloseTo(0.5);
    expect(t.progress(5000)).toBe(1);
  });
  it('eases the canvas height from the old to the new one (at once under reduced motion)', () => {
    const from = {} as HTMLCanvasElement;
    const t = new Transition(0, from, [], false, 300);
    expect(t.heightAt(0, 500)).toBe(300);
    const mid = t.heightAt(MOTION_MS / 2, 500);
    expect(mid).toBeGreaterThan(400);
    expect(mid).toBeLessThan(500);
    expect(t.heightAt(MOTION_MS, 500)).toBe(500);
    // Shrinking too.
    expect(new Transition(0, from, [], false, 500).heightAt(MOTION_MS / 4, 300)).toBeLessThan(500);
    expect(new Transition(0, from, [], true, 300).heightAt(0, 500)).toBe(500);
    expect(new Transition(0, from, [], false).heightAt(0, 500)).toBe(500);
  });
});
