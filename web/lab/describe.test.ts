import { describe, expect, it } from 'vitest';
import { EventKind } from '../core/events.generated';
import { OpNames, timelineGroups, caption, positionText } from './describe';

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

describe('timelineGroups', () => {
  const OWN_KIND = EventKind.SLUB_ALLOC_FASTPATH;
  it('lists operations first, the model\'s groups in their order, pages and errors last', () => {
    const { groups } = timelineGroups({ fast: { name: 'fast path' }, micro: { name: 'micro-steps' }, slow: { name: 'slow path' } });
    expect(Object.keys(groups)).toEqual(['ops', 'fast', 'micro', 'slow', 'pages']);
  });
  it("files a kind under its trace-level group, else the model's group that lists it, else pages and errors", () => {
    const { groupOf } = timelineGroups({ fast: { name: 'fast path', kinds: [OWN_KIND, EventKind.OP_BEGIN] }, micro: { name: 'micro-steps' } });
    expect(groupOf(OWN_KIND)).toBe('fast');
    expect(groupOf(EventKind.OP_BEGIN)).toBe('ops');
    expect(groupOf(EventKind.PAGE_FREE)).toBe('pages');
    expect(groupOf(EventKind.SLUB_FREE_FASTPATH)).toBe('pages');
    expect(groupOf(EventKind.PREEMPT_POINT)).toBe('micro');
  });
  it('counts micro-step and interrupt kinds as operations in a model without a micro-step group', () => {
    const { groups, groupOf } = timelineGroups({ fast: { name: 'fast path' } });
    expect(groups).not.toHaveProperty('micro');
    expect(groupOf(EventKind.PREEMPT_POINT)).toBe('ops');
    expect(groupOf(EventKind.INTERRUPT_BEGIN)).toBe('ops');
  });
});

describe('a story with set-up operations', () => {
  const story = { script: null, captions: ['Set-up: CPU 0 allocates 8 objects.', 'It frees one.', 'It frees another.'], intro: 'Frees.', outro: 'Done.', setup: 1 };

  it('counts the steps after the set-up, from 1', () => {
    expect(positionText({ opIndex: -1, micro: 0 }, 3, 1)).toBe('Start (2 steps)');
    expect(positionText({ opIndex: 1, micro: 0 }, 3, 1)).toBe('Step 1 of 2');
    expect(positionText({ opIndex: 2, micro: 2 }, 3, 1)).toBe('Step 2 of 2 · micro-step 2');
    expect(positionText({ opIndex: 0, micro: 0 }, 3)).toBe('Step 1 of 3');
  });

  it('says what the set-up did at the start', () => {
    expect(caption(story, { opIndex: -1, micro: 0 }, [], false, () => '')).toBe('Frees. Already set up: CPU 0 allocates 8 objects.');
    expect(caption({ ...story, setup: 0 }, { opIndex: -1, micro: 0 }, [], false, () => '')).toBe('Frees.');
  });
});
