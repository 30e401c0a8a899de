// AnimatedCanvas.tsx - a pane drawn by its view with the view's own animation
// of a step (percpu's memmoves sliding): the overlay gets the animation
// clock's progress as `anim`, and only this component re-renders on the
// animation's frames (the page around it, timeline included, renders once
// per step).  Pane `lag` paints a new state `lag` frames after pane 0, so
// side-by-side panes repaint in different frames.

import { useEffect, useMemo, useState } from 'react';
import { useAnimationClock } from './animation-clock';
import type { CanvasLayout } from './LabCanvas';
import { ViewCanvas, type ViewCanvasProps } from './StepLab';

/** `value`, `frames` animation frames after it changes (at once for 0). */
export function useLagged<T>(value: T, frames: number): T {
  const [lagged, setLagged] = useState(value);
  useEffect(() => {
    if (frames === 0) return;
    let left = frames;
    let id = requestAnimationFrame(function tick() {
      if (--left > 0) id = requestAnimationFrame(tick);
      else setLagged(value);
    });
    return () => cancelAnimationFrame(id);
  }, [value, frames]);
  return frames === 0 ? value : lagged;
}

export interface AnimatedCanvasProps<Snap, L extends CanvasLayout, Hit, Overlay extends { anim: number }> extends Omit<ViewCanvasProps<Snap, L, Hit, Overlay>, 'overlay'> {
  overlay: Omit<Overlay, 'anim'>;
  /** Frames to wait before painting a new state (the pane's index). */
  lag: number;
  /** Animate this state (0 to 1 over `ms`), else show it settled (anim 1). */
  animate: boolean;
  /** A new value starts the animation again (the step). */
  animKey: unknown;
  ms: number;
}

export function AnimatedCanvas<Snap, L extends CanvasLayout, Hit, Overlay extends { anim: number }>({ lag, snap: newSnap, overlay: newOverlay, animate, animKey, ms, ...canvas }: AnimatedCanvasProps<Snap, L, Hit, Overlay>) {
  const { snap, overlay } = useLagged(useMemo(() => ({ snap: newSnap, overlay: newOverlay }), [newSnap, newOverlay]), lag);
  const anim = useAnimationClock(animKey, animate, ms);
  // The view's overlay is its own fields and the clock's progress.
  const o = useMemo(() => ({ ...overlay, anim }) as unknown as Overlay, [overlay, anim]);
  return <ViewCanvas {...canvas} snap={snap} overlay={o} />;
}
