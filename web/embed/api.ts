// api.ts - the embed API, one protocol for the iframe (embed.html, by
// postMessage) and the <slab-lab> element (methods and CustomEvents).
//
// Messages to the lab are objects under a `slablab` key, after Perfetto UI's
// habit (ui/src/frontend/post_message_handler.ts), so a page's other traffic
// is never mistaken for a command:
//
//   {slablab: {type: 'PING'}}                  answered by {slablab: {type: 'PONG', version}}
//   {slablab: {type: 'go', step: 6}}           to stop 6 (clamped to the story)
//   {slablab: {type: 'play'}} / {type: 'pause'}
//   {slablab: {type: 'load', params: {...}}}   a scenario or a script: the view's parameters
//                                              (e.g. {scenario: 'why-tid', variant: 'plain'} or
//                                              {scenario: 'sandbox', ops: 'a0.a0.f1-0-3'}); keys
//                                              left out go back to their defaults, step to 0
//
// and from the lab, once the page has said PING:
//
//   {slablab: {type: 'step', state}}      the stop on screen changed (state: LabState)
//   {slablab: {type: 'finished', state}}  the story's last stop is on screen
//   {slablab: {type: 'error', message}}   a message was refused, and why
//
// Every field is checked here, and load's parameters by the same parsers as
// the URL's and the attributes' (one bad value refuses the whole load).

import type { LabCommand, LabState } from '../lab/host';
import type { ParamSpecs } from '../lab/params';
import type { LabViewEntry } from '../lab/view';

export const API_VERSION = 1;

export type ApiRequest = { type: 'PING' } | LabCommand | { type: 'load'; params: Readonly<Record<string, string>> };
export type ApiEvent = { type: 'PONG'; version: number } | { type: 'step' | 'finished'; state: LabState } | { type: 'error'; message: string };

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * A message's request, null when it is not for slablab at all (no
 * `slablab` key), or what is wrong with it.
 */
export function parseRequest(data: unknown): { ok: true; request: ApiRequest } | { ok: false; error: string } | null {
  if (!isRecord(data) || !('slablab' in data)) return null;
  const m = data.slablab;
  if (!isRecord(m) || typeof m.type !== 'string') return { ok: false, error: 'a slablab message is an object with a string `type`' };
  switch (m.type) {
    case 'PING':
    case 'play':
    case 'pause':
      return { ok: true, request: { type: m.type } };
    case 'go':
      return typeof m.step === 'number' && Number.isInteger(m.step) && m.step >= 0
        ? { ok: true, request: { type: 'go', step: m.step } }
        : { ok: false, error: `go needs a whole number step >= 0, got ${JSON.stringify(m.step)}` };
    case 'load': {
      const params = m.params;
      if (!isRecord(params) || !Object.values(params).every((v) => typeof v === 'string'))
        return { ok: false, error: 'load needs params: an object of string values (the view\'s parameters)' };
      return { ok: true, request: { type: 'load', params: params as Record<string, string> } };
    }
    default:
      return { ok: false, error: `unknown message type ${JSON.stringify(m.type.slice(0, 40))} (PING, go, play, pause, load)` };
  }
}

/**
 * The raw parameters a load sets: the given ones, checked by the specs of
 * the view they name (`view`, else the one on screen), and every other key
 * of that view removed (back to its default).  `shell` holds the embed's own
 * keys, which a load may set and otherwise leaves alone.
 */
export function loadPatch(
  params: Readonly<Record<string, string>>,
  shell: ParamSpecs,
  viewOf: (id: string | undefined) => LabViewEntry,
): { ok: true; patch: Record<string, string | null> } | { ok: false; error: string } {
  const view = viewOf(params.view);
  const specs: ParamSpecs = { ...shell, ...view.params };
  const unknown = Object.keys(params).filter((k) => !(k in specs));
  if (unknown.length) return { ok: false, error: `load: unknown parameter${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')} (the ${view.id} view reads ${Object.keys(specs).join(', ')})` };
  const problems = Object.entries(params).flatMap(([k, raw]) => {
    const r = specs[k]?.parse(raw);
    return r && !r.ok ? [`load: ${k}=${JSON.stringify(raw)} is not valid: expected ${r.expected}.`] : [];
  });
  if (problems.length) return { ok: false, error: problems.join(' ') };
  const reset: Record<string, string | null> = Object.fromEntries(Object.keys(view.params).map((k) => [k, null]));
  return { ok: true, patch: { ...reset, ...params } };
}

/** The events a change of state means: a new stop on screen, and the story's end reached. */
export function stateEvents(before: LabState | null, now: LabState): ('step' | 'finished')[] {
  if (!now.ready || now.stops === 0) return [];
  const moved = !before || !before.ready || before.step !== now.step || before.stops !== now.stops;
  if (!moved) return [];
  return now.atEnd ? ['step', 'finished'] : ['step'];
}
