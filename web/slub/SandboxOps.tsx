// SandboxOps.tsx - operations by hand: alloc, free of the selected object
// (remote when another CPU owns its slab), bulk alloc, bulk free of the
// shift-clicked objects, flush, and an interrupt injected at the current
// micro-step.  Each is added to the script after the current step.

import { useState } from 'react';
import type { Stop } from '../core/bridge-protocol';
import { NumberPicker, range } from '../lab/pickers';
import type { ObjRef, ScriptOp } from './script';
import { NO_CPU } from './snapshot';

export interface SandboxOpsProps {
  cpus: number;
  selection: ObjRef | null;
  /** The CPU owning the selected object's slab (NO_CPU: none). */
  ownerCpu: number | undefined;
  marked: ObjRef[];
  /** The bulk-free form the marked objects would be freed with. */
  bulkForm: string;
  /** The stop on screen, and the CPU of the operation it is inside (interrupts run there). */
  stop: Stop | undefined;
  stopCpu: number;
  canInterrupt: boolean;
  onAppend: (op: ScriptOp) => void;
  onBulkFree: (cpu: number) => void;
  onInterrupt: (handler: ScriptOp['kind'], refs?: ObjRef[]) => void;
}

export function SandboxOps(p: SandboxOpsProps) {
  const [opCpu, setOpCpu] = useState(0);
  const [bulkN, setBulkN] = useState(8);
  const cpu = Math.min(opCpu, p.cpus - 1);
  const sel = p.selection && p.selection.index >= 0 ? p.selection : null;
  const remote = p.ownerCpu !== undefined && p.ownerCpu !== NO_CPU && p.ownerCpu !== cpu;
  return (
    <section className="slub-ops" aria-labelledby="ops-title">
      <h3 id="ops-title">Operations by hand</h3>
      <p className="lab-hint">Added after the current step (later steps are dropped); the session becomes a sandbox, still in the URL.</p>
      <NumberPicker label="As CPU" value={cpu} choices={range(0, p.cpus - 1)} onPick={setOpCpu} />
      <div className="slub-op-buttons">
        <button type="button" onClick={() => p.onAppend({ kind: 'alloc', cpu })}>
          Alloc on CPU {cpu}
        </button>
        <button type="button" disabled={!sel} onClick={() => sel && p.onAppend({ kind: 'free', cpu, refs: [sel] })}>
          Free selected from CPU {cpu}
          {remote ? ' (remote)' : ''}
        </button>
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
          Flush CPU {cpu}
        </button>
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
    </section>
  );
}
