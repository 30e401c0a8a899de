// render.ts - paints a SLUB snapshot into a 2D canvas from its typed arrays
// and a layout (layout.ts).  One pass per object state colour (one fillStyle
// change per colour, not per slot), so 16k slots cost a few milliseconds.
// Freelist chains are arcs from slot to slot: CPU freelists above the strip
// (blue), slab freelists below (amber), a detached freelist being built by a
// bulk free below in violet dashes.
//
// Names on the picture (detailed drawing): each slab by the letter the
// stories call it (A, B, ...: slabLetter) and its pfn, each object slot by
// its index (or by the story's name for it, X and Y), and the interrupt as a
// bolt on its CPU's lane with what the handler does.  What the last step
// changed (against `prev`, the state shown before) is outlined: a slab that
// is new, changed lists or counts, an object whose state changed.  Colours:
// one hue per state, none two alike (the locked lane is drawn in dashes, not
// a colour; a duplicate is red with "2×" on it, a red-zone hit dark red).

import { EventKind, type SlEvent } from '../core/events.generated';
import type { CanvasTheme } from '../lab/theme';
import { FONT, LINE_H, SHEAF_LABEL_W, SHEAF_ROLES, sheafObject, slabLetter, slotAt, stripsH, type Layout, type SlabBox } from './layout';
import { KIND_CODE, type ObjRef } from './script';
import { NEXT_CORRUPT, NONE32, ObjState, SheafPlace, SlabList, type SlubSnapshot } from './snapshot';

/** The state colours, the same in both themes (the surfaces come from the theme: CanvasTheme); no two alike. */
export const COLORS = {
  allocated: '#64748b',
  cpuFree: '#2563eb',
  slabFree: '#f59e0b',
  poison: '#d946ef',
  redzone: '#7f1d1d',
  dup: '#e11d48',
  detached: '#7c3aed',
  corrupt: '#e11d48',
  cpuSheaf: '#059669',
  barn: '#22d3ee',
  rcu: '#92400e',
  prefilled: '#a3e635',
  locked: '#f97316',
  changed: '#0ea5e9',
  interrupt: '#e11d48',
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
/** Dark slot colours take white text, light ones dark text. */
const LIGHT_STATES: ReadonlySet<number> = new Set([ObjState.SLAB_FREE, ObjState.BARN, ObjState.PREFILLED]);

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
  /** The state shown before this one: what differs is outlined (absent: nothing is). */
  prev?: SlubSnapshot | null;
  /** The CPUs the story uses (the others fold into one row), and whether the folded ones are opened. */
  cpus?: readonly number[];
  allCpus?: boolean;
  /** A CPU inside an interrupt handler, and what the handler does, in words. */
  interrupt?: { cpu: number; text: string } | null;
  /** The states of the panes beside this one (the drawings line up row by row). */
  alignWith?: readonly SlubSnapshot[];
  /** Objects the story names (refKey -> "X"). */
  names?: ReadonlyMap<string, string>;
}

export const refKey = (pfn: number, index: number) => `${pfn}:${index}`;

/**
 * The objects a story of an interrupted allocation names (its captions' X and Y), from the events
 * of the whole story: X is the object the first interrupt handler's allocation returned (the head
 * the interrupted code had read), Y the next object an allocation on that CPU returned after it
 * (the head's successor: the interrupted allocation's retry, or the allocation after a stale
 * write handed X out again).  A handler is an operation that begins inside another on its CPU.
 */
export function interruptNames(events: readonly SlEvent[]): Map<string, string> {
  const names = new Map<string, string>();
  const open = new Map<number, number>();
  const nested = new Set<number>();
  let x: { key: string; cpu: number } | null = null;
  for (const e of events) {
    if (e.kind === EventKind.OP_BEGIN) {
      if ((open.get(e.cpu) ?? 0) > 0) nested.add(e.op);
      open.set(e.cpu, (open.get(e.cpu) ?? 0) + 1);
      continue;
    }
    if (e.kind !== EventKind.OP_END) continue;
    open.set(e.cpu, Math.max(0, (open.get(e.cpu) ?? 0) - 1));
    if (e.arg0 !== KIND_CODE.alloc || e.slab === NONE32) continue;
    const key = refKey(e.slab, e.obj);
    if (!x) {
      if (!nested.has(e.op)) continue;
      x = { key, cpu: e.cpu };
      names.set(key, 'X');
    } else if (e.cpu === x.cpu && key !== x.key && !nested.has(e.op)) {
      names.set(key, 'Y');
      break;
    }
  }
  return names;
}

