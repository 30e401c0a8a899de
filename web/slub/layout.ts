// layout.ts - where each CPU lane, list section and slab strip goes on the
// canvas, computed once per snapshot and width (render.ts draws it, the click
// and keyboard handlers hit-test it).  Two densities: "detailed" (a
// scenario's few slabs: names, object slots large enough to label, freelist
// arrows) and "compact" (hundreds of slabs in free-running mode or a real
// kernel's: small slots, no labels, arrows only for the selected slab),
// chosen from the number of slabs and the width.
//
// Detailed slots are as large as the figure allows: the largest slot (up to
// 36 px; at least 24 px from 700 px wide, 16 px below, 14 px on a phone)
// at which the whole drawing fits in 55 % of its width (with the caption and
// buttons, about 16:10).  A slab of many
// objects wraps into rows (and zooms out to keep at most 8 of them), so a
// slab of 512 objects stays a block, not a line.  Below 640 px the lane's
// words go above its slabs instead of beside them.  Lanes are drawn for the
// CPUs the story uses (`cpus`); the others are one row that a click opens.
//
// Kernels with sheaves (6.18's opted-in caches, 7.0): each CPU lane starts
// with one row per sheaf it holds (main, spare, rcu_free, the rcu sheaves
// handed to call_rcu, the objects waiting alone), capacity slots each; the
// barn (the node's full and empty sheaves) and the prefilled sheaves out
// with callers get sections of their own before the node partial list.  A
// 7.0 lane has no CPU slab, freelist or tid: none is drawn.

import { alignedLayout, rowHeight } from '../lab/align';
import type { CanvasLayout } from '../lab/LabCanvas';
import type { CanvasItem } from '../lab/motion';
import { cpuPartialSlabs, NONE32, SheafPlace, sheavesAt, slabIndexOf, SlabList, type SheafPlaceValue, type SlubSnapshot } from './snapshot';

/** A sheaf's place in words (SheafPlace order). */
export const SHEAF_ROLES = ['main', 'spare', 'rcu_free', 'rcu (handed to call_rcu)', 'barn (full)', 'barn (empty)', 'prefilled', 'waiting alone for RCU'] as const;

export interface SheafBox {
  /** Sheaf record index in the snapshot. */
  sheaf: number;
  x: number;
  y: number;
  slotW: number;
  stripY: number;
  stripH: number;
  /** Slots drawn: the sheaf's capacity (or its size, for the objects waiting alone). */
  slots: number;
  /** Slots per row (a sheaf of many wraps). */
  cols: number;
}

export interface SlabBox {
  slab: number;
  x: number;
  y: number;
  /** Slot width; a row is cols * slotW wide (a fallback slab holds fewer objects). */
  slotW: number;
  stripY: number;
  /** One row of slots' height. */
  stripH: number;
  /** Slots per row, and rows (a slab of many objects wraps). */
  cols: number;
  rows: number;
  /** What the slab is in this section (for its label). */
  role: 'cpu-slab' | 'cpu-partial' | 'node-partial' | 'full';
}

export interface Section {
  title: string;
  /** Lines under the title (CPU lanes: freelist, tid, partial count). */
  lines: string[];
  y: number;
  h: number;
  cpu: number;
  /** A CPU inside its sheaf section (the local trylock held). */
  locked?: boolean;
  /** The CPUs folded into this one row (clicking it shows them), or shown beyond the story's (clicking hides them). */
  cpuToggle?: 'show' | 'hide';
  /** Where the section's drawing starts (its words are above it on a narrow figure). */
  bodyY: number;
  /** The lines as drawn: packed several to a row above the drawing on a narrow figure (absent: `lines`). */
  drawn?: string[];
  /** With NUMA nodes: the node this section belongs to, and whether it is the node's heading. */
  node?: number;
  nodeHead?: boolean;
}

/** A CPU lane whose sheaves go back to another node's barn (6.18/7.0: a memoryless node's CPUs use their memory node's barn). */
export interface BarnLink {
  cpu: number;
  node: number;
  /** The lane's and the barn's title rows. */
  fromY: number;
  toY: number;
}

