// LabCanvas.tsx - the host for a view's drawing.  React owns only the
// element; the view's layout is computed for the element's width (a
// ResizeObserver follows it) and its draw paints synchronously from data
// already fetched, on the next animation frame after anything changes, into a
// context scaled to CSS pixels (devicePixelRatio).  Clicks and, with the
// canvas focused, the arrow keys go through the view's hit test.

import { useEffect, useMemo, useRef, useState } from 'react';

declare global {
  interface Window {
    /** Set by the frame benchmarks (scripts/*frame-bench.mjs) before the page loads: views record paint times as performance measures. */
    __slablabPerfMarks?: boolean;
  }
}

export interface CanvasLayout {
  width: number;
  height: number;
}

export interface LabCanvasProps<L extends CanvasLayout, H> {
  /** The layout for a width in CSS pixels (pass a memoised function: a new one lays out again). */
  layout: (width: number) => L;
  /** Paints everything (no clear before it: a view that covers the canvas saves the pixels). */
  draw: (ctx: CanvasRenderingContext2D, layout: L) => void;
  /** What is under (x, y), in CSS pixels. */
  hit?: (layout: L, x: number, y: number) => H | null;
  onPick?: (hit: H | null, additive: boolean) => void;
  /** Arrow keys with the canvas focused: dx = left/right, dy = up/down. */
  onMove?: (dx: number, dy: number, layout: L) => void;
  /** What the drawing shows, in words (canvas content is not readable). */
  label: string;
  testId?: string;
  className?: string;
  /** Each paint's duration goes to the performance timeline as a measure of this name. */
  measure?: string;
}

const ARROWS: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

export function LabCanvas<L extends CanvasLayout, H>({ layout: layoutFor, draw, hit, onPick, onMove, label, testId, className = 'lab-canvas', measure }: LabCanvasProps<L, H>) {
  const ref = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(900);
  const layout = useMemo(() => layoutFor(width), [layoutFor, width]);

  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    const ro = new ResizeObserver(() => setWidth(Math.max(320, Math.floor(canvas.clientWidth))));
    ro.observe(canvas);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const canvas = ref.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return;
    const frame = requestAnimationFrame(() => {
      const t0 = performance.now();
      const dpr = window.devicePixelRatio || 1;
      const w = Math.round(layout.width * dpr);
      const h = Math.round(layout.height * dpr);
      if (canvas.width !== w || canvas.height !== h) {
        canvas.width = w;
        canvas.height = h;
      }
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      draw(ctx, layout);
      if (measure) performance.measure(measure, { start: t0, end: performance.now() });
    });
    return () => cancelAnimationFrame(frame);
  }, [layout, draw, measure]);

  return (
    <canvas
      ref={ref}
      className={className}
      style={{ width: '100%', height: layout.height }}
      role="img"
      aria-label={label}
      tabIndex={onPick || onMove ? 0 : undefined}
      data-testid={testId}
      onClick={(e) => {
        if (!onPick || !hit) return;
        const r = e.currentTarget.getBoundingClientRect();
        onPick(hit(layout, e.clientX - r.left, e.clientY - r.top), e.shiftKey);
      }}
      onKeyDown={(e) => {
        const m = ARROWS[e.key];
        if (!m || !onMove) return;
        e.preventDefault();
        e.stopPropagation(); // the arrows step the view when the canvas does not have focus
        onMove(m[0], m[1], layout);
      }}
    />
  );
}
