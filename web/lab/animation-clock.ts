// animation-clock.ts - the clock a view's own animation runs on (SLAB's
// objects flying to where a step put them, percpu's memmoves sliding): 0 to
// 1 over `ms` after `key` changes, one value per animation frame.

import { useEffect, useState } from 'react';

/** 0 to 1 over `ms` milliseconds after `key` changes; 1 at once (and throughout) when `on` is false. */
export function useAnimationClock(key: unknown, on: boolean, ms: number): number {
  const [t, setT] = useState(1);
  useEffect(() => {
    if (!on) {
      setT(1);
      return;
    }
    const t0 = performance.now();
    let frame = requestAnimationFrame(function tick(now) {
      const v = Math.min(1, Math.max(0, (now - t0) / ms));
      setT(v);
      if (v < 1) frame = requestAnimationFrame(tick);
    });
    setT(0);
    return () => cancelAnimationFrame(frame);
  }, [key, on, ms]);
  return t;
}