/**
 * The lanes whose sheaves go back to another node's barn (a memoryless node's CPUs before 7.1):
 * a dashed line down the figure's left edge from the lane's title to that barn's, an arrowhead
 * at the barn, and the words at the lane's end ("→ node 0's barn").
 */
function drawBarnLinks(ctx: CanvasRenderingContext2D, l: Layout, colors: CanvasTheme): void {
  if (!l.links.length) return;
  ctx.save();
  ctx.strokeStyle = COLORS.barn;
  ctx.fillStyle = COLORS.barn;
  ctx.lineWidth = 2;
  l.links.forEach((k, i) => {
    const x = 3 + 4 * i;
    ctx.setLineDash([5, 3]);
    ctx.beginPath();
    ctx.moveTo(x + 4, k.fromY);
    ctx.lineTo(x, k.fromY);
    ctx.lineTo(x, k.toY);
    ctx.lineTo(x + 2, k.toY);
    ctx.stroke();
    ctx.setLineDash([]);
    const dir = k.toY > k.fromY ? 1 : -1;
    ctx.beginPath();
    ctx.moveTo(x - 4, k.toY - 6 * dir);
    ctx.lineTo(x + 4, k.toY - 6 * dir);
    ctx.lineTo(x, k.toY);
    ctx.fill();
  });
  ctx.font = `bold ${FONT.text}px system-ui, sans-serif`;
  ctx.fillStyle = colors.text;
  ctx.textAlign = 'right';
  for (const k of l.links) ctx.fillText(`CPU ${k.cpu}'s sheaves → node ${k.node}'s barn`, l.width - 8, k.fromY - 8);
  ctx.textAlign = 'start';
  ctx.restore();
}

/** Where the slot of object `i` of box `b` is, and its size. */
function slotRect(b: SlabBox, i: number): { x: number; y: number; w: number; h: number } {
  const p = slotAt(b, i);
  return { x: p.x, y: p.y, w: b.slotW, h: b.stripH };
}

