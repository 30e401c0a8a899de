// trace-file.ts - a trace file replayed in the bridge worker (the trace
// view's FileSession, web/lab/model.ts): the C replay session the CLI runs
// (replay-api.ts), fed the file a slice per `advance` by the page
// (web/lab/file-feed.ts), so the page shows progress between slices and
// cancels by sending no more.  Memory stays bounded whatever the file's
// size: the first pass keeps no record of each operation (the C counts the
// overview's time bins as it goes: the report's "timeline").
//
// Questions afterwards (`ask`):
//   result     the report (ReplayResult) and the overview (allocations and
//              frees per second per cache, the busiest caches apart)
//   chunks     each percpu chunk's granule map (the percpu view draws it)
//   cacheOps   one cache's op records, each with its event's ordinal: a
//              second pass over the file with only that cache modelled
//   at         that cache's model at event N, and N's input line: a scrub
//              session kept at the last event asked for (the cursor) runs
//              on to a later N; an earlier N replays from the start
//   perfetto   the whole replay as a Perfetto (Chrome JSON) trace: a pass
//              whose op records go straight into the exporter
// Every later pass reads the file again a chunk at a time (ByteSource).

import { BadRequest, checkOneOf, checkRecord, checkWhole } from '../core/requests';
import type { ByteSource, FileSession } from '../lab/model';
import { exportPerfetto, type OpLayout, type ReplayModule, type ReplayOptions, type ReplayProgress, type ReplayResult, ReplaySession } from './replay-api';

/** Bytes of the file a later pass reads at a time. */
export const PASS_CHUNK_BYTES = 8 << 20;
/** A cache's op records kept for scrubbing at most (64 bytes each). */
export const MAX_CACHE_OPS = 1 << 20;

export interface TraceProgress extends Omit<ReplayProgress, 'finished'> {
  size: number;
  done: boolean;
  /** Why the file was refused (the C's words), or null. */
  error: string | null;
}

export interface OverviewSeries {
  name: string;
  /** Per bin, per second. */
  allocs: number[];
  frees: number[];
}

export interface Overview {
  /** The first bin's start, seconds of the trace's clock; each bin is binS wide. */
  t0S: number;
  binS: number;
  bins: number;
  series: OverviewSeries[];
}

export interface TraceReport {
  result: ReplayResult;
  overview: Overview;
}

export interface CacheOps {
  /** Packed sl_replay_op records of the cache (decodeOps with `layout`). */
  ops: ArrayBuffer;
  layout: OpLayout;
  /** More than MAX_CACHE_OPS: the first ones only. */
  truncated: boolean;
}

export interface AtReply {
  /** The cache's model snapshot after event N (docs/snapshot-format.md), null when it has no slabs yet. */
  snapshot: ArrayBuffer | null;
  /** Event N's input line. */
  line: string;
}

/** Reads `src` from `offset` into `s` until the end, a pause or a refusal; returns where it stopped. */
function feedFrom(s: ReplaySession, src: ByteSource, offset: number, onChunk?: () => void): { offset: number; status: 'ok' | 'paused' | 'refused' } {
  while (offset < src.size) {
    const r = s.feed(src.read(offset, Math.min(PASS_CHUNK_BYTES, src.size - offset)));
    offset += r.consumed;
    onChunk?.();
    if (r.status !== 'ok') return { offset, status: r.status };
  }
  return { offset, status: 'ok' };
}

export class TraceFile implements FileSession {
  /** The first pass, until it ends (close). */
  private main: ReplaySession | null;
  private offset = 0;
  private last: TraceProgress;
  private report: TraceReport | null = null;
  private chunkMaps: { unitSize: number; maps: (Uint8Array | null)[] } | null = null;
  /** The scrub session and where it is: its cache, the events it has applied, the file offset it reads on from. */
  private cursor: { session: ReplaySession; cache: number; event: number; offset: number; line: string } | null = null;

