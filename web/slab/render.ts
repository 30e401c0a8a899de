// render.ts - paints a SLAB snapshot from its layout (layout.ts): the cache
// sections, the array strips (entries coloured by where their object is, the
// batchcount tick, the top marked), the node gauge and list thumbnails, and
// each slab drawn to scale with its objects coloured by place (places.ts),
// its colour offset hatched, its freelist array beneath with the `active`
// cursor and a line to where the array lives.  Over it: the selection, and
// the step's moves (moves.ts), flying from where they were to where they are
// while `progress` < 1, then outlined where they landed.

import { GAUGE_H, hitObject, inPageRect, objectRect, positionRect, slotRect, thumbRect, type Focus, type Hit, type Layout, type Rect } from './layout';
import type { Move } from './moves';
import { objKey, Place, placesOf, type PlaceKind } from './places';
import type { SlabCacheState, SlabSnapshot } from './snapshot';
import type { CanvasTheme } from '../lab/theme';

/** The colours of what a SLAB drawing holds, the same in both themes (the surfaces come from the theme: CanvasTheme). */
export const COLORS = {
  colourOffset: '#3a4560',
  leftover: '#a8a29e',
  padding: '#444f66',
  taken: '#3a4256',
  moved: '#22d3ee',
  partial: '#f59e0b',
  full: '#5d6b86',
  free: '#22c55e',
} as const;

/** Colour of each place (Place order). */
export const PLACE_COLORS = ['#f59e0b', '#a78bfa', '#3b82f6', '#14b8a6', '#5d6b86', '#f472b6'] as const;
const ARRAY_COLOR = PLACE_COLORS[Place.ARRAY_HOME];
const placeColor = (k: number): string => PLACE_COLORS[k as PlaceKind] ?? COLORS.padding;

export interface Overlay {
  selected: Hit | null;
  /** The slab drawn to scale first in its cache. */
  focus: Focus | null;
  /** What the step on screen moved, and how far the animation is (0..1; 1: done). */
  moves: readonly Move[];
  progress: number;
  /** The states of the panes beside this one (the drawings line up row by row). */
  alignWith?: readonly SlabSnapshot[];
}

const FONTS = { title: 'bold 13px system-ui, sans-serif', text: '12px system-ui, sans-serif', dim: '12px system-ui, sans-serif', small: '12px system-ui, sans-serif' } as const;

function outline(ctx: CanvasRenderingContext2D, r: Rect, color: string, width = 2): void {
  ctx.strokeStyle = color;
  ctx.lineWidth = width;
  ctx.strokeRect(r.x - 1, r.y - 1, r.w + 2, r.h + 2);
}

function hatch(ctx: CanvasRenderingContext2D, r: Rect, color: string): void {
  ctx.save();
  ctx.beginPath();
  ctx.rect(r.x, r.y, r.w, r.h);
  ctx.clip();
  ctx.strokeStyle = color;
  ctx.lineWidth = 1;
  ctx.beginPath();
  for (let x = r.x - r.h; x < r.x + r.w; x += 5) {
    ctx.moveTo(x, r.y + r.h);
    ctx.lineTo(x + r.h, r.y);
  }
  ctx.stroke();
  ctx.restore();
}

const centre = (r: Rect) => ({ x: r.x + r.w / 2, y: r.y + r.h / 2 });

function line(ctx: CanvasRenderingContext2D, from: { x: number; y: number }, to: { x: number; y: number }, color: string): void {
  ctx.strokeStyle = color;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(from.x, from.y);
  ctx.lineTo(to.x, to.y);
  ctx.stroke();
  ctx.beginPath();
  ctx.arc(to.x, to.y, 3, 0, 2 * Math.PI);
  ctx.fillStyle = color;
  ctx.fill();
}

function drawArrays(ctx: CanvasRenderingContext2D, colors: CanvasTheme, s: SlabSnapshot, l: Layout): void {
  for (const a of l.arrays) {
    const c = s.caches.find((k) => k.id === a.cacheId);
    const ac = a.owner < 0 ? c?.shared : c?.cpus[a.owner];
    if (!c || !ac) continue;
    for (let slot = 0; slot < a.limit; slot++) {
      const r = slotRect(l, a.cacheId, a.owner, slot);
      if (!r) continue;
      ctx.fillStyle = slot < ac.avail ? PLACE_COLORS[a.owner < 0 ? Place.SHARED : Place.CPU] : colors.well;
      ctx.fillRect(r.x, r.y, Math.max(1, r.w - (r.w > 3 ? 1 : 0)), r.h);
    }
    if (a.owner >= 0) {
      // The batchcount: a flush takes this many from the bottom, a touched refill asks this many.
      const b = slotRect(l, a.cacheId, a.owner, Math.min(a.limit - 1, c.batchcount));
      if (b && c.batchcount < a.limit) {
        ctx.fillStyle = colors.selected;
        ctx.fillRect(b.x - 1, b.y - 3, 2, b.h + 6);
      }
      // The top: the next object handed out.
      const top = ac.avail > 0 ? slotRect(l, a.cacheId, a.owner, ac.avail - 1) : null;
      if (top) {
        ctx.fillStyle = colors.text;
        ctx.beginPath();
        ctx.moveTo(top.x + top.w / 2, top.y - 1);
        ctx.lineTo(top.x + top.w / 2 - 3, top.y - 5);
        ctx.lineTo(top.x + top.w / 2 + 3, top.y - 5);
        ctx.fill();
      }
    }
  }
}

