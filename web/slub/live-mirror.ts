// live-mirror.ts - the free-running view's copy of the SLUB state, kept up to
// date from the drained event rings instead of a snapshot per frame.
//
// A full snapshot anchors the mirror (at the start, and again on demand when
// the mirror can no longer trust itself); after that every frame's merged
// events are applied to it.  The SLUB events carry enough for what the
// compact live view draws: which list each slab is on and for which CPU,
// frozen, inuse, each object's place (allocated, on the CPU freelist, on the
// slab freelist), each CPU's slab, partial list and freelist length, and the
// node partial list in order, and each slab's own order and object count (a
// slab made when the page allocator ran short has the cache's fallback
// order and fewer objects: SLUB_NEW_SLAB says how many, SLUB_ORDER_FALLBACK
// before it says so for a debug cache's new slab).  Freelist order (next
// pointers, heads) is not in the events, so the mirror leaves it unknown
// (NONE32) and the live view draws no freelist arrows.  An allocation that
// takes the CPU freelist's head in the slow path (PREEMPT_RT's everyday
// allocation, under local_lock) names its object only in its OP_END.
//
// Exactness.  Applied in the order the operations happened, the events
// reproduce the state exactly: the interleaved (single-threaded) free-run is
// such an order, and live-mirror.test.ts checks the mirror against a fresh
// snapshot after thousands of operations.  With CPU threads the merge orders
// events by the sequence number each took when it was emitted, which is the
// order of the changes they report when those happen under the node's lock,
// but a slab's lock-free CAS and its event are two steps: a CPU descheduled
// between them lets another CPU's later change of that slab be merged first,
// and the event contradicts the mirror (a refill taking more objects than the
// mirror has free, say).  Each contradiction is counted in `mismatches`, and the
// view re-anchors on a snapshot.  So do events the mirror cannot follow: a
// bulk free names only each group's head, and a ring that overflowed lost
// events (the caller checks the rings' drop counters).

import { EVENT_SIZE, EventKind } from '../core/events.generated';
import type { Mirror } from '../lab/view';
import { NO_CPU, NONE32, ObjState, SlabList, slabIndexOf, type CpuState, type SlubSnapshot } from './snapshot';

interface MirrorSlab {
  pfn: number;
  order: number;
  list: number;
  /** CPU of the CPU slab or CPU partial list, or of a frozen slab; NO_CPU otherwise. */
  cpu: number;
  frozen: boolean;
  inuse: number;
  /** One entry per object of this slab (its own count). */
  state: Uint8Array;
}

interface MirrorCpu {
  slab: number;
  /** pfns, head first. */
  partial: number[];
  freelistLength: number;
  tid: number;
  tidHi: number;
  /** In an allocation's slow path with no refill yet: the object comes off the CPU freelist, named by the OP_END. */
  slowAlloc: boolean;
}

/** OP_BEGIN/OP_END's operation code of an alloc (sl_sched_kind). */
const OPCODE_ALLOC = 1;

export class LiveMirror implements Mirror<SlubSnapshot> {
  private readonly base: SlubSnapshot;
  /** Object records per slab in the snapshot's shape: the cache's objects per slab. */
  private readonly objects: number;
  private readonly slabs = new Map<number, MirrorSlab>();
  /** Slabs SLUB_ORDER_FALLBACK announced and no new-slab event has taken yet: pfn -> order, objects. */
  private readonly fallback = new Map<number, { order: number; objects: number }>();
  private readonly cpus: MirrorCpu[];
  /** The node partial list, head first (pfns). */
  private node: number[];
  /** Events of operations up to this number are in the anchoring snapshot already. */
  private readonly anchorOp: number;
  private view_: SlubSnapshot | null = null;
  /** Events that contradicted the mirror (see the file comment), since the anchor. */
  mismatches = 0;
  /** The first contradiction, in words, for the view and the tests. */
  firstMismatch = '';
  /** Events applied since the anchor. */
  applied = 0;

