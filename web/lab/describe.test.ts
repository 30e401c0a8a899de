import { describe, expect, it } from 'vitest';
import { OpNames } from './describe';

describe('OpNames', () => {
  it("names a script's steps by their operation numbers, and tells them from operations inside a step", () => {
    const names = new OpNames(
      [
        { opNum: 7, result: 0, error: '' },
        { opNum: 9, result: 0, error: '' },
      ],
      (i) => ['alloc on CPU 0', 'free on CPU 1'][i] ?? '?',
    );
    expect(names.has(9)).toBe(true);
    expect(names.has(8)).toBe(false);
    expect(names.name(9)).toBe('step 2 (free on CPU 1)');
    expect(names.name(8)).toBe('operation #8 (an interrupt handler)');
  });
});
