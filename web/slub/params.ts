// params.ts - checking the numbers a request carries into the bridge worker:
// a bad one is the caller's mistake, answered as a bad request (never a crash
// of the worker, never a NaN passed on to C).

export class SlubBadRequest extends Error {}

/** v if it is a whole number in min..max, else a SlubBadRequest naming `name`. */
export function whole(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new SlubBadRequest(`${name} must be a whole number from ${min} to ${max}, got ${String(v)}`);
  return v;
}
