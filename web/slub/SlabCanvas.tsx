// SlabCanvas.tsx - the canvas that shows a SLUB snapshot.  React owns only the
// element; painting is imperative (render.ts), redone on the next animation
// frame after the snapshot, the overlay or the width changes.  Clicks and,
// when the canvas has focus, the arrow keys select objects and slabs.

import { useEffect, useMemo, useRef, useState } from 'react';
import { hitTest, layoutSnapshot, type Hit, type Layout } from './layout';
import { drawSnapshot, type Overlay } from './render';
import type { SlubSnapshot } from './snapshot';

export interface SlabCanvasProps {
  snapshot: SlubSnapshot;
  overlay: Overlay;
  showFull: boolean;
  compact?: boolean;
  label: string;
  onPick?: (hit: Hit | null, additive: boolean) => void;
  /** Arrow keys with focus on the canvas: dx = object, dy = slab. */
  onMove?: (dx: number, dy: number, layout: Layout) => void;
  /** Each paint's duration goes to the performance timeline as a 'slub-draw' measure. */
  measure?: boolean;
}

export function SlabCanvas({ snapshot, overlay, showFull, compact, label, onPick, onMove, measure }: SlabCanvasProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  const [width, setWidth] = useState(900);
  const layout = useMemo(
    () => layoutSnapshot(snapshot, compact === undefined ? { width, showFull } : { width, showFull, compact }),
    [snapshot, width, showFull, compact],
  );

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
      drawSnapshot(ctx, snapshot, layout, overlay);
      if (measure) performance.measure('slub-draw', { start: t0, end: performance.now() });
    });
    return () => cancelAnimationFrame(frame);
  }, [layout, snapshot, overlay, measure]);

  return (
    <canvas
      ref={ref}
      className="slub-canvas"
      style={{ width: '100%', height: layout.height }}
      role="img"
      aria-label={label}
      tabIndex={0}
      data-testid="slub-canvas"
      onClick={(e) => {
        const r = e.currentTarget.getBoundingClientRect();
        onPick?.(hitTest(layout, snapshot, e.clientX - r.left, e.clientY - r.top), e.shiftKey);
      }}
      onKeyDown={(e) => {
        const d: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
        const m = d[e.key];
        if (!m || !onMove) return;
        e.preventDefault();
        e.stopPropagation(); // the arrows step the view when the canvas does not have focus
        onMove(m[0], m[1], layout);
      }}
    />
  );
}
