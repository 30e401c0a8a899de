// session-bench.ts - the benchmarks every model's replay.bench.ts runs on a
// long session (vitest bench only): how long it takes to load, to answer
// Back near the end (a replay from a fresh world), and to step forward
// (from the world the session keeps).  Prints figures; each view's bench
// file builds its script and names what a stop is.

import { bench } from 'vitest';
import type { Session } from './session';

export interface SessionBenchWords {
  /** What one move goes by ("step", "operation"). */
  unit: string;
  /** What a load does besides running the script ("learn every stop and event"). */
  load: string;
  /** Back's runs (each a replay of the whole script). */
  backIterations: number;
}

/**
 * Benchmarks `open(world, script)`: its load, then Back and Step forward on
 * `session` (one open on the same world and script) between `moments`, its
 * stop indices one move apart.
 */
export function benchSession(open: (world: unknown, script: unknown) => Session, world: unknown, script: unknown, session: Session, moments: readonly number[], words: SessionBenchWords): void {
  let back = moments.length - 1;
  let forward = 0;
  bench(`load (${words.load})`, () => {
    const s = open(world, script);
    s.load();
    s.dispose();
  }, { iterations: 3, warmupIterations: 1 });
  // Back, Back, ... from the end: each an earlier moment, replayed from a fresh world.
  bench(`Back by one ${words.unit} near the end (a replay from the start)`, () => {
    back = back > moments.length - 50 ? back - 1 : moments.length - 2;
    session.at(moments[back] ?? 0);
  }, { iterations: words.backIterations });
  // Step, Step, ... from the start: each only runs the next move on the kept world.
  bench(`Step forward by one ${words.unit} (from the kept world)`, () => {
    forward = forward < moments.length - 1 ? forward + 1 : 1;
    session.at(moments[forward] ?? 0);
  }, { iterations: 2000 });
}
