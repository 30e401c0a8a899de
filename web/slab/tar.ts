// tar.ts - a tar of /sys/kernel/slab into the cache list `slablab slab-types
// --caches` reads (the core's sl_slab_caches_parse), so the caches panel
// gets from a browser-side file what `slab-types --sysfs DIR` gets from a
// directory: per real cache directory its object_size, align, ctor (a
// symbol: a constructor), destroy_by_rcu, hwcache_align and reclaim_account;
// symbolic links (SLUB's aliases of merged caches) skipped, as the C reader
// (src/slab/cachelist.c) does.
//
// The tar reader takes POSIX ustar and what GNU tar writes (its long-name
// entries, base-256 sizes), and pax headers' paths.  A file from sysfs may be
// padded with NUL bytes (GNU tar pads a file that read shorter than its
// size); values are read up to the first NUL.  writeTar writes plain ustar:
// the build serves the development machine's sysfs fixture as a tar with it.

/** A tar's member: its path and bytes (directories and links have no bytes). */
export interface TarEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink' | 'other';
  data: Uint8Array;
}

export class TarError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TarError';
  }
}

const BLOCK = 512;
const ascii = new TextDecoder('latin1');
const utf8 = new TextDecoder();

/** A NUL-terminated field. */
function field(b: Uint8Array, at: number, len: number): string {
  const f = b.subarray(at, at + len);
  const nul = f.indexOf(0);
  return utf8.decode(nul < 0 ? f : f.subarray(0, nul));
}

/** An octal number field, or GNU's base-256 (first byte's high bit set). */
function number(b: Uint8Array, at: number, len: number, what: string, offset: number): number {
  if ((b[at] ?? 0) & 0x80) {
    let v = (b[at] ?? 0) & 0x7f;
    for (let i = 1; i < len; i++) v = v * 256 + (b[at + i] ?? 0);
    return v;
  }
  const t = ascii.decode(b.subarray(at, at + len)).replace(/[\0 ]+$/, '').trim();
  if (!/^[0-7]*$/.test(t)) throw new TarError(`not a tar file: the ${what} field of the header at byte ${offset} is not a number`);
  return t === '' ? 0 : parseInt(t, 8);
}

/** The members of a tar archive; throws TarError saying where it is not one. */
export function readTar(bytes: Uint8Array): TarEntry[] {
  const out: TarEntry[] = [];
  let longName: string | null = null;
  let paxPath: string | null = null;
  for (let at = 0; at + BLOCK <= bytes.length; ) {
    const h = bytes.subarray(at, at + BLOCK);
    if (h.every((x) => x === 0)) break; // the end: two zero blocks (one is enough to stop)
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : (h[i] ?? 0);
    if (number(h, 148, 8, 'checksum', at) !== sum) throw new TarError(`not a tar file: the header at byte ${at} has a bad checksum`);
    const size = number(h, 124, 12, 'size', at);
    const dataAt = at + BLOCK;
    if (dataAt + size > bytes.length) throw new TarError(`the tar ends inside "${field(h, 0, 100)}" (it says ${size} bytes at byte ${dataAt}, the file has ${bytes.length})`);
    const data = bytes.subarray(dataAt, dataAt + size);
    const flag = String.fromCharCode(h[156] ?? 0);
    at = dataAt + Math.ceil(size / BLOCK) * BLOCK;
    if (flag === 'L') {
      longName = field(data, 0, data.length);
      continue;
    }
    if (flag === 'x') {
      paxPath = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(utf8.decode(data))?.[1] ?? null;
      continue;
    }
    if (flag === 'g' || flag === 'K') continue;
    const magic = ascii.decode(h.subarray(257, 262));
    const prefix = magic === 'ustar' ? field(h, 345, 155) : '';
    const path = paxPath ?? longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
    longName = paxPath = null;
    const type = flag === '0' || flag === '\0' || flag === '7' ? 'file' : flag === '5' ? 'dir' : flag === '2' ? 'symlink' : 'other';
    out.push({ path: path.replace(/^(\.\/)+/, '').replace(/\/+$/, ''), type, data: type === 'file' ? data : new Uint8Array() });
  }
  if (!out.length) throw new TarError('not a tar file: it holds no member');
  return out;
}

