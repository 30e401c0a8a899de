// The glue every step view shares (step-glue.ts): where an operation added by
// hand goes, each pane's label and checker findings, and the events of the
// step on screen.
import { describe, expect, it } from 'vitest';
import type { Check, Stop } from '../core/bridge-protocol';
import type { SlEvent } from '../core/events.generated';
import { insertionPoint, insertOp, paneChecks, paneLabel, stepEvents } from './step-glue';
import type { AlignedStop } from './stops';
import type { LoadedPane } from './use-step-lab';

const stop = (s: Partial<Stop>): Stop => ({ ops: 0, micro: 0, opIndex: -1, eventCount: 0, point: 0, inHandler: false, arrival: 0, ...s });
const event = (seq: number) => ({ seq }) as unknown as SlEvent;
const pane = (label: string, stops: Stop[], events: SlEvent[]) => ({ label, stops, events }) as unknown as LoadedPane<unknown>;

describe('operations by hand', () => {
  it('go after the operation the stop ends or is inside, the later ones kept', () => {
    expect(insertionPoint(undefined)).toBe(0);
    expect(insertionPoint(stop({ ops: 2, opIndex: 1 }))).toBe(2);
    expect(insertionPoint(stop({ ops: 1, opIndex: 1, micro: 3 }))).toBe(2);
    expect(insertOp(['a', 'b', 'c'], 1, 'x')).toEqual(['a', 'x', 'b', 'c']);
    expect(insertOp(['a'], 9, 'x')).toEqual(['a', 'x']);
    expect(insertOp(['a'], -1, 'x')).toEqual(['x', 'a']);
  });
});

describe('panes in words', () => {
  const check = (message: string): Check => ({ rc: -5, message });
  it('prefixes a pane\'s words with its label only when there are several panes', () => {
    expect(paneLabel({ panes: [pane('cmpxchg', [], [])] }, 0)).toBe('');
    expect(paneLabel({ panes: [pane('cmpxchg', [], []), pane('plain', [], [])] }, 1)).toBe('plain: ');
  });
  it('lists the checker\'s findings of the panes that have one, with the view\'s words', () => {
    const panes = [pane('a', [], []), pane('b', [], [])];
    const shown = [{ stop: 0, snap: 1, check: { rc: 0, message: '' } }, { stop: 0, snap: 2, check: check('slab 3 is on two lists') }];
    const lines = paneChecks({ panes, shown }, (snap) => ` (snapshot ${snap})`);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe('b: The checker (validate) flags a corruption: slab 3 is on two lists (snapshot 2)');
    expect(paneChecks({ panes, shown: null })).toEqual([]);
  });
});

describe('the events of the step on screen', () => {
  const events = [0, 1, 2, 3, 4, 5].map(event);
  const p = pane('a', [stop({ eventCount: 1 }), stop({ ops: 1, opIndex: 0, eventCount: 4 }), stop({ ops: 2, opIndex: 1, eventCount: 6 })], events);
  const at = (k: number): AlignedStop => ({ opIndex: k - 1, micro: 0, panes: [k] }) as AlignedStop;
  it('are each pane\'s events between the stop before and its stop', () => {
    expect(stepEvents({ panes: [p], at: at(1), ready: true })).toEqual([events.slice(1, 4)]);
    expect(stepEvents({ panes: [p], at: at(2), ready: true })).toEqual([events.slice(4, 6)]);
  });
  it('are none at the start or before the state is ready', () => {
    expect(stepEvents({ panes: [p], at: at(0), ready: true })).toEqual([[]]);
    expect(stepEvents({ panes: [p], at: at(2), ready: false })).toEqual([[]]);
  });
});
