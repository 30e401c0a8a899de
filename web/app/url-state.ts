// url-state.ts - the shell's own parameters and what the page says about a
// URL when it loads.  The page's state lives in its URL query (one store:
// web/lab/url-store.ts), so any moment can be shared as a link.  The shell
// reads `page` and `mode` (the lab's view) or, in the embed, `view`; each
// view reads its own keys (web/views.ts lists the views and their params).
// Parsing never throws: a bad value yields the default plus a message that
// names the parameter, the value and what was expected.

import { CONTROLS } from '../lab/host';
import { flag, formatParams, oneOf, parseParams, type ParamSpecs, type ParamStore } from '../lab/params';
import { THEME_PARAM } from '../lab/theme';
import type { LabViewEntry } from '../lab/view';
import { VIEWS } from '../views';

export const PAGES = ['lab', 'benchmarks', 'about'] as const;
export type Page = (typeof PAGES)[number];

const ids = (views: readonly LabViewEntry[]) => views.map((v) => v.id);
const firstView: LabViewEntry = VIEWS[0] ?? ((): never => {
  throw new Error('web/views.ts lists no view');
})();

/** The full page's keys: which page, and which view the Lab shows. */
export const APP_PARAMS = { page: oneOf(PAGES, 'lab'), mode: oneOf(ids(VIEWS), firstView.id) };
const embeddable = VIEWS.filter((v) => v.embeddable);
/**
 * An embed's own keys (embed.html's query, <slab-lab>'s attributes): which
 * view, how much chrome, whether to play once loaded, and the theme.
 */
export const EMBED_PARAMS = {
  view: oneOf(ids(embeddable), embeddable[0]?.id ?? firstView.id),
  controls: oneOf(CONTROLS, 'minimal'),
  autoplay: flag(false),
  theme: THEME_PARAM,
};

/** Every key any view reads, after `shell`'s: the order URLs are written in. */
export function keyOrder(shell: ParamSpecs): string[] {
  return [...new Set([...Object.keys(shell), ...VIEWS.flatMap((v) => Object.keys(v.params))])];
}

/** The view a shell value names (the first when none matches). */
export function viewById(id: string): LabViewEntry {
  return VIEWS.find((v) => v.id === id) ?? firstView;
}

/**
 * What is wrong with the URL as loaded: bad values of the shell's keys and
 * of the view on screen, and keys no view reads.
 */
export function urlProblems(search: string, shell: ParamSpecs, view: (get: (k: string) => string | null) => LabViewEntry): string[] {
  const q = new URLSearchParams(search);
  const get = (k: string) => q.get(k);
  const known = keyOrder(shell);
  const unknown = [...new Set(q.keys())].filter((k) => !known.includes(k)).map((k) => `Unknown URL parameter "${k}" was ignored (known: ${known.join(', ')}).`);
  return [...parseParams(shell, get).problems, ...parseParams(view(get).params, get).problems, ...unknown];
}

/** The CPU count the view on screen uses, if it has a `cpus` parameter (the header's badge shows it). */
export function viewCpus(view: LabViewEntry, store: ParamStore): number | null {
  const cpus = parseParams(view.params, store.get).values.cpus;
  return typeof cpus === 'number' ? cpus : null;
}

/** The same view and state in the full lab, whose index.html is in the folder `base`. */
export function labUrl(view: LabViewEntry, store: ParamStore, base: URL): string {
  const q = new URLSearchParams();
  const raw = { ...formatParams(APP_PARAMS, { page: 'lab', mode: view.id }), ...formatParams(view.params, parseParams(view.params, store.get).values) };
  for (const [k, v] of Object.entries(raw)) if (v !== null) q.set(k, v);
  const url = new URL('.', base);
  url.search = q.toString();
  return url.toString();
}
