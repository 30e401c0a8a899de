// Embed.tsx - one view with minimal chrome, for an iframe in someone else's
// page (embed.html?view=<id>, any embeddable view of web/views.ts).  Such
// pages are usually not cross-origin isolated, so this works with the
// single-threaded build too; the link opens the same state in the full lab.

import { useState } from 'react';
import { useCore } from '../core/use-core';
import { formatParams, parseParams, type ParamStore } from '../lab/params';
import { useParams, useUrlStore } from '../lab/url-store';
import type { LabViewEntry } from '../lab/view';
import { CoreLoadAlert, CoreStatus } from './CoreStatus';
import { UrlProblems } from './UrlProblems';
import { APP_PARAMS, EMBED_PARAMS, keyOrder, urlProblems, viewById, viewCpus } from './url-state';

const EMBED_KEYS = keyOrder(EMBED_PARAMS);

/** The same view and state in the full lab. */
function labUrl(view: LabViewEntry, store: ParamStore): string {
  const q = new URLSearchParams();
  const raw = { ...formatParams(APP_PARAMS, { page: 'lab', mode: view.id }), ...formatParams(view.params, parseParams(view.params, store.get).values) };
  for (const [k, v] of Object.entries(raw)) if (v !== null) q.set(k, v);
  const url = new URL('./', window.location.href);
  url.search = q.toString();
  return url.toString();
}

export function Embed() {
  const store = useUrlStore(EMBED_KEYS);
  const { values } = useParams(EMBED_PARAMS, store);
  const [problems] = useState(() => urlProblems(window.location.search, EMBED_PARAMS, (get) => viewById(parseParams(EMBED_PARAMS, get).values.view)));
  const view = viewById(values.view);
  const core = useCore();
  return (
    <div className="embed">
      <header className="embed-bar">
        <span className="embed-title">slablab</span>
        <CoreStatus core={core} cpus={viewCpus(view, store)} />
        <a href={labUrl(view, store)} target="_blank" rel="noopener">
          Open in slablab
        </a>
      </header>
      <UrlProblems problems={problems} />
      <CoreLoadAlert core={core} />
      <view.Component core={core} store={store} embedded />
    </div>
  );
}
