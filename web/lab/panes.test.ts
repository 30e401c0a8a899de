import { describe, expect, it } from 'vitest';
import { paneDrawings } from './StepLab';
import type { LoadedPane, ShownPane } from './use-step-lab';

const shownPane = (snap: string): ShownPane<string> => ({ stop: 0, snap, check: null });

describe('paneDrawings', () => {
  const panes = [{}, {}, {}] as unknown as LoadedPane<unknown>[];
  it('draws each pane whose state is on screen and whose overlay is ready, and nothing for the others', () => {
    const drawn = paneDrawings({ panes, shown: [shownPane('a'), shownPane('b')] }, ['x', undefined, 'z'], (p, overlay, i) => `${i}:${p.snap}:${overlay}`);
    expect(drawn).toEqual(['0:a:x', null, null]);
  });
  it('draws nothing while no state is on screen', () => {
    expect(paneDrawings({ panes, shown: null }, ['x', 'y', 'z'], () => 'drawn')).toEqual([null, null, null]);
  });
});