function drawNode(ctx: CanvasRenderingContext2D, colors: CanvasTheme, s: SlabSnapshot, l: Layout): void {
  for (const g of l.gauges) {
    const c = s.caches.find((k) => k.id === g.cacheId);
    if (!c) continue;
    const scale = g.w / Math.max(1, c.freeLimit, c.freeObjects);
    ctx.fillStyle = colors.well;
    ctx.fillRect(g.x, g.y, g.w, GAUGE_H);
    ctx.fillStyle = c.freeObjects > c.freeLimit ? '#ef4444' : PLACE_COLORS[Place.FREE];
    ctx.fillRect(g.x, g.y, c.freeObjects * scale, GAUGE_H);
    ctx.fillStyle = colors.text;
    ctx.fillRect(g.x + c.freeLimit * scale - 1, g.y - 2, 2, GAUGE_H + 4);
  }
  for (const t of l.thumbs) {
    const c = s.caches.find((k) => k.id === t.cacheId);
    const sl = c?.slabs[t.slab];
    if (!c || !sl) continue;
    const r = thumbRect(t);
    ctx.fillStyle = colors.well;
    ctx.fillRect(r.x, r.y, r.w, r.h);
    const h = Math.round((r.h * sl.active) / c.num);
    ctx.fillStyle = COLORS[sl.list];
    ctx.fillRect(r.x, r.y + r.h - h, r.w, h);
  }
}

function drawSlab(ctx: CanvasRenderingContext2D, colors: CanvasTheme, s: SlabSnapshot, l: Layout, c: SlabCacheState, d: Layout['details'][number]): void {
  const sl = c.slabs[d.slab];
  const kinds = placesOf(s).byCache.get(c.id)?.kinds[d.slab];
  if (!sl || !kinds) return;
  const barH = d.barH;
  const slabBytes = d.w / d.scale;
  ctx.fillStyle = COLORS.leftover;
  ctx.fillRect(d.x, d.barY, d.w, barH);
  if (sl.sMemOffset > 0) hatch(ctx, { x: d.x, y: d.barY, w: sl.sMemOffset * d.scale, h: barH }, COLORS.colourOffset);
  for (let i = 0; i < c.num; i++) {
    const x = d.x + (sl.sMemOffset + i * c.size) * d.scale;
    const w = c.objectSize * d.scale;
    if (c.size > c.objectSize) {
      ctx.fillStyle = COLORS.padding;
      ctx.fillRect(x, d.barY, Math.max(1, c.size * d.scale - (c.size * d.scale > 3 ? 1 : 0)), barH);
    }
    ctx.fillStyle = placeColor(kinds[i] ?? Place.USER);
    ctx.fillRect(x, d.barY, Math.max(1, w - (w > 3 ? 1 : 0)), barH);
  }
  // A NORMAL slab's array: bytes at the slab end, to scale.
  if (sl.freelist.kind === 'in-page') {
    const r = inPageRect(d, c, sl.freelist.offset);
    ctx.fillStyle = ARRAY_COLOR;
    ctx.fillRect(Math.min(r.x, d.x + d.w - r.w), r.y, r.w, r.h);
  }
  ctx.strokeStyle = colors.dim;
  ctx.lineWidth = 1;
  ctx.strokeRect(d.x + 0.5, d.barY + 0.5, slabBytes * d.scale - 1, barH - 1);

  // The freelist array: positions before `active` are taken, the rest list the free objects.
  if (sl.freelist.kind !== 'none') {
    ctx.font = FONTS.small;
    ctx.textBaseline = 'middle';
    ctx.textAlign = 'center';
    for (let pos = 0; pos < c.num; pos++) {
      const r = positionRect(d, pos);
      ctx.fillStyle = pos < sl.active ? COLORS.taken : PLACE_COLORS[Place.FREE];
      ctx.fillRect(r.x, r.y, Math.max(1, r.w - (r.w > 3 ? 1 : 0)), r.h);
      if (r.w >= 16) {
        ctx.fillStyle = pos < sl.active ? colors.dim : '#1b1300';
        ctx.fillText(String(sl.freelistArray[pos] ?? ''), r.x + r.w / 2, r.y + r.h / 2 + 1);
      }
    }
    ctx.textAlign = 'left';
    ctx.textBaseline = 'top';
    // The `active` cursor: slab_get_obj takes the index at this position next.
    const cur = positionRect(d, Math.min(sl.active, c.num));
    ctx.fillStyle = colors.selected;
    ctx.beginPath();
    ctx.moveTo(cur.x, cur.y + cur.h + 1);
    ctx.lineTo(cur.x - 4, cur.y + cur.h + 7);
    ctx.lineTo(cur.x + 4, cur.y + cur.h + 7);
    ctx.fill();
    // (A dense drawing says it on the slab's line above.)
    ctx.font = FONTS.small;
    if (!l.dense) ctx.fillText(`active = ${sl.active}`, cur.x + 6, cur.y + cur.h + 2);
  }
  // A line from the array to where it lives, leaving the array where it is nearest.
  const f = sl.freelist;
  let home: Rect | null = null;
  if (f.kind === 'in-page') home = inPageRect(d, c, f.offset);
  else if (f.kind === 'in-object') home = objectRect(l, s, c.id, sl.pfn, f.index);
  else if (f.kind === 'off-slab') home = objectRect(l, s, f.cacheId, f.pfn, f.index);
  if (home) {
    const to = { x: Math.min(home.x + home.w / 2, d.x + d.w - 2), y: home.y + home.h };
    const right = positionRect(d, c.num - 1);
    line(ctx, { x: Math.max(d.x + 2, Math.min(right.x + right.w - 2, to.x)), y: d.arrayY }, to, ARRAY_COLOR);
  }
}

