// Embed.tsx - one view with little chrome, for someone else's page: the
// iframe's page (embed.html?view=<id>) and each <slab-lab> element
// (web/embed/slab-lab.ts) render the same EmbedFrame, over the URL's query
// or the element's attributes.  Such pages are usually not cross-origin
// isolated, so this works with the single-threaded build too; the link
// opens the same state in the full lab.

import { useEffect, useMemo, useState } from 'react';
import { useCore } from '../core/use-core';
import { useParentApi } from '../embed/parent-api';
import { LabHostContext, type LabHost } from '../lab/host';
import { parseParams, type ParamStore } from '../lab/params';
import { ThemeContext, useResolvedTheme } from '../lab/theme';
import { useUrlStore } from '../lab/url-store';
import { CoreLoadAlert, CoreStatus } from './CoreStatus';
import { UrlProblems } from './UrlProblems';
import { EMBED_PARAMS, keyOrder, labUrl, urlProblems, viewById, viewCpus } from './url-state';

/** What an embed's page supplies; the chrome, autoplay and theme come from its parameters. */
export type EmbedHost = Omit<LabHost, 'controls' | 'autoplay'>;

export interface EmbedFrameProps {
  store: ParamStore;
  /** Bad or unknown parameters, in words. */
  problems: readonly string[];
  /** The folder of the full lab's index.html, for "Open in slablab". */
  labBase: URL;
  host: EmbedHost;
  /** An element outside the frame to theme too (embed.html's <html>, for the page around the frame). */
  themeRoot?: HTMLElement;
}

export function EmbedFrame({ store, problems, labBase, host, themeRoot }: EmbedFrameProps) {
  const values = useMemo(() => parseParams(EMBED_PARAMS, store.get).values, [store]);
  const view = viewById(values.view);
  const core = useCore();
  const theme = useResolvedTheme(values.theme);
  useEffect(() => {
    if (themeRoot) themeRoot.dataset.theme = theme;
  }, [themeRoot, theme]);
  const labHost = useMemo<LabHost>(() => ({ ...host, controls: values.controls, autoplay: values.autoplay }), [host, values.controls, values.autoplay]);
  return (
    <ThemeContext.Provider value={theme}>
      <div className="embed" data-theme={theme}>
        {values.controls !== 'none' && (
          <header className="embed-bar">
            <span className="embed-title">slablab</span>
            <CoreStatus core={core} cpus={viewCpus(view, store)} />
            <a href={labUrl(view, store, labBase)} target="_blank" rel="noopener">
              Open in slablab
            </a>
          </header>
        )}
        <UrlProblems problems={problems} />
        <CoreLoadAlert core={core} />
        <LabHostContext.Provider value={labHost}>
          <view.Component key={view.id} core={core} store={store} embedded={values.controls !== 'full'} />
        </LabHostContext.Provider>
      </div>
    </ThemeContext.Provider>
  );
}

const EMBED_KEYS = keyOrder(EMBED_PARAMS);

/** embed.html: the frame over the page's URL, driven by the page around the iframe (web/embed/parent-api.ts). */
export function Embed() {
  const store = useUrlStore(EMBED_KEYS);
  const [problems] = useState(() => urlProblems(window.location.search, EMBED_PARAMS, (get) => viewById(parseParams(EMBED_PARAMS, get).values.view)));
  const host = useParentApi(store, EMBED_PARAMS, viewById, parseParams(EMBED_PARAMS, store.get).values.view);
  return <EmbedFrame store={store} problems={problems} labBase={new URL(window.location.href)} host={host} themeRoot={document.documentElement} />;
}
