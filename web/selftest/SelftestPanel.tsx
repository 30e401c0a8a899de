// SelftestPanel.tsx - the walking skeleton's demo: simulated CPUs racing
// double-word compare-and-swaps on one shared pair of words in the core's
// memory.  With threads each CPU is a web worker; single-threaded, one
// worker interleaves them with a deterministic scheduler.  Either way the
// final counter must equal cpus * iterations and the two words must agree.

import { useCallback, useMemo, useRef, useState } from 'react';
import { BridgeError, getBridge } from '../core/bridge';
import type { CoreMode } from '../core/bridge-protocol';
import { decodeSelftestResult, type SelftestResult } from '../core/layouts';
import { describeBridgeError } from '../core/use-core';
import { LabCanvas } from '../lab/LabCanvas';
import { whole } from '../lab/params';
import { useShortcuts } from '../lab/shortcuts';
import { useParams } from '../lab/url-store';
import type { ViewProps } from '../lab/view';
import { LANE_HEIGHT, laneDrawer } from './selftest-lanes';

const MAX_CPUS = 8;

/** The self-test's parameters. */
export const SELFTEST_PARAMS = {
  cpus: whole(1, MAX_CPUS, 4),
  iters: whole(1, 1_000_000, 100_000),
  seed: whole(0, 0xffffffff, 1),
};

interface Outcome {
  mode: CoreMode;
  passed: boolean;
  message: string;
  result: SelftestResult;
  elapsedMs: number;
}

type RunState = { status: 'idle' } | { status: 'running' } | { status: 'done'; outcome: Outcome } | { status: 'failed'; error: string };

export function SelftestPanel({ core, store }: ViewProps) {
  const { values: state, update } = useParams(SELFTEST_PARAMS, store);
  const [run, setRun] = useState<RunState>({ status: 'idle' });
  const root = useRef<HTMLElement>(null);
  const ready = core.status === 'ready';

  const start = useCallback(() => {
    if (!ready || run.status === 'running') return;
    setRun({ status: 'running' });
    getBridge()
      .request('selftest', { cpus: state.cpus, iterations: state.iters, seed: state.seed })
      .then((reply) =>
        setRun({
          status: 'done',
          outcome: {
            mode: reply.mode,
            passed: reply.rc === 0,
            message: reply.message,
            result: decodeSelftestResult(reply.bytes),
            elapsedMs: reply.elapsedMs,
          },
        }),
      )
      .catch((e: unknown) =>
        setRun({ status: 'failed', error: e instanceof BridgeError ? describeBridgeError(e) : String(e) }),
      );
  }, [ready, run.status, state.cpus, state.iters, state.seed]);

  useShortcuts(useMemo(() => [{ key: 'r', description: 'Run the CPU self-test', run: start }], [start]), root);

  return (
    <section className="panel" ref={root} aria-labelledby="selftest-title">
      <h2 id="selftest-title">CPU self-test</h2>
      <p className="lede">
        Simulated CPUs race double-word compare-and-swaps (the primitive behind SLUB's lockless fast path) on one
        shared pair of words in the core's memory. Every CPU adds 1 to both words per iteration and retries when
        another CPU got there first. The result is correct when the counter equals CPUs × iterations and the two
        words still agree.
      </p>
      <form
        className="controls"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          start();
        }}
      >
        <label>
          CPUs
          <input
            type="number"
            min={1}
            max={core.status === 'ready' ? core.info.maxCpus : MAX_CPUS}
            value={state.cpus}
            onChange={(e) => {
              const v = e.currentTarget.valueAsNumber;
              if (Number.isInteger(v) && v >= 1 && v <= MAX_CPUS) update({ cpus: v });
            }}
          />
        </label>
        <label>
          Iterations per CPU
          <input
            type="number"
            min={1}
            max={1_000_000}
            value={state.iters}
            onChange={(e) => {
              const v = e.currentTarget.valueAsNumber;
              if (Number.isInteger(v) && v >= 1 && v <= 1_000_000) update({ iters: v });
            }}
          />
        </label>
        <button type="submit" disabled={!ready || run.status === 'running'}>
          {run.status === 'running' ? 'Running…' : 'Run self-test'}
        </button>
      </form>
      <SelftestOutcome run={run} />
    </section>
  );
}

function SelftestOutcome({ run }: { run: RunState }) {
  const draw = useMemo(() => (run.status === 'done' ? laneDrawer(run.outcome.result) : null), [run]);
  const cpus = run.status === 'done' ? run.outcome.result.cpus : 0;
  const layout = useCallback((width: number) => ({ width, height: cpus * LANE_HEIGHT }), [cpus]);
  switch (run.status) {
    case 'idle':
      return <p className="muted">Not run yet. Press “Run self-test” or the r key.</p>;
    case 'running':
      return (
        <p role="status" aria-live="polite">
          Running…
        </p>
      );
    case 'failed':
      return (
        <div className="alert alert-error" role="alert">
          {run.error}
        </div>
      );
    case 'done': {
      const { result: r, passed, message, mode, elapsedMs } = run.outcome;
      const expected = BigInt(r.cpus) * BigInt(r.iterations);
      const workers = new Set(r.threadIds.map(String)).size;
      return (
        <div className="outcome" data-testid="selftest-result" data-passed={passed} data-workers={workers}>
          <p role="status" aria-live="polite" className={passed ? 'pass' : 'fail'}>
            {passed ? 'Passed: every increment landed and both words agree.' : `FAILED: ${message}.`}{' '}
            {mode === 'threads'
              ? `${workers} distinct CPU workers (threads sharing the memory) ran it.`
              : `One worker ran all ${r.cpus} CPUs, interleaved by the deterministic scheduler.`}
          </p>
          <dl className="figures">
            <dt>Counter</dt>
            <dd data-testid="selftest-counter">{String(r.counter)}</dd>
            <dt>Expected</dt>
            <dd>{String(expected)}</dd>
            <dt>CAS retries</dt>
            <dd data-testid="selftest-retries">{String(r.casFailures)}</dd>
            <dt>Distinct workers</dt>
            <dd data-testid="selftest-workers">{workers}</dd>
            <dt>Time</dt>
            <dd>{elapsedMs.toFixed(1)} ms</dd>
          </dl>
          {draw && (
            <LabCanvas
              layout={layout}
              draw={draw}
              className="canvas-view"
              label={`One lane per CPU: each landed ${r.iterations} increments; ${workers} distinct workers.`}
              testId="selftest-lanes"
            />
          )}
          <table className="per-cpu">
            <caption>Per CPU</caption>
            <thead>
              <tr>
                <th scope="col">CPU</th>
                <th scope="col">Increments</th>
                <th scope="col">Worker thread id</th>
              </tr>
            </thead>
            <tbody>
              {r.perCpuDone.map((done, cpu) => (
                <tr key={cpu}>
                  <td>{cpu}</td>
                  <td>{String(done)}</td>
                  <td>
                    <code>0x{r.threadIds[cpu]?.toString(16)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      );
    }
  }
}
