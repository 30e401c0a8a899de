// perfetto.ts - any step-by-step session as a Perfetto trace, in the Chrome
// JSON format (the `traceEvents` array ui.perfetto.dev and chrome://tracing
// open), from what every view already gives the engine: the merged events of
// each pane and their words (EventWords).  One exporter for every view:
//   - a process per pane, a thread track per CPU; each top-level operation
//     (OP_BEGIN .. OP_END, an interrupt handler's nested inside) a slice
//     named by the script's step, every other event an instant on its CPU
//     named by its words (category: the timeline's kind group);
//   - counter tracks "live objects" and "slabs" (or chunks) per track the view's
//     `effect` names (a SLUB cache, a percpu chunk), where its events say;
//   - a flow from an allocation to its free when the free ran on another CPU.
// The lab has no clock: event i of the merged order is at i microseconds.

import { EventKind, type SlEvent } from '../core/events.generated';
import type { OpNames } from './describe';
import type { EventWords } from './view';

export interface ExportPane {
  label: string;
  events: readonly SlEvent[];
  names: OpNames;
}

type TraceEvent = Record<string, string | number | Record<string, string | number>>;

/** The Chrome JSON trace of a session's panes (`title` names the session). */
export function labPerfetto(title: string, panes: readonly ExportPane[], words: EventWords<OpNames>): string {
  const out: TraceEvent[] = [];
  let flowId = 0;
  panes.forEach((pane, p) => {
    const pid = p + 1;
    out.push({ ph: 'M', name: 'process_name', pid, tid: 0, args: { name: pane.label ? `${title}: ${pane.label}` : title } });
    const cpus = new Set(pane.events.map((e) => e.cpu));
    for (const cpu of cpus) out.push({ ph: 'M', name: 'thread_name', pid, tid: cpu, args: { name: `CPU ${cpu}` } });
    const live = new Map<string, number>();
    const slabs = new Map<string, number>();
    /** Objects alive, by key: where and when they were handed out. */
    const born = new Map<string, { cpu: number; ts: number }>();
    /** Operations open per CPU (interrupt handlers nest). */
    const depth = new Map<number, number>();
    pane.events.forEach((e, i) => {
      const ts = i;
      const text = words.event(e, pane.names);
      const cat = words.groupOf(e.kind);
      if (e.kind === EventKind.OP_BEGIN) {
        const d = depth.get(e.cpu) ?? 0;
        depth.set(e.cpu, d + 1);
        out.push({ ph: 'B', pid, tid: e.cpu, ts, cat, name: d === 0 && pane.names.has(e.op) ? pane.names.name(e.op) : text, args: { event: i } });
      } else if (e.kind === EventKind.OP_END) {
        depth.set(e.cpu, Math.max(0, (depth.get(e.cpu) ?? 1) - 1));
        out.push({ ph: 'E', pid, tid: e.cpu, ts, args: { result: text } });
      } else {
        out.push({ ph: 'i', s: 't', pid, tid: e.cpu, ts, cat, name: text, args: { event: i } });
      }
      const fx = words.effect?.(e);
      if (!fx) return;
      if (fx.slabs) {
        slabs.set(fx.track, (slabs.get(fx.track) ?? 0) + fx.slabs.delta);
        out.push({ ph: 'C', pid, ts, name: `${fx.track} ${fx.slabs.noun}`, args: { [fx.slabs.noun]: slabs.get(fx.track) ?? 0 } });
      }
      const o = fx.object;
      if (!o) return;
      const key = `${fx.track} ${o.key}`;
      if (o.alloc) {
        born.set(key, { cpu: e.cpu, ts });
        live.set(fx.track, (live.get(fx.track) ?? 0) + 1);
      } else {
        const b = born.get(key);
        born.delete(key);
        if (b) live.set(fx.track, (live.get(fx.track) ?? 1) - 1);
        if (b && b.cpu !== e.cpu) {
          const id = ++flowId;
          out.push({ ph: 's', pid, tid: b.cpu, ts: b.ts, id, cat: 'remote free', name: 'remote free' });
          out.push({ ph: 'f', bp: 'e', pid, tid: e.cpu, ts, id, cat: 'remote free', name: 'remote free' });
        }
      }
      out.push({ ph: 'C', pid, ts, name: `${fx.track} live objects`, args: { live: live.get(fx.track) ?? 0 } });
    });
  });
  return JSON.stringify({ traceEvents: out, displayTimeUnit: 'ns', otherData: { source: 'slablab lab session', clock: 'event i of the merged order at i µs' } });
}
