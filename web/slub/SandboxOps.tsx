// SandboxOps.tsx - operations by hand: the CPU they run on, alloc and free of
// the selected object (remote when another CPU owns its slab) in the lab's
// toolbar beside playback (SlubQuickOps); bulk alloc, bulk free of the
// shift-clicked objects, flush, an interrupt injected at the current
// micro-step, and the tuning a running kernel allows (the sysfs files
// min_partial, cpu_partial and shrink) plus the page allocator running
// short, so that new slabs fall back to the cache's lower order, in the
// panel beside the inspector (SandboxOps), with an allocation in a
// non-blocking context (on caches with sheaves, where it takes another path)
// and kmalloc_nolock, kfree_nolock and the CPU's irq_work (6.18+), and on NUMA
// nodes CPU hotplug (the CPU offline or online).  Each is
// inserted in the script after the current step.

import { useState } from 'react';
import type { Stop } from '../core/bridge-protocol';
import { ChoicePicker, range } from '../lab/pickers';
import { GFP_NAME, GFPS, SHEAF_SLOTS, TUNE_MAX, type ObjRef, type ScriptOp } from './script';
import { NO_CPU } from './snapshot';

/** The tunables at the current step. */
export interface TuningNow {
  minPartial: number;
  cpuPartial: number;
  /** The page allocator runs short (the script's last zoneShort so far turned it on). */
  zoneShort: boolean;
}

/** The operations used most, in the toolbar: the CPU they run on, alloc, and free of the selected object. */
export function SlubQuickOps({ cpus, cpu, setCpu, selection, ownerCpu, onAppend }: { cpus: number; cpu: number; setCpu: (cpu: number) => void; selection: ObjRef | null; ownerCpu: number | undefined; onAppend: (op: ScriptOp) => void }) {
  const sel = selection && selection.index >= 0 ? selection : null;
  const remote = ownerCpu !== undefined && ownerCpu !== NO_CPU && ownerCpu !== cpu;
  return (
    <>
      <ChoicePicker label="As CPU" value={cpu} choices={range(0, cpus - 1)} onPick={setCpu} />
      <button type="button" onClick={() => onAppend({ kind: 'alloc', cpu })}>
        Alloc on CPU {cpu}
      </button>
      <button type="button" disabled={!sel} title={sel ? undefined : 'Select an object first: click it in the picture'} onClick={() => sel && onAppend({ kind: 'free', cpu, refs: [sel] })}>
        Free selected from CPU {cpu}
        {remote ? ' (remote)' : ''}
      </button>
    </>
  );
}

export interface SandboxOpsProps {
  /** The CPU chosen in the toolbar (SlubQuickOps). */
  cpu: number;
  selection: ObjRef | null;
  marked: ObjRef[];
  /** The bulk-free form the marked objects would be freed with. */
  bulkForm: string;
  /** The stop on screen, and the CPU of the operation it is inside (interrupts run there). */
  stop: Stop | undefined;
  stopCpu: number;
  canInterrupt: boolean;
  tuning: TuningNow;
  /** The cache has sheaves (6.18 opted in, 7.0): its operations are offered. */
  sheaves: boolean;
  /** The kernel has per-CPU slabs (before 7.0): cpu_partial exists and a flush deactivates the CPU slab. */
  cpuSlab: boolean;
  /** On NUMA nodes: whether the chosen CPU is online now (CPU hotplug is offered); absent on one node. */
  online?: boolean;
  /** kmalloc_nolock and kfree_nolock exist (6.18+); when not given, known only where the cache has sheaves or no CPU slab (7.x). */
  nolock?: boolean;
  /** kfree_rcu_nolock exists (7.3+). */
  rcuNolock?: boolean;
  /** Sheaf slots holding a prefilled sheaf at the current step. */
  filledSlots: ReadonlySet<number>;
  onAppend: (op: ScriptOp) => void;
  onBulkFree: (cpu: number) => void;
  onInterrupt: (handler: ScriptOp['kind'], refs?: ObjRef[]) => void;
}

