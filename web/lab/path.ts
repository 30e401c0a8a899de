// path.ts - the path an operation took, from the events it emitted (the
// caption ends with it: "Path: slow path, refilled from the node partial
// list."): a view names the event kinds that tell a path, and an operation's
// path is each of those it met, said once, in the order it first met them.

import { EventKind, type SlEvent } from '../core/events.generated';

/**
 * A view's describe.path from its words for the event kinds that tell a
 * path.  Events inside an interrupt handler are left out (the handler is an
 * operation of its own); '' when no event tells a path (a flush, a tuning
 * write).
 */
export function eventPath(words: ReadonlyMap<number, string>): (events: readonly SlEvent[]) => string {
  return (events) => {
    const seen: string[] = [];
    let depth = 0;
    for (const e of events) {
      if (e.kind === EventKind.INTERRUPT_BEGIN) depth++;
      else if (e.kind === EventKind.INTERRUPT_END) depth = Math.max(0, depth - 1);
      if (depth > 0) continue;
      const w = words.get(e.kind);
      if (w && !seen.includes(w)) seen.push(w);
    }
    return seen.join(', ');
  };
}