  /** The kernel whose SLUB rules every session's models follow: `{ kernel: "X.Y" }`, or `{}` for the capture's. */
  private readonly rules: Pick<ReplayOptions, 'kernel'>;

  constructor(
    private readonly m: ReplayModule,
    private readonly src: ByteSource,
    kernel?: string,
  ) {
    this.rules = kernel === undefined ? {} : { kernel };
    this.main = ReplaySession.create(m, this.rules);
    this.last = TraceFile.progressOf(this.main, src.size, false, null);
  }

  advance(offset: number, bytes: Uint8Array): TraceProgress {
    const main = this.main;
    if (!main) return { ...this.last, done: true };
    const at = this.offset;
    if (offset !== at || at + bytes.length > this.src.size || (!bytes.length && at < this.src.size))
      throw new BadRequest(`the file's slices come in order: the next starts at byte ${at} of ${this.src.size} and is not empty, got ${bytes.length} bytes at ${offset}`);
    const r = main.feed(bytes);
    this.offset = at + r.consumed;
    let error: string | null = null;
    let done = false;
    if (r.status === 'refused') error = main.error() ?? 'the file was refused';
    else if (this.offset >= this.src.size) {
      if (main.finish() === 'refused') error = main.error() ?? 'the file was refused';
      done = true;
    }
    this.last = TraceFile.progressOf(main, this.src.size, done || error !== null, error);
    if (this.last.done) this.close(main, error === null);
    return this.last;
  }

  private static progressOf(main: ReplaySession, size: number, done: boolean, error: string | null): TraceProgress {
    const { finished: _, ...p } = main.progress();
    return { ...p, size, done, error };
  }

  /**
   * The end of the first pass: the report and the chunk maps are kept, the session freed.  The
   * core's memory is fixed (256 MiB in the browser) and each session reserves its model's page
   * zone: the kept trace, a new one being replayed, a scrub session and an export pass must fit.
   */
  private close(main: ReplaySession, ok: boolean): void {
    if (ok) {
      const result = main.result();
      const { t0_s, bin_s, bins, series } = result.timeline;
      const perS = (counts: number[]) => counts.map((n) => n / bin_s);
      this.report = { result, overview: { t0S: t0_s, binS: bin_s, bins, series: series.map((s) => ({ name: s.name, allocs: perS(s.allocs), frees: perS(s.frees) })) } };
      const unit = result.percpu.unit_size ?? 0;
      this.chunkMaps = { unitSize: unit, maps: unit ? result.percpu.chunks.map((_, i) => main.chunkGranules(i, unit)) : [] };
    }
    main.dispose();
    this.main = null;
  }

  private finished(): TraceReport {
    if (this.last.error) throw new BadRequest(`the file was refused: ${this.last.error}`);
    if (!this.report) throw new BadRequest('the replay has not finished: advance to the end first');
    return this.report;
  }

  private cacheName(index: number): string {
    const c = this.finished().result.caches.find((k) => k.index === index);
    if (!c) throw new BadRequest(`cache ${index} is not in this trace`);
    if (!c.modelled) throw new BadRequest(`cache ${c.name} is not modelled (${c.type}): it has no slabs to draw`);
    return c.name;
  }

  ask(question: unknown): { result: unknown; transfer?: Transferable[] } {
    const q = checkRecord('question', question);
    switch (checkOneOf('question.type', q.type, ['result', 'chunks', 'cacheOps', 'at', 'perfetto'] as const)) {
      case 'result':
        return { result: this.finished() };
      case 'chunks': {
        this.finished();
        const { unitSize, maps } = this.chunkMaps ?? { unitSize: 0, maps: [] };
        // Copies: the maps stay here for the next time they are asked for.
        const buffers = maps.map((g) => (g ? (g.slice().buffer as ArrayBuffer) : null));
        return { result: { unitSize, maps: buffers }, transfer: buffers.filter((b): b is ArrayBuffer => !!b) };
      }
      case 'cacheOps': {
        const cache = checkWhole('question.cache', q.cache, 0, 0xfffe);
        const r = this.cacheOps(cache);
        return { result: r, transfer: [r.ops] };
      }
      case 'at': {
        const cache = checkWhole('question.cache', q.cache, 0, 0xfffe);
        const event = checkWhole('question.event', q.event, 0, 2 ** 32 - 1);
        const r = this.at(cache, event);
        return { result: r, transfer: r.snapshot ? [r.snapshot] : [] };
      }
      case 'perfetto': {
        const { result } = this.finished();
        this.dropCursor(); // its page zone: see close()
        const names: string[] = [];
        for (const c of result.caches) names[c.index] = c.name;
        return { result: exportPerfetto(this.m, this.pass(), names) };
      }
    }
  }