export function drawSnapshot(ctx: CanvasRenderingContext2D, s: SlubSnapshot, l: Layout, o: Overlay, colors: CanvasTheme): void {
  /** A slab's own object count: its strip, slots and chains end there. */
  const objectsOf = (slab: number) => s.slab.objects[slab] ?? 0;
  ctx.textBaseline = 'top';
  const mono = (px: number, bold = false) => `${bold ? 'bold ' : ''}${px}px ui-monospace, SFMono-Regular, Menlo, monospace`;

  // Lanes and section titles.  The lanes tile the canvas (a full-canvas clear
  // first would double the pixels written, which software rasterising feels).
  const top = l.sections[0]?.y ?? 0;
  const last = l.sections[l.sections.length - 1];
  ctx.fillStyle = colors.background;
  ctx.fillRect(0, 0, l.width, top);
  if (last) ctx.fillRect(0, last.y + last.h - 2, l.width, l.height - (last.y + last.h - 2));
  const boxesIn = new Set<number>();
  for (const b of l.boxes) for (const sec of l.sections) if (b.y >= sec.y && b.y < sec.y + sec.h) boxesIn.add(l.sections.indexOf(sec));
  l.sections.forEach((sec, i) => {
    ctx.fillStyle = colors.background;
    ctx.fillRect(0, sec.y + sec.h - 2, l.width, 2);
    ctx.fillStyle = i % 2 ? colors.laneAlt : colors.lane;
    ctx.fillRect(0, sec.y, l.width, sec.h - 2);
    if (sec.locked) {
      // Inside its sheaf section: a dashed bar down the lane's edge (the lines say it in words).
      ctx.save();
      ctx.strokeStyle = COLORS.locked;
      ctx.lineWidth = 4;
      ctx.setLineDash([6, 4]);
      ctx.beginPath();
      ctx.moveTo(2, sec.y);
      ctx.lineTo(2, sec.y + sec.h - 2);
      ctx.stroke();
      ctx.restore();
    }
    if (sec.nodeHead) {
      // A node's heading: a rule across the figure above it, so the node's lanes and lists read as one group.
      ctx.fillStyle = colors.text;
      ctx.fillRect(0, sec.y, l.width, 2);
    }
    ctx.fillStyle = sec.cpuToggle ? colors.dim : colors.text;
    ctx.font = l.compact ? 'bold 12px system-ui, sans-serif' : `bold ${sec.nodeHead ? FONT.title + 2 : FONT.title}px system-ui, sans-serif`;
    ctx.fillText(sec.title, 8, sec.y + (sec.cpuToggle ? 8 : 4));
    if (sec.cpuToggle) {
      // Measured in the title's own (bold) font: the note starts after it, whatever its length.
      const titleW = ctx.measureText(sec.title).width;
      ctx.font = `${FONT.text}px system-ui, sans-serif`;
      ctx.fillText(sec.lines[0] ?? '', 8 + titleW + 24, sec.y + 9);
      return;
    }
    ctx.font = mono(FONT.text);
    const lineH = l.compact ? 12 : LINE_H;
    (sec.drawn ?? sec.lines).forEach((line, k) => {
      ctx.fillStyle = line.includes('CORRUPT') ? COLORS.corrupt : line.includes('trylock held') ? COLORS.locked : colors.dim;
      ctx.fillText(line, 8, sec.y + (l.compact ? 18 : 22) + lineH * k, (l.labelW || l.width) - 12);
    });
    // An empty list says so where its slabs would be.
    if (!l.compact && !boxesIn.has(i) && !l.sheaves.some((b) => b.y >= sec.y && b.y < sec.y + sec.h) && sec.cpu >= -1 && !sec.title.startsWith('Barn')) {
      ctx.fillStyle = colors.dim;
      ctx.font = `italic ${FONT.text}px system-ui, sans-serif`;
      const what = sec.cpu >= 0 ? 'no slab yet' : sec.title.startsWith('Full') ? (l.hiddenFull ? '' : 'no full slab') : 'empty';
      if (what && l.labelW) ctx.fillText(what, l.left + 4, sec.y + 8);
    }
  });

  // Slots: compact drawings write pixels directly (16k fillRects would take most of a frame).
  if (l.compact && l.boxes.length) paintCompactSlots(ctx, s, l);
  else for (let st = 0; st < STATE_COLORS.length; st++) {
    const color = STATE_COLORS[st];
    if (!color) continue;
    ctx.fillStyle = color;
    for (const b of l.boxes) {
      const first = s.slab.firstObj[b.slab] ?? 0;
      const gap = b.slotW > 4 ? (b.slotW >= 16 ? 2 : 1) : 0;
      const objects = objectsOf(b.slab);
      for (let i = 0; i < objects; i++) {
        if (s.obj.state[first + i] !== st) continue;
        const r = slotRect(b, i);
        ctx.fillRect(r.x, r.y, r.w - gap, r.h);
      }
    }
  }

  drawSheaves(ctx, s, l, o, colors);
  drawBarnLinks(ctx, l, colors);

  // Labels (detailed only): the slab's name and role above it, each slot's index (or the story's name) in it.
  if (!l.compact) {
    for (const b of l.boxes) {
      const i = b.slab;
      const frozen = s.slab.frozen[i] ? ' · frozen' : '';
      const role = b.role === 'cpu-slab' ? 'CPU slab' : b.role === 'cpu-partial' ? 'CPU partial' : b.role === 'node-partial' ? 'node partial' : 'full';
      const order = s.slab.order[i] === s.geometry.order ? '' : ` · order ${s.slab.order[i]}`;
      const letter = slabLetter(s, i);
      let x = b.x;
      const room = b.cols * b.slotW + 8;
      if (letter) {
        ctx.font = `bold ${FONT.title}px system-ui, sans-serif`;
        ctx.fillStyle = colors.text;
        ctx.fillText(letter, x, b.y + 1);
        x += ctx.measureText(letter).width + 6;
      }
      ctx.font = `${FONT.text}px system-ui, sans-serif`;
      ctx.fillStyle = colors.dim;
      // With NUMA nodes, every slab's node (slab_nid): a slab on another node's CPU or list shows where its memory is.
      const node = s.numa ? ` · node ${s.slab.nid[i] ?? 0}` : '';
      ctx.fillText(`${role} · ${s.slabNames?.[i] ?? `pfn ${s.slab.pfn[i]}`}${node} · ${s.slab.inuse[i]}/${s.slab.objects[i]} in use${order}${frozen}`, x, b.y + 3, Math.max(40, room - (x - b.x)));
      if (b.slotW >= 18) {
        const first = s.slab.firstObj[i] ?? 0;
        ctx.font = mono(Math.min(FONT.slot + 2, Math.max(FONT.slot, Math.floor(b.slotW / 2))));
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        for (let k = 0; k < objectsOf(i); k++) {
          const st = s.obj.state[first + k] ?? ObjState.ALLOCATED;
          const r = slotRect(b, k);
          const name = o.names?.get(refKey(s.slab.pfn[i] ?? 0, k));
          const text = name ?? (st === ObjState.DUP ? '2×' : String(k));
          ctx.fillStyle = LIGHT_STATES.has(st) ? '#1f2937' : '#ffffff';
          if (name) ctx.font = mono(Math.max(FONT.slot, Math.floor(b.slotW / 2)), true);
          ctx.fillText(text, r.x + (r.w - 2) / 2, r.y + r.h / 2 + 1, r.w - 3);
          if (name) ctx.font = mono(Math.min(FONT.slot + 2, Math.max(FONT.slot, Math.floor(b.slotW / 2))));
        }
        ctx.textAlign = 'start';
        ctx.textBaseline = 'top';
      } else if (o.names?.size) {
        // Slots too small for their indices still carry the story's names (X, Y), in the slot's colour's contrast.
        const first = s.slab.firstObj[i] ?? 0;
        ctx.font = mono(FONT.slot, true);
        ctx.textAlign = 'center';
        ctx.textBaseline = 'middle';
        for (let k = 0; k < objectsOf(i); k++) {
          const name = o.names.get(refKey(s.slab.pfn[i] ?? 0, k));
          if (!name) continue;
          const r = slotRect(b, k);
          ctx.fillStyle = LIGHT_STATES.has(s.obj.state[first + k] ?? ObjState.ALLOCATED) ? '#1f2937' : '#ffffff';
          ctx.fillText(name, r.x + (r.w - 2) / 2, r.y + r.h / 2 + 1);
        }
        ctx.textAlign = 'start';
        ctx.textBaseline = 'top';
      }
    }
  }

  // Freelist arrows.
  const centreOf = (b: SlabBox, i: number, up: boolean) => {
    const r = slotRect(b, i);
    return { x: r.x + (r.w - 2) / 2, y: up ? r.y - 1 : r.y + r.h + 1 };
  };
  const chain = (b: SlabBox, head: number, up: boolean) => {
    const first = s.slab.firstObj[b.slab] ?? 0;
    const objects = objectsOf(b.slab);
    let at = head;
    for (let n = 0; at !== NONE32 && at < objects && n < objects; n++) {
      const next = s.obj.next[first + at] ?? NONE32;
      if (next === NEXT_CORRUPT) {
        const c = centreOf(b, at, up);
        ctx.save();
        ctx.fillStyle = COLORS.corrupt;
        ctx.font = `bold ${FONT.text}px system-ui, sans-serif`;
        ctx.fillText('✕', c.x - 4, c.y + (up ? -13 : 1));
        ctx.restore();
        break;
      }
      if (next === NONE32 || next >= objects) break;
      arc(ctx, centreOf(b, at, up), centreOf(b, next, up), up, b.slotW);
      at = next;
    }
  };
  ctx.lineWidth = l.compact ? 1.2 : 1.6;
  for (const b of l.boxes) {
    if (o.arrows === 'selected' && o.selected?.slab !== b.slab) continue;
    const i = b.slab;
    ctx.beginPath();
    ctx.strokeStyle = COLORS.slabFree;
    chain(b, s.slab.freelistHead[i] ?? NONE32, false);
    ctx.stroke();
    if (s.slab.list[i] === SlabList.CPU_SLAB) {
      const c = s.cpus[s.slab.cpu[i] ?? 0];
      if (c && c.freelistPfn === s.slab.pfn[i] && c.freelistIndex < objectsOf(i)) {
        ctx.beginPath();
        ctx.strokeStyle = COLORS.cpuFree;
        chain(b, c.freelistIndex, true);
        ctx.stroke();
        // the head marker
        const h = centreOf(b, c.freelistIndex, true);
        ctx.fillStyle = COLORS.cpuFree;
        ctx.beginPath();
        ctx.moveTo(h.x - 5, h.y - 10);
        ctx.lineTo(h.x + 5, h.y - 10);
        ctx.lineTo(h.x, h.y - 2);
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
      return b && r.index < objectsOf(b.slab) ? { b, i: r.index } : null;
    });
    for (let k = 0; k + 1 < pos.length; k++) {
      const a = pos[k];
      const c = pos[k + 1];
      if (a && c && a.b === c.b) arc(ctx, centreOf(a.b, a.i, false), centreOf(c.b, c.i, false), false, a.b.slotW);
    }
    ctx.stroke();
    ctx.setLineDash([]);
    for (const p of pos) {
      if (!p) continue;
      const r = slotRect(p.b, p.i);
      ctx.strokeRect(r.x + 0.5, r.y + 0.5, r.w - 3, r.h - 1);
    }
  }

  // What the last step changed: outlined.
  if (o.prev && !l.compact) drawChanges(ctx, s, o.prev, l);

  // The interrupt: a bolt on its CPU's lane and what the handler does.
  if (o.interrupt && !l.compact) {
    const sec = l.sections.find((x) => x.cpu === o.interrupt?.cpu && !x.cpuToggle);
    if (sec) drawInterrupt(ctx, sec.y, sec.h, l, o.interrupt.text, colors);
  }

  // Marked and selected.
  ctx.lineWidth = 2;
  if (o.marked.size) {
    ctx.strokeStyle = colors.selected;
    ctx.setLineDash([3, 2]);
    for (const b of l.boxes)
      for (let i = 0; i < objectsOf(b.slab); i++)
        if (o.marked.has(refKey(s.slab.pfn[b.slab] ?? 0, i))) {
          const r = slotRect(b, i);
          ctx.strokeRect(r.x + 1, r.y + 1, r.w - 4, r.h - 2);
        }
    ctx.setLineDash([]);
  }
  if (o.selected) {
    const b = l.boxes[l.boxOf[o.selected.slab] ?? -1];
    if (b) {
      ctx.strokeStyle = colors.selected;
      ctx.lineWidth = 3;
      if (o.selected.index < 0) ctx.strokeRect(b.x - 3, b.stripY - 3, b.cols * b.slotW + 4, stripsH(b.rows, b.stripH) + 6);
      else {
        const r = slotRect(b, o.selected.index);
        ctx.strokeRect(r.x - 1, r.y - 2, r.w, r.h + 4);
      }
    }
  }
}