  constructor(anchor: SlubSnapshot) {
    this.base = anchor;
    this.objects = anchor.geometry.objects;
    this.anchorOp = anchor.lastOp;
    for (let i = 0; i < anchor.nslabs; i++) {
      const first = anchor.slab.firstObj[i] ?? 0;
      const state = anchor.obj.state.slice(first, first + (anchor.slab.objects[i] ?? 0));
      for (let j = 0; j < state.length; j++) if (state[j] !== ObjState.SLAB_FREE && state[j] !== ObjState.CPU_FREE) state[j] = ObjState.ALLOCATED;
      const pfn = anchor.slab.pfn[i] ?? 0;
      this.slabs.set(pfn, {
        pfn,
        order: anchor.slab.order[i] ?? anchor.geometry.order,
        list: anchor.slab.list[i] ?? SlabList.NONE,
        cpu: anchor.slab.cpu[i] ?? NO_CPU,
        frozen: (anchor.slab.frozen[i] ?? 0) !== 0,
        inuse: anchor.slab.inuse[i] ?? 0,
        state,
      });
    }
    this.cpus = anchor.cpus.map((c) => {
      const partial: number[] = [];
      let pfn = c.firstPartialPfn;
      while (pfn !== NONE32 && partial.length < anchor.nslabs) {
        partial.push(pfn);
        const i = slabIndexOf(anchor, pfn);
        pfn = i < 0 ? NONE32 : (anchor.slab.next[i] ?? NONE32);
      }
      return { slab: c.slabPfn, partial, freelistLength: c.freelistLength, tid: c.tid, tidHi: c.tidHi, slowAlloc: false };
    });
    this.node = anchor.nodePartial.map((i) => anchor.slab.pfn[i] ?? 0);
  }

  /** Applies merged events (EVENT_SIZE records); returns the mismatches they caused. */
  apply(events: Uint8Array): number {
    const before = this.mismatches;
    const w = new DataView(events.buffer, events.byteOffset, events.byteLength);
    for (let at = 0; at + EVENT_SIZE <= events.byteLength; at += EVENT_SIZE) {
      // Events outside operations (the page allocator's) change nothing drawn here.
      const op = w.getUint32(at, true);
      if (op === 0 || op <= this.anchorOp) continue;
      this.one(
        w.getUint16(at + 4, true),
        w.getUint16(at + 6, true),
        w.getUint32(at + 12, true),
        w.getUint32(at + 16, true),
        w.getUint32(at + 20, true),
        w.getUint32(at + 24, true),
        w.getUint32(at + 28, true),
      );
      this.applied++;
    }
    if (events.byteLength) this.view_ = null;
    return this.mismatches - before;
  }

  private mismatch(what: string): void {
    if (!this.mismatches) this.firstMismatch = what;
    this.mismatches++;
  }

  private slab(pfn: number, kind: string): MirrorSlab | null {
    const s = this.slabs.get(pfn);
    if (!s) this.mismatch(`${kind} names slab ${pfn}, which the mirror does not have`);
    return s ?? null;
  }

  private setObj(s: MirrorSlab, obj: number, expect: number, to: number, kind: string): void {
    if (obj >= s.state.length) return this.mismatch(`${kind}: object ${obj} is outside slab ${s.pfn}`);
    if (s.state[obj] !== expect) this.mismatch(`${kind}: object ${s.pfn}:${obj} was not ${stateName(expect)}`);
    s.state[obj] = to;
  }

  /** Moves every object of s in state `from` to `to`; returns how many moved. */
  private moveAll(s: MirrorSlab, from: number, to: number): number {
    let n = 0;
    for (let i = 0; i < s.state.length; i++)
      if (s.state[i] === from) {
        s.state[i] = to;
        n++;
      }
    return n;
  }

  /** Takes s off whichever list holds it (a CPU partial list or the node's). */
  private unlist(s: MirrorSlab): void {
    if (s.list === SlabList.NODE_PARTIAL) this.node = this.node.filter((p) => p !== s.pfn);
    else if (s.list === SlabList.CPU_PARTIAL) {
      const c = this.cpus[s.cpu];
      if (c) c.partial = c.partial.filter((p) => p !== s.pfn);
    }
    s.list = SlabList.NONE;
    if (!s.frozen) s.cpu = NO_CPU;
  }