/** A sysfs file's value to write: the input holds the value at the current step until edited. */
function Tunable({ name, now, onSet }: { name: string; now: number; onSet: (value: number) => void }) {
  const [edited, setEdited] = useState<number | null>(null);
  const value = edited ?? now;
  return (
    <>
      <label>
        {name}{' '}
        <input type="number" min={0} max={TUNE_MAX} value={value} onChange={(e) => setEdited(Math.max(0, Math.min(TUNE_MAX, Math.floor(Number(e.target.value)) || 0)))} />
      </label>
      <button type="button" onClick={() => onSet(value)}>
        Set {name} (now {now})
      </button>
    </>
  );
}

/** kfree_rcu and its grace period, and the prefill API on the script's sheaf slots. */
function SheafOps({ cpu, sel, filled, n, onAppend }: { cpu: number; sel: ObjRef | null; filled: ReadonlySet<number>; n: number; onAppend: (op: ScriptOp) => void }) {
  const free = Array.from({ length: SHEAF_SLOTS }, (_, i) => i).find((i) => !filled.has(i));
  const slots = [...filled].sort((a, b) => a - b);
  const [picked, setPicked] = useState<number | null>(null);
  const slot = picked !== null && filled.has(picked) ? picked : slots[0];
  return (
    <fieldset className="slub-tuning">
      <legend>Sheaves: kfree_rcu and the prefill API</legend>
      <div className="slub-op-buttons">
        <button type="button" disabled={!sel} onClick={() => sel && onAppend({ kind: 'kfreeRcu', cpu, refs: [sel] })}>
          kfree_rcu selected on CPU {cpu}
        </button>
        <button type="button" onClick={() => onAppend({ kind: 'gracePeriod', cpu })}>
          Grace period for CPU {cpu}
        </button>
        <button type="button" disabled={free === undefined} onClick={() => free !== undefined && onAppend({ kind: 'prefill', cpu, slot: free, count: n })}>
          Prefill {n}{free === undefined ? '' : ` into slot ${free}`}
        </button>
        {slots.length > 0 && slot !== undefined && (
          <>
            <ChoicePicker label="Slot" value={slot} choices={slots} onPick={setPicked} />
            <button type="button" onClick={() => onAppend({ kind: 'allocFromSheaf', cpu, slot })}>
              Alloc from slot {slot}
            </button>
            <button type="button" onClick={() => onAppend({ kind: 'refillSheaf', cpu, slot, count: n })}>
              Refill slot {slot} to {n}
            </button>
            <button type="button" onClick={() => onAppend({ kind: 'returnSheaf', cpu, slot })}>
              Return slot {slot}
            </button>
          </>
        )}
      </div>
      <p className="lab-hint">N above is the prefill and refill size. A prefilled sheaf is the caller's until returned; the script holds up to {SHEAF_SLOTS}.</p>
    </fieldset>
  );
}

/**
 * The allocation's context and the no-lock API.  A GFP_ATOMIC or GFP_NOWAIT
 * allocation differs from GFP_KERNEL only on a cache with sheaves (it may not
 * refill an empty one in 6.18; the model's page allocator neither
 * reclaims nor keeps reserves), so it is offered only there.
 */