function arc(ctx: CanvasRenderingContext2D, a: { x: number; y: number }, c: { x: number; y: number }, up: boolean, slotW: number): void {
  const span = Math.hypot(c.x - a.x, c.y - a.y);
  const h = Math.min(12, 4 + span / (slotW * 1.5)) * (up ? -1 : 1);
  ctx.moveTo(a.x, a.y);
  ctx.quadraticCurveTo((a.x + c.x) / 2, (up ? Math.min(a.y, c.y) : Math.max(a.y, c.y)) + 2 * h, c.x, c.y);
  // arrowhead at c
  const dir = c.x >= a.x ? 1 : -1;
  ctx.moveTo(c.x, c.y);
  ctx.lineTo(c.x - 4 * dir, c.y + (up ? -5 : 5));
  ctx.moveTo(c.x, c.y);
  ctx.lineTo(c.x + 1 * dir, c.y + (up ? -6 : 6));
}

/** The slabs and objects that differ from `prev` (by pfn and index), outlined in the change colour. */
function drawChanges(ctx: CanvasRenderingContext2D, s: SlubSnapshot, prev: SlubSnapshot, l: Layout): void {
  const before = new Map<number, number>();
  for (let i = 0; i < prev.nslabs; i++) before.set(prev.slab.pfn[i] ?? 0, i);
  ctx.save();
  ctx.strokeStyle = COLORS.changed;
  for (const b of l.boxes) {
    const i = b.slab;
    const p = before.get(s.slab.pfn[i] ?? 0);
    const whole = p === undefined || prev.slab.list[p] !== s.slab.list[i] || prev.slab.cpu[p] !== s.slab.cpu[i] || prev.slab.frozen[p] !== s.slab.frozen[i];
    if (whole) {
      ctx.lineWidth = 2;
      ctx.setLineDash([6, 3]);
      ctx.strokeRect(b.x - 5, b.y - 2, b.cols * b.slotW + 8, b.stripY - b.y + stripsH(b.rows, b.stripH) + 14);
      ctx.setLineDash([]);
    }
    if (p === undefined) continue;
    const first = s.slab.firstObj[i] ?? 0;
    const pfirst = prev.slab.firstObj[p] ?? 0;
    ctx.lineWidth = 2.5;
    for (let k = 0; k < (s.slab.objects[i] ?? 0); k++) {
      if (s.obj.state[first + k] === prev.obj.state[pfirst + k]) continue;
      const r = slotAt(b, k);
      ctx.strokeRect(r.x - 2, r.y - 2, b.slotW + 2, b.stripH + 4);
    }
  }
  ctx.restore();
}

