// url-state.ts - the page's state lives in its URL query, so any moment can
// be shared as a link.  Each parameter has one spec: how to parse it, its
// default, how to write it.  Parsing never throws: a bad value yields the
// default plus a message that names the parameter, the value and what was
// expected, which the shell shows.
//
// Adding a parameter (a view's step, a scenario name, ...): add a spec to
// PARAMS with a parser from the helpers below; its value appears in
// UrlState, is validated on load and written back by toSearch().

export const PAGES = ['lab', 'benchmarks', 'about'] as const;
export type Page = (typeof PAGES)[number];

export const EMBED_VIEWS = ['selftest'] as const;
export type EmbedView = (typeof EMBED_VIEWS)[number];

type Parsed<T> = { ok: true; value: T } | { ok: false; expected: string };

interface ParamSpec<T> {
  parse(raw: string): Parsed<T>;
  fallback: T;
}

function oneOf<T extends string>(values: readonly T[], fallback: T): ParamSpec<T> {
  return {
    parse: (raw) =>
      (values as readonly string[]).includes(raw)
        ? { ok: true, value: raw as T }
        : { ok: false, expected: `one of ${values.join(', ')}` },
    fallback,
  };
}

function wholeNumber(min: number, max: number, fallback: number): ParamSpec<number> {
  return {
    parse: (raw) => {
      const v = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
      return Number.isInteger(v) && v >= min && v <= max
        ? { ok: true, value: v }
        : { ok: false, expected: `a whole number from ${min} to ${max}` };
    },
    fallback,
  };
}

export const MAX_CPUS = 8;

const PARAMS = {
  page: oneOf(PAGES, 'lab'),
  view: oneOf(EMBED_VIEWS, 'selftest'),
  cpus: wholeNumber(1, MAX_CPUS, 4),
  iters: wholeNumber(1, 1_000_000, 100_000),
  seed: wholeNumber(0, 0xffffffff, 1),
};

export type UrlState = { [K in keyof typeof PARAMS]: (typeof PARAMS)[K]['fallback'] };
type Key = keyof UrlState;

export const DEFAULT_STATE: UrlState = Object.fromEntries(
  Object.entries(PARAMS).map(([k, spec]) => [k, spec.fallback]),
) as UrlState;

export interface ParseResult {
  state: UrlState;
  /** One message per bad or unknown parameter, for the user. */
  problems: string[];
}

export function parseSearch(search: string): ParseResult {
  const q = new URLSearchParams(search);
  const state: Record<string, unknown> = { ...DEFAULT_STATE };
  const problems: string[] = [];
  for (const [name, raw] of q) {
    if (!(name in PARAMS)) {
      problems.push(`Unknown URL parameter "${name}" was ignored (known: ${Object.keys(PARAMS).join(', ')}).`);
      continue;
    }
    const spec = PARAMS[name as Key] as ParamSpec<unknown>;
    const r = spec.parse(raw);
    if (r.ok) state[name] = r.value;
    else
      problems.push(
        `URL parameter ${name}=${JSON.stringify(raw)} is not valid: expected ${r.expected}. Using ${String(spec.fallback)}.`,
      );
  }
  return { state: state as UrlState, problems };
}

/** The query string for `state`, listing only `keys` that differ from their default. */
export function toSearch(state: UrlState, keys: readonly Key[]): string {
  const q = new URLSearchParams();
  for (const k of keys) if (state[k] !== DEFAULT_STATE[k]) q.set(k, String(state[k]));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Parameters each entry point writes back to its URL. */
export const APP_KEYS: readonly Key[] = ['page', 'cpus', 'iters', 'seed'];
export const EMBED_KEYS: readonly Key[] = ['view', 'cpus', 'iters', 'seed'];