export interface Layout extends CanvasLayout {
  width: number;
  height: number;
  compact: boolean;
  /** The words beside the drawing (0: above it, on a narrow figure). */
  labelW: number;
  /** Where slabs and sheaves start. */
  left: number;
  boxes: SlabBox[];
  sheaves: SheafBox[];
  sections: Section[];
  /** Slab record -> its box, -1 if not drawn (full slabs hidden). */
  boxOf: Int32Array;
  /** Full slabs not drawn. */
  hiddenFull: number;
  /** With NUMA nodes: lanes linked to another node's barn. */
  links: BarnLink[];
}

export interface LayoutOptions {
  width: number;
  showFull: boolean;
  /** Force compact drawing (free-running mode). */
  compact?: boolean;
  /** The CPUs to give lanes (the story's); the others fold into one row that a click opens. Absent: every CPU. */
  cpus?: readonly number[];
  /** The folded CPUs opened (their lanes drawn, and a row to fold them again). */
  allCpus?: boolean;
  /** The other panes' states, side by side with this one: the same slot size and section heights, so rows line up. */
  alignWith?: readonly SlubSnapshot[];
  /** The height the detailed drawing tries to fit in (default: 55 % of the width, at least 300 px, so that a figure with its caption and buttons is about 16:10; on a phone 1.4 times the width). */
  maxHeight?: number;
}

const hex = (n: number) => `0x${n.toString(16)}`;
/** A slab's name in words: its pfn, or the name the snapshot gives it (slabNames). */
export const pfnName = (s: SlubSnapshot, pfn: number) => {
  const i = s.slabNames ? slabIndexOf(s, pfn) : -1;
  return i >= 0 ? (s.slabNames?.[i] ?? String(pfn)) : String(pfn);
};
const clamp = (v: number, lo: number, hi: number) => Math.max(lo, Math.min(hi, v));

/** Font sizes on the canvas (never under 12 px). */
export const FONT = { title: 14, text: 12, slot: 12 } as const;
/** The room a sheaf's label takes ("main sheaf #3 · 2/4", about 20 characters). */
export const SHEAF_LABEL_W = 20 * 7.3;
/** A line of words in a lane. */
export const LINE_H = 16;
/** A slab box's label row, and the room its freelist arcs take above and below the slots. */
const LABEL_H = 18;
const ARC_ABOVE = 13;
const ARC_BELOW = 14;
const ROW_GAP = 6;

/** The name the stories give a slab: A for the first of the zone's pfns, B for the next, ... (a fallback slab, or past Z: none). */
export function slabLetter(s: SlubSnapshot, slab: number): string | null {
  if (s.slabNames) return null; // a real kernel's slabs carry their own names
  const order = s.slab.order[slab] ?? 0;
  if (order !== s.geometry.order) return null;
  const n = Math.floor((s.slab.pfn[slab] ?? 0) / (1 << order));
  return n < 26 ? String.fromCharCode(65 + n) : null;
}

/** A slab's name on the canvas and in words: "A (pfn 0)", or "pfn 64" when it has no letter. */
export function slabName(s: SlubSnapshot, slab: number): string {
  if (s.slabNames) return pfnName(s, s.slab.pfn[slab] ?? 0);
  const letter = slabLetter(s, slab);
  return letter ? `${letter} (pfn ${s.slab.pfn[slab]})` : `pfn ${s.slab.pfn[slab]}`;
}

/** Where object slot `i` of a box is. */
export function slotAt(b: Pick<SlabBox, 'x' | 'stripY' | 'slotW' | 'stripH' | 'cols'>, i: number): { x: number; y: number } {
  const col = i % b.cols;
  const row = Math.floor(i / b.cols);
  return { x: b.x + col * b.slotW, y: b.stripY + row * (b.stripH + ROW_GAP) };
}

/** The height of `rows` rows of slots. */
export const stripsH = (rows: number, stripH: number) => rows * stripH + Math.max(0, rows - 1) * ROW_GAP;

