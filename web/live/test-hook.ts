// test-hook.ts - what the live view shows, as data, for tests and the
// benchmark (scripts/live-bench.mjs): window.__slablabLive holds the paints
// (the newest event each summary drawn carried, on the kernel's clock, and
// the wall time of the frame that drew it; the last PAINTS of them) and the
// picked cache's latest agreement.

import type { Agreement } from './check-api';

export const PAINTS = 2000;

export interface LiveTestHook {
  /** sentWallMs: when the worker posted the summary (event-to-worker against worker-to-pixel). */
  paints: { eventNs: number; sentWallMs: number; paintWallMs: number }[];
  agreement: { cache: string; a: Agreement; events: number; lost: number; windowS: number } | null;
}

export function liveHook(): LiveTestHook {
  const w = window as unknown as { __slablabLive?: LiveTestHook };
  w.__slablabLive ??= { paints: [], agreement: null };
  return w.__slablabLive;
}
