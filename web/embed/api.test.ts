import { describe, expect, it } from 'vitest';
import type { LabState } from '../lab/host';
import { oneOf, whole } from '../lab/params';
import type { LabViewEntry } from '../lab/view';
import { loadPatch, parseRequest, stateEvents } from './api';

const view = (id: string, params: LabViewEntry['params']): LabViewEntry => ({ id, title: id, embeddable: true, params, Component: () => null });
const VIEWS = [view('a', { scenario: oneOf(['one', 'two'], 'one'), step: whole(0, 99, 0), cpus: whole(2, 8, 4) }), view('b', { chunks: whole(1, 4, 1) })];
const viewOf = (id: string | undefined) => VIEWS.find((v) => v.id === (id ?? 'a')) ?? (VIEWS[0] as LabViewEntry);
const SHELL = { view: oneOf(['a', 'b'], 'a'), theme: oneOf(['auto', 'dark'], 'auto') };

describe('embed API requests', () => {
  it('ignores messages that are not slablab ones, and checks every field of those that are', () => {
    expect(parseRequest('PING')).toBeNull();
    expect(parseRequest({ perfetto: { type: 'PING' } })).toBeNull();
    expect(parseRequest({ slablab: { type: 'PING' } })).toEqual({ ok: true, request: { type: 'PING' } });
    expect(parseRequest({ slablab: { type: 'go', step: 4 } })).toEqual({ ok: true, request: { type: 'go', step: 4 } });
    expect(parseRequest({ slablab: { type: 'go', step: -1 } })).toEqual({ ok: false, error: 'go needs a whole number step >= 0, got -1' });
    expect(parseRequest({ slablab: { type: 'go', step: '4' } })).toMatchObject({ ok: false });
    expect(parseRequest({ slablab: { type: 'load', params: { scenario: 2 } } })).toMatchObject({ ok: false, error: expect.stringContaining('string values') });
    expect(parseRequest({ slablab: { type: 'rm -rf' } })).toMatchObject({ ok: false, error: expect.stringContaining('unknown message type "rm -rf"') });
    expect(parseRequest({ slablab: 'PING' })).toMatchObject({ ok: false });
  });

  it("loads with the named view's parsers: every other key of the view back to its default", () => {
    expect(loadPatch({ scenario: 'two' }, SHELL, viewOf)).toEqual({ ok: true, patch: { scenario: 'two', step: null, cpus: null } });
    expect(loadPatch({ view: 'b', chunks: '3', theme: 'dark' }, SHELL, viewOf)).toEqual({ ok: true, patch: { chunks: '3', view: 'b', theme: 'dark' } });
    const bad = loadPatch({ scenario: 'three', cpus: '9' }, SHELL, viewOf);
    expect(bad).toEqual({
      ok: false,
      error: 'load: scenario="three" is not valid: expected one of one, two. load: cpus="9" is not valid: expected a whole number from 2 to 8.',
    });
    // A key of another view is unknown to the one named.
    expect(loadPatch({ view: 'b', cpus: '2' }, SHELL, viewOf)).toEqual({ ok: false, error: 'load: unknown parameter cpus (the b view reads view, theme, chunks)' });
  });
});

describe('embed API events', () => {
  const state = (step: number, extra: Partial<LabState> = {}): LabState => ({ ready: true, step, stops: 5, atEnd: step === 4, playing: false, caption: '', ...extra });

  it('says step when a new stop is on screen, and finished with the last one', () => {
    expect(stateEvents(null, state(0, { ready: false }))).toEqual([]);
    expect(stateEvents(null, state(0))).toEqual(['step']);
    expect(stateEvents(state(0), state(0, { playing: true }))).toEqual([]);
    expect(stateEvents(state(0), state(2, { ready: false }))).toEqual([]);
    expect(stateEvents(state(0, { ready: false }), state(2))).toEqual(['step']);
    expect(stateEvents(state(3), state(4))).toEqual(['step', 'finished']);
    expect(stateEvents(state(4), state(4, { stops: 9, atEnd: false, step: 4 }))).toEqual(['step']);
  });
});