/** Words packed into lines of about `chars` characters (a narrow figure's lane words, above its drawing). */
function pack(lines: string[], chars: number): string[] {
  const out: string[] = [];
  for (const l of lines) {
    const last = out[out.length - 1];
    if (last !== undefined && last.length + 3 + l.length <= chars) out[out.length - 1] = `${last} · ${l}`;
    else out.push(l);
  }
  return out;
}

export function layoutSnapshot(s: SlubSnapshot, o: LayoutOptions): Layout {
  const compact = o.compact ?? s.nslabs > 48;
  if (compact) return layoutAt(s, o, true, 0);
  const others = (o.alignWith ?? []).filter((x) => x !== s && !(o.compact ?? x.nslabs > 48));
  if (!others.length) return layoutAt(s, o, false, fitSlot(s, o));
  // Panes side by side: one slot size (the smallest any needs) and each section as tall as the tallest of its name, so rows line up.
  const slot = Math.min(fitSlot(s, o), ...others.map((x) => fitSlot(x, o)));
  return alignedLayout(s, others, (x, minH) => layoutAt(x, o, false, slot, minH), (l) => l.sections.map((sec) => ({ key: sec.title, h: sec.h })));
}

/** The largest slot at which the detailed drawing fits its height (or the smallest allowed). */
function fitSlot(s: SlubSnapshot, o: LayoutOptions): number {
  const narrow = o.width < 640;
  const maxSlot = 36;
  const minSlot = o.width >= 700 ? 24 : narrow ? 14 : 16;
  const maxHeight = o.maxHeight ?? (narrow ? Math.round(o.width * 1.4) : Math.max(300, Math.round(o.width * 0.55)));
  for (let slot = maxSlot; slot > minSlot; slot -= 2) if (layoutAt(s, o, false, slot).height <= maxHeight) return slot;
  return minSlot;
}

