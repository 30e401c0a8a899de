// params.ts - a view's parameters (URL query keys today, attributes of an
// element tomorrow): one spec per key says how to read its text, how to write
// it back, and its default.  Every key is read on its own, so one bad value
// costs only itself: it yields the default plus a message that names the
// parameter, the value and what it accepts.  The shell's keys (page, mode,
// view) and every view's keys use these same few value parsers.

export type Parsed<T> = { ok: true; value: T } | { ok: false; expected: string };

export interface ParamSpec<T> {
  parse(raw: string): Parsed<T>;
  /** The text parse reads back (method syntax: a spec of T is a spec of unknown). */
  format(value: T): string;
  fallback: T;
}

export type ParamSpecs = Readonly<Record<string, ParamSpec<unknown>>>;
export type ParamValues<P extends ParamSpecs> = { [K in keyof P]: P[K]['fallback'] };

/** Where raw parameter values live: the page's URL (url-store.ts) or, for an element, its attributes. */
export interface ParamStore {
  get(key: string): string | null;
  /** Sets raw values (null removes a key); `push` records a new history entry (a new page, so Back works). */
  set(patch: Readonly<Record<string, string | null>>, push?: boolean): void;
}

export function oneOf<T extends string>(values: readonly T[], fallback: T): ParamSpec<T> {
  return {
    parse: (raw) => ((values as readonly string[]).includes(raw) ? { ok: true, value: raw as T } : { ok: false, expected: `one of ${values.join(', ')}` }),
    format: String,
    fallback,
  };
}

export function whole(min: number, max: number, fallback: number): ParamSpec<number> {
  return {
    parse: (raw) => {
      const v = /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
      return v >= min && v <= max ? { ok: true, value: v } : { ok: false, expected: `a whole number from ${min} to ${max}` };
    },
    format: String,
    fallback,
  };
}

/** A boolean attribute: present ("" or "true") is true, "false" is false. */
export function flag(fallback: boolean): ParamSpec<boolean> {
  return {
    parse: (raw) => (raw === '' || raw === 'true' ? { ok: true, value: true } : raw === 'false' ? { ok: true, value: false } : { ok: false, expected: 'present (or "true"), or "false"' }),
    format: (v) => (v ? 'true' : 'false'),
    fallback,
  };
}

/**
 * One value of `values`, or a comma list of up to `max` different ones (a
 * view shows one pane per value, side by side).
 */
export function listOf<T extends string>(values: readonly T[], fallback: readonly T[], max: number): ParamSpec<readonly T[]> {
  const expected = `one of ${values.join(', ')}, or a comma list of up to ${max} different ones`;
  return {
    parse: (raw) => {
      const items = raw.split(',');
      const ok = items.length <= max && new Set(items).size === items.length && items.every((x) => (values as readonly string[]).includes(x));
      return ok ? { ok: true, value: items as T[] } : { ok: false, expected };
    },
    format: (v) => v.join(','),
    fallback,
  };
}

/** Free text that `check` accepts (it returns what is wrong, or null). */
export function text(check: (raw: string) => string | null, fallback: string): ParamSpec<string> {
  return {
    parse: (raw) => {
      const wrong = check(raw);
      return wrong === null ? { ok: true, value: raw } : { ok: false, expected: wrong };
    },
    format: String,
    fallback,
  };
}

/**
 * Reads every key of `specs` from `get`; a bad value gives the default and a
 * message (`noun` names where values come from: "URL parameter").
 */
export function parseParams<P extends ParamSpecs>(specs: P, get: (key: string) => string | null, noun = 'URL parameter'): { values: ParamValues<P>; problems: string[] } {
  const values: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, spec] of Object.entries(specs)) {
    const raw = get(name);
    const r = raw === null ? null : spec.parse(raw);
    values[name] = r?.ok ? r.value : spec.fallback;
    if (r && !r.ok) problems.push(`${noun} ${name}=${JSON.stringify(raw)} is not valid: expected ${r.expected}. Using ${spec.format(spec.fallback)}.`);
  }
  return { values: values as ParamValues<P>, problems };
}

/** The raw form of `patch`: a value equal to its default is removed (null), so links stay short. */
export function formatParams<P extends ParamSpecs>(specs: P, patch: Partial<ParamValues<P>>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [name, value] of Object.entries(patch)) {
    const spec = specs[name];
    if (!spec || value === undefined) continue;
    const raw = spec.format(value);
    out[name] = raw === spec.format(spec.fallback) ? null : raw;
  }
  return out;
}
