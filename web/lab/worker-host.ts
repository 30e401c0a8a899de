// worker-host.ts - the lab engine's request handlers in the bridge worker:
// sessions per id over the models web/models.ts lists.
//
// `load` and `freerunStart` name a model and return a session id; `at`,
// `freerunDrain` and `dispose` carry it.  Several sessions live at once (two
// labs on one page, the panes of a side-by-side view), each with its own
// worlds.  A page that never disposes cannot exhaust the worker: beyond
// MAX_SESSIONS the least recently used session is freed, and a later request
// for it says so.  Free runs are the exception to "several": the threads
// build has one pool of CPU threads, so a new free run stops the one before
// (whose later drains say why).  File sessions (`fileOpen`, a model's work
// on a file the page opened) are fed the file by the page a slice at a time
// (web/lab/file-feed.ts); the passes after the first read the page's File
// here, synchronously (FileReaderSync).  Nobody holds the whole file.

import type { FreerunStarted, LoadReply } from '../core/bridge-protocol';
import type { Handlers, LoadedCore } from '../core/bridge-server';
import { CoreError } from '../core/core-api';
import { BadRequest, checkWhole } from '../core/requests';
import { FreeRunHost } from './freerun-host';
import type { BoundModel, ByteSource, FileSession, ModelAdapter } from './model';
import type { Session } from './session';

/** Sessions kept at most (replays and free runs together). */
export const MAX_SESSIONS = 32;

type Entry = { kind: 'replay'; session: Session } | { kind: 'freerun'; run: FreeRunHost } | { kind: 'file'; file: FileSession };
type LabRequest = 'worldInfo' | 'query' | 'load' | 'at' | 'freerunStart' | 'freerunDrain' | 'dispose' | 'benchRow' | 'fileOpen' | 'fileAdvance' | 'fileAsk';

/** FileReaderSync: dedicated workers only (lib.webworker), so not in the DOM types this code compiles against. */
type SyncReader = new () => { readAsArrayBuffer(blob: Blob): ArrayBuffer };

/** A Blob read a slice at a time, synchronously (in a worker); `reader` is FileReaderSync there. */
export function blobSource(blob: unknown, reader = (globalThis as { FileReaderSync?: SyncReader }).FileReaderSync): ByteSource {
  if (!(blob instanceof Blob)) throw new BadRequest('file must be a File or Blob');
  if (!reader) throw new BadRequest('this worker cannot read files synchronously (no FileReaderSync)');
  const r = new reader();
  return { size: blob.size, read: (offset, length) => new Uint8Array(r.readAsArrayBuffer(blob.slice(offset, offset + length))) };
}

