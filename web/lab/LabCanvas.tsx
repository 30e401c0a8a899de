// LabCanvas.tsx - the host for a view's drawing.  React owns only the
// element; the view's layout is computed for the element's width (a
// ResizeObserver follows it) and its draw paints synchronously from data
// already fetched, on the next animation frame after anything changes, into a
// context scaled to CSS pixels (devicePixelRatio), with the colours of the
// theme the canvas is in (drawn again when the theme changes).  Clicks and,
// with the canvas focused, the arrow keys go through the view's hit test.
//
// Motion (step views): a new state does not replace the picture at once.
// For MOTION_MS the new frame is composited with the old picture (motion.ts:
// the old one fading out, each item the layout names that moved gliding from
// its old place to its new one, even when the drawing changed height, with a
// tint flash on what moved or arrived).  The state is already the new one: a
// step never waits for the animation; a step taken during one starts the
// next transition from whatever is on screen (the old tween is dropped).
// Only a new state moves (the motionKey the host passes, e.g. the snapshot);
// a repaint of the same one (a selection, a view's own animation frame)
// repaints the new frame under the transition under way.  Under
// prefers-reduced-motion the transition is a short plain cross-fade.
//
// The height eases too (motion.ts heightAt): during a transition the element's
// height goes from the old to the new one (the backing store, as tall as the
// taller of the two, is cropped at the bottom: object-fit), so the page below
// slides instead of jumping; under reduced motion the height is set at once.
//
// The test hook: each finished transition writes on the canvas element how
// many frames it composited (data-motion-frames), on how many of them the
// height was between the old and the new (data-motion-resized), how many items glided
// (data-motion-moved), how long it lasted (data-motion-ms), and counts the
// transitions (data-motion-count).  A layout's `figure` goes on it too, and
// its `alignedRows` (data-rows), the rows side-by-side panes line up.
//
// Keys: in an embedded figure (host controls other than full) Left and Right
// are left to the lab (Back, Step); Up and Down still move the selection.

import { useContext, useEffect, useMemo, useRef, useState } from 'react';
import type { Row } from './align';
import { useLabHost } from './host';
import { MOTION_MS, movedItems, Transition, type CanvasItem } from './motion';
import { canvasTheme, ThemeContext, type CanvasTheme } from './theme';

export { MOTION_MS, movedItems, type CanvasItem };

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
  /** Figures about the drawing for the tests (the slot size, the lanes drawn), written on the canvas as data-figure-*. */
  figure?: Readonly<Record<string, number>>;
  /** The rows side-by-side panes line up (align.ts), written on the canvas as data-rows ("key@y|..."). */
  alignedRows?: readonly Row[];
}

