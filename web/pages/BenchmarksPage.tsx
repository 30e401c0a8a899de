/** Benchmarks: no experiment runs in the browser yet; says where the native ones are. */
export function BenchmarksPage() {
  return (
    <section className="panel" aria-labelledby="bench-title">
      <h2 id="bench-title">Benchmarks</h2>
      <p>
        No benchmark runs in the browser yet: the allocator models are not in this build. The native benchmark
        command line is built and run with <code>npm run bench -- ARGS</code> (for example{' '}
        <code>npm run bench -- --help</code>).
      </p>
    </section>
  );
}