/** A lightning bolt at the lane's right end, and the handler's words beside it. */
function drawInterrupt(ctx: CanvasRenderingContext2D, y: number, h: number, l: Layout, text: string, colors: CanvasTheme): void {
  ctx.save();
  ctx.font = `bold ${FONT.text}px system-ui, sans-serif`;
  const w = Math.min(l.width - 40, ctx.measureText(text).width + 44);
  const x = l.width - w - 6;
  const by = y + h - 34;
  ctx.fillStyle = colors.background;
  ctx.globalAlpha = 0.92;
  ctx.fillRect(x, by, w, 28);
  ctx.globalAlpha = 1;
  ctx.strokeStyle = COLORS.interrupt;
  ctx.lineWidth = 2;
  ctx.strokeRect(x, by, w, 28);
  // The bolt.
  ctx.fillStyle = COLORS.interrupt;
  ctx.beginPath();
  ctx.moveTo(x + 16, by + 3);
  ctx.lineTo(x + 8, by + 16);
  ctx.lineTo(x + 14, by + 16);
  ctx.lineTo(x + 10, by + 26);
  ctx.lineTo(x + 22, by + 11);
  ctx.lineTo(x + 16, by + 11);
  ctx.lineTo(x + 20, by + 3);
  ctx.closePath();
  ctx.fill();
  ctx.fillStyle = colors.text;
  ctx.fillText(text, x + 30, by + 8, w - 36);
  ctx.restore();
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
  ctx.lineWidth = 1;
  for (const b of l.sheaves) {
    const size = sh.sheaf.size[b.sheaf] ?? 0;
    const gap = b.slotW > 4 ? (b.slotW >= 16 ? 2 : 1) : 0;
    if (!l.compact) {
      ctx.font = `${FONT.text}px system-ui, sans-serif`;
      ctx.fillStyle = colors.dim;
      const place = sh.sheaf.place[b.sheaf] ?? 0;
      const flush = sh.sheaf.rcuFlush[b.sheaf] ? ' · to slabs after the grace period' : '';
      const role = SHEAF_ROLES[place] ?? 'sheaf';
      const name = place === SheafPlace.BARN_FULL ? 'full sheaf' : place === SheafPlace.BARN_EMPTY ? 'empty sheaf' : place === SheafPlace.RCU_WAIT ? role : `${role.split(' ')[0]} sheaf${role.includes(' ') ? ` ${role.slice(role.indexOf(' ') + 1)}` : ''}`;
      ctx.fillText(`${name} #${sh.sheaf.id[b.sheaf]} · ${size}/${sh.sheaf.capacity[b.sheaf]}${flush}`, b.x, b.y + 2, Math.max(b.cols * b.slotW, SHEAF_LABEL_W));
    }
    for (let i = 0; i < b.slots; i++) {
      const p = slotAt(b, i);
      const obj = i < size ? sheafObject(s, b.sheaf, i) : null;
      if (obj) {
        ctx.fillStyle = STATE_COLORS[s.obj.state[(s.slab.firstObj[obj.slab] ?? 0) + obj.index] ?? ObjState.ALLOCATED] ?? COLORS.corrupt;
        ctx.fillRect(p.x, p.y, b.slotW - gap, b.stripH);
      } else if (i < size) {
        ctx.fillStyle = COLORS.corrupt; // a pointer that is no object of the cache
        ctx.fillRect(p.x, p.y, b.slotW - gap, b.stripH);
      } else {
        ctx.strokeStyle = colors.dim;
        ctx.strokeRect(p.x + 0.5, p.y + 0.5, b.slotW - gap - 1, b.stripH - 1);
      }
    }
    if (o.selectedSheaf === b.sheaf) {
      ctx.save();
      ctx.lineWidth = 2;
      ctx.strokeStyle = colors.selected;
      const slot = o.selectedSlot ?? -1;
      if (slot >= 0 && slot < b.slots) {
        const p = slotAt(b, slot);
        ctx.strokeRect(p.x - 1, p.y - 2, b.slotW + 1, b.stripH + 4);
      } else ctx.strokeRect(b.x - 2, b.stripY - 2, b.cols * b.slotW + 3, stripsH(Math.ceil(b.slots / b.cols), b.stripH) + 4);
      ctx.restore();
    }
  }
}

function slabPos(s: SlubSnapshot, pfn: number): number {
  for (let i = 0; i < s.nslabs; i++) if (s.slab.pfn[i] === pfn) return i;
  return -1;
}
