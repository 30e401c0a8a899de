// render.ts - paints a SLUB snapshot into a 2D canvas from its typed arrays
// and a layout (layout.ts).  One pass per object state colour (one fillStyle
// change per colour, not per slot), so 16k slots cost a few milliseconds.
// Freelist chains are arcs from slot to slot: CPU freelists above the strip
// (blue), slab freelists below (orange), a detached freelist being built by a
// bulk free below in purple.

import type { CanvasTheme } from '../lab/theme';
import { SHEAF_ROLES, sheafObject, type Layout } from './layout';
import type { ObjRef } from './script';
import { NEXT_CORRUPT, NONE32, ObjState, SlabList, type SlubSnapshot } from './snapshot';

/** The state colours, the same in both themes (the surfaces come from the theme: CanvasTheme). */
export const COLORS = {
  allocated: '#5d6b86',
  cpuFree: '#3b82f6',
  slabFree: '#f59e0b',
  poison: '#d946ef',
  redzone: '#ef4444',
  dup: '#ff2d55',
  detached: '#a78bfa',
  corrupt: '#ff2d55',
  cpuSheaf: '#10b981',
  barn: '#06b6d4',
  rcu: '#a16207',
  prefilled: '#84cc16',
  locked: '#f97316',
} as const;

/** Colour of each object state (ObjState order; NO_OBJECT, past a fallback slab's objects, is not drawn: null). */
export const STATE_COLORS = [
  COLORS.slabFree, COLORS.cpuFree, COLORS.allocated, COLORS.poison, COLORS.redzone, COLORS.dup, COLORS.detached, null,
  COLORS.cpuSheaf, COLORS.barn, COLORS.rcu, COLORS.prefilled,
] as const;
export const STATE_NAMES = [
  'on the slab freelist', 'on a CPU freelist', 'allocated', 'poisoned (overwritten while free)', 'red zone overwritten', 'handed out twice',
  'in flight (a free is pushing it)', 'no object', 'in a CPU sheaf (main or spare)', 'in a barn sheaf', 'waiting for an RCU grace period', 'in a prefilled sheaf',
] as const;
/** The states of the kernels with sheaves (the legend shows them only there). */
export const SHEAF_STATES: ReadonlySet<number> = new Set([ObjState.CPU_SHEAF, ObjState.BARN, ObjState.RCU, ObjState.PREFILLED]);

export interface Overlay {
  selected: { slab: number; index: number } | null;
  /** The selected sheaf's record, if one is, and its selected slot (-1 or absent: the sheaf as a whole). */
  selectedSheaf?: number | null;
  selectedSlot?: number;
  /** Extra selected objects (for a bulk free). */
  marked: ReadonlySet<string>;
  /** The chain of a detached freelist being built (head first). */
  detached: ObjRef[] | null;
  /** Draw freelist arrows for every slab (detailed) or only the selected one. */
  arrows: 'all' | 'selected';
  /** Draw the full slabs (on no list), or only count them. */
  showFull: boolean;
  /** Force the compact drawing (free-running mode); else chosen from the number of slabs. */
  compact?: boolean;
}

export const refKey = (pfn: number, index: number) => `${pfn}:${index}`;

function arc(ctx: CanvasRenderingContext2D, x0: number, x1: number, y: number, up: boolean, slotW: number): void {
  const span = Math.abs(x1 - x0);
  const h = Math.min(13, 4 + span / (slotW * 1.5)) * (up ? -1 : 1);
  ctx.moveTo(x0, y);
  ctx.quadraticCurveTo((x0 + x1) / 2, y + 2 * h, x1, y);
  // arrowhead at x1
  const dir = x1 >= x0 ? 1 : -1;
  ctx.moveTo(x1, y);
  ctx.lineTo(x1 - 3 * dir, y + (up ? -4 : 4));
  ctx.moveTo(x1, y);
  ctx.lineTo(x1 + 1 * dir, y + (up ? -5 : 5));
}

