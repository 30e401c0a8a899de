// The page the engine assembles for a step view (StepLabPage.tsx), rendered
// to markup from a lab with two panes: the heading from the view's name and
// story, each pane's head with its figures, the canvases under the view's
// test id and words, the inspector's words prefixed by each pane's label,
// the checker's alert with the view's words, and nothing before the core is
// ready or below the page when embedded.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { CoreState } from '../core/use-core';
import type { CanvasLayout } from './LabCanvas';
import { StepLabPage, type StepLabPageProps } from './StepLabPage';
import type { StepLab } from './use-step-lab';

type Snap = { name: string; bad: boolean };
const snaps: Snap[] = [
  { name: 'left', bad: false },
  { name: 'right', bad: true },
];
const lab = {
  model: 'toy',
  kernel: null,
  story: null,
  panes: [{ label: 'cmpxchg', stops: [], events: [], names: null }, { label: 'plain', stops: [], events: [], names: null }],
  stops: [],
  stepIndex: 0,
  at: undefined,
  paneStops: [undefined, undefined],
  shown: snaps.map((snap) => ({ stop: 0, snap, check: snap.bad ? { rc: -5, message: 'an object is on two freelists' } : { rc: 0, message: '' } })),
  ready: true,
  atEnd: false,
  caption: 'CPU 0 allocates.',
  position: 'Start (3 steps)',
  next: '',
  landOnOp: () => undefined,
  error: null,
  stepProblem: null,
  playing: false,
  setPlaying: () => undefined,
  speed: 2,
  setSpeed: () => undefined,
  go: () => undefined,
  nextOp: () => undefined,
  prevOp: () => undefined,
  shortcuts: [],
  words: { groups: {}, groupOf: () => 'all', event: () => '' },
  find: null,
} as unknown as StepLab<unknown, Snap>;
const view = {
  layout: () => ({ width: 100, height: 50 }) as CanvasLayout,
  draw: () => undefined,
  hit: () => null,
  describe: { events: lab.words },
};
const ready = { status: 'ready' } as CoreState;

function page(over: Partial<StepLabPageProps<Snap, CanvasLayout, string, number>> = {}): string {
  const props: StepLabPageProps<Snap, CanvasLayout, string, number> = {
    core: ready,
    lab,
    view,
    idPrefix: 'toy',
    name: 'Toy',
    story: 'Why the tid',
    embedded: false,
    cpus: 2,
    shortcuts: [],
    overlays: [1, 2],
    panes: { testId: 'toy-canvas', label: (s) => `Toy state of ${s.name}`, onPick: () => undefined, onMove: () => undefined },
    paneFigures: (s) => `figures of ${s.name}`,
    checkMore: (s) => ` (${s.name} pane)`,
    inspect: (s, i) => (i === 1 ? `object 3 of ${s.name} is free` : null),
    inspectHint: 'Select an object.',
    after: createElement('p', { 'data-testid': 'below' }, 'below the page'),
    ...over,
  };
  return renderToStaticMarkup(createElement(StepLabPage<Snap, CanvasLayout, string, number>, props));
}

describe('StepLabPage', () => {
  it('lays out the view\'s parts: heading, pane heads, canvases, inspector, checker alert, what goes below', () => {
    const html = page();
    expect(html).toContain('<h2 id="toy-title">Toy · Why the tid</h2>');
    expect(html).toContain('data-testid="toy-pane-figures-0">figures of left</p>');
    expect(html).toContain('data-testid="toy-pane-figures-1">figures of right</p>');
    expect(html.match(/data-testid="toy-canvas"/g)).toHaveLength(2);
    expect(html).toContain('Toy state of right');
    // The inspector: only the pane with words, prefixed by its label.
    expect(html).toContain('data-testid="inspector">plain: object 3 of right is free</p>');
    // The checker's alert: the pane with a finding, its label, the view's words.
    expect(html).toMatch(/data-testid="toy-check">plain: The checker \(validate\) flags a corruption: an object is on two freelists \(right pane\)</);
    expect(html).toContain('data-testid="below"');
    // With several panes the one pane's figures line is not drawn.
    expect(page({ soloFigures: () => 'solo' })).not.toContain('data-testid="toy-figures"');
  });

  it('says how to select while nothing is, and draws a pane with the view\'s own component when asked', () => {
    const html = page({ inspect: () => null, panes: { draw: (s, overlay, i) => createElement('i', { 'data-testid': `own-${i}` }, `${s.snap.name} ${overlay}`) } });
    expect(html).toContain('data-testid="inspector">Select an object.</p>');
    expect(html).toContain('<i data-testid="own-1">right 2</i>');
    expect(html).not.toContain('toy-canvas');
  });

  it('shows nothing before the core is ready, and nothing below the page when embedded', () => {
    expect(page({ core: { status: 'loading' } as CoreState })).toBe('');
    const embedded = page({ embedded: true });
    expect(embedded).toContain('Toy view');
    expect(embedded).not.toContain('data-testid="below"');
  });
});
