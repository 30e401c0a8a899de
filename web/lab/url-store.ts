// url-store.ts - the page's parameters live in its URL query, so any moment
// can be shared as a link.  useUrlStore keeps a ParamStore and the address
// bar in step: changes are written back with history.replaceState (or
// pushState when asked, for a new page, so Back works), and Back/Forward
// re-read the URL.  Keys are written in one fixed order (the shell's first,
// then the views'), and keys nobody declared are dropped on the first write.
//
// useParams reads a view's typed values from any ParamStore.

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { formatParams, parseParams, type ParamSpecs, type ParamStore, type ParamValues } from './params';

/** The URL as a store; a new object whenever the URL changes (so it can be a dependency). */
export function useUrlStore(keyOrder: readonly string[]): ParamStore {
  const [search, setSearch] = useState(() => window.location.search);
  const current = useRef(search);
  useEffect(() => {
    const onPop = () => setSearch((current.current = window.location.search));
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  const set = useCallback(
    (patch: Readonly<Record<string, string | null>>, push = false) => {
      const q = new URLSearchParams(current.current);
      const parts: string[] = [];
      for (const k of keyOrder) {
        const v = k in patch ? patch[k] : q.get(k);
        // Commas (side-by-side lists) stay readable: a query may hold them as they are.
        if (v !== null && v !== undefined) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(v).replace(/%2C/g, ',')}`);
      }
      const query = parts.length ? `?${parts.join('&')}` : '';
      const url = `${window.location.pathname}${query}${window.location.hash}`;
      if (push) window.history.pushState(null, '', url);
      else window.history.replaceState(null, '', url);
      setSearch((current.current = query));
    },
    [keyOrder],
  );
  return useMemo(() => {
    const q = new URLSearchParams(search);
    return { get: (k: string) => q.get(k), set };
  }, [search, set]);
}

/** A view's values from `store`, and a typed update that writes only what differs from the defaults. */
export function useParams<P extends ParamSpecs>(specs: P, store: ParamStore): { values: ParamValues<P>; update: (patch: Partial<ParamValues<P>>) => void } {
  const values = useMemo(() => parseParams(specs, store.get).values, [specs, store]);
  const update = useCallback((patch: Partial<ParamValues<P>>) => store.set(formatParams(specs, patch)), [specs, store]);
  return { values, update };
}