function layoutAt(s: SlubSnapshot, o: LayoutOptions, compact: boolean, slotTarget: number, minH?: ReadonlyMap<string, number>): Layout {
  const objects = Math.max(1, s.geometry.objects);
  const narrow = !compact && o.width < 640;
  const labelW = compact ? 120 : narrow ? 0 : 186;
  const left = narrow ? 8 : labelW;
  const avail = Math.max(160, o.width - left - 8);
  const pad = compact ? 4 : 16;
  let slotW: number;
  let cols: number;
  if (compact) {
    slotW = Math.max(2, Math.min(6, Math.floor(avail / (objects * 8))));
    cols = objects;
  } else {
    // The target slot, or smaller so that one slab fits the width; a slab that still does not fit wraps (at most 8 rows: then it zooms out).
    slotW = clamp(Math.floor((avail - pad) / objects), Math.min(slotTarget, 14), slotTarget);
    cols = Math.max(1, Math.min(objects, Math.floor((avail - pad) / slotW)));
    if (Math.ceil(objects / cols) > 8) {
      cols = Math.ceil(objects / 8);
      slotW = Math.max(6, Math.floor((avail - pad) / cols));
    }
  }
  const rows = Math.ceil(objects / cols);
  const stripH = compact ? 8 : clamp(slotW, 18, 30);
  const boxW = cols * slotW + pad;
  const boxH = compact ? stripH + 4 : LABEL_H + ARC_ABOVE + stripsH(rows, stripH) + ARC_BELOW + 4;
  const perRow = Math.max(1, Math.floor(avail / boxW));
  const boxes: SlabBox[] = [];
  const sheafBoxes: SheafBox[] = [];
  const sections: Section[] = [];
  const boxOf = new Int32Array(s.nslabs).fill(-1);
  let y = 4;

  // Sheaves: one slot width for all, so equal capacities line up; a sheaf of many slots wraps.
  const sh = s.sheaves;
  const drawSheaves = s.kernel.hasSheaves && sh.taken;
  let widest = 1;
  for (let i = 0; i < sh.nsheaves; i++) widest = Math.max(widest, sh.sheaf.capacity[i] ?? 0, sh.sheaf.size[i] ?? 0);
  const sheafSlotW = compact ? Math.max(2, Math.min(4, Math.floor(avail / widest))) : clamp(Math.floor((avail - 12) / widest), 12, Math.max(12, slotW - 4));
  const sheafCols = compact ? widest : Math.max(1, Math.min(widest, Math.floor((avail - 12) / sheafSlotW)));
  const sheafStripH = compact ? 6 : clamp(sheafSlotW, 14, 24);
  const sheafHead = compact ? 2 : LABEL_H;
  /** Places sheaf records in rows from the top of the section at `top`, several to a row when they fit; returns the height taken. */
  const placeSheaves = (records: number[], top: number): number => {
    let x = left;
    let rowTop = top;
    let rowH = 0;
    for (const rec of records) {
      const slots = Math.max(1, sh.sheaf.place[rec] === SheafPlace.RCU_WAIT ? (sh.sheaf.size[rec] ?? 0) : (sh.sheaf.capacity[rec] ?? 0));
      const c = Math.min(slots, sheafCols);
      const h = sheafHead + stripsH(Math.ceil(slots / c), sheafStripH) + (compact ? 4 : 8);
      // A label ("main sheaf #3 · 2/4") needs its room.
      const w = Math.max(c * sheafSlotW, compact ? 0 : SHEAF_LABEL_W) + (compact ? 4 : 14);
      if (x > left && x + w > left + avail) {
        x = left;
        rowTop += rowH;
        rowH = 0;
      }
      sheafBoxes.push({ sheaf: rec, x, y: rowTop, slotW: sheafSlotW, stripY: rowTop + sheafHead, stripH: sheafStripH, slots, cols: c });
      x += w;
      rowH = Math.max(rowH, h);
    }
    return records.length ? rowTop + rowH - top : 0;
  };
  const cpuSheaves = (cpu: number) =>
    drawSheaves ? ([SheafPlace.MAIN, SheafPlace.SPARE, SheafPlace.RCU_FREE, SheafPlace.RCU_PENDING, SheafPlace.RCU_WAIT] as SheafPlaceValue[]).flatMap((p) => sheavesAt(s, p, cpu)) : [];

  const place = (slabs: number[], role: SlabBox['role'], title: string, rawLines: string[], cpu: number, minRows = 1, sheafRecs: number[] = [], extra: Partial<Section> = {}) => {
    const lines = narrow ? pack(rawLines, Math.floor(avail / 7.3)) : rawLines;
    const textH = (compact ? 16 : 22) + (compact ? 12 : LINE_H) * lines.length;
    const bodyY = narrow ? y + textH : y;
    // Each CPU's sheaves one to a row (a stack per CPU), the barn's packed.
    const sheafH = cpu >= 0 ? sheafRecs.reduce((h, rec) => h + placeSheaves([rec], bodyY + h), 0) : placeSheaves(sheafRecs, bodyY);
    const rowsOfSlabs = slabs.length ? Math.max(minRows, Math.ceil(slabs.length / perRow)) : compact && !sheafRecs.length ? minRows : 0;
    const bodyH = sheafH + rowsOfSlabs * boxH;
    const h = rowHeight(minH, title, (narrow ? textH + bodyH : Math.max(textH, bodyH)) + (compact ? 6 : 8));
    slabs.forEach((slab, i) => {
      const bx = left + (i % perRow) * boxW;
      const by = bodyY + sheafH + Math.floor(i / perRow) * boxH;
      boxOf[slab] = boxes.length;
      boxes.push({ slab, x: bx, y: by, slotW, stripY: compact ? by + 2 : by + LABEL_H + ARC_ABOVE, stripH, cols, rows, role: i === 0 && role === 'cpu-slab' ? 'cpu-slab' : role === 'cpu-slab' ? 'cpu-partial' : role });
    });
    sections.push({ title, lines: rawLines, y, h, cpu, bodyY, ...(narrow ? { drawn: lines } : {}), ...extra });
    y += h;
  };

  const sheafLine = (rec: number | undefined, name: string) =>
    rec === undefined || rec < 0 ? `${name}: none` : `${name}: ${sh.sheaf.size[rec]}/${sh.sheaf.capacity[rec]}`;
  const story = o.cpus ? new Set(o.cpus) : null;
  const wanted = story && !o.allCpus ? story : null;
  const others = s.cpus.filter((c) => story && !story.has(c.cpu)).map((c) => c.cpu);
  const numa = s.numa;
  /** A CPU's lane: its sheaves, and before 7.0 its CPU slab and partial list. */
  const lane = (c: SlubSnapshot['cpus'][number]) => {
    const pcs = sh.pcs[c.cpu];
    const recs = cpuSheaves(c.cpu);
    const sheafLines = drawSheaves && pcs
      ? [pcs.main < 0 ? 'main: the bootstrap sheaf (capacity 0)' : sheafLine(pcs.main, 'main'), sheafLine(pcs.spare, 'spare'), ...(pcs.locked ? ['in its sheaf section (trylock held)'] : [])]
      : [];
    const locked = pcs?.locked ? { locked: true } : {};
    if (!s.kernel.cpuSlab) {
      // 7.0: no kmem_cache_cpu; the lane is the CPU's sheaves.
      place([], 'cpu-partial', `CPU ${c.cpu}`, compact ? sheafLines.slice(0, 2) : [...sheafLines, sheafLine(pcs?.rcuFree, 'rcu_free'), ...barnLine(c.cpu)], c.cpu, 1, recs, locked);
      return;
    }
    const own = c.slabPfn === NONE32 ? -1 : slabIndexOf(s, c.slabPfn);
    const partial = cpuPartialSlabs(s, c.cpu);
    const fl =
      c.freelistPfn === NONE32
        ? c.freelistIndex === NONE32
          ? 'freelist: empty'
          : 'freelist: CORRUPT'
        : `freelist → ${own >= 0 && s.slab.pfn[own] === c.freelistPfn ? (slabLetter(s, own) ?? pfnName(s, c.freelistPfn)) : pfnName(s, c.freelistPfn)}:${c.freelistIndex} (${c.freelistLength} free)`;
    const lines = compact
      ? [`tid ${hex(c.tid)}`, `${c.freelistLength} free · ${c.partialCount} partial`]
      : [fl, `tid ${c.tid} (${hex(c.tid)})`, `slab ${own < 0 ? 'none' : (slabLetter(s, own) ?? (s.slabNames ? pfnName(s, c.slabPfn) : `pfn ${c.slabPfn}`))} · ${c.partialCount} partial`];
    place(own < 0 ? partial : [own, ...partial], own < 0 ? 'cpu-partial' : 'cpu-slab', `CPU ${c.cpu}`, compact ? lines : [...lines, ...sheafLines, ...barnLine(c.cpu)], c.cpu, 1, recs, locked);
  };
  /** With NUMA nodes, a CPU whose sheaves go to another node's barn says which (6.18/7.0: a memoryless node's CPUs use their memory node's). */
  const barnLine = (cpu: number): string[] => {
    if (!numa || !drawSheaves) return [];
    const own = numa.cpuNode[cpu] ?? 0;
    const barn = numa.cpuBarnNode[cpu] ?? own;
    return barn === own ? [] : [`barn: node ${barn}'s (numa_mem_id)`];
  };
  /** The row of CPUs the story does not use: folded (a click shows them) or shown (a click folds them). Every such row toggles them all. */
  const foldRow = (cpus: readonly number[]) => {
    if (!cpus.length) return;
    const names = cpus.length === 1 ? `CPU ${cpus[0]}` : `CPUs ${cpus.join(', ')}`;
    const toggle = wanted ? 'show' : 'hide';
    sections.push({ title: wanted ? `+ ${names}` : `− fold ${names}`, lines: [wanted ? 'not used by this story: click to show' : 'not used by this story: click to fold'], y, h: 30, cpu: -1, bodyY: y, cpuToggle: toggle });
    y += 30;
  };
  const links: BarnLink[] = [];
  if (!numa) {
    for (const c of s.cpus) if (!wanted || wanted.has(c.cpu)) lane(c);
    foldRow(others);
  } else {
    const barnSections = new Map<number, number>();
    const laneOf = new Map<number, number>();
    for (const node of numa.nodes) {
      const cpusHere = s.cpus.filter((c) => (numa.cpuNode[c.cpu] ?? 0) === node.nid);
      const memNode = cpusHere.length ? (numa.cpuMemNode[cpusHere[0]?.cpu ?? 0] ?? 0) : node.nid;
      const offline = cpusHere.filter((c) => !((numa.onlineCpus >> c.cpu) & 1)).map((c) => c.cpu);
      const lines = [
        cpusHere.length ? `CPU${cpusHere.length === 1 ? '' : 's'} ${cpusHere.map((c) => c.cpu).join(', ')}${offline.length ? ` (offline: ${offline.join(', ')})` : ''}` : 'no CPUs',
        node.hasMemory ? 'memory: slabs of its own' : `memoryless: slabs from node ${memNode}`,
        ...(drawSheaves ? [node.hasBarn ? 'a barn of its own' : 'no barn'] : []),
      ];
      place([], 'node-partial', `Node ${node.nid}${node.hasMemory ? '' : ' (memoryless)'}`, lines, -2, 0, [], { node: node.nid, nodeHead: true });
      for (const c of cpusHere)
        if (!wanted || wanted.has(c.cpu)) {
          lane(c);
          laneOf.set(c.cpu, sections.length - 1);
        }
      // The node's CPUs the story does not use fold under the node, beside its other CPUs.
      foldRow(cpusHere.map((c) => c.cpu).filter((c) => others.includes(c)));
      if (drawSheaves && node.hasBarn) {
        const recs = [...sheavesAt(s, SheafPlace.BARN_FULL), ...sheavesAt(s, SheafPlace.BARN_EMPTY)].filter((r) => barnNodeOf(s, r) === node.nid);
        const full = recs.filter((r) => sh.sheaf.place[r] === SheafPlace.BARN_FULL).length;
        place([], 'node-partial', `Barn · node ${node.nid}`, [`${full} full, ${recs.length - full} empty`, `sheaf capacity ${sh.capacity}`], -1, 1, recs, { node: node.nid });
        barnSections.set(node.nid, sections.length - 1);
      } else if (drawSheaves && cpusHere.length) {
        // No barn here (before 7.1 a memoryless node's; or none made yet): the row says whose its CPUs use, and side-by-side rows stay in line.
        const used = [...new Set(cpusHere.map((c) => numa.cpuBarnNode[c.cpu] ?? memNode))].filter((n) => n !== node.nid);
        place([], 'node-partial', `Barn · node ${node.nid}`, ['none', used.length ? `its CPUs use node ${used.join(', ')}'s` : 'its CPUs have none to use'], -1, 0, [], { node: node.nid });
      }
      if (node.hasMemory) {
        const slabs = nodePartialOf(s, node.nid);
        place(slabs, 'node-partial', `Node ${node.nid} partial`, [`${slabs.length} slab${slabs.length === 1 ? '' : 's'}`, `min_partial ${s.geometry.minPartial}`], -1, 1, [], { node: node.nid });
      }
    }
    // A CPU whose barn is another node's: a link from its lane to that barn.
    if (drawSheaves)
      for (const [cpu, at] of laneOf) {
        const barn = numa.cpuBarnNode[cpu] ?? 0;
        const to = barnSections.get(barn);
        const from = sections[at];
        if (barn !== (numa.cpuNode[cpu] ?? 0) && to !== undefined && from) links.push({ cpu, node: barn, fromY: from.y + 12, toY: (sections[to]?.y ?? 0) + 12 });
      }
  }
  if (drawSheaves && !numa) {
    const full = sheavesAt(s, SheafPlace.BARN_FULL);
    const empty = sheavesAt(s, SheafPlace.BARN_EMPTY);
    place([], 'node-partial', 'Barn', [`${sh.barnFull} full, ${sh.barnEmpty} empty`, `sheaf capacity ${sh.capacity}`], -1, 1, [...full, ...empty]);
  }
  if (drawSheaves) {
    const prefilled = sheavesAt(s, SheafPlace.PREFILLED);
    if (prefilled.length) place([], 'node-partial', 'Prefilled sheaves', [`${prefilled.length} out with callers`], -1, 1, prefilled);
  }
  if (!numa) place(s.nodePartial, 'node-partial', 'Node partial', [`${s.node.nrPartial} slab${s.node.nrPartial === 1 ? '' : 's'}`, `min_partial ${s.geometry.minPartial}`], -1);
  const full: number[] = [];
  for (let i = 0; i < s.nslabs; i++) if (s.slab.list[i] === SlabList.NONE) full.push(i);
  if (o.showFull) place(full, 'full', 'Full (no list)', [`${full.length} slab${full.length === 1 ? '' : 's'}`], -1, 0);
  else {
    sections.push({ title: 'Full (no list)', lines: [`${s.fullSlabs ?? full.length} hidden`], y, h: 40, cpu: -1, bodyY: y });
    y += 40;
  }

  // Slabs keep their pfn from stop to stop: a slab that changed lists glides to its new place (LabCanvas's motion).
  const items: CanvasItem[] = compact ? [] : boxes.map((b) => ({ key: `slab ${s.slab.pfn[b.slab]}`, x: b.x - 4, y: b.y, w: b.cols * b.slotW + 10, h: boxH - 2 }));
  // Sheaves keep their id from stop to stop: a sheaf moving between a CPU and the barn glides there.
  if (!compact) for (const b of sheafBoxes) items.push({ key: `sheaf ${sh.sheaf.id[b.sheaf]}`, x: b.x - 2, y: b.y, w: b.cols * b.slotW + 4, h: b.stripY + stripsH(Math.ceil(b.slots / b.cols), b.stripH) - b.y + 2 });
  const lanes = sections.filter((x) => x.cpu >= 0).length;
  const figure = {
    slot: boxes.length ? slotW : 0, sheafSlot: sheafBoxes.length ? sheafSlotW : 0, lanes, folded: sections.find((x) => x.cpuToggle)?.y ?? -1, slabs: boxes.length, sheaves: sheafBoxes.length,
    ...(numa ? { nodes: numa.nodes.length, barns: numa.nodes.filter((x) => x.hasBarn).length, links: links.length } : {}),
  };
  const alignedRows = sections.map((sec) => ({ key: sec.title, y: sec.y, h: sec.h }));
  return { width: o.width, height: y + 4, compact, labelW, left, boxes, sheaves: sheafBoxes, sections, boxOf, hiddenFull: o.showFull ? 0 : full.length, items, figure, alignedRows, links };
}