function drawMoves(ctx: CanvasRenderingContext2D, s: SlabSnapshot, l: Layout, o: Overlay): void {
  const where = (p: Move['from']) => (p.kind === 'slot' ? slotRect(l, p.cacheId, p.owner, p.slot) : objectRect(l, s, p.cacheId, p.pfn, p.index));
  for (const m of o.moves) {
    const to = where(m.to);
    if (!to) continue;
    if (o.progress >= 1) {
      outline(ctx, to, COLORS.moved, 1.5);
      continue;
    }
    const from = where(m.from);
    if (!from) continue;
    const a = centre(from);
    const b = centre(to);
    const t = o.progress;
    ctx.fillStyle = COLORS.moved;
    ctx.beginPath();
    ctx.arc(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, 3.5, 0, 2 * Math.PI);
    ctx.fill();
  }
}

function drawSelection(ctx: CanvasRenderingContext2D, colors: CanvasTheme, s: SlabSnapshot, l: Layout, h: Hit): void {
  const marks: (Rect | null)[] = [];
  if (h.kind === 'entry') marks.push(slotRect(l, h.cacheId, h.owner, h.slot));
  if (h.kind === 'slab') {
    const t = l.thumbs.find((k) => k.cacheId === h.cacheId && k.pfn === h.pfn);
    marks.push(t ? thumbRect(t) : null);
    const d = l.details.find((k) => k.cacheId === h.cacheId && k.pfn === h.pfn);
    if (d) marks.push({ x: d.x, y: d.barY, w: d.w, h: d.barH });
  }
  if (h.kind === 'position') {
    const d = l.details.find((k) => k.cacheId === h.cacheId && k.pfn === h.pfn);
    if (d) marks.push(positionRect(d, h.pos));
  }
  const o = hitObject(s, h);
  if (o) {
    marks.push(objectRect(l, s, o.cacheId, o.pfn, o.index));
    const c = s.caches.find((k) => k.id === o.cacheId);
    const hosted = placesOf(s).hosted.get(objKey(o.cacheId, o.pfn, o.index));
    const owner = hosted && l.thumbs.find((k) => k.cacheId === hosted.cacheId && k.pfn === hosted.pfn);
    if (owner) marks.push(thumbRect(owner));
    const sl = c?.slabs.find((k) => k.pfn === o.pfn);
    const d = l.details.find((k) => k.cacheId === o.cacheId && k.pfn === o.pfn);
    const pos = sl ? sl.freelistArray.indexOf(o.index) : -1;
    if (d && sl && pos >= sl.active) marks.push(positionRect(d, pos));
  }
  for (const r of marks) if (r) outline(ctx, r, colors.selected);
}

export function drawSnapshot(ctx: CanvasRenderingContext2D, s: SlabSnapshot, l: Layout, o: Overlay, colors: CanvasTheme): void {
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, l.width, l.height);
  l.caches.forEach((b, i) => {
    ctx.fillStyle = i % 2 ? colors.laneAlt : colors.lane;
    ctx.fillRect(0, b.y, l.width, b.h);
  });
  ctx.textBaseline = 'top';
  ctx.textAlign = 'left';
  for (const t of l.labels) {
    ctx.font = FONTS[t.style];
    ctx.fillStyle = t.style === 'dim' ? colors.dim : colors.text;
    ctx.fillText(t.text, t.x, t.y);
  }
  drawArrays(ctx, colors, s, l);
  drawNode(ctx, colors, s, l);
  for (const d of l.details) {
    const c = s.caches.find((k) => k.id === d.cacheId);
    if (c) drawSlab(ctx, colors, s, l, c, d);
  }
  drawMoves(ctx, s, l, o);
  if (o.selected) drawSelection(ctx, colors, s, l, o.selected);
}
