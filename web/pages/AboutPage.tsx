import type { CoreState } from '../core/use-core';

/** What slablab is, and the facts of the loaded core. */
export function AboutPage({ core }: { core: CoreState }) {
  return (
    <section className="panel" aria-labelledby="about-title">
      <h2 id="about-title">About slablab</h2>
      <p>
        slablab is an interactive lab for the Linux kernel's small-object allocators (SLUB, SLAB and the percpu
        allocator). One C core is compiled natively, for benchmarks and tests, and to WebAssembly, where each
        simulated CPU is a web worker sharing the core's memory when the page is cross-origin isolated, and all CPUs
        share one worker, interleaved by a deterministic scheduler, when it is not.
      </p>
      {core.status === 'ready' && (
        <dl className="figures" aria-label="Loaded core">
          <dt>Build</dt>
          <dd>{core.info.mode === 'threads' ? 'threads (SharedArrayBuffer, pthread workers)' : 'single-threaded'}</dd>
          <dt>ABI version</dt>
          <dd>{core.info.abiVersion}</dd>
          <dt>Max simulated CPUs</dt>
          <dd>{core.info.maxCpus}</dd>
          <dt>CPU worker pool</dt>
          <dd>{core.info.cpuWorkerPool}</dd>
          <dt>Host CPUs</dt>
          <dd>{core.info.hostCpus}</dd>
          <dt>Event record</dt>
          <dd>{core.info.eventSize} bytes</dd>
          <dt>Cross-origin isolated</dt>
          <dd>{String(window.crossOriginIsolated)}</dd>
        </dl>
      )}
    </section>
  );
}
