// use-url-state.ts - keeps UrlState and the address bar in step: changes are
// written back with history.replaceState (or pushState for a new page, so
// Back works), and Back/Forward re-read the URL.

import { useCallback, useEffect, useState } from 'react';
import { parseSearch, toSearch, type ParseResult, type UrlState } from './url-state';

export function useUrlState(keys: readonly (keyof UrlState)[]) {
  const [parsed, setParsed] = useState<ParseResult>(() => parseSearch(window.location.search));
  useEffect(() => {
    const onPop = () => setParsed(parseSearch(window.location.search));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const update = useCallback(
    (patch: Partial<UrlState>) => {
      setParsed((prev) => {
        const state = { ...prev.state, ...patch };
        const url = `${window.location.pathname}${toSearch(state, keys)}${window.location.hash}`;
        if (patch.page !== undefined && patch.page !== prev.state.page) window.history.pushState(null, '', url);
        else window.history.replaceState(null, '', url);
        return { state, problems: prev.problems };
      });
    },
    [keys],
  );
  return { ...parsed, update };
}