export function labHandlers(models: readonly ModelAdapter[]): Pick<Handlers, LabRequest> {
  const bound = new Map<string, BoundModel>();
  const sessions = new Map<number, Entry>();
  /** Why a session id is no longer open, for the requests that still name it. */
  const gone = new Map<number, string>();
  let nextId = 1;

  const model = (id: unknown, core: LoadedCore): BoundModel => {
    const adapter = models.find((m) => m.id === id);
    if (!adapter) throw new BadRequest(`model must be one of ${models.map((m) => m.id).join(', ')}, got ${String(id)}`);
    let m = bound.get(adapter.id);
    if (!m) bound.set(adapter.id, (m = adapter.bind(core)));
    return m;
  };

  const close = (id: number, why: string): void => {
    const e = sessions.get(id);
    if (!e) return;
    sessions.delete(id);
    gone.set(id, why);
    if (e.kind === 'replay') e.session.dispose();
    else if (e.kind === 'file') e.file.dispose();
    else e.run.stop();
  };

  const open = (entry: Entry): number => {
    while (sessions.size >= MAX_SESSIONS) {
      const oldest = sessions.keys().next().value as number;
      close(oldest, `it was freed to make room: more than ${MAX_SESSIONS} sessions were open`);
    }
    const id = nextId++;
    sessions.set(id, entry);
    return id;
  };

  const lookup = (raw: unknown): Entry => {
    const id = checkWhole('session', raw, 1, 0x7fffffff);
    const e = sessions.get(id);
    if (!e) throw new BadRequest(`session ${id} is not open${gone.has(id) ? `: ${gone.get(id) ?? ''}` : ''}`);
    // Most recently used last, so eviction takes the least recently used.
    sessions.delete(id);
    sessions.set(id, e);
    return e;
  };

  const fileOf = (raw: unknown): FileSession => {
    const e = lookup(raw);
    if (e.kind !== 'file') throw new BadRequest(`session ${String(raw)} is not a file session`);
    return e.file;
  };

  return {
    worldInfo: (p, core) => {
      const m = model(p.model, core);
      if (!m.worldInfo) throw new BadRequest(`model ${p.model} describes no worlds`);
      return { result: m.worldInfo(p.world) };
    },
    query: (p, core) => {
      const m = model(p.model, core);
      if (!m.query) throw new BadRequest(`model ${p.model} answers no queries`);
      return { result: m.query(p.query) };
    },
    load: (p, core) => {
      const m = model(p.model, core);
      if (!m.openSession) throw new BadRequest(`model ${p.model} has no step-by-step sessions`);
      const session = m.openSession(p.world, p.script);
      let loaded: ReturnType<Session['load']>;
      try {
        loaded = session.load();
      } catch (e) {
        session.dispose();
        throw e;
      }
      const events = loaded.events.buffer as ArrayBuffer;
      const result: LoadReply = { session: open({ kind: 'replay', session }), script: loaded.script, stops: loaded.stops, ops: loaded.ops, events, extra: loaded.extra };
      return { result, transfer: [events] };
    },
    at: (p) => {
      const e = lookup(p.session);
      if (e.kind !== 'replay') throw new BadRequest(`session ${p.session} is not a step-by-step session`);
      const r = e.session.at(checkWhole('stop', p.stop, 0, 1 << 30));
      return { result: r, transfer: [r.snapshot] };
    },
    freerunStart: (p, core) => {
      const m = model(p.model, core);
      if (!m.startFreeRun) throw new BadRequest(`model ${p.model} has no free-running mode`);
      for (const [id, e] of sessions) if (e.kind === 'freerun') close(id, 'a newer free run stopped it (the CPU threads run one at a time)');
      const run = new FreeRunHost(m.startFreeRun(p.params, core.api.hasThreads));
      const anchor = run.world.anchor.slice().buffer;
      const result: FreerunStarted = { session: open({ kind: 'freerun', run }), mode: run.mode, rate: run.world.rate, anchor };
      return { result, transfer: [anchor] };
    },
    freerunDrain: (p) => {
      const e = lookup(p.session);
      if (e.kind !== 'freerun') throw new BadRequest(`session ${p.session} is not a free run`);
      const r = e.run.drain(p.snapshot === true);
      return { result: r, transfer: r.snapshot ? [r.events, r.snapshot] : [r.events] };
    },
    dispose: (p) => {
      const id = checkWhole('session', p.session, 1, 0x7fffffff);
      const open = sessions.has(id);
      close(id, 'it was disposed');
      return { result: { disposed: open } };
    },
    fileOpen: (p, core) => {
      const m = model(p.model, core);
      if (!m.openFile) throw new BadRequest(`model ${p.model} opens no files`);
      return { result: { session: open({ kind: 'file', file: m.openFile(blobSource(p.file), p.options) }) } };
    },
    fileAdvance: (p) => {
      const offset = checkWhole('offset', p.offset, 0, Number.MAX_SAFE_INTEGER);
      if (!(p.bytes instanceof ArrayBuffer)) throw new BadRequest('bytes must be an ArrayBuffer (the slice of the file)');
      return { result: fileOf(p.session).advance(offset, new Uint8Array(p.bytes)) };
    },
    fileAsk: (p) => {
      const r = fileOf(p.session).ask(p.question);
      return { result: r.result, transfer: r.transfer ?? [] };
    },
    benchRow: (p, core) => {
      const m = model(p.model, core);
      if (!m.benchRow) throw new BadRequest(`model ${p.model} has no benchmarks`);
      const loops = checkWhole('loops', p.loops, 1, 1 << 30);
      const row = checkWhole('row', p.row, 1, 1 << 20);
      const onThread = core.api.hasThreads;
      const t0 = performance.now();
      const r = m.benchRow({ experiment: p.experiment, variant: p.variant, row, loops, options: p.options }, onThread);
      if (r.nsPerOp < 0) throw new CoreError(r.nsPerOp, `the benchmark loop failed: ${core.api.strerror(r.nsPerOp)}`);
      return { result: { nsPerOp: r.nsPerOp, ops: r.ops, elapsedMs: performance.now() - t0, onThread, ...(r.figures ? { figures: r.figures } : {}) } };
    },
  };
}
