// requests.ts - checking what a request carries into the bridge worker.  A
// bad value is the caller's mistake, answered as a bad request that names the
// field and what it accepts: never a crash of the worker, never a NaN or an
// unknown name passed on to C.  The engine's handlers and every model adapter
// (web/<view>/worker.ts) check their fields with these.

/** The request was malformed; the bridge answers it with code 'bad-request'. */
export class BadRequest extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BadRequest';
  }
}

/** v if it is a whole number in min..max, else a BadRequest naming `name`. */
export function checkWhole(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new BadRequest(`${name} must be a whole number from ${min} to ${max}, got ${String(v)}`);
  return v;
}

/** v if it is one of `values`, else a BadRequest naming `name`. */
export function checkOneOf<T extends string>(name: string, v: unknown, values: readonly T[]): T {
  if (typeof v !== 'string' || !(values as readonly string[]).includes(v))
    throw new BadRequest(`${name} must be one of ${values.join(', ')}, got ${String(v)}`);
  return v as T;
}

/** v as a record, else a BadRequest naming `name` (the first check of a structured field). */
export function checkRecord(name: string, v: unknown): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new BadRequest(`${name} must be an object, got ${String(v)}`);
  return v as Record<string, unknown>;
}