function ContextOps({ cpu, sel, sheaves, nolock, nolockKnown, rcuNolock, canInterrupt, onAppend, onInterrupt }: { cpu: number; sel: ObjRef | null; sheaves: boolean; nolock: boolean; nolockKnown: boolean; rcuNolock: boolean; canInterrupt: boolean; onAppend: (op: ScriptOp) => void; onInterrupt: SandboxOpsProps['onInterrupt'] }) {
  return (
    <fieldset className="slub-tuning">
      <legend>Context: GFP_ATOMIC, kmalloc_nolock and kfree_nolock</legend>
      <div className="slub-op-buttons">
        {sheaves &&
          GFPS.map((gfp) => (
            <button key={gfp} type="button" onClick={() => onAppend({ kind: 'allocGfp', cpu, gfp })}>
              Alloc {GFP_NAME[gfp]} on CPU {cpu}
            </button>
          ))}
        {nolock && (
          <>
            <button type="button" onClick={() => onAppend({ kind: 'kmallocNolock', cpu })}>
              kmalloc_nolock on CPU {cpu}
            </button>
            <button type="button" disabled={!sel} title={sel ? undefined : 'Select an object first: click it in the picture'} onClick={() => sel && onAppend({ kind: 'kfreeNolock', cpu, refs: [sel] })}>
              kfree_nolock selected on CPU {cpu}
            </button>
            <button type="button" onClick={() => onAppend({ kind: 'irqWork', cpu })}>
              Run CPU {cpu}'s irq_work
            </button>
            <button type="button" disabled={!canInterrupt} onClick={() => onInterrupt('kmallocNolock')}>
              Interrupt here: kmalloc_nolock
            </button>
            <button type="button" disabled={!canInterrupt || !sel} onClick={() => sel && onInterrupt('kfreeNolock', [sel])}>
              Interrupt here: kfree_nolock selected
            </button>
          </>
        )}
        {rcuNolock && (
          <>
            <button type="button" disabled={!sel} title={sel ? undefined : 'Select an object first: click it in the picture'} onClick={() => sel && onAppend({ kind: 'kfreeRcuNolock', cpu, refs: [sel] })}>
              kfree_rcu_nolock selected on CPU {cpu}
            </button>
            <button type="button" disabled={!sel} title={sel ? undefined : 'Select an object first: click it in the picture'} onClick={() => sel && onAppend({ kind: 'kfreeRcuNolock', cpu, refs: [sel], count: 1 })}>
              kfree_rcu_nolock selected on CPU {cpu}, interrupts off
            </button>
            <button type="button" disabled={!canInterrupt || !sel} onClick={() => sel && onInterrupt('kfreeRcuNolock', [sel])}>
              Interrupt here: kfree_rcu_nolock selected
            </button>
          </>
        )}
      </div>
      <p className="lab-hint">
        {sheaves
          ? 'A GFP_ATOMIC or GFP_NOWAIT allocation may not block: finding main and spare empty and no full sheaf in the barn, 6.18 takes the slab path instead of refilling a sheaf (from 7.0 they refill whenever spinning is allowed, as GFP_KERNEL does). '
          : 'GFP_ATOMIC and GFP_NOWAIT: not offered, as without sheaves they take the same path as GFP_KERNEL here (the model neither reclaims nor keeps reserves). '}
        {nolock
          ? "kmalloc_nolock waits for no lock (trylocks only, never a sheaf refill); kfree_nolock frees what it can without a lock and defers the rest to the CPU's irq_work, which the model runs as a step."
          : nolockKnown
            ? 'kmalloc_nolock, kfree_nolock and the irq_work: not in this kernel (they came with 6.18).'
            : 'kmalloc_nolock, kfree_nolock and the irq_work: offered on caches with sheaves and on 7.x (they came with 6.18; on a 6.18 cache without sheaves, write them in the script: n<cpu>, N<cpu>-<pfn>-<index>, w<cpu>).'}
      </p>
    </fieldset>
  );
}

