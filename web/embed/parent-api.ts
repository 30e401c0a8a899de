// parent-api.ts - the embed API of embed.html (api.ts), by postMessage with
// the page that holds the iframe, in Perfetto UI's manner:
//   - messages count only from window.parent (not from another frame, a
//     popup or the page itself), and only under the `slablab` key;
//   - the parent says PING first; the origin of that PING is the only one
//     whose commands are obeyed afterwards, and the only one the lab's
//     events are posted to (never to '*'), so a page that embeds the lab
//     and one that navigated the frame away cannot talk over each other;
//   - every field is checked (api.ts), and a refused message is answered
//     with an `error` naming what is wrong, to the origin that sent it.

import { useEffect, useMemo, useRef } from 'react';
import { LabCommands, type LabState } from '../lab/host';
import type { ParamSpecs, ParamStore } from '../lab/params';
import type { LabViewEntry } from '../lab/view';
import type { EmbedHost } from '../app/Embed';
import { API_VERSION, loadPatch, parseRequest, stateEvents, type ApiEvent } from './api';

/** The host of embed.html: commands from the parent window, the lab's state posted back to it. */
export function useParentApi(store: ParamStore, shell: ParamSpecs, viewOf: (id: string) => LabViewEntry, currentView: string): EmbedHost {
  const origin = useRef<string | null>(null);
  const last = useRef<LabState | null>(null);
  const commands = useMemo(() => new LabCommands(), []);
  const latest = useRef({ store, currentView });
  latest.current = { store, currentView };

  useEffect(() => {
    const parent = window.parent;
    if (parent === window) return; // not in a frame: nobody to talk to
    const post = (event: ApiEvent, to: string) => parent.postMessage({ slablab: event }, to);
    const onMessage = (e: MessageEvent) => {
      if (e.source !== parent) return;
      const r = parseRequest(e.data);
      if (r === null) return;
      if (!r.ok) return post({ type: 'error', message: r.error }, e.origin);
      const { request } = r;
      if (request.type === 'PING') {
        origin.current = e.origin;
        post({ type: 'PONG', version: API_VERSION }, e.origin);
        if (last.current?.ready) post({ type: 'step', state: last.current }, e.origin);
        return;
      }
      if (e.origin !== origin.current) return post({ type: 'error', message: `${request.type}: say PING first (from ${e.origin})` }, e.origin);
      if (request.type !== 'load') return commands.send(request);
      const patch = loadPatch(request.params, shell, (id) => viewOf(id ?? latest.current.currentView));
      if (!patch.ok) return post({ type: 'error', message: patch.error }, e.origin);
      latest.current.store.set(patch.patch);
    };
    window.addEventListener('message', onMessage);
    return () => window.removeEventListener('message', onMessage);
  }, [commands, shell, viewOf]);

  return useMemo<EmbedHost>(
    () => ({
      keysNeedFocus: false,
      active: true,
      hooks: window as unknown as Record<string, unknown>,
      commands,
      report: (s) => {
        const events = stateEvents(last.current, s);
        last.current = s;
        const to = origin.current;
        if (to) for (const type of events) window.parent.postMessage({ slablab: { type, state: s } satisfies ApiEvent }, to);
      },
    }),
    [commands],
  );
}