export function drawSnapshot(ctx: CanvasRenderingContext2D, s: SlubSnapshot, l: Layout, o: Overlay, colors: CanvasTheme): void {
  /** A slab's own object count: its strip, slots and chains end there. */
  const objectsOf = (slab: number) => s.slab.objects[slab] ?? 0;
  ctx.textBaseline = 'top';

  // Lanes and section titles.  The lanes tile the canvas (a full-canvas clear
  // first would double the pixels written, which software rasterising feels).
  const top = l.sections[0]?.y ?? 0;
  const last = l.sections[l.sections.length - 1];
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, l.width, top);
  if (last) ctx.fillRect(0, last.y + last.h - 2, l.width, l.height - (last.y + last.h - 2));
  l.sections.forEach((sec, i) => {
    ctx.fillStyle = colors.background;
    ctx.fillRect(0, sec.y + sec.h - 2, l.width, 2);
    ctx.fillStyle = i % 2 ? colors.laneAlt : colors.lane;
    ctx.fillRect(0, sec.y, l.width, sec.h - 2);
    if (sec.locked) {
      // Inside its sheaf section: a bar down the lane's edge (the lines say it in words).
      ctx.fillStyle = COLORS.locked;
      ctx.fillRect(0, sec.y, 4, sec.h - 2);
    }
    ctx.fillStyle = colors.text;
    ctx.font = l.compact ? 'bold 11px system-ui, sans-serif' : 'bold 13px system-ui, sans-serif';
    ctx.fillText(sec.title, 8, sec.y + 4);
    ctx.font = l.compact ? '10px ui-monospace, monospace' : '11px ui-monospace, monospace';
    ctx.fillStyle = colors.dim;
    sec.lines.forEach((line, k) => {
      ctx.fillStyle = line.includes('CORRUPT') ? COLORS.corrupt : line.includes('trylock held') ? COLORS.locked : colors.dim;
      ctx.fillText(line, 8, sec.y + 20 + 14 * k, l.labelW - 12);
    });
  });

  // Slots: compact drawings write pixels directly (16k fillRects would take most of a frame).
  if (l.compact && l.boxes.length) paintCompactSlots(ctx, s, l);
  else for (let st = 0; st < STATE_COLORS.length; st++) {
    const color = STATE_COLORS[st];
    if (!color) continue;
    ctx.fillStyle = color;
    for (const b of l.boxes) {
      const first = s.slab.firstObj[b.slab] ?? 0;
      const gap = b.slotW > 4 ? 1 : 0;
      const objects = objectsOf(b.slab);
      for (let i = 0; i < objects; i++)
        if (s.obj.state[first + i] === st) ctx.fillRect(b.x + i * b.slotW, b.stripY, b.slotW - gap, b.stripH);
    }
  }

  drawSheaves(ctx, s, l, o, colors);

  // Labels (detailed only).
  if (!l.compact) {
    ctx.font = '10px ui-monospace, monospace';
    for (const b of l.boxes) {
      const i = b.slab;
      const frozen = s.slab.frozen[i] ? ' frozen' : '';
      const role = b.role === 'cpu-slab' ? 'CPU slab' : b.role === 'cpu-partial' ? 'partial' : b.role === 'node-partial' ? 'node' : 'full';
      ctx.fillStyle = colors.dim;
      const order = s.slab.order[i] === s.geometry.order ? '' : ` · order ${s.slab.order[i]}`;
      ctx.fillText(`${role} ${s.slabNames?.[i] ?? `pfn ${s.slab.pfn[i]}`} · ${s.slab.inuse[i]}/${s.slab.objects[i]}${order}${frozen}`, b.x, b.y + 2, s.geometry.objects * b.slotW + 8);
    }
  }

  // Freelist arrows.
  const chain = (b: (typeof l.boxes)[number], head: number, up: boolean) => {
    const first = s.slab.firstObj[b.slab] ?? 0;
    const objects = objectsOf(b.slab);
    const y = up ? b.stripY - 1 : b.stripY + b.stripH + 1;
    let at = head;
    for (let n = 0; at !== NONE32 && at < objects && n < objects; n++) {
      const next = s.obj.next[first + at] ?? NONE32;
      if (next === NEXT_CORRUPT) {
        ctx.save();
        ctx.fillStyle = COLORS.corrupt;
        ctx.fillText('✕', b.x + at * b.slotW + b.slotW / 2 - 3, y + (up ? -12 : 2));
        ctx.restore();
        break;
      }
      if (next === NONE32 || next >= objects) break;
      arc(ctx, b.x + (at + 0.5) * b.slotW, b.x + (next + 0.5) * b.slotW, y, up, b.slotW);
      at = next;
    }
  };
  ctx.lineWidth = 1.2;
  for (const b of l.boxes) {
    if (o.arrows === 'selected' && o.selected?.slab !== b.slab) continue;
    const i = b.slab;
    ctx.beginPath();
    ctx.strokeStyle = COLORS.slabFree;
    chain(b, s.slab.freelistHead[i] ?? NONE32, false);
    ctx.stroke();
    if (s.slab.list[i] === SlabList.CPU_SLAB) {
      const c = s.cpus[s.slab.cpu[i] ?? 0];
      if (c && c.freelistPfn === s.slab.pfn[i]) {
        ctx.beginPath();
        ctx.strokeStyle = COLORS.cpuFree;
        chain(b, c.freelistIndex, true);
        ctx.stroke();
        // the head marker
        const hx = b.x + (c.freelistIndex + 0.5) * b.slotW;
        ctx.fillStyle = COLORS.cpuFree;
        ctx.beginPath();
        ctx.moveTo(hx - 4, b.stripY - 9);
        ctx.lineTo(hx + 4, b.stripY - 9);
        ctx.lineTo(hx, b.stripY - 3);
        ctx.fill();
      }
    }
  }

  // A detached freelist being built.
  if (o.detached && o.detached.length) {
    ctx.strokeStyle = COLORS.detached;
    ctx.lineWidth = 2;
    ctx.setLineDash([4, 2]);
    ctx.beginPath();
    const pos = o.detached.map((r) => {
      const b = l.boxes[l.boxOf[slabPos(s, r.pfn)] ?? -1];
      return b ? { b, x: b.x + (r.index + 0.5) * b.slotW } : null;
    });
    for (let k = 0; k + 1 < pos.length; k++) {
      const a = pos[k];
      const c = pos[k + 1];
      if (a && c && a.b === c.b) arc(ctx, a.x, c.x, a.b.stripY + a.b.stripH + 1, false, a.b.slotW);
    }
    ctx.stroke();
    ctx.setLineDash([]);
    for (const p of pos) {
      if (!p) continue;
      ctx.strokeRect(p.x - p.b.slotW / 2 + 0.5, p.b.stripY + 0.5, p.b.slotW - 2, p.b.stripH - 1);
    }
  }

  // Marked and selected.
  ctx.lineWidth = 2;
  if (o.marked.size) {
    ctx.strokeStyle = COLORS.detached;
    for (const b of l.boxes)
      for (let i = 0; i < objectsOf(b.slab); i++)
        if (o.marked.has(refKey(s.slab.pfn[b.slab] ?? 0, i))) ctx.strokeRect(b.x + i * b.slotW + 1, b.stripY + 1, b.slotW - 3, b.stripH - 2);
  }
  if (o.selected) {
    const b = l.boxes[l.boxOf[o.selected.slab] ?? -1];
    if (b) {
      ctx.strokeStyle = colors.selected;
      if (o.selected.index < 0) ctx.strokeRect(b.x - 3, b.stripY - 3, objectsOf(o.selected.slab) * b.slotW + 5, b.stripH + 6);
      else ctx.strokeRect(b.x + o.selected.index * b.slotW, b.stripY - 1, b.slotW - 1, b.stripH + 2);
    }
  }
}