/** Writes plain ustar members (paths up to 100 bytes) and the end marker. */
export function writeTar(entries: readonly { path: string; data?: Uint8Array }[]): Uint8Array {
  const enc = new TextEncoder();
  const parts: Uint8Array[] = [];
  const put = (h: Uint8Array, at: number, text: string) => h.set(enc.encode(text), at);
  for (const e of entries) {
    const dir = e.data === undefined;
    const data = e.data ?? new Uint8Array();
    const name = enc.encode(dir ? `${e.path}/` : e.path);
    if (name.length > 100) throw new TarError(`${e.path}: longer than a ustar name (100 bytes)`);
    const h = new Uint8Array(BLOCK);
    h.set(name, 0);
    put(h, 100, dir ? '0000755' : '0000644');
    put(h, 108, '0000000');
    put(h, 116, '0000000');
    put(h, 124, data.length.toString(8).padStart(11, '0'));
    put(h, 136, '00000000000');
    put(h, 148, '        ');
    h[156] = (dir ? '5' : '0').charCodeAt(0);
    put(h, 257, 'ustar');
    put(h, 263, '00');
    const sum = h.reduce((n, x) => n + x, 0);
    put(h, 148, `${sum.toString(8).padStart(6, '0')}\0 `);
    parts.push(h, data, new Uint8Array((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  parts.push(new Uint8Array(2 * BLOCK));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

/** The files `slab-types --sysfs` reads in a cache directory. */
export const SYSFS_FILES = ['object_size', 'align', 'ctor', 'destroy_by_rcu', 'hwcache_align', 'reclaim_account'] as const;

/** A sysfs value: up to the first NUL, without the newline. */
const value = (data: Uint8Array) => {
  const nul = data.indexOf(0);
  return utf8.decode(nul < 0 ? data : data.subarray(0, nul)).replace(/[\n ]+$/, '');
};

/**
 * The cache list (the `--caches` format) of a tar of /sys/kernel/slab: one
 * line per directory holding an object_size, sorted by name.  Throws an
 * Error naming the member that is wrong.
 */
export function sysfsCacheList(entries: readonly TarEntry[]): { text: string; caches: number } {
  const dirs = new Map<string, Map<string, string>>();
  for (const e of entries) {
    const slash = e.path.lastIndexOf('/');
    const file = e.path.slice(slash + 1);
    if (e.type !== 'file' || slash < 0 || !(SYSFS_FILES as readonly string[]).includes(file)) continue;
    const dir = e.path.slice(0, slash);
    const files = dirs.get(dir) ?? new Map<string, string>();
    files.set(file, value(e.data));
    dirs.set(dir, files);
  }
  const lines: { name: string; line: string }[] = [];
  for (const [dir, files] of dirs) {
    const size = files.get('object_size');
    if (size === undefined) continue;
    const name = dir.slice(dir.lastIndexOf('/') + 1);
    if (!/^[^\s#]{1,63}$/.test(name)) throw new Error(`${dir}: a cache name of 1 to 63 characters without spaces or #`);
    const n = /^\d{1,7}$/.test(size) ? Number(size) : NaN;
    if (!(n >= 1 && n <= 4 << 20)) throw new Error(`${dir}/object_size: ${JSON.stringify(size)} is not a size of 1 to ${4 << 20}`);
    const alignText = files.get('align') ?? '0';
    const align = /^\d{1,7}$/.test(alignText) ? Number(alignText) : NaN;
    if (!(align >= 0 && align <= 4 << 20) || (align & (align - 1)) !== 0) throw new Error(`${dir}/align: ${JSON.stringify(alignText)} is not a power of two up to ${4 << 20}`);
    const flag = (f: string) => files.get(f)?.startsWith('1') === true;
    const words = [name, String(n), ...(align ? [`align=${align}`] : []), ...(files.get('ctor') ? ['ctor'] : []), ...(flag('destroy_by_rcu') ? ['rcu'] : []), ...(flag('hwcache_align') ? ['hwcache'] : []), ...(flag('reclaim_account') ? ['reclaim'] : [])];
    lines.push({ name, line: words.join(' ') });
  }
  if (!lines.length) throw new Error('no cache directory (a folder holding object_size) in the tar: make it with `tar -C /sys/kernel -cf slab.tar slab`');
  lines.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { text: `${lines.map((l) => l.line).join('\n')}\n`, caches: lines.length };
}
