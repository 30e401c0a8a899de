// FreeRunView.tsx - free-running mode: the CPUs run a workload at full speed
// (one CPU worker thread each in the threads build; interleaved in rounds on
// the bridge worker in the single build), and the view samples the whole
// state once per animation frame, with live counters per CPU.

import { useEffect, useRef, useState } from 'react';
import type { UrlState } from '../app/url-state';
import { BridgeError, getBridge } from '../core/bridge';
import { describeBridgeError, type CoreState } from '../core/use-core';
import type { FreerunCpu, FreerunSample } from './protocol';
import { SlabCanvas } from './SlabCanvas';
import { decodeSnapshot, type SlubSnapshot } from './snapshot';
import type { Overlay } from './render';
import './slub.css';

const NO_OVERLAY: Overlay = { selected: null, marked: new Set(), detached: null, arrows: 'selected' };

interface Live {
  mode: FreerunSample['mode'];
  snapshot: SlubSnapshot;
  cpus: FreerunCpu[];
  rates: number[];
  elapsedMs: number;
  samples: number;
}

export interface FreeRunHook {
  running: boolean;
  mode: string;
  samples: number;
  threadIds: number[];
  ops: number[];
  slabs: number;
  objects: number;
}
declare global {
  interface Window {
    __slablabFreeRun?: FreeRunHook;
  }
}