/** One stop of the arrow keys: a sheaf (its record) or a slab (its record). */
export type KeyStop = { sheaf: number; slab?: undefined } | { slab: number; sheaf?: undefined };

/**
 * The order Up and Down step through what is drawn: sheaves and slabs top to bottom, left to
 * right (a CPU lane's sheaves come before its slabs, the barn's before the node's list).  Without
 * a layout (the [ ] { } keys away from the canvas): every sheaf record, then every slab.
 */
export function keyOrder(s: SlubSnapshot, l?: Layout): KeyStop[] {
  if (!l) return [...Array.from({ length: s.sheaves.nsheaves }, (_, sheaf) => ({ sheaf })), ...Array.from({ length: s.nslabs }, (_, slab) => ({ slab }))];
  const at = [...l.sheaves.map((b) => ({ b, stop: { sheaf: b.sheaf } as KeyStop })), ...l.boxes.map((b) => ({ b, stop: { slab: b.slab } as KeyStop }))];
  return at.sort((p, q) => p.b.y - q.b.y || p.b.x - q.b.x).map((x) => x.stop);
}

export interface Hit {
  /** Slab record of the object (or of the slab itself), -1 for none (an empty sheaf slot, a sheaf's label). */
  slab: number;
  /** Object index, or -1 for the slab itself (its label). */
  index: number;
  /** The sheaf record clicked (its slot or its label), if a sheaf was. */
  sheaf?: number;
  /** The sheaf's slot (object position), -1 for its label. */
  slot?: number;
  /** The row of folded CPUs was clicked: show them (or hide them again). */
  cpus?: 'show' | 'hide';
}

