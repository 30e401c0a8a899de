// heap-io.ts - reading results out of a core instance's memory, the same way
// for every model's typed wrapper (web/slub/slub-api.ts, web/percpu/percpu-api.ts):
// fresh copies the worker can transfer, C calls that write into a buffer and
// answer "minus the bytes needed" when it is too small, and draining each
// CPU's event ring.

/** The parts of an Emscripten module these helpers use. */
export interface HeapModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
}

/** A fresh (transferable, unshared) copy of `size` bytes at `ptr`; HEAPU8 is re-read, as memory growth replaces it. */
export function copyOut(m: HeapModule, ptr: number, size: number): Uint8Array {
  const out = new Uint8Array(size);
  out.set(m.HEAPU8.subarray(ptr, ptr + size));
  return out;
}

/**
 * Calls `fill(buf, cap)`, which writes up to cap bytes and returns the
 * count, or minus the bytes it needs; retries with that much.  A negative
 * answer no larger than the buffer it had is an error code, not a size.
 * `error` makes the Error for that and for a failed malloc.
 */
export function readSized(
  m: HeapModule,
  startCap: number,
  fill: (buf: number, cap: number) => number,
  error: (what: string) => Error,
): Uint8Array {
  let cap = startCap;
  for (;;) {
    const buf = m._malloc(cap);
    if (!buf) throw error(`no memory for a ${cap}-byte buffer`);
    try {
      const n = fill(buf, cap);
      if (n >= 0) return copyOut(m, buf, n);
      if (-n <= cap) throw error(`the core answered ${n} for a ${cap}-byte buffer`);
      cap = -n;
    } finally {
      m._free(buf);
    }
  }
}

const DRAIN_BATCH = 4096;

/**
 * Each CPU's events, at most `limit` per CPU (CPUs still running keep
 * writing; a drain waiting for an empty ring might never end).
 * `drainOne(cpu, out, max)` moves up to max records of `recordSize` bytes.
 */
export function drainRings(
  m: HeapModule,
  cpus: number,
  recordSize: number,
  drainOne: (cpu: number, out: number, max: number) => number,
  limit = Infinity,
): Uint8Array[] {
  const buf = m._malloc(DRAIN_BATCH * recordSize);
  if (!buf) throw new Error('no memory to drain the event rings');
  try {
    const rings: Uint8Array[] = [];
    for (let cpu = 0; cpu < cpus; cpu++) {
      const parts: Uint8Array[] = [];
      for (let left = limit; left > 0; ) {
        const want = Math.min(DRAIN_BATCH, left);
        const n = drainOne(cpu, buf, want);
        if (n > 0) parts.push(copyOut(m, buf, n * recordSize));
        left -= n;
        if (n < want) break;
      }
      rings.push(concat(parts));
    }
    return rings;
  } finally {
    m._free(buf);
  }
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}
