// CanvasView.tsx - the host for imperative drawings (slab strips, CPU lanes,
// bitmaps).  React owns only this element; `draw` paints from plain data
// (typed arrays, decoded events) into a 2D context already scaled to CSS
// pixels, on the next animation frame after a change or a resize.  A view
// that animates passes `animate` and is redrawn every frame.

import { useEffect, useRef } from 'react';

export type DrawFn = (ctx: CanvasRenderingContext2D, width: number, height: number, time: number) => void;

export interface CanvasViewProps {
  draw: DrawFn;
  height: number;
  /** Accessible description of what the drawing shows (canvas content is not readable). */
  label: string;
  animate?: boolean;
  testId?: string;
}

export function CanvasView({ draw, height, label, animate = false, testId }: CanvasViewProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const canvas = ref.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return;
    let frame = 0;
    const paint = (time: number) => {
      const dpr = window.devicePixelRatio || 1;
      const w = canvas.clientWidth;
      if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(height * dpr)) {
        canvas.width = Math.round(w * dpr);
        canvas.height = Math.round(height * dpr);
      }
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      ctx.clearRect(0, 0, w, height);
      draw(ctx, w, height, time);
      if (animate) frame = requestAnimationFrame(paint);
    };
    frame = requestAnimationFrame(paint);
    const ro = new ResizeObserver(() => {
      cancelAnimationFrame(frame);
      frame = requestAnimationFrame(paint);
    });
    ro.observe(canvas);
    return () => {
      cancelAnimationFrame(frame);
      ro.disconnect();
    };
  }, [draw, height, animate]);
  return (
    <canvas ref={ref} className="canvas-view" style={{ height }} role="img" aria-label={label} data-testid={testId} />
  );
}