  /** A refill made s the CPU slab of cpu with `taken` objects, one of them (obj) handed out. */
  private load(cpu: number, s: MirrorSlab, taken: number, obj: number, kind: string): void {
    const c = this.cpus[cpu];
    if (!c) return this.mismatch(`${kind} on CPU ${cpu}, which the mirror does not have`);
    this.unlist(s);
    const moved = this.moveAll(s, ObjState.SLAB_FREE, ObjState.CPU_FREE);
    if (moved !== taken) this.mismatch(`${kind}: slab ${s.pfn} gave ${taken} objects, the mirror had ${moved} free`);
    this.setObj(s, obj, ObjState.CPU_FREE, ObjState.ALLOCATED, kind);
    s.list = SlabList.CPU_SLAB;
    s.cpu = cpu;
    s.frozen = true;
    s.inuse = s.state.length;
    c.slab = s.pfn;
    c.freelistLength = taken - 1;
    c.slowAlloc = false;
  }

  /** A slab the page allocator just gave (a fallback one if SLUB_ORDER_FALLBACK said so), every object free. */
  private newSlab(pfn: number, order: number, objects: number, frozen: boolean): MirrorSlab {
    this.fallback.delete(pfn);
    const s: MirrorSlab = { pfn, order, list: SlabList.NONE, cpu: NO_CPU, frozen, inuse: 0, state: new Uint8Array(objects).fill(ObjState.SLAB_FREE) };
    this.slabs.set(pfn, s);
    return s;
  }