/** The slot of a box (slab or sheaf) under (x, y), -1 for none. */
function slotUnder(b: { x: number; stripY: number; slotW: number; stripH: number; cols: number }, count: number, x: number, y: number): number {
  const col = Math.floor((x - b.x) / b.slotW);
  if (col < 0 || col >= b.cols) return -1;
  const dy = y - b.stripY;
  const row = Math.floor(dy / (b.stripH + ROW_GAP));
  if (dy < 0 || dy - row * (b.stripH + ROW_GAP) >= b.stripH) return -1;
  const i = row * b.cols + col;
  return i < count ? i : -1;
}

/** The node of the barn holding sheaf record `rec` (numa.ts; the first node with a barn when unknown). */
export function barnNodeOf(s: SlubSnapshot, rec: number): number {
  const n = s.numa;
  if (!n) return 0;
  return n.barnSheafNode.get(s.sheaves.sheaf.id[rec] ?? 0) ?? n.nodes.find((x) => x.hasBarn)?.nid ?? 0;
}

/**
 * Node `nid`'s partial list, head first, as slab records: the snapshot lists every node's in
 * node order, each slab with its node (slab_nid).
 */
export function nodePartialOf(s: SlubSnapshot, nid: number): number[] {
  return s.nodePartial.filter((slab) => (s.slab.nid[slab] ?? 0) === nid);
}

