// motion.ts - the motion between two states of a drawing (LabCanvas's
// transitions), kept apart from React so that it can be tested and reused.
//
// A transition starts from the pixels on screen (whatever they are: a
// transition cut short by a new step starts from its own last frame, the
// old tween is dropped) and the items of the layout they were drawn from.
// Each frame composites, in device pixels:
//   1. the new frame, whole;
//   2. the old picture over it, fading out (so what went away fades);
//   3. each item the layout names (a slab, a sheaf, by key) that is in both
//      states at different places: its new pixels travelling from its old
//      place to its new one (samwho's moveToSlot: ~0.5 s, power4.out), with
//      a tint flash over it (up in 0.15 s, back in the rest);
//   4. each item that is new: the tint flash where it landed.
// The canvas may have changed size in between (a slab moved to a list that
// grows the drawing): the old pixels are drawn at their own size, so the
// glide is the same, and the canvas's height itself eases from the old to
// the new one with the same curve (heightAt: the page below it slides
// rather than jumps; the drawing is revealed or cut off at the bottom as it
// goes).  Under prefers-reduced-motion: a short plain cross-fade (no glide,
// no flash) and the height set at once, as samwho's reduced-motion tweens.

/** Something drawn that keeps its identity from one state to the next (a slab), in CSS pixels. */
export interface CanvasItem {
  key: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

/** How long the motion between two states lasts (samwho's moveToSlot: 0.5 s). */
export const MOTION_MS = 500;
/** The same under prefers-reduced-motion: a short plain cross-fade. */
export const REDUCED_MOTION_MS = 150;
/** The tint the flash lays over what moved or arrived. */
export const FLASH_COLOR = '#38bdf8';

/** power4.out: fast off the mark, settling gently. */
export const easeOut = (t: number) => 1 - (1 - t) ** 4;
const lerp = (a: number, b: number, t: number) => a + (b - a) * t;

/** The flash's strength at progress t (0..1): up to its peak by 30 %, back to 0 at the end. */
export function flash(t: number): number {
  if (t <= 0 || t >= 1) return 0;
  return t < 0.3 ? t / 0.3 : (1 - t) / 0.7;
}

/** The items of `to` that moved since `from`, with both places. */
export function movedItems(from: readonly CanvasItem[] | undefined, to: readonly CanvasItem[] | undefined): { from: CanvasItem; to: CanvasItem }[] {
  if (!from || !to) return [];
  const before = new Map(from.map((i) => [i.key, i]));
  return to.flatMap((i) => {
    const b = before.get(i.key);
    return b && (b.x !== i.x || b.y !== i.y) ? [{ from: b, to: i }] : [];
  });
}

/** The items of `to` that `from` did not have (none when there was no `from`: a first paint flashes nothing). */
export function newItems(from: readonly CanvasItem[] | undefined, to: readonly CanvasItem[] | undefined): CanvasItem[] {
  if (!from || !to) return [];
  const before = new Set(from.map((i) => i.key));
  return to.filter((i) => !before.has(i.key));
}

/** Where a moving item is drawn at eased progress e. */
export function glidePlace(m: { from: CanvasItem; to: CanvasItem }, e: number): { x: number; y: number } {
  return { x: lerp(m.from.x, m.to.x, e), y: lerp(m.from.y, m.to.y, e) };
}

/** A transition under way: started at t0 from the `from` pixels and `fromItems`. */
export class Transition {
  /** Frames composited before the end (the test hook's count). */
  frames = 0;
  constructor(
    readonly t0: number,
    readonly from: HTMLCanvasElement,
    readonly fromItems: readonly CanvasItem[] | undefined,
    readonly reduced: boolean,
    /** The height of the drawing on screen when the transition started, in CSS pixels (absent: the height does not animate). */
    readonly fromHeight?: number,
  ) {}

  /** The canvas's height (CSS pixels) at `now` on its way to `toHeight`: eased like the glide; at once under reduced motion. */
  heightAt(now: number, toHeight: number): number {
    if (this.reduced || this.fromHeight === undefined) return toHeight;
    return Math.round(lerp(this.fromHeight, toHeight, easeOut(this.progress(now))));
  }

  get duration(): number {
    return this.reduced ? REDUCED_MOTION_MS : MOTION_MS;
  }

  /** Progress 0..1 at `now`. */
  progress(now: number): number {
    return Math.max(0, Math.min(1, (now - this.t0) / this.duration));
  }

  /**
   * Composites the frame at `now` onto `ctx` (identity transform, device pixels) from the new
   * frame `next` and the new items; returns false once the transition is over (the new frame alone drawn).
   */
  paint(ctx: CanvasRenderingContext2D, next: HTMLCanvasElement, toItems: readonly CanvasItem[] | undefined, dpr: number, now: number): boolean {
    const t = this.progress(now);
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.globalAlpha = 1;
    ctx.drawImage(next, 0, 0);
    if (t >= 1) return false;
    this.frames++;
    if (this.reduced) {
      ctx.globalAlpha = 1 - t;
      ctx.drawImage(this.from, 0, 0);
      ctx.globalAlpha = 1;
      return true;
    }
    const e = easeOut(t);
    ctx.globalAlpha = 1 - e;
    ctx.drawImage(this.from, 0, 0);
    const f = flash(t);
    const tint = (x: number, y: number, w: number, h: number) => {
      if (f <= 0) return;
      ctx.globalAlpha = 0.45 * f;
      ctx.fillStyle = FLASH_COLOR;
      ctx.fillRect(x * dpr, y * dpr, w * dpr, h * dpr);
    };
    for (const m of movedItems(this.fromItems, toItems)) {
      const at = glidePlace(m, e);
      const sw = Math.min(m.to.w * dpr, next.width - m.to.x * dpr);
      const sh = Math.min(m.to.h * dpr, next.height - m.to.y * dpr);
      if (sw <= 0 || sh <= 0) continue;
      ctx.globalAlpha = 1;
      ctx.drawImage(next, m.to.x * dpr, m.to.y * dpr, sw, sh, at.x * dpr, at.y * dpr, sw, sh);
      tint(at.x, at.y, m.to.w, m.to.h);
    }
    for (const n of newItems(this.fromItems, toItems)) tint(n.x, n.y, n.w, n.h);
    ctx.globalAlpha = 1;
    return true;
  }
}
