// live.worker.ts - reads `slablab serve`'s stream (fetch, same origin, the
// token in the query and in the cookie the page got), has the C core cut its
// frames and count its events (live-state.ts), decodes the few other frames
// (wire.ts), keeps the picked cache in step (pick.ts: the
// C core's SLUB model, loaded here as the single-threaded build), and
// posts a summary to the page every SUMMARY_MS.  Reading is paced by
// decoding: nothing is queued here, so a page that cannot keep up slows the
// stream and the server drops and counts (its queue is bounded).  When the
// stream ends it reconnects with a growing delay (1 s to 5 s).

import { loadCore } from '../core/load-core';
import type { CheckModule } from './check-api';
import { LiveState } from './live-state';
import { Picked } from './pick';
import type { Connection, FromWorker, ToWorker } from './protocol';
import { ev, F, isAlloc, WireError, type Status } from './wire';

const SUMMARY_MS = 500;

const post = (m: FromWorker) => (self as unknown as Worker).postMessage(m);

const state = new LiveState();
let token = '';
let client = 0;
let picked: Picked | null = null;
let status: Status | null = null;
let closed = false;
let abort: AbortController | null = null;
/** The core the agreement runs in (check-api.ts), loaded once, when a cache is first picked. */
let core: CheckModule | null = null;
let coreError: string | null = null;
let coreReady: Promise<void> | null = null;
let pickSeq = 0;
function loadCheckCore(): Promise<void> {
  coreReady ??= loadCore('single').then(
    (m) => {
      core = m as CheckModule;
    },
    (e: unknown) => {
      coreError = `the model's core could not be loaded: ${(e as Error).message}`;
    },
  );
  return coreReady;
}

function connection(c: Connection) {
  post({ type: 'connection', c });
}

function watch() {
  if (!picked || !client) return;
  void fetch(`/api/watch?client=${client}&cache=${encodeURIComponent(picked.name)}&token=${token}`, { credentials: 'same-origin' }).catch(() => undefined);
}

/** Reads a fetched chunk: the C core cuts its frames and counts its events (LiveState.push); the rest is handled here. */
function onChunk(chunk: Uint8Array) {
  state.bytes += chunk.length;
  for (const f of state.push(chunk)) {
    switch (f.type) {
      case F.HELLO:
        client = f.hello.client;
        connection({ state: 'live', hello: f.hello });
        watch();
        break;
      case F.EVENTS: {
        // Only the picked cache's events come back (state.watch): kmem_cache_alloc, kmalloc,
        // kmem_cache_free, kfree (not percpu: its objects are no slab's).
        const p = picked;
        if (!p) break;
        const rec = f.batch.records;
        const base = Number(f.batch.baseNs);
        for (let i = 0; i < f.batch.count; i++) p.push(base + ev.dtUs(rec, i) * 1000, ev.cpu(rec, i), isAlloc(ev.kind(rec, i)), ev.objHi(rec, i), ev.objLo(rec, i));
        break;
      }
      case F.STATUS:
        status = f.status;
        state.status = f.status;
        break;
      case F.SLABINFO:
        state.slabinfo = f.rows;
        break;
      case F.SNAPSHOT: {
        const p = picked;
        if (!p) break;
        let point = null;
        let error: string | null = null;
        try {
          point = p.snapshot(f.snapshot, f.takenNs, state.kernelLost + (status?.server_dropped ?? 0), f.restart);
          // A recording starting (again) has no window of its own: the last one stays shown.
          if (f.restart) point = p.history.at(-1) ?? null;
        } catch (e) {
          error = `the model could not follow this snapshot: ${(e as Error).message}`;
        }
        if (p.seen) post({ type: 'snapshot', cache: p.name, text: f.snapshot, takenNs: f.takenNs, point, history: p.history, logged: p.logged, dropped: p.dropped, error });
        else if (error) post({ type: 'picked', cache: p.name, logged: p.logged, dropped: p.dropped, error });
        break;
      }
      case F.ERROR:
        post({ type: 'picked', cache: picked?.name ?? null, logged: picked?.logged ?? 0, dropped: picked?.dropped ?? 0, error: f.error });
        break;
    }
  }
}

async function readOnce(): Promise<{ why: string; retry: boolean }> {
  abort = new AbortController();
  let res: Response;
  try {
    res = await fetch(`/api/live?token=${token}`, { credentials: 'same-origin', signal: abort.signal, cache: 'no-store' });
  } catch (e) {
    return { why: `no server answers (${(e as Error).message})`, retry: true };
  }
  if (res.status === 401 || res.status === 403) return { why: `the server refused this page's token (${res.status}): if it was restarted, open the new URL it printed`, retry: true };
  // slablab serve always has /api/live: a 404 (or a page for it) comes from another server.
  if (res.status === 404) return { why: 'this page is not served by slablab serve (its host has no /api/live)', retry: false };
  if (!res.ok) return { why: `the server answered ${res.status}`, retry: res.status >= 500 };
  if (!(res.headers.get('content-type') ?? '').startsWith('application/octet-stream') || !res.body)
    return { why: 'this page is not served by slablab serve', retry: false };
  state.restart();
  const body = res.body.getReader();
  try {
    for (;;) {
      const { done, value } = await body.read();
      if (done) return { why: 'the server closed the stream', retry: true };
      onChunk(value);
    }
  } catch (e) {
    if (e instanceof WireError) return { why: `the stream is malformed: ${e.message}`, retry: true };
    return { why: `the connection was lost (${(e as Error).message})`, retry: true };
  }
}

async function run() {
  let attempt = 0;
  while (!closed) {
    attempt++;
    connection({ state: 'connecting', attempt });
    const t0 = Date.now();
    const r = await readOnce();
    client = 0;
    if (closed) break;
    if (Date.now() - t0 > 10_000) attempt = 1; // it was up a while: start the delays again
    const retryS = r.retry ? Math.min(5, attempt) : null;
    connection({ state: 'disconnected', why: r.why, retryS });
    if (retryS === null) break;
    await new Promise((ok) => setTimeout(ok, retryS * 1000));
  }
}

setInterval(() => {
  post({ type: 'summary', s: state.summary(), status, sentAtMs: performance.timeOrigin + performance.now(), newestEventNs: state.newestEventNs });
}, SUMMARY_MS);

self.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data;
  if (m.type === 'connect') {
    token = m.token.replace(/[^0-9a-f]/g, '');
    void run();
  } else if (m.type === 'pick') {
    picked?.close();
    picked = null;
    const cache = m.cache;
    const seq = ++pickSeq;
    void (cache ? loadCheckCore() : Promise.resolve()).then(() => {
      if (seq !== pickSeq) return; // a later pick came while the core loaded
      picked = cache && core ? new Picked(cache, core) : null;
      state.watch(picked ? cache : null);
      post({ type: 'picked', cache, logged: 0, dropped: 0, error: cache && !core ? coreError : null });
      watch();
    });
  } else if (m.type === 'close') {
    closed = true;
    abort?.abort();
  }
};