/** The reader asked for less motion (prefers-reduced-motion): views with animations of their own honour it too. */
export const reducedMotion = () => typeof matchMedia === 'function' && matchMedia('(prefers-reduced-motion: reduce)').matches;

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
  // In an embedded figure Left and Right step the lab (its shortcuts), even with the canvas focused.
  const stepKeys = (useLabHost().controls ?? 'full') !== 'full';
  /** The layout of what is on screen (its items are where a motion starts), and the state it shows. */
  const onScreen = useRef<{ layout: L; key: unknown } | null>(null);
  /** The new frame, drawn whole off screen (the transition composites it), and the transition under way. */
  const next = useRef<HTMLCanvasElement | null>(null);
  const motion = useRef<{ t: Transition; frame: number } | null>(null);

  useEffect(() => {
    const canvas = ref.current;
    if (!canvas) return;
    const ro = new ResizeObserver(() => setWidth(Math.max(280, Math.floor(canvas.clientWidth))));
    ro.observe(canvas);
    return () => ro.disconnect();
  }, []);

  // A transition outlives the paints under it; it stops when it ends or the canvas goes.
  useEffect(
    () => () => {
      if (motion.current) cancelAnimationFrame(motion.current.frame);
      motion.current = null;
    },
    [],
  );

  useEffect(() => {
    const canvas = ref.current;
    const ctx = canvas?.getContext('2d');
    if (!canvas || !ctx) return;
    const frame = requestAnimationFrame(() => {
      const t0 = performance.now();
      const dpr = window.devicePixelRatio || 1;
      const w = Math.round(layout.width * dpr);
      const h = Math.round(layout.height * dpr);
      const before = onScreen.current;
      const moves = motionKey !== undefined && before !== null && before.key !== motionKey;
      // The old picture (what is on screen, mid-motion or not), before the canvas is resized.
      let from: HTMLCanvasElement | null = null;
      if (moves && canvas.width > 0 && canvas.height > 0) {
        from = document.createElement('canvas');
        from.width = canvas.width;
        from.height = canvas.height;
        from.getContext('2d')?.drawImage(canvas, 0, 0);
      }
      /** The backing store's size in device pixels (a change clears it). */
      const resize = (cw: number, ch: number) => {
        if (canvas.width === cw && canvas.height === ch) return;
        canvas.width = cw;
        canvas.height = ch;
      };
      // A transition sizes the canvas each frame (its height eases to the new one).
      if (!from && !motion.current) resize(w, h);
      onScreen.current = { layout, key: motionKey };
      for (const [k, v] of Object.entries(layout.figure ?? {})) canvas.dataset[`figure${k[0]?.toUpperCase()}${k.slice(1)}`] = String(v);
      if (layout.alignedRows) canvas.dataset.rows = layout.alignedRows.map((r) => `${r.key}@${r.y}`).join('|');
      const colors = canvasTheme(canvas);
      if (motionKey === undefined) {
        // No motion (a free run repaints every frame): straight onto the canvas.
        resize(w, h);
        ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        draw(ctx, layout, colors);
        if (measure) performance.measure(measure, { start: t0, end: performance.now() });
        return;
      }
      const off = next.current ?? (next.current = document.createElement('canvas'));
      if (off.width !== w || off.height !== h) {
        off.width = w;
        off.height = h;
      }
      const octx = off.getContext('2d');
      if (!octx) return;
      octx.setTransform(dpr, 0, 0, dpr, 0, 0);
      draw(octx, layout, colors);
      if (measure) performance.measure(measure, { start: t0, end: performance.now() });
      if (from) {
        // A new state: the old tween is dropped, the new one starts from the pixels on screen.
        if (motion.current) cancelAnimationFrame(motion.current.frame);
        // The height starts from what is on screen (mid-transition: the height it had reached).
        // (The backing store still has that height: React has already set the element's style to the new one.)
        const shownH = from.height / dpr;
        const t = new Transition(t0, from, before?.layout.items, reducedMotion(), shownH);
        const running = { t, frame: 0, resized: 0 };
        motion.current = running;
        const tick = (now: number) => {
          if (motion.current !== running) return;
          const shown = onScreen.current?.layout;
          const target = next.current;
          if (!shown || !target) return;
          const r = window.devicePixelRatio || 1;
          // The backing store keeps the taller of the two heights until the end (one resize, not
          // one a frame); the element's height eases and crops it (object-fit, top-aligned).
          const done = t.progress(now) >= 1;
          const cssH = done ? shown.height : t.heightAt(now, shown.height);
          resize(Math.round(shown.width * r), Math.round((done ? shown.height : Math.max(shown.height, t.fromHeight ?? 0)) * r));
          canvas.style.height = `${cssH}px`;
          if (cssH !== shown.height && cssH !== t.fromHeight) running.resized++;
          ctx.setTransform(1, 0, 0, 1, 0, 0);
          ctx.clearRect(0, 0, canvas.width, canvas.height);
          if (t.paint(ctx, target, shown.items, r, now)) running.frame = requestAnimationFrame(tick);
          else {
            motion.current = null;
            canvas.style.height = `${shown.height}px`;
            canvas.dataset.motionResized = String(running.resized);
            canvas.dataset.motionFrames = String(t.frames);
            canvas.dataset.motionMoved = String(movedItems(t.fromItems, shown.items).length);
            canvas.dataset.motionMs = String(t.duration);
            canvas.dataset.motionCount = String(Number(canvas.dataset.motionCount ?? 0) + 1);
            delete canvas.dataset.motion;
          }
        };
        canvas.dataset.motion = 'on';
        tick(t0);
        return;
      }
      // The same state (or the first paint): the new frame under whatever transition runs.
      if (motion.current) motion.current.t.paint(ctx, off, layout.items, dpr, t0);
      else {
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.drawImage(off, 0, 0);
      }
    });
    return () => cancelAnimationFrame(frame);
  }, [layout, draw, measure, theme, motionKey]);

  return (
    <canvas
      ref={ref}
      className={className}
      // The backing store is drawn at its own scale from the top (a transition's easing height crops it).
      style={{ width: '100%', height: layout.height, objectFit: 'cover', objectPosition: '0 0' }}
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
        if (!m || !onMove || (stepKeys && m[0] !== 0)) return;
        e.preventDefault();
        e.stopPropagation(); // the arrows step the view when the canvas does not have focus
        onMove(m[0], m[1], layout);
      }}
    />
  );
}
