// LabCanvas.tsx - the host for a view's drawing.  React owns only the
// element; the view's layout is computed for the element's width (a
// ResizeObserver follows it) and its draw paints synchronously from data
// already fetched, on the next animation frame after anything changes, into a
// context scaled to CSS pixels (devicePixelRatio), with the colours of the
// theme the canvas is in (drawn again when the theme changes).  Clicks and,
// with the canvas focused, the arrow keys go through the view's hit test.
//
// Motion (step views): a new state does not replace the picture at once.
// For MOTION_MS the new frame is shown under the old one fading out, and
// each item the layout names (a slab, by its pfn) that moved glides from its
// old place to its new one.  The state is already the new one: a step never
// waits for the animation, and a step taken during one starts the next
// transition from whatever is on screen.  Only a new state moves (the
// motionKey the host passes, e.g. the snapshot); a repaint of the same one
// (a selection, a view's own animation frame) lands at once, as does
// everything under prefers-reduced-motion, the first paint, or a resize.

import { useContext, useEffect, useMemo, useRef, useState } from 'react';
import { canvasTheme, ThemeContext, type CanvasTheme } from './theme';

/** Something drawn that keeps its identity from one state to the next (a slab), in CSS pixels. */
export interface CanvasItem {
  key: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

declare global {
  interface Window {
    /** Set by the frame benchmarks (scripts/*frame-bench.mjs) before the page loads: views record paint times as performance measures. */
    __slablabPerfMarks?: boolean;
  }
}

export interface CanvasLayout {
  width: number;
  height: number;
  /** The items whose moves between states are animated. */
  items?: readonly CanvasItem[];
}

/** How long the motion between two states lasts. */
export const MOTION_MS = 300;

/** The reader asked for less motion (prefers-reduced-motion): views with animations of their own honour it too. */
export const reducedMotion = () => typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;

/** The items of `to` that moved since `from`, with both places. */
export function movedItems(from: readonly CanvasItem[] | undefined, to: readonly CanvasItem[] | undefined): { from: CanvasItem; to: CanvasItem }[] {
  if (!from || !to) return [];
  const before = new Map(from.map((i) => [i.key, i]));
  return to.flatMap((i) => {
    const b = before.get(i.key);
    return b && (b.x !== i.x || b.y !== i.y) ? [{ from: b, to: i }] : [];
  });
}

const ease = (t: number) => 1 - (1 - t) * (1 - t);
const lerp = (a: number, b: number, t: number) => a + (b - a) * t;

export interface LabCanvasProps<L extends CanvasLayout, H> {
  /** The layout for a width in CSS pixels (pass a memoised function: a new one lays out again). */
  layout: (width: number) => L;
  /** Paints everything (no clear before it: a view that covers the canvas saves the pixels). */
  draw: (ctx: CanvasRenderingContext2D, layout: L, colors: CanvasTheme) => void;
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
  /** The state drawn: a paint for a new one animates (a repaint of the same state, e.g. a selection, does not). Absent: no motion. */
  motionKey?: unknown;
}

const ARROWS: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };

export function LabCanvas<L extends CanvasLayout, H>({ layout: layoutFor, draw, hit, onPick, onMove, label, testId, className = 'lab-canvas', measure, motionKey }: LabCanvasProps<L, H>) {
  const ref = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(900);
  const layout = useMemo(() => layoutFor(width), [layoutFor, width]);
  const theme = useContext(ThemeContext);
  /** The layout of what is on screen (its items are where a motion starts), and the state it shows. */
  const onScreen = useRef<{ layout: L; key: unknown } | null>(null);

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
    let frame = requestAnimationFrame(() => {
      const t0 = performance.now();
      const dpr = window.devicePixelRatio || 1;
      const w = Math.round(layout.width * dpr);
      const h = Math.round(layout.height * dpr);
      const resized = canvas.width !== w || canvas.height !== h;
      const before = onScreen.current;
      onScreen.current = { layout, key: motionKey };
      if (motionKey === undefined || resized || !before || before.key === motionKey || reducedMotion()) {
        if (resized) {
          canvas.width = w;
          canvas.height = h;
        }
        ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        draw(ctx, layout, canvasTheme(canvas));
        if (measure) performance.measure(measure, { start: t0, end: performance.now() });
        return;
      }
      // The old picture (what is on screen, mid-motion or not) and the new one, then the frames between.
      const from = document.createElement('canvas');
      const next = document.createElement('canvas');
      from.width = next.width = w;
      from.height = next.height = h;
      from.getContext('2d')?.drawImage(canvas, 0, 0);
      const nctx = next.getContext('2d');
      if (!nctx) return;
      nctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      draw(nctx, layout, canvasTheme(canvas));
      if (measure) performance.measure(measure, { start: t0, end: performance.now() });
      const moves = movedItems(before.layout.items, layout.items);
      canvas.dataset.motion = 'on';
      const paint = (now: number) => {
        const t = Math.min(1, (now - t0) / MOTION_MS);
        const e = ease(t);
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.globalAlpha = 1;
        ctx.drawImage(next, 0, 0);
        if (t < 1) {
          ctx.globalAlpha = 1 - e;
          ctx.drawImage(from, 0, 0);
          ctx.globalAlpha = 1 - e * 0.7;
          for (const m of moves)
            ctx.drawImage(from, m.from.x * dpr, m.from.y * dpr, m.from.w * dpr, m.from.h * dpr, lerp(m.from.x, m.to.x, e) * dpr, lerp(m.from.y, m.to.y, e) * dpr, m.from.w * dpr, m.from.h * dpr);
          ctx.globalAlpha = 1;
          frame = requestAnimationFrame(paint);
        } else delete canvas.dataset.motion;
      };
      paint(performance.now());
    });
    return () => {
      cancelAnimationFrame(frame);
      delete canvas.dataset.motion;
    };
  }, [layout, draw, measure, theme, motionKey]);

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