/**
 * Compact slots: runs of neighbouring slots in one state become one rectangle,
 * batched by colour, so a frame with 16k slots issues a few thousand
 * fillRects rather than 16k.
 */
function paintCompactSlots(ctx: CanvasRenderingContext2D, s: SlubSnapshot, l: Layout): void {
  const runs: number[][] = STATE_COLORS.map(() => []);
  for (const b of l.boxes) {
    const first = s.slab.firstObj[b.slab] ?? 0;
    const objects = s.slab.objects[b.slab] ?? 0;
    let i = 0;
    while (i < objects) {
      const st = s.obj.state[first + i] ?? ObjState.ALLOCATED;
      let j = i + 1;
      while (j < objects && s.obj.state[first + j] === st) j++;
      runs[st]?.push(b.x + i * b.slotW, b.stripY, (j - i) * b.slotW, b.stripH);
      i = j;
    }
  }
  runs.forEach((r, st) => {
    const color = STATE_COLORS[st];
    if (!color) return;
    ctx.fillStyle = color;
    for (let k = 0; k < r.length; k += 4) ctx.fillRect(r[k] ?? 0, r[k + 1] ?? 0, r[k + 2] ?? 0, r[k + 3] ?? 0);
  });
}

/** Each sheaf: its label (detailed), its capacity slots (empty ones outlined, held objects in their state's colour), the selection. */
function drawSheaves(ctx: CanvasRenderingContext2D, s: SlubSnapshot, l: Layout, o: Overlay, colors: CanvasTheme): void {
  const sh = s.sheaves;
  ctx.font = '10px ui-monospace, monospace';
  ctx.lineWidth = 1;
  for (const b of l.sheaves) {
    const size = sh.sheaf.size[b.sheaf] ?? 0;
    const gap = b.slotW > 4 ? 1 : 0;
    if (!l.compact) {
      ctx.fillStyle = colors.dim;
      const place = sh.sheaf.place[b.sheaf] ?? 0;
      const flush = sh.sheaf.rcuFlush[b.sheaf] ? ' · to slabs after the grace period' : '';
      ctx.fillText(`${SHEAF_ROLES[place] ?? 'sheaf'} #${sh.sheaf.id[b.sheaf]} · ${size}/${sh.sheaf.capacity[b.sheaf]}${flush}`, b.x, b.y + 1, Math.max(b.slots * b.slotW, 160));
    }
    for (let i = 0; i < b.slots; i++) {
      const x = b.x + i * b.slotW;
      const obj = i < size ? sheafObject(s, b.sheaf, i) : null;
      if (obj) {
        ctx.fillStyle = STATE_COLORS[s.obj.state[(s.slab.firstObj[obj.slab] ?? 0) + obj.index] ?? ObjState.ALLOCATED] ?? COLORS.corrupt;
        ctx.fillRect(x, b.stripY, b.slotW - gap, b.stripH);
      } else if (i < size) {
        ctx.fillStyle = COLORS.corrupt; // a pointer that is no object of the cache
        ctx.fillRect(x, b.stripY, b.slotW - gap, b.stripH);
      } else {
        ctx.strokeStyle = colors.dim;
        ctx.strokeRect(x + 0.5, b.stripY + 0.5, b.slotW - gap - 1, b.stripH - 1);
      }
    }
    if (o.selectedSheaf === b.sheaf) {
      ctx.save();
      ctx.lineWidth = 2;
      ctx.strokeStyle = colors.selected;
      const slot = o.selectedSlot ?? -1;
      if (slot >= 0 && slot < b.slots) ctx.strokeRect(b.x + slot * b.slotW - 1, b.stripY - 2, b.slotW + 1, b.stripH + 4);
      else ctx.strokeRect(b.x - 2, b.stripY - 2, b.slots * b.slotW + 3, b.stripH + 4);
      ctx.restore();
    }
  }
}

function slabPos(s: SlubSnapshot, pfn: number): number {
  for (let i = 0; i < s.nslabs; i++) if (s.slab.pfn[i] === pfn) return i;
  return -1;
}
