import type { CoreState } from '../core/use-core';
import { describeBridgeError } from '../core/use-core';

/** The mode badge: how the core runs the simulated CPUs, or why it cannot. */
export function CoreStatus({ core, cpus }: { core: CoreState; cpus: number | null }) {
  switch (core.status) {
    case 'loading':
      return (
        <span className="badge" role="status" data-testid="core-mode">
          loading the WebAssembly core…
        </span>
      );
    case 'failed':
      return (
        <span className="badge badge-error" data-testid="core-mode">
          core unavailable
        </span>
      );
    case 'ready':
      return core.info.mode === 'threads' ? (
        <span
          className="badge badge-threads"
          role="status"
          data-testid="core-mode"
          title={`Cross-origin isolated: each simulated CPU runs on its own web worker (a pthread sharing the core's memory); ${core.info.cpuWorkerPool} workers are ready.`}
        >
          threads: {cpus ?? core.info.cpuWorkerPool} workers
        </span>
      ) : (
        <span
          className="badge badge-single"
          role="status"
          data-testid="core-mode"
          title="Not cross-origin isolated (no SharedArrayBuffer): all simulated CPUs run in one worker, interleaved by a deterministic scheduler."
        >
          single-threaded
        </span>
      );
  }
}

/** The page-level error for a core that could not be loaded. */
export function CoreLoadAlert({ core }: { core: CoreState }) {
  if (core.status !== 'failed') return null;
  return (
    <div className="alert alert-error" role="alert" data-testid="core-error">
      <strong>{describeBridgeError(core.error)}</strong>
      <p>
        The page works without it only as far as text goes. Rebuild the core with <code>npm run setup</code>, or
        reload if the files were being rebuilt.
      </p>
    </div>
  );
}
