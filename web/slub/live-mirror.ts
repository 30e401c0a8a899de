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
// Sheaves (6.18's opt-in cache, every 7.0 cache).  The mirror keeps each
// sheaf by id with its objects in slot order, each CPU's main, spare and
// rcu_free, the barn's full and empty lists in order, and an object a sheaf
// holds has the snapshot's state for the sheaf's place.  A pop or push names
// its object; a refill's objects are named one by one (SLUB_SHEAF_FILL: the
// slab layer's events say how many each slab gave, not which), a flush takes
// the sheaf's top objects, and the slab layer's group frees that follow are
// matched against them; where the kernel installs a refilled or new sheaf
// without saying so, SLUB_PCS_SHEAVES gives the CPU's sheaves, and a sheaf
// that left them (or that an operation still holds at its end) is in the
// barn.  In 7.0 a refill takes slabs' whole freelists (refill_objects), so
// the mirror leaves those objects on their slabs until the fills name them,
// and a surplus handed back stays there.  Not followed (a mismatch each): the
// prefill API, objects kfree_rcu'd alone, bootstrap_cache_sheaves, bulk
// frees to sheaves (their events name the first object only).
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

import { EVENT_SIZE, EventKind, eventKindInfo } from '../core/events.generated';
import type { Mirror } from '../lab/view';
import { Era, NO_CPU, NONE32, objectRecords, ObjState, SheafPlace, sheafRecords, SlabList, slabIndexOf, slabRecords, type CpuState, type PcsState, type SheavesState, type SlubSnapshot } from './snapshot';

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
  /** Sheaf ids of slub_percpu_sheaves: main (0: the bootstrap sheaf), spare and rcu_free (0: none). */
  main: number;
  spare: number;
  rcuFree: number;
  /** Sheaves handed to call_rcu, head first. */
  rcuPending: number[];
  /** Objects a sheaf flush took, on their way to their slabs (objKey): the slab layer's events name only each group's head. */
  flushing: number[];
  /** 7.0: a sheaf refill is taking slabs' whole freelists; a free of objects still on a slab freelist is one handing back the surplus. */
  refilling: boolean;
}

/** Where a sheaf is in the mirror: a SheafPlace, or in the hands of the CPU acting (a refill, a flush) until an event places it. */
const IN_HAND = 0xff;

interface MirrorSheaf {
  id: number;
  capacity: number;
  place: number;
  /** The CPU of a per-CPU place or of the hand holding it; NO_CPU in the barn and for a prefilled sheaf. */
  cpu: number;
  rcuFlush: boolean;
  /** The objects, slot 0 first, as objKey. */
  objects: number[];
}

/** An object as one number: its slab's pfn and its index (fewer than 2^16 objects per slab). */
const objKey = (pfn: number, index: number) => pfn * 0x10000 + index;
const keyPfn = (key: number) => Math.floor(key / 0x10000);
const keyIndex = (key: number) => key % 0x10000;