export function FreeRunView({ core, state, update }: { core: CoreState; state: UrlState; update: (p: Partial<UrlState>) => void }) {
  const cpus = Math.max(2, state.cpus);
  const [running, setRunning] = useState(false);
  const [live, setLive] = useState<Live | null>(null);
  const [error, setError] = useState<string | null>(null);
  const hostCpus = core.status === 'ready' ? core.info.hostCpus : 2;
  const [paced, setPaced] = useState(true);
  // Paced: all CPU workers together use at most the host's cores but one, left for the page.
  const duty = paced && cpus >= hostCpus ? Math.max(5, Math.floor((100 * Math.max(1, hostCpus - 1)) / cpus)) : 100;
  const prev = useRef<{ t: number; ops: number[] } | null>(null);

  useEffect(() => {
    if (!running) return;
    let on = true;
    let samples = 0;
    const bridge = getBridge();
    const loop = async () => {
      try {
        await bridge.request('freerunStart', { cpus, objectSize: 256, workload: state.workload, prefillSlabs: state.slabs, seed: 1, duty });
        prev.current = null;
        while (on) {
          const s = await bridge.request('freerunSample', {});
          const now = s.elapsedMs;
          const ops = s.cpus.map((c) => c.ops);
          const p = prev.current;
          const rates = p && now > p.t ? ops.map((o, k) => ((o - (p.ops[k] ?? 0)) * 1000) / (now - p.t)) : ops.map(() => 0);
          if (!p || now - p.t > 500) prev.current = { t: now, ops };
          samples++;
          if (!on) break;
          setLive((old) => ({ mode: s.mode, snapshot: decodeSnapshot(s.snapshot), cpus: s.cpus, rates: p ? rates : (old?.rates ?? rates), elapsedMs: now, samples }));
          await new Promise((r) => requestAnimationFrame(r));
        }
      } catch (e) {
        setError(e instanceof BridgeError ? describeBridgeError(e) : String(e));
        setRunning(false);
      } finally {
        await bridge.request('freerunStop', {}).catch(() => undefined);
      }
    };
    void loop();
    return () => {
      on = false;
    };
  }, [running, cpus, state.workload, state.slabs, duty]);

  useEffect(() => {
    window.__slablabFreeRun = {
      running,
      mode: live?.mode ?? '',
      samples: live?.samples ?? 0,
      threadIds: live?.cpus.map((c) => c.threadId) ?? [],
      ops: live?.cpus.map((c) => c.ops) ?? [],
      slabs: live?.snapshot.nslabs ?? 0,
      objects: live?.snapshot.nobj ?? 0,
    };
  });

  if (core.status !== 'ready') return null;
  const threads = core.info.mode === 'threads';
  const distinct = new Set(live?.cpus.map((c) => c.threadId).filter((t) => t !== 0)).size;

  return (
    <section className="slub-view" aria-labelledby="free-title" data-testid="freerun-view">
      <h2 id="free-title">SLUB · free-running</h2>
      <p>
        {threads
          ? `Each simulated CPU runs the workload on its own CPU worker (a pthread sharing the core's memory) at full speed; the view samples the whole state once per frame, so it may mix moments, as a live kernel's would.`
          : 'This page is not cross-origin isolated, so there are no CPU threads: the CPUs run interleaved in rounds on the one bridge worker between frames. Serve the lab with COOP/COEP (npm start) for real threads.'}
      </p>
      <div className="slub-pickers">
        <label>
          CPUs{' '}
          <select value={cpus} disabled={running} onChange={(e) => update({ cpus: Number(e.target.value) })}>
            {[2, 3, 4, 5, 6, 7, 8].map((n) => (
              <option key={n}>{n}</option>
            ))}
          </select>
        </label>
        <label>
          Workload{' '}
          <select value={state.workload} disabled={running} onChange={(e) => update({ workload: e.target.value as UrlState['workload'] })}>
            <option value="local">local churn</option>
            <option value="prodcons">producer/consumer (remote frees)</option>
            <option value="bursts">bursts</option>
          </select>
        </label>
        <label>
          Background slabs{' '}
          <input type="number" min={0} max={2048} value={state.slabs} disabled={running} onChange={(e) => update({ slabs: Math.max(0, Math.min(2048, Number(e.target.value) || 0)) })} />
        </label>
        <label title="Eight busy CPU workers on a host with fewer cores would starve the page's main thread; paced, each sleeps between rounds so that together they leave one core free.">
          <input type="checkbox" checked={paced} disabled={running} onChange={(e) => setPaced(e.target.checked)} /> pace the workers to leave the page a core
        </label>
        <button type="button" onClick={() => setRunning((r) => !r)}>
          {running ? 'Stop' : 'Start'}
        </button>
      </div>
      {error && (
        <div className="alert alert-error" role="alert">
          {error}
        </div>
      )}
      {live && (
        <>
          <table className="freerun-table" data-testid="freerun-table">
            <caption>
              {live.mode === 'threads' ? `threads: ${distinct} CPU workers${duty < 100 ? `, each busy ${duty}% of the time` : ', full speed'}` : 'interleaved on the bridge worker'} · {(live.elapsedMs / 1000).toFixed(1)} s · {live.samples} samples
            </caption>
            <thead>
              <tr>
                <th scope="col">CPU</th>
                <th scope="col">ops/s</th>
                <th scope="col">fast-path share</th>
                <th scope="col">cmpxchg retries</th>
                <th scope="col">worker</th>
              </tr>
            </thead>
            <tbody>
              {live.cpus.map((c, k) => {
                const all = c.allocFast + c.allocSlow + c.freeFast + c.freeSlow;
                return (
                  <tr key={k}>
                    <th scope="row">{k}</th>
                    <td>{Math.round(live.rates[k] ?? 0).toLocaleString('en')}</td>
                    <td>{all ? `${(((c.allocFast + c.freeFast) / all) * 100).toFixed(1)}%` : '–'}</td>
                    <td>{(c.cpuCasFail + c.slabCasFail).toLocaleString('en')}</td>
                    <td>{c.threadId ? `thread ${c.threadId}` : 'bridge worker'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          <SlabCanvas
            snapshot={live.snapshot}
            overlay={NO_OVERLAY}
            showFull
            compact
            measure
            label={`Live SLUB state: ${live.snapshot.nslabs} slabs, ${live.snapshot.nobj} objects, ${live.snapshot.node.nrPartial} on the node partial list.`}
          />
        </>
      )}
    </section>
  );
}