/** What is under (x, y), if anything. */
export function hitTest(l: Layout, s: SlubSnapshot, x: number, y: number): Hit | null {
  for (const sec of l.sections) if (sec.cpuToggle && y >= sec.y && y < sec.y + sec.h) return { slab: -1, index: -1, cpus: sec.cpuToggle };
  for (const b of l.sheaves) {
    const bottom = b.stripY + stripsH(Math.ceil(b.slots / b.cols), b.stripH);
    if (x < b.x || x >= b.x + Math.max(b.cols * b.slotW, SHEAF_LABEL_W) || y < b.y || y >= bottom) continue;
    if (y < b.stripY) return { slab: -1, index: -1, sheaf: b.sheaf, slot: -1 };
    const slot = slotUnder(b, b.slots, x, y);
    if (slot < 0) continue;
    const obj = sheafObject(s, b.sheaf, slot);
    return { slab: obj?.slab ?? -1, index: obj?.index ?? -1, sheaf: b.sheaf, slot };
  }
  for (const b of l.boxes) {
    const objects = s.slab.objects[b.slab] ?? 0;
    const w = b.cols * b.slotW;
    if (x < b.x || x >= b.x + w + (l.compact ? 0 : 10)) continue;
    const i = slotUnder(b, objects, x, y);
    if (i >= 0) return { slab: b.slab, index: i };
    const bottom = b.stripY + stripsH(b.rows, b.stripH);
    if (!l.compact && y >= b.y && y < bottom + ARC_BELOW) return { slab: b.slab, index: -1 };
  }
  return null;
}

/** The object in slot `slot` of sheaf record `sheaf`, as (slab record, object index), or null for an empty slot or a pointer that is no object. */
export function sheafObject(s: SlubSnapshot, sheaf: number, slot: number): { slab: number; index: number } | null {
  const sh = s.sheaves;
  if (slot < 0 || slot >= (sh.sheaf.size[sheaf] ?? 0)) return null;
  const at = (sh.sheaf.first[sheaf] ?? 0) + slot;
  const slab = slabIndexOf(s, sh.entryPfn[at] ?? NONE32);
  const index = sh.entryIndex[at] ?? NONE32;
  return slab >= 0 && index < (s.slab.objects[slab] ?? 0) ? { slab, index } : null;
}