export function SandboxOps(p: SandboxOpsProps) {
  const [bulkN, setBulkN] = useState(8);
  const { cpu } = p;
  const sel = p.selection && p.selection.index >= 0 ? p.selection : null;
  return (
    <section className="slub-ops" aria-labelledby="ops-title">
      <h3 id="ops-title">Operations by hand</h3>
      <p className="lab-hint">
        Alloc, free and the CPU they run on are in the toolbar above the picture. Each operation is inserted after the current step (the later steps stay);
        the session becomes a sandbox, still in the URL.
      </p>
      <div className="slub-op-buttons">
        <label>
          N <input type="number" min={1} max={1024} value={bulkN} onChange={(e) => setBulkN(Math.max(1, Math.min(1024, Number(e.target.value) || 1)))} aria-label="Bulk count" />
        </label>
        <button type="button" onClick={() => p.onAppend({ kind: 'allocBulk', cpu, count: bulkN })}>
          Bulk alloc {bulkN}
        </button>
        <button type="button" disabled={p.marked.length === 0} onClick={() => p.onBulkFree(cpu)}>
          Bulk free {p.marked.length} marked ({p.bulkForm})
        </button>
        <button type="button" onClick={() => p.onAppend({ kind: 'flush', cpu })}>
          {p.cpuSlab ? `Flush CPU ${cpu}` : `Flush CPU ${cpu}'s sheaves`}
        </button>
        {p.online !== undefined ? (
          // CPU hotplug on NUMA nodes: slub_cpu_dead flushes the CPU's sheaves (7.x); slub_cpu_setup gives a node without a barn its barn (7.1).
          <button type="button" onClick={() => p.onAppend({ kind: p.online ? 'cpuDead' : 'cpuOnline', cpu })}>
            {p.online ? `Take CPU ${cpu} offline` : `Bring CPU ${cpu} online`}
          </button>
        ) : null}
        <button type="button" disabled={!p.canInterrupt} onClick={() => p.onInterrupt('alloc')}>
          Interrupt here: alloc
        </button>
        <button type="button" disabled={!p.canInterrupt || !sel} onClick={() => sel && p.onInterrupt('free', [sel])}>
          Interrupt here: free selected
        </button>
      </div>
      <p className="lab-hint">
        Shift-click objects to mark them for a bulk free. An interrupt runs on the CPU of the operation at the current micro-step
        {p.stop && p.stop.micro > 0 && !p.stop.inHandler ? ` (CPU ${p.stopCpu})` : ': micro-step into an operation first'}.
      </p>
      {p.sheaves && <SheafOps cpu={cpu} sel={sel} filled={p.filledSlots} n={bulkN} onAppend={p.onAppend} />}
      <ContextOps cpu={cpu} sel={sel} sheaves={p.sheaves} nolock={p.nolock ?? (p.sheaves || !p.cpuSlab)} nolockKnown={p.nolock !== undefined} rcuNolock={p.rcuNolock ?? false} canInterrupt={p.canInterrupt} onAppend={p.onAppend} onInterrupt={p.onInterrupt} />
      <fieldset className="slub-tuning">
        <legend>Tuning: the cache's sysfs files, and the page allocator</legend>
        <div className="slub-op-buttons">
          <Tunable name="min_partial" now={p.tuning.minPartial} onSet={(value) => p.onAppend({ kind: 'minPartial', cpu: 0, value })} />
          {p.cpuSlab ? (
            <Tunable name="cpu_partial" now={p.tuning.cpuPartial} onSet={(value) => p.onAppend({ kind: 'cpuPartial', cpu: 0, value })} />
          ) : (
            <span className="lab-hint">cpu_partial: not in 7.x (no CPU partial lists; the file reads 0)</span>
          )}
          <button type="button" onClick={() => p.onAppend({ kind: 'shrink', cpu: 0 })}>
            Shrink
          </button>
          <label>
            <input type="checkbox" checked={p.tuning.zoneShort} onChange={(e) => p.onAppend({ kind: 'zoneShort', cpu: 0, value: e.target.checked ? 1 : 0 })} /> Page allocator runs
            short
          </label>
        </div>
        <p className="lab-hint">
          min_partial: empty slabs the node list keeps.{' '}
          {p.cpuSlab ? 'cpu_partial (objects): how many a CPU partial list holds; writing it flushes every CPU. ' : ''}Shrink flushes every CPU
          {p.cpuSlab ? '' : "'s sheaves and the barn"}, discards every empty slab and sorts the node list. When the page allocator runs short (only single pages free), a new slab
          falls back to the cache's lowest order and holds fewer objects (ORDER_FALLBACK).
        </p>
      </fieldset>
    </section>
  );
}