/** The object state a sheaf's objects have in the snapshot, by the sheaf's place (snapshot.c's state_for). */
function heldState(place: number): number {
  if (place === SheafPlace.MAIN || place === SheafPlace.SPARE) return ObjState.CPU_SHEAF;
  if (place === SheafPlace.BARN_FULL || place === SheafPlace.BARN_EMPTY) return ObjState.BARN;
  if (place === SheafPlace.PREFILLED) return ObjState.PREFILLED;
  return ObjState.RCU;
}
/** The mirror's own state for an object any sheaf holds (view() writes the place's). */
const IN_SHEAF = ObjState.CPU_SHEAF;
const isHeld = (st: number) => st >= ObjState.CPU_SHEAF && st <= ObjState.PREFILLED;

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
  /** The cache has a per-CPU slab (every version before 7.0). */
  private readonly cpuSlab: boolean;
  /** Slabs on a CPU partial list are frozen (the seeds' 4.x). */
  private readonly frozenPartial: boolean;
  /** Every sheaf by id. */
  private readonly sheaves = new Map<number, MirrorSheaf>();
  /** The barn's full and empty sheaves (ids, head first) and the prefilled sheaves out. */
  private barnFull: number[] = [];
  private barnEmpty: number[] = [];
  private prefilled: number[] = [];
  /** Sheaves in hand, in the order they were taken (they go to the barn at their operation's end if nothing placed them). */
  private inHand: number[] = [];
  private view_: SlubSnapshot | null = null;
  /** Events that contradicted the mirror (see the file comment), since the anchor. */
  mismatches = 0;
  /** The first contradiction, in words, for the view and the tests. */
  firstMismatch = '';
  /** Events applied since the anchor. */
  applied = 0;
  /**
   * The anchor holds no sheaves to start from (a snapshot taken while CPU threads ran leaves them
   * out, and objects kfree_rcu'd alone are not followed): sheaf events then count as mismatches.
   */
  sheavesLeftOut = false;

  constructor(anchor: SlubSnapshot) {
    this.base = anchor;
    this.objects = anchor.geometry.objects;
    this.anchorOp = anchor.lastOp;
    this.cpuSlab = anchor.kernel.cpuSlab;
    this.frozenPartial = anchor.kernel.era === Era.FROZEN_PARTIAL;
    for (let i = 0; i < anchor.nslabs; i++) {
      const first = anchor.slab.firstObj[i] ?? 0;
      const state = anchor.obj.state.slice(first, first + (anchor.slab.objects[i] ?? 0));
      for (let j = 0; j < state.length; j++) {
        const st = state[j] ?? ObjState.ALLOCATED;
        if (st !== ObjState.SLAB_FREE && st !== ObjState.CPU_FREE) state[j] = isHeld(st) ? IN_SHEAF : ObjState.ALLOCATED;
      }
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
      return {
        slab: c.slabPfn, partial, freelistLength: c.freelistLength, tid: c.tid, tidHi: c.tidHi, slowAlloc: false,
        main: 0, spare: 0, rcuFree: 0, rcuPending: [], flushing: [], refilling: false,
      };
    });
    this.node = anchor.nodePartial.map((i) => anchor.slab.pfn[i] ?? 0);
    this.loadSheaves(anchor);
  }

  /** The anchor's sheaves (a snapshot taken while CPU threads ran has none: sheavesLeftOut). */
  private loadSheaves(anchor: SlubSnapshot): void {
    const sh = anchor.sheaves;
    if (!anchor.kernel.hasSheaves) return;
    if (!sh.taken) {
      this.sheavesLeftOut = true;
      return;
    }
    for (let i = 0; i < sh.nsheaves; i++) {
      const place = sh.sheaf.place[i] ?? 0;
      const cpu = sh.sheaf.cpu[i] ?? NO_CPU;
      const first = sh.sheaf.first[i] ?? 0;
      const objects = Array.from({ length: sh.sheaf.size[i] ?? 0 }, (_, j) => objKey(sh.entryPfn[first + j] ?? 0, sh.entryIndex[first + j] ?? 0));
      if (place === SheafPlace.RCU_WAIT) {
        this.sheavesLeftOut = true; // objects kfree_rcu'd alone: the mirror does not follow them
        continue;
      }
      const id = sh.sheaf.id[i] ?? 0;
      this.sheaves.set(id, { id, capacity: sh.sheaf.capacity[i] ?? 0, place, cpu, rcuFlush: (sh.sheaf.rcuFlush[i] ?? 0) !== 0, objects });
      const c = this.cpus[cpu];
      if (place === SheafPlace.MAIN && c) c.main = id;
      else if (place === SheafPlace.SPARE && c) c.spare = id;
      else if (place === SheafPlace.RCU_FREE && c) c.rcuFree = id;
      else if (place === SheafPlace.RCU_PENDING && c) c.rcuPending.push(id);
      else if (place === SheafPlace.BARN_FULL) this.barnFull.push(id);
      else if (place === SheafPlace.BARN_EMPTY) this.barnEmpty.push(id);
      else if (place === SheafPlace.PREFILLED) this.prefilled.push(id);
    }
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
        if (!this.freeGroup(c, s, obj, a0, ObjState.CPU_FREE, 'fast-path free')) return;
        c.freelistLength += a0;
        c.tid = a1;
        return;
      }
      case EventKind.SLUB_FREE_SLOWPATH:
      case EventKind.SLUB_FREE_TO_PARTIAL: {
        // __slab_free, or a debug cache's free_to_partial_list: onto the slab's own freelist.
        const what = kind === EventKind.SLUB_FREE_SLOWPATH ? 'slow-path free' : 'free_to_partial_list';
        const s = this.slab(pfn, what);
        if (!s) return;
        // 7.0: a refill taking more than it needs hands the surplus back, objects the mirror never took off the slab.
        if (c?.refilling && s.state[obj] === ObjState.SLAB_FREE) s.inuse = a1;
        else if (this.freeGroup(c, s, obj, a0, ObjState.SLAB_FREE, what)) s.inuse = a1;
        return;
      }
      case EventKind.SLUB_REFILL_NODE_PARTIAL: {
        if (this.cpuSlab) {
          const s = this.slab(pfn, 'refill');
          if (s) this.load(cpu, s, a0, obj, 'refill');
        } else {
          // 7.0 refill_objects: the slab's whole freelist taken (which objects, the sheaf fills name).
          const s = this.slab(pfn, 'refill_objects');
          if (!s || !c) return;
          const free = s.state.reduce((n, st) => n + (st === ObjState.SLAB_FREE ? 1 : 0), 0);
          if (free !== a0) this.mismatch(`refill_objects: slab ${pfn} gave ${a0} objects, the mirror had ${free} free`);
          s.inuse = s.state.length;
          c.refilling = true;
        }
        return;
      }
      case EventKind.SLUB_REFILL_FREELIST:
      case EventKind.SLUB_REFILL_CPU_PARTIAL: {
        const s = this.slab(pfn, 'refill');
        if (s) this.load(cpu, s, a0, obj, 'refill');
        return;
      }
      case EventKind.SLUB_NEW_SLAB: {
        if (this.slabs.has(pfn)) return this.mismatch(`new slab ${pfn} is already in the mirror`);
        if (this.cpuSlab) return this.load(cpu, this.newSlab(pfn, a0, a1, true), a1, obj, 'new slab');
        // 7.0 alloc_from_new_slab: arg2 objects taken at once, by one allocation (named here) or by a refill (named by the fills).
        const s = this.newSlab(pfn, a0, a1, false);
        s.inuse = a2;
        if (c?.slowAlloc) {
          c.slowAlloc = false;
          this.setObj(s, obj, ObjState.SLAB_FREE, ObjState.ALLOCATED, 'alloc_from_new_slab');
        } else if (c) c.refilling = true;
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
        if (!c) return;
        this.endSheafWork(cpu, c);
        if (!c.slowAlloc) return;
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
        // Before 6.8 a slab entered a CPU partial list frozen (eras.h).
        s.frozen = this.frozenPartial;
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
        if (kind >= EventKind.SLUB_SHEAF_ALLOC && kind <= EventKind.SLUB_PCS_SHEAVES) return this.sheafEvent(cpu, kind, pfn, obj, a0, a1, a2);
        // OP_BEGIN, CAS retries, list drains (their slabs' own events follow), pages; and what changes
        // nothing the mirror holds: a sysfs write (SLUB_TUNE: its flushes and list moves follow as their
        // own events), rt's free starting over (SLUB_RT_REDO), a double free refused (SLUB_HARDENED_DOUBLE_FREE).
        return;
    }
  }

  /**
   * A free of `count` objects headed by obj into slab s, to state `to`: one object, or a group of
   * a sheaf flush (the others of the group are objects of the same slab the flush took).
   */
  private freeGroup(c: MirrorCpu | undefined, s: MirrorSlab, obj: number, count: number, to: number, what: string): boolean {
    const head = objKey(s.pfn, obj);
    const flushing = c?.flushing ?? [];
    if (count !== 1 && !flushing.includes(head)) {
      this.mismatch(`a bulk free of ${count} objects names only its head`);
      return false;
    }
    const group = [head];
    for (const k of flushing) if (group.length < count && k !== head && keyPfn(k) === s.pfn) group.push(k);
    if (group.length !== count) this.mismatch(`${what}: a group of ${count} objects of slab ${s.pfn}, the flush holds ${group.length}`);
    if (c) c.flushing = flushing.filter((k) => !group.includes(k));
    for (const k of group) this.setObj(s, keyIndex(k), ObjState.ALLOCATED, to, what);
    return true;
  }

  private sheaf(id: number, what: string): MirrorSheaf | null {
    const sh = this.sheaves.get(id);
    if (!sh) this.mismatch(`${what} names sheaf #${id}, which the mirror does not have`);
    return sh ?? null;
  }

  /** Takes a sheaf from wherever it is (a CPU's, the barn, prefilled, in hand) into the hand of `cpu`. */
  private take(sh: MirrorSheaf, cpu: number): void {
    this.detach(sh, cpu);
    sh.place = IN_HAND;
    this.inHand.push(sh.id);
  }

  /** Takes a sheaf off wherever it is, to be put somewhere by the caller (its cpu set to `cpu`). */
  private detach(sh: MirrorSheaf, cpu: number): void {
    const drop = (list: number[]) => list.filter((x) => x !== sh.id);
    const owner = this.cpus[sh.cpu];
    if (owner) {
      if (owner.main === sh.id) owner.main = 0;
      if (owner.spare === sh.id) owner.spare = 0;
      if (owner.rcuFree === sh.id) owner.rcuFree = 0;
      owner.rcuPending = drop(owner.rcuPending);
    }
    this.barnFull = drop(this.barnFull);
    this.barnEmpty = drop(this.barnEmpty);
    this.prefilled = drop(this.prefilled);
    this.inHand = drop(this.inHand);
    sh.cpu = cpu;
  }

  /** Puts a sheaf at a CPU's main, spare or rcu_free (whatever was there stays in hand until placed). */
  private put(sh: MirrorSheaf, place: number, cpu: number): void {
    const c = this.cpus[cpu];
    if (!c) return this.mismatch(`sheaf #${sh.id} put on CPU ${cpu}, which the mirror does not have`);
    this.detach(sh, cpu);
    const field = place === SheafPlace.MAIN ? 'main' : place === SheafPlace.SPARE ? 'spare' : 'rcuFree';
    const before = this.sheaves.get(c[field]);
    if (before && before !== sh) this.take(before, cpu);
    c[field] = sh.id;
    sh.place = place;
  }

  /** barn_put_*_sheaf: to the head of the barn's full or empty list, by its size. */
  private toBarn(sh: MirrorSheaf): void {
    this.detach(sh, NO_CPU);
    const full = sh.objects.length > 0;
    sh.place = full ? SheafPlace.BARN_FULL : SheafPlace.BARN_EMPTY;
    sh.cpu = NO_CPU;
    (full ? this.barnFull : this.barnEmpty).unshift(sh.id);
  }

  /** The end of an operation: sheaves still in its hand went to the barn (the paths with no event of their own); a flush must have landed. */
  private endSheafWork(cpu: number, c: MirrorCpu): void {
    c.refilling = false;
    for (const id of this.inHand.slice()) {
      const sh = this.sheaves.get(id);
      if (sh && sh.cpu === cpu) this.toBarn(sh);
    }
    if (c.flushing.length) {
      this.mismatch(`${c.flushing.length} objects a sheaf flush took on CPU ${cpu} never reached a slab`);
      c.flushing = [];
    }
  }

  /** Moves an object into a sheaf's next slot. */
  private push(sh: MirrorSheaf, pfn: number, obj: number, from: number, what: string): void {
    const s = this.slab(pfn, what);
    if (!s) return;
    this.setObj(s, obj, from, IN_SHEAF, what);
    sh.objects.push(objKey(pfn, obj));
  }

  /** The top `n` objects of a sheaf, taken off it and set to `to`. */
  private pop(sh: MirrorSheaf, n: number, to: number, what: string): number[] {
    if (n > sh.objects.length) {
      this.mismatch(`${what}: sheaf #${sh.id} gave ${n} objects, the mirror has ${sh.objects.length} in it`);
      n = sh.objects.length;
    }
    const out = sh.objects.splice(sh.objects.length - n, n);
    for (const k of out) {
      const s = this.slab(keyPfn(k), what);
      if (s) this.setObj(s, keyIndex(k), IN_SHEAF, to, what);
    }
    return out;
  }

  private sizeIs(sh: MirrorSheaf, n: number, what: string): void {
    if (sh.objects.length !== n) this.mismatch(`${what}: sheaf #${sh.id} holds ${n} objects, the mirror ${sh.objects.length}`);
  }

  /** The sheaves' events (events.def 150-172). */
  private sheafEvent(cpu: number, kind: number, pfn: number, obj: number, a0: number, a1: number, a2: number): void {
    const c = this.cpus[cpu];
    if (!c) return this.mismatch(`a sheaf event on CPU ${cpu}, which the mirror does not have`);
    if (this.sheavesLeftOut) return this.mismatch('a sheaf event, but the anchor left the sheaves out');
    switch (kind) {
      case EventKind.SLUB_SHEAF_ALLOC: {
        const sh = this.sheaf(a0, 'alloc_from_pcs');
        if (!sh) return;
        const popped = this.pop(sh, a2 || 1, ObjState.ALLOCATED, 'alloc_from_pcs');
        // One object: the one popped; a bulk batch names its lowest slot.
        if (popped[0] !== objKey(pfn, obj)) this.mismatch(`alloc_from_pcs: sheaf #${a0} gave ${pfn}:${obj}, the mirror's top is another object`);
        return this.sizeIs(sh, a1, 'alloc_from_pcs');
      }
      case EventKind.SLUB_SHEAF_FREE: {
        if (a2 > 1) return this.mismatch(`a bulk free of ${a2} objects to a sheaf names only its first`);
        const sh = this.sheaf(a0, 'free_to_pcs');
        if (!sh) return;
        if (c.main !== a0) this.mismatch(`free_to_pcs: sheaf #${a0} is not CPU ${cpu}'s main in the mirror`);
        this.push(sh, pfn, obj, ObjState.ALLOCATED, 'free_to_pcs');
        return this.sizeIs(sh, a1, 'free_to_pcs');
      }
      case EventKind.SLUB_SHEAF_SWAP: {
        // The new main was the spare, or an empty sheaf from the barn; the old main becomes the spare.
        const sh = this.sheaf(a0, 'main/spare swap');
        const old = this.sheaves.get(c.main);
        if (!sh) return;
        this.put(sh, SheafPlace.MAIN, cpu);
        if (old) this.put(old, SheafPlace.SPARE, cpu);
        return this.sizeIs(sh, a1, 'main/spare swap');
      }
      case EventKind.SLUB_BARN_GET: {
        const full = this.sheaf(a0, 'barn_get');
        const empty = this.sheaf(a1, 'barn_get');
        if (!full || !empty) return;
        if (c.main !== a1) this.mismatch(`barn_get: sheaf #${a1} is not CPU ${cpu}'s main in the mirror`);
        this.take(full, cpu);
        this.toBarn(empty);
        this.put(full, SheafPlace.MAIN, cpu);
        if (this.barnFull.length !== a2) this.mismatch(`barn_get: the barn holds ${a2} full sheaves, the mirror ${this.barnFull.length}`);
        return;
      }
      case EventKind.SLUB_BARN_PUT: {
        const full = this.sheaf(a0, 'barn_put');
        if (!full) return;
        const empty = a1 ? this.sheaf(a1, 'barn_put') : null;
        if (empty) this.take(empty, cpu);
        this.toBarn(full);
        if (empty) this.put(empty, SheafPlace.MAIN, cpu);
        if (this.barnFull.length !== a2) this.mismatch(`barn_put: the barn holds ${a2} full sheaves, the mirror ${this.barnFull.length}`);
        return;
      }
      case EventKind.SLUB_SHEAF_REFILL: {
        // The sheaf being refilled leaves the spare or the barn (a new one is in hand, a prefilled one stays out).
        const sh = this.sheaf(a0, 'refill_sheaf');
        if (!sh) return;
        if (sh.place !== SheafPlace.PREFILLED && sh.place !== IN_HAND) this.take(sh, cpu);
        c.refilling = false;
        if (sh.objects.length + a1 !== a2) this.mismatch(`refill_sheaf: sheaf #${a0} holds ${a2} after ${a1} more, the mirror ${sh.objects.length} before`);
        return;
      }
      case EventKind.SLUB_SHEAF_FILL: {
        const sh = this.sheaf(a0, 'refill_sheaf');
        if (!sh) return;
        if (a1 !== sh.objects.length) this.mismatch(`refill_sheaf: slot ${a1} of sheaf #${a0}, the mirror's next is ${sh.objects.length}`);
        // Over a per-CPU slab the refill is a bulk allocation (its objects allocated by their own events); in 7.0 straight off slab freelists.
        this.push(sh, pfn, obj, this.cpuSlab ? ObjState.ALLOCATED : ObjState.SLAB_FREE, 'refill_sheaf');
        return;
      }
      case EventKind.SLUB_SHEAF_FLUSH: {
        const sh = this.sheaf(a0, 'sheaf_flush');
        if (!sh) return;
        if (!a2 && a1 !== sh.objects.length) this.mismatch(`sheaf_flush_unused: sheaf #${a0} flushes ${a1} objects, the mirror holds ${sh.objects.length}`);
        c.flushing.push(...this.pop(sh, a1, ObjState.ALLOCATED, 'sheaf_flush'));
        return;
      }
      case EventKind.SLUB_SHEAF_NEW:
        if (this.sheaves.has(a0)) return this.mismatch(`new sheaf #${a0} is already in the mirror`);
        this.sheaves.set(a0, { id: a0, capacity: a1, place: IN_HAND, cpu, rcuFlush: false, objects: [] });
        this.inHand.push(a0);
        return;
      case EventKind.SLUB_SHEAF_DROP: {
        const sh = this.sheaf(a0, 'free_empty_sheaf');
        if (!sh) return;
        if (sh.objects.length) this.mismatch(`free_empty_sheaf: sheaf #${a0} still holds ${sh.objects.length} objects in the mirror`);
        this.detach(sh, cpu);
        this.sheaves.delete(a0);
        return;
      }
      case EventKind.SLUB_RCU_SHEAF_ADD: {
        const sh = this.sheaf(a0, 'kfree_rcu');
        if (!sh) return;
        if (c.rcuFree !== a0) this.put(sh, SheafPlace.RCU_FREE, cpu);
        this.push(sh, pfn, obj, ObjState.ALLOCATED, 'kfree_rcu');
        this.sizeIs(sh, a1, 'kfree_rcu');
        if (a2) {
          // Full: handed to call_rcu (the head of the CPU's pending list).
          this.detach(sh, cpu);
          sh.place = SheafPlace.RCU_PENDING;
          c.rcuPending.unshift(a0);
        }
        return;
      }
      case EventKind.SLUB_RCU_GRACE_PERIOD: {
        const sh = this.sheaf(a0, 'rcu_free_sheaf');
        if (!sh) return;
        // To the barn full; or flushed (its SHEAF_FLUSH follows), then to the barn empty or freed.
        if (a2 === 0) this.toBarn(sh);
        else this.take(sh, cpu);
        return;
      }
      case EventKind.SLUB_PCS_FLUSH: {
        // The spare is flushed and freed, rcu_free goes to call_rcu to be flushed, main is flushed in batches.
        const spare = this.sheaves.get(c.spare);
        if (spare) this.take(spare, cpu);
        const rcu = this.sheaves.get(c.rcuFree);
        if (rcu) {
          this.detach(rcu, cpu);
          rcu.place = SheafPlace.RCU_PENDING;
          rcu.rcuFlush = true;
          c.rcuPending.unshift(rcu.id);
        }
        return;
      }
      case EventKind.SLUB_PCS_SHEAVES: {
        const places = [[a0, SheafPlace.MAIN], [a1, SheafPlace.SPARE], [a2, SheafPlace.RCU_FREE]] as const;
        const was = [c.main, c.spare, c.rcuFree];
        for (const [id, place] of places) {
          const sh = id ? this.sheaf(id, 'the CPU\'s sheaves') : null;
          if (sh) this.put(sh, place, cpu);
        }
        // A sheaf that left them went to the barn.
        for (const id of was) {
          const sh = this.sheaves.get(id);
          if (sh && !places.some(([x]) => x === id)) this.toBarn(sh);
        }
        c.main = a0;
        c.spare = a1;
        c.rcuFree = a2;
        return;
      }
      case EventKind.SLUB_BARN_SHRINK:
        if (this.barnFull.length || this.barnEmpty.length) this.mismatch(`barn_shrink: the mirror's barn still holds ${this.barnFull.length + this.barnEmpty.length} sheaves`);
        return;
      case EventKind.SLUB_BARN_GET_FAIL:
      case EventKind.SLUB_BARN_PUT_FAIL:
      case EventKind.SLUB_SHEAF_TRYLOCK_FAIL:
        return;
      default:
        // The prefill API, bootstrap_cache_sheaves, and objects kfree_rcu'd alone.
        return this.mismatch(`${eventKindInfo(kind)?.name ?? kind}: the live mirror does not follow it`);
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
    const slab = slabRecords(nslabs);
    slab.pfn.set(pfns);
    slab.freelistHead.fill(NONE32);
    slab.next.fill(NONE32);
    const obj = objectRecords(nslabs * n);
    obj.state.fill(ObjState.NO_OBJECT);
    obj.allocCpu.fill(NO_CPU);
    obj.freeCpu.fill(NO_CPU);
    obj.next.fill(NONE32);
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
    const sheaves = this.sheavesView(rec, obj.state);
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
      sheaves,
    };
    return this.view_;
  }

  /** The sheaves in the snapshot's shape (snapshot.c's walk order), their objects' states set by place in `state`. */
  private sheavesView(rec: Map<number, number>, state: Uint8Array): SheavesState {
    const base = this.base.sheaves;
    if (!this.base.kernel.hasSheaves || this.sheavesLeftOut) return base;
    const order: { sh: MirrorSheaf; place: number; cpu: number }[] = [];
    const pcs: PcsState[] = this.cpus.map((c, k) => {
      const at = (id: number, place: number) => {
        const sh = this.sheaves.get(id);
        if (!sh) return -1;
        order.push({ sh, place, cpu: k });
        return order.length - 1;
      };
      const out = { main: at(c.main, SheafPlace.MAIN), spare: at(c.spare, SheafPlace.SPARE), rcuFree: at(c.rcuFree, SheafPlace.RCU_FREE), locked: false };
      for (const id of c.rcuPending) at(id, SheafPlace.RCU_PENDING);
      return out;
    });
    const shared = (ids: number[], place: number) => {
      for (const id of ids) {
        const sh = this.sheaves.get(id);
        if (sh) order.push({ sh, place, cpu: NO_CPU });
      }
    };
    shared(this.barnFull, SheafPlace.BARN_FULL);
    shared(this.barnEmpty, SheafPlace.BARN_EMPTY);
    shared(this.prefilled, SheafPlace.PREFILLED);
    const nsheaves = order.length;
    const sheaf = sheafRecords(nsheaves);
    const nentries = order.reduce((n, o) => n + o.sh.objects.length, 0);
    const entryPfn = new Uint32Array(nentries);
    const entryIndex = new Uint32Array(nentries);
    const positions = new Map<string, number>();
    let e = 0;
    order.forEach(({ sh, place, cpu }, i) => {
      const group = `${place}:${cpu}`;
      const pos = positions.get(group) ?? 0;
      positions.set(group, pos + 1);
      sheaf.id[i] = sh.id;
      sheaf.place[i] = place;
      sheaf.cpu[i] = cpu;
      sheaf.rcuFlush[i] = sh.rcuFlush ? 1 : 0;
      sheaf.size[i] = sh.objects.length;
      sheaf.capacity[i] = sh.capacity;
      sheaf.first[i] = e;
      sheaf.position[i] = pos;
      const held = heldState(place);
      for (const k of sh.objects) {
        entryPfn[e] = keyPfn(k);
        entryIndex[e++] = keyIndex(k);
        const r = rec.get(keyPfn(k));
        if (r !== undefined) state[r * this.objects + keyIndex(k)] = held;
      }
    });
    return { taken: true, capacity: base.capacity, barnFull: this.barnFull.length, barnEmpty: this.barnEmpty.length, pcs, nsheaves, sheaf, entryPfn, entryIndex };
  }
}

function stateName(st: number): string {
  return st === ObjState.SLAB_FREE ? 'on the slab freelist' : st === ObjState.CPU_FREE ? 'on the CPU freelist' : 'allocated';
}
