// slabcap.ts - the two kernel snapshots a `.slabcap` holds (docs/slabcap.md:
// `slablab capture` stores snapshot-start.json just before its trace and
// snapshot-end.json just after), read from the file as a stream: gzip or
// not, the archive is walked header by header and only those two members
// are kept, so a capture of hundreds of megabytes of trace passes through
// in slices and is never held whole.  The archive is POSIX ustar (with
// its name prefix) as slablab writes it; GNU long names are followed.

import { KernelSnapshotError } from './snapshot-file';

export const SNAPSHOT_MEMBERS = ['snapshot-start.json', 'snapshot-end.json'] as const;
const BLOCK = 512;

/** Whether bytes start like a .slabcap: gzip, or a ustar header. */
export function looksLikeSlabcap(head: Uint8Array): boolean {
  if (head[0] === 0x1f && head[1] === 0x8b) return true;
  return head.length >= 262 && new TextDecoder('latin1').decode(head.subarray(257, 262)) === 'ustar';
}

const text = (b: Uint8Array) => {
  const nul = b.indexOf(0);
  return new TextDecoder().decode(nul < 0 ? b : b.subarray(0, nul));
};

/** Reads a stream on demand: `take(n)` resolves to the next n bytes (fewer at the end), `skip(n)` passes n bytes by. */
function reader(stream: ReadableStream<Uint8Array>) {
  const r = stream.getReader();
  const chunks: Uint8Array[] = [];
  let held = 0;
  let done = false;
  /** Reads until `n` bytes are held or the stream ends. */
  const fill = async (n: number) => {
    while (held < n && !done) {
      const { value, done: end } = await r.read();
      if (end) done = true;
      else if (value.length) {
        chunks.push(value);
        held += value.length;
      }
    }
  };
  /** Passes the first n held bytes (n <= held) to `keep`, chunk by chunk. */
  const consume = (n: number, keep: (part: Uint8Array) => void) => {
    let left = n;
    while (left > 0) {
      const c = chunks[0]!;
      const k = Math.min(left, c.length);
      keep(c.subarray(0, k));
      if (k === c.length) chunks.shift();
      else chunks[0] = c.subarray(k);
      left -= k;
      held -= k;
    }
  };
  return {
    async take(n: number): Promise<Uint8Array> {
      await fill(n);
      const out = new Uint8Array(Math.min(n, held));
      let at = 0;
      consume(out.length, (part) => (out.set(part, at), (at += part.length)));
      return out;
    },
    async skip(n: number): Promise<number> {
      let left = n;
      while (left > 0) {
        if (!held) await fill(1);
        if (!held) break;
        const k = Math.min(left, held);
        consume(k, () => {});
        left -= k;
      }
      return n - left;
    },
    /** Stops reading (not awaited: a cancel travels back through the gzip stream to the file, and nothing waits on it). */
    cancel: () => void r.cancel().catch(() => undefined),
  };
}

/**
 * The snapshot members of a .slabcap (gzip or plain), by name; throws KernelSnapshotError when the
 * file is not a tar archive, is cut short, or holds no snapshot.
 */
export async function slabcapSnapshots(file: Blob): Promise<Map<string, Uint8Array>> {
  const head = new Uint8Array(await file.slice(0, 2).arrayBuffer());
  const gz = head[0] === 0x1f && head[1] === 0x8b;
  let stream = file.stream() as ReadableStream<Uint8Array>;
  if (gz) stream = stream.pipeThrough(new DecompressionStream('gzip') as unknown as TransformStream<Uint8Array, Uint8Array>);
  const r = reader(stream);
  const found = new Map<string, Uint8Array>();
  let longName: string | null = null;
  try {
    for (;;) {
      const h = await r.take(BLOCK);
      if (h.length < BLOCK) {
        if (h.length === 0 && found.size) break;
        throw new KernelSnapshotError(h.length === 0 && !found.size ? 'not a .slabcap: the archive is empty' : 'the .slabcap is cut short (a member header is incomplete)');
      }
      if (h.every((x) => x === 0)) break; // the end-of-archive block
      if (new TextDecoder('latin1').decode(h.subarray(257, 262)) !== 'ustar') throw new KernelSnapshotError(`not a .slabcap: ${gz ? 'the gzip data is' : 'the file is'} not a tar archive`);
      let sum = 0;
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] ?? 0);
      if (Number.parseInt(text(h.subarray(148, 156)).trim(), 8) !== sum) throw new KernelSnapshotError('the .slabcap is damaged: a member header whose checksum does not match');
      const size = Number.parseInt(text(h.subarray(124, 136)).trim() || '0', 8);
      if (!Number.isFinite(size) || size < 0) throw new KernelSnapshotError('the .slabcap is damaged: a member size that is not a number');
      const type = String.fromCharCode(h[156] ?? 0);
      const prefix = text(h.subarray(345, 500));
      const name = longName ?? (prefix ? `${prefix}/${text(h.subarray(0, 100))}` : text(h.subarray(0, 100)));
      longName = null;
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (type === 'L') {
        longName = text(await r.take(size));
        await r.skip(padded - size);
        continue;
      }
      const base = name.replace(/^\.\//, '');
      if ((SNAPSHOT_MEMBERS as readonly string[]).includes(base)) {
        const data = await r.take(size);
        if (data.length < size) throw new KernelSnapshotError(`the .slabcap is cut short inside ${base}`);
        found.set(base, data);
        await r.skip(padded - size);
        if (found.size === SNAPSHOT_MEMBERS.length) break;
      } else if ((await r.skip(padded)) < size) throw new KernelSnapshotError(`the .slabcap is cut short inside ${base}`);
    }
  } catch (e) {
    if (e instanceof KernelSnapshotError) throw e;
    throw new KernelSnapshotError(`not a .slabcap: ${gz ? 'the gzip data does not inflate' : 'the file cannot be read'} (${e instanceof Error ? e.message : String(e)})`);
  } finally {
    r.cancel();
  }
  if (!found.has(SNAPSHOT_MEMBERS[0]))
    throw new KernelSnapshotError('this .slabcap holds no kernel snapshot (snapshot-start.json): it was captured where BPF was not available, or by a slablab without `slablab snapshot`');
  return found;
}