  /** A fresh pass over the whole file, its op records a chunk at a time. */
  private *pass(): Generator<ArrayBuffer> {
    const s = ReplaySession.create(this.m, { collectOps: true, ...this.rules });
    try {
      for (let off = 0; off < this.src.size; ) {
        const r = s.feed(this.src.read(off, Math.min(PASS_CHUNK_BYTES, this.src.size - off)));
        off += r.consumed;
        yield s.drainOpBytes();
        if (r.status !== 'ok') throw new BadRequest(s.error() ?? 'the file changed since it was replayed');
      }
      s.finish();
      yield s.drainOpBytes();
    } finally {
      s.dispose();
    }
  }

  private cacheOps(cache: number): CacheOps {
    const name = this.cacheName(cache);
    this.dropCursor(); // its page zone: see close()
    const s = ReplaySession.create(this.m, { collectOps: true, cache: name, ...this.rules });
    const parts: Uint8Array[] = [];
    let kept = 0;
    let truncated = false;
    const l = s.layout;
    const keep = () => {
      const bytes = new Uint8Array(s.drainOpBytes());
      const v = new DataView(bytes.buffer);
      for (let o = 0; o + l.size <= bytes.length; o += l.size) {
        const kind = v.getUint8(o + l.kind);
        if (v.getUint16(o + l.cache, true) !== cache || kind > 3) continue;
        if (kept === MAX_CACHE_OPS) {
          truncated = true;
          return;
        }
        parts.push(bytes.subarray(o, o + l.size));
        kept++;
      }
    };
    try {
      const r = feedFrom(s, this.src, 0, keep);
      if (r.status === 'refused') throw new BadRequest(s.error() ?? 'the file changed since it was replayed');
      s.finish();
      keep();
    } finally {
      s.dispose();
    }
    const ops = new Uint8Array(kept * l.size);
    parts.forEach((p, i) => ops.set(p, i * l.size));
    return { ops: ops.buffer, layout: l, truncated };
  }

  private at(cache: number, event: number): AtReply {
    const name = this.cacheName(cache);
    let c = this.cursor;
    this.cursor = null;
    if (!c || c.cache !== cache || c.event > event) {
      c?.session.dispose();
      c = { session: ReplaySession.create(this.m, { collectOps: true, keepLine: true, cache: name, ...this.rules }), cache, event: 0, offset: 0, line: '' };
    }
    const s = c.session;
    if (event > c.event) {
      s.setLimit(event);
      const r = feedFrom(s, this.src, c.offset, () => s.drainOpBytes());
      // At the end of the file: its last line may lack a newline.
      const status = r.status === 'ok' ? s.finish() : r.status;
      s.drainOpBytes();
      if (status === 'refused') {
        const why = s.error();
        s.dispose();
        throw new BadRequest(why ?? 'the file changed since it was replayed');
      }
      c.offset = r.offset;
      c.event = s.progress().events;
      c.line = s.lastLine();
    }
    this.cursor = c;
    return { snapshot: s.cacheSnapshot(cache), line: c.line };
  }

  private dropCursor(): void {
    this.cursor?.session.dispose();
    this.cursor = null;
  }

  dispose(): void {
    this.dropCursor();
    this.main?.dispose();
    this.main = null;
  }
}