  private one(cpu: number, kind: number, pfn: number, obj: number, a0: number, a1: number, a2: number): void {
    const c = this.cpus[cpu];
    switch (kind) {
      case EventKind.SLUB_ALLOC_FASTPATH: {
        const s = this.slab(pfn, 'fast-path alloc');
        if (!s || !c) return;
        this.setObj(s, obj, ObjState.CPU_FREE, ObjState.ALLOCATED, 'fast-path alloc');
        c.freelistLength--;
        if (!a2) c.tid = a1;
        return;
      }
      case EventKind.SLUB_FREE_FASTPATH: {
        const s = this.slab(pfn, 'fast-path free');
        if (!s || !c) return;
        if (a0 !== 1) return this.mismatch(`a bulk free of ${a0} objects names only its head`);
        this.setObj(s, obj, ObjState.ALLOCATED, ObjState.CPU_FREE, 'fast-path free');
        c.freelistLength += 1;
        c.tid = a1;
        return;
      }
      case EventKind.SLUB_FREE_SLOWPATH:
      case EventKind.SLUB_FREE_TO_PARTIAL: {
        // __slab_free, or a debug cache's free_to_partial_list: onto the slab's own freelist.
        const what = kind === EventKind.SLUB_FREE_SLOWPATH ? 'slow-path free' : 'free_to_partial_list';
        const s = this.slab(pfn, what);
        if (!s) return;
        if (a0 !== 1) return this.mismatch(`a bulk free of ${a0} objects names only its head`);
        this.setObj(s, obj, ObjState.ALLOCATED, ObjState.SLAB_FREE, what);
        s.inuse = a1;
        return;
      }
      case EventKind.SLUB_REFILL_FREELIST:
      case EventKind.SLUB_REFILL_CPU_PARTIAL:
      case EventKind.SLUB_REFILL_NODE_PARTIAL: {
        const s = this.slab(pfn, 'refill');
        if (s) this.load(cpu, s, a0, obj, 'refill');
        return;
      }
      case EventKind.SLUB_NEW_SLAB: {
        if (this.slabs.has(pfn)) return this.mismatch(`new slab ${pfn} is already in the mirror`);
        this.load(cpu, this.newSlab(pfn, a0, a1, true), a1, obj, 'new slab');
        return;
      }
      case EventKind.SLUB_ORDER_FALLBACK:
        // arg0 the cache's order, arg1 the fallback order, arg2 its objects: the new-slab event follows.
        this.fallback.set(pfn, { order: a1, objects: a2 });
        return;
      case EventKind.SLUB_ALLOC_SLOWPATH:
        if (c) c.slowAlloc = true;
        return;
      case EventKind.OP_END: {
        // Whatever the operation, its slow path is over; an alloc's OP_END names the object it returned.
        if (!c || !c.slowAlloc) return;
        c.slowAlloc = false;
        if (a0 !== OPCODE_ALLOC || pfn === NONE32) return;
        const s = this.slab(pfn, 'slow-path alloc from the CPU freelist');
        if (!s) return;
        this.setObj(s, obj, ObjState.CPU_FREE, ObjState.ALLOCATED, 'slow-path alloc from the CPU freelist');
        c.freelistLength--;
        return;
      }
      case EventKind.SLUB_DEACTIVATE: {
        const s = this.slab(pfn, 'deactivate');
        if (!s) return;
        const moved = this.moveAll(s, ObjState.CPU_FREE, ObjState.SLAB_FREE);
        if (moved !== a0) this.mismatch(`deactivate: slab ${pfn} took back ${a0} objects, the mirror had ${moved} on the CPU freelist`);
        this.release(s);
        s.inuse = a2;
        return;
      }
      case EventKind.SLUB_DEACTIVATE_BYPASS: {
        const s = this.slab(pfn, 'deactivate bypass');
        if (s) this.release(s);
        return;
      }
      case EventKind.SLUB_CPU_PARTIAL_ADD: {
        const s = this.slab(pfn, 'put_cpu_partial');
        if (!s || !c) return;
        this.unlist(s);
        s.list = SlabList.CPU_PARTIAL;
        s.cpu = cpu;
        s.frozen = false;
        c.partial.unshift(pfn);
        return;
      }
      case EventKind.SLUB_NODE_PARTIAL_ADD: {
        const s = this.slab(pfn, 'add_partial');
        if (!s) return;
        this.unlist(s);
        s.list = SlabList.NODE_PARTIAL;
        s.cpu = NO_CPU;
        s.frozen = false;
        if (a0) this.node.push(pfn);
        else this.node.unshift(pfn);
        if (this.node.length !== a1) this.mismatch(`add_partial: the node list has ${a1} slabs, the mirror ${this.node.length}`);
        return;
      }
      case EventKind.SLUB_NODE_PARTIAL_REMOVE: {
        const s = this.slab(pfn, 'remove_partial');
        if (!s) return;
        this.unlist(s);
        if (this.node.length !== a1) this.mismatch(`remove_partial: the node list has ${a1} slabs, the mirror ${this.node.length}`);
        return;
      }
      case EventKind.SLUB_DISCARD_SLAB: {
        const s = this.slab(pfn, 'discard');
        if (!s) return;
        this.unlist(s);
        for (const k of this.cpus) if (k.slab === pfn) k.slab = NONE32;
        this.slabs.delete(pfn);
        return;
      }
      case EventKind.SLUB_ALLOC_SINGLE: {
        // A debug cache: no CPU slab; the slab's list moves follow as their own events.
        let s = this.slabs.get(pfn);
        if (c) c.slowAlloc = false;
        if (a0 === 1) {
          if (s) return this.mismatch(`new slab ${pfn} is already in the mirror`);
          const fb = this.fallback.get(pfn);
          s = this.newSlab(pfn, fb?.order ?? this.base.geometry.order, fb?.objects ?? this.objects, false);
        } else if (!s) return this.mismatch(`alloc_single names slab ${pfn}, which the mirror does not have`);
        this.setObj(s, obj, ObjState.SLAB_FREE, ObjState.ALLOCATED, 'alloc_single');
        s.inuse = a1;
        return;
      }
      case EventKind.SLUB_QUARANTINE:
        return this.mismatch('a quarantined object (the mirror does not follow debug errors)');
      default:
        // OP_BEGIN, CAS retries, list drains (their slabs' own events follow), pages; and what changes
        // nothing the mirror holds: a sysfs write (SLUB_TUNE: its flushes and list moves follow as their
        // own events), rt's free starting over (SLUB_RT_REDO), a double free refused (SLUB_HARDENED_DOUBLE_FREE).
        return;
    }
  }

  /** The CPU gives up s as its CPU slab (deactivate or bypass): unfrozen, on no list until told. */
  private release(s: MirrorSlab): void {
    for (const k of this.cpus)
      if (k.slab === s.pfn) {
        k.slab = NONE32;
        k.freelistLength = 0;
      }
    s.frozen = false;
    this.unlist(s);
  }

  /** The mirrored state in the snapshot's shape, for the renderers (rebuilt after new events only). */
  view(): SlubSnapshot {
    if (this.view_) return this.view_;
    const pfns = [...this.slabs.keys()].sort((a, b) => a - b);
    const nslabs = pfns.length;
    const n = this.objects;
    const slab = {
      pfn: Uint32Array.from(pfns),
      order: new Uint8Array(nslabs),
      list: new Uint8Array(nslabs),
      cpu: new Uint8Array(nslabs),
      frozen: new Uint8Array(nslabs),
      objects: new Uint16Array(nslabs),
      inuse: new Uint16Array(nslabs),
      freelistHead: new Uint32Array(nslabs).fill(NONE32),
      next: new Uint32Array(nslabs).fill(NONE32),
      firstObj: new Uint32Array(nslabs),
      slabFreeCount: new Uint16Array(nslabs),
      cpuFreeCount: new Uint16Array(nslabs),
      position: new Uint16Array(nslabs),
    };
    const obj = {
      state: new Uint8Array(nslabs * n).fill(ObjState.NO_OBJECT),
      allocCpu: new Uint8Array(nslabs * n).fill(NO_CPU),
      freeCpu: new Uint8Array(nslabs * n).fill(NO_CPU),
      next: new Uint32Array(nslabs * n).fill(NONE32),
      allocOp: new Uint32Array(nslabs * n),
      freeOp: new Uint32Array(nslabs * n),
    };
    const rec = new Map<number, number>();
    pfns.forEach((pfn, i) => {
      const s = this.slabs.get(pfn) as MirrorSlab;
      rec.set(pfn, i);
      slab.order[i] = s.order;
      slab.objects[i] = s.state.length;
      slab.list[i] = s.list;
      slab.cpu[i] = s.cpu;
      slab.frozen[i] = s.frozen ? 1 : 0;
      slab.inuse[i] = s.inuse;
      slab.firstObj[i] = i * n;
      obj.state.set(s.state, i * n);
      let free = 0;
      let cpuFree = 0;
      for (const st of s.state) {
        if (st === ObjState.SLAB_FREE) free++;
        else if (st === ObjState.CPU_FREE) cpuFree++;
      }
      slab.slabFreeCount[i] = free;
      slab.cpuFreeCount[i] = cpuFree;
    });
    const chain = (list: number[]) =>
      list.forEach((pfn, pos) => {
        const i = rec.get(pfn);
        if (i === undefined) return;
        slab.position[i] = pos;
        slab.next[i] = list[pos + 1] ?? NONE32;
      });
    const cpus: CpuState[] = this.cpus.map((c, k) => {
      chain(c.partial);
      return {
        cpu: k,
        freelistPfn: c.freelistLength > 0 ? c.slab : NONE32,
        freelistIndex: NONE32,
        tid: c.tid,
        tidHi: c.tidHi,
        slabPfn: c.slab,
        partialCount: c.partial.length,
        firstPartialPfn: c.partial[0] ?? NONE32,
        freelistLength: c.freelistLength,
      };
    });
    chain(this.node);
    let totalObjects = 0;
    for (const s of this.slabs.values()) totalObjects += s.state.length;
    this.view_ = {
      ...this.base,
      nslabs,
      nobj: nslabs * n,
      node: { nrPartial: this.node.length, nrSlabs: nslabs, totalObjects },
      cpus,
      nodePartial: this.node.map((pfn) => rec.get(pfn) ?? 0),
      slab,
      obj,
    };
    return this.view_;
  }
}

function stateName(st: number): string {
  return st === ObjState.SLAB_FREE ? 'on the slab freelist' : st === ObjState.CPU_FREE ? 'on the CPU freelist' : 'allocated';
}
