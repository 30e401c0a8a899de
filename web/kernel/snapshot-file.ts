// snapshot-file.ts - reads a real kernel's slab snapshot, the JSON document
// `slablab snapshot` writes (docs/snapshot.md, format "slablab-snapshot/1"),
// into typed records the kernel view draws and counts from.
//
// Every field is checked: a number where a number belongs, whole and in its
// range; an address as a hex string (64-bit values do not fit JavaScript
// numbers, so they stay strings and become bigints only for arithmetic);
// inuse within objects.  A file that is not one, or is damaged, throws a
// KernelSnapshotError whose message names the field by its path
// ("caches[3] (dentry).nodes[0].partial[2].inuse: ...").  What a live kernel
// can legitimately show, a freelist that does not agree with its slab's
// counters because it was read while it changed, is not an error: it is kept
// and listed as an anomaly of its cache (the snapshot marks such reads torn).
// Fields this decoder does not know are ignored, so a later minor addition
// to the format still reads.

export const SNAPSHOT_FORMAT = 'slablab-snapshot/1';

export class KernelSnapshotError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KernelSnapshotError';
  }
}

/** A slab as the snapshot read it (a CPU slab, a CPU partial slab or a node partial slab). */
export interface KSlab {
  /** The struct slab's address (hex, lower case): the key that follows a slab from one snapshot to the next. */
  address: string;
  /** The first byte of its memory (object i is at base + red_left_pad + i * size); null when the snapshot could not work it out. */
  base: bigint | null;
  objects: number;
  inuse: number;
  frozen: boolean;
  /** The free objects on its own freelist, in list order (hex). */
  freelist: string[];
  /** Why the freelist walk stopped early (a cycle, a pointer outside the slab), or null. */
  freelistError: string | null;
  /** Still inconsistent after the snapshot's re-reads. */
  torn: boolean;
  /** With --objects: one class per object by index (a allocated, f free, c on the CPU freelist, s in a sheaf, ! claimed twice), else null. */
  state: string | null;
}

/** A sheaf's objects (a stack: objects[size - 1] is handed out next). */
export interface KSheaf {
  size: number;
  objects: string[];
}

export interface KCpu {
  cpu: number;
  /** kmem_cache_cpu's tid, null on kernels without a per-CPU slab. */
  tid: bigint | null;
  slab: KSlab | null;
  /** The CPU freelist (objects of the CPU slab), in list order. */
  freelist: string[];
  freelistError: string | null;
  torn: boolean;
  partial: KSlab[];
  /** main, spare and rcu_free (null each when the CPU has none), or null for a cache without sheaves. */
  sheaves: { main: KSheaf | null; spare: KSheaf | null; rcuFree: KSheaf | null } | null;
}

export interface KNode {
  node: number;
  nrPartial: number;
  nrSlabs: number;
  totalObjects: number;
  /** The partial slabs read, in list order (at most --max-slabs of them). */
  partial: KSlab[];
  /** Partial slabs not read (past --max-slabs). */
  partialLeftOut: number;
  /** The node's barn, null for a cache without sheaves. */
  barn: { full: KSheaf[]; nrFull: number; nrEmpty: number } | null;
}

export interface KCache {
  name: string;
  address: string;
  objectSize: number;
  /** Bytes per object slot (object, metadata, alignment). */
  size: number;
  /** Where the free pointer is stored in a free object. */
  offset: number;
  align: number;
  order: number;
  objectsPerSlab: number;
  flags: number;
  /** s->inuse: where the metadata after the object starts. */
  inuse: number;
  /** Bytes of red zone before each object (debug caches): object i is at base + redLeftPad + i * size. */
  redLeftPad: number;
  minPartial: number;
  cpuPartial: number;
  sheafCapacity: number;
  cpus: KCpu[];
  nodes: KNode[];
  /** What stayed inconsistent after the snapshot's re-reads (read while it changed). */
  torn: { cpus: number[]; slabs: string[]; nodes: number[]; droppedRecords: number; complete: boolean };
  /** The snapshot's own counts over what it listed, when it gives them (a check on the accounting). */
  totals: { listedSlabs: number; listedObjects: number; freeOnSlabFreelists: number; onCpuFreelists: number; inSheaves: number } | null;
}

export interface KernelInfo {
  release: string;
  version: string;
  nrCpus: number;
  nrNodes: number;
  pageSize: number;
  features: { cpuSlab: boolean; sheaves: boolean; barnLocation: string; freelistHardened: boolean };
}

export interface KernelSnapshot {
  format: string;
  kernel: KernelInfo;
  takenAt: string;
  durationNs: number;
  caches: KCache[];
}

/** Files larger than this are refused before parsing (a whole large machine is a few tens of MB). */
export const MAX_SNAPSHOT_BYTES = 256 << 20;

type Json = Record<string, unknown>;

const HEX = /^0x[0-9a-f]{1,16}$/i;

function fail(path: string, what: string): never {
  throw new KernelSnapshotError(`${path}: ${what}`);
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'string' ? `the string ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}` : typeof v === 'object' ? 'an object' : `${typeof v} ${String(v)}`);

function object(v: unknown, path: string): Json {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) fail(path, `expected an object, found ${kind(v)}`);
  return v as Json;
}

function field(o: Json, key: string, path: string): unknown {
  if (!(key in o)) fail(path, `the field "${key}" is missing`);
  return o[key];
}

function whole(o: Json, key: string, path: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = field(o, key, path);
  if (typeof v !== 'number' || !Number.isInteger(v)) fail(`${path}.${key}`, `expected a whole number, found ${kind(v)}`);
  if (v < min || v > max) fail(`${path}.${key}`, `${v} is outside ${min}..${max}`);
  return v;
}

function string(o: Json, key: string, path: string): string {
  const v = field(o, key, path);
  if (typeof v !== 'string') fail(`${path}.${key}`, `expected a string, found ${kind(v)}`);
  return v;
}

function boolean(o: Json, key: string, path: string): boolean {
  const v = field(o, key, path);
  if (typeof v !== 'boolean') fail(`${path}.${key}`, `expected true or false, found ${kind(v)}`);
  return v;
}

function array(o: Json, key: string, path: string): unknown[] {
  const v = field(o, key, path);
  if (!Array.isArray(v)) fail(`${path}.${key}`, `expected an array, found ${kind(v)}`);
  return v;
}

function address(v: unknown, path: string): string {
  if (typeof v !== 'string' || !HEX.test(v)) fail(path, `expected an address as a hex string ("0xffff…"), found ${kind(v)}`);
  return v.toLowerCase();
}

function addresses(o: Json, key: string, path: string): string[] {
  return array(o, key, path).map((a, i) => address(a, `${path}.${key}[${i}]`));
}

/** A 64-bit counter: a whole number, or a decimal or hex string when it does not fit a double. */
function counter(v: unknown, path: string): bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  if (typeof v === 'string' && (/^\d{1,20}$/.test(v) || HEX.test(v))) return BigInt(v);
  fail(path, `expected a whole number or a number as a string, found ${kind(v)}`);
}

/** Cache flags: a number or a hex string (slab_flags_t). */
function flags(v: unknown, path: string): number {
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 0xffffffff) return v;
  if (typeof v === 'string' && /^0x[0-9a-f]{1,8}$/i.test(v)) return Number.parseInt(v.slice(2), 16);
  fail(path, `expected cache flags as a number or a hex string, found ${kind(v)}`);
}

function slab(v: unknown, path: string): KSlab {
  const o = object(v, path);
  const objects = whole(o, 'objects', path, 0, 65535);
  const inuse = whole(o, 'inuse', path, 0, 65535);
  if (inuse > objects) fail(`${path}.inuse`, `${inuse} is more than the slab's ${objects} objects`);
  const state = o.state ?? null;
  if (state !== null && (typeof state !== 'string' || state.length !== objects || !/^[afcs!]*$/.test(state)))
    fail(`${path}.state`, `expected one of a, f, c, s, ! per object (${objects}), found ${kind(state)}`);
  const base = field(o, 'base', path);
  return {
    address: address(field(o, 'address', path), `${path}.address`),
    base: base === null ? null : BigInt(address(base, `${path}.base`)),
    objects,
    inuse,
    frozen: boolean(o, 'frozen', path),
    freelist: addresses(o, 'freelist', path),
    freelistError: nullableString(o, 'freelist_error', path),
    torn: optionalBoolean(o, 'torn', path),
    state,
  };
}

/** A string or null (absent: null). */
function nullableString(o: Json, key: string, path: string): string | null {
  const v = o[key] ?? null;
  if (v !== null && typeof v !== 'string') fail(`${path}.${key}`, `expected null or a string, found ${kind(v)}`);
  return v;
}

/** true or false (absent: false). */
function optionalBoolean(o: Json, key: string, path: string): boolean {
  return key in o ? boolean(o, key, path) : false;
}

function nullableSlab(o: Json, key: string, path: string): KSlab | null {
  const v = field(o, key, path);
  return v === null ? null : slab(v, `${path}.${key}`);
}

function sheaf(v: unknown, path: string): KSheaf {
  const o = object(v, path);
  const objects = addresses(o, 'objects', path);
  const size = whole(o, 'size', path, 0, 65535);
  if (size !== objects.length) fail(`${path}.size`, `${size}, but ${objects.length} objects are listed`);
  return { size, objects };
}

function nullableSheaf(o: Json, key: string, path: string): KSheaf | null {
  const v = o[key];
  return v === null || v === undefined ? null : sheaf(v, `${path}.${key}`);
}

function cpu(v: unknown, path: string, kernel: KernelInfo): KCpu {
  const o = object(v, path);
  // Kernels without a per-CPU slab (7.0+) give only the CPU and its sheaves.
  const own = kernel.features.cpuSlab;
  const tid = own ? field(o, 'tid', path) : null;
  const sh = o.sheaves;
  let sheaves: KCpu['sheaves'] = null;
  if (sh !== null && sh !== undefined) {
    const so = object(sh, `${path}.sheaves`);
    sheaves = { main: nullableSheaf(so, 'main', `${path}.sheaves`), spare: nullableSheaf(so, 'spare', `${path}.sheaves`), rcuFree: nullableSheaf(so, 'rcu_free', `${path}.sheaves`) };
  }
  return {
    cpu: whole(o, 'cpu', path, 0, kernel.nrCpus - 1),
    tid: tid === null ? null : counter(tid, `${path}.tid`),
    slab: own ? nullableSlab(o, 'slab', path) : null,
    freelist: own ? addresses(o, 'freelist', path) : [],
    freelistError: nullableString(o, 'freelist_error', path),
    torn: optionalBoolean(o, 'torn', path),
    partial: own ? array(o, 'partial', path).map((s, i) => slab(s, `${path}.partial[${i}]`)) : [],
    sheaves,
  };
}

function node(v: unknown, path: string, nrNodes: number): KNode {
  const o = object(v, path);
  const b = o.barn;
  let barn: KNode['barn'] = null;
  if (b !== null && b !== undefined) {
    const bo = object(b, `${path}.barn`);
    barn = { full: array(bo, 'full', `${path}.barn`).map((s, i) => sheaf(s, `${path}.barn.full[${i}]`)), nrFull: whole(bo, 'nr_full', `${path}.barn`), nrEmpty: whole(bo, 'nr_empty', `${path}.barn`) };
  }
  const n: KNode = {
    node: whole(o, 'node', path, 0, nrNodes - 1),
    nrPartial: whole(o, 'nr_partial', path),
    nrSlabs: whole(o, 'nr_slabs', path),
    totalObjects: whole(o, 'total_objects', path),
    partial: array(o, 'partial', path).map((s, i) => slab(s, `${path}.partial[${i}]`)),
    partialLeftOut: whole(o, 'partial_left_out', path),
    barn,
  };
  return n;
}

function cache(v: unknown, i: number, kernel: KernelInfo): KCache {
  let path = `caches[${i}]`;
  const o = object(v, path);
  const name = string(o, 'name', path);
  path = `caches[${i}] (${name})`;
  const size = whole(o, 'size', path, 1, 1 << 30);
  const objectSize = whole(o, 'object_size', path, 0, size);
  const order = whole(o, 'order', path, 0, 20);
  const cpus = array(o, 'cpus', path).map((c, k) => cpu(c, `${path}.cpus[${k}]`, kernel));
  const nodes = array(o, 'nodes', path).map((n, k) => node(n, `${path}.nodes[${k}]`, kernel.nrNodes));
  const inuse = key(o, 'inuse') ? whole(o, 'inuse', path, 0, size) : objectSize;
  return {
    name,
    address: address(field(o, 'address', path), `${path}.address`),
    objectSize,
    size,
    offset: whole(o, 'offset', path, 0, size),
    align: whole(o, 'align', path, 0, 1 << 30),
    order,
    objectsPerSlab: whole(o, 'objects_per_slab', path, 0, 65535),
    flags: flags(field(o, 'flags', path), `${path}.flags`),
    inuse,
    redLeftPad: key(o, 'red_left_pad') ? whole(o, 'red_left_pad', path, 0, size) : 0,
    minPartial: whole(o, 'min_partial', path),
    cpuPartial: whole(o, 'cpu_partial', path),
    sheafCapacity: whole(o, 'sheaf_capacity', path, 0, 65535),
    cpus,
    nodes,
    torn: tornOf(o.torn, `${path}.torn`),
    totals: totalsOf(o.totals, `${path}.totals`),
  };
}

const key = (o: Json, k: string) => k in o && o[k] !== null;

function tornOf(v: unknown, path: string): KCache['torn'] {
  if (v === undefined || v === null) return { cpus: [], slabs: [], nodes: [], droppedRecords: 0, complete: true };
  const o = object(v, path);
  const wholes = (k: string) => (key(o, k) ? array(o, k, path).map((x, i) => (typeof x === 'number' && Number.isInteger(x) && x >= 0 ? x : fail(`${path}.${k}[${i}]`, `expected a whole number, found ${kind(x)}`))) : []);
  return {
    cpus: wholes('cpus'),
    slabs: key(o, 'slabs') ? addresses(o, 'slabs', path) : [],
    nodes: wholes('nodes'),
    droppedRecords: key(o, 'dropped_records') ? whole(o, 'dropped_records', path) : 0,
    complete: key(o, 'complete') ? boolean(o, 'complete', path) : true,
  };
}

function totalsOf(v: unknown, path: string): KCache['totals'] {
  if (v === undefined || v === null) return null;
  const o = object(v, path);
  return {
    listedSlabs: whole(o, 'listed_slabs', path),
    listedObjects: whole(o, 'listed_objects', path),
    freeOnSlabFreelists: whole(o, 'free_on_slab_freelists', path),
    onCpuFreelists: whole(o, 'on_cpu_freelists', path),
    inSheaves: whole(o, 'in_sheaves', path),
  };
}

function kernelInfo(v: unknown): KernelInfo {
  const path = 'kernel';
  const o = object(v, path);
  const f = object(field(o, 'features', path), `${path}.features`);
  const barn = field(f, 'barn_location', `${path}.features`);
  return {
    release: string(o, 'release', path),
    version: string(o, 'version', path),
    nrCpus: whole(o, 'nr_cpus', path, 1, 8192),
    nrNodes: whole(o, 'nr_nodes', path, 1, 1024),
    pageSize: whole(o, 'page_size', path, 4096, 1 << 20),
    features: {
      cpuSlab: boolean(f, 'cpu_slab', `${path}.features`),
      sheaves: boolean(f, 'sheaves', `${path}.features`),
      barnLocation: barn === null ? 'none' : typeof barn === 'string' ? barn : fail(`${path}.features.barn_location`, `expected a string or null, found ${kind(barn)}`),
      freelistHardened: boolean(f, 'freelist_hardened', `${path}.features`),
    },
  };
}

/** What the first bytes say a file is, when it is plainly not JSON. */
function notJson(bytes: Uint8Array): string | null {
  const b = (i: number) => bytes[i] ?? -1;
  if (bytes.length === 0) return 'the file is empty';
  if (b(0) === 0x1f && b(1) === 0x8b) return 'it is gzip-compressed: a .slabcap or a trace, not a snapshot (decompress a snapshot.json.gz first)';
  if (b(0) === 0x53 && b(1) === 0x4c && b(2) === 0x55 && b(3) === 0x42) return "it is the SLUB model's binary snapshot, not a kernel snapshot";
  for (let i = 0; i < Math.min(bytes.length, 512); i++)
    if (b(i) === 0) return `binary data, not JSON (it starts ${Array.from(bytes.subarray(0, 8), (x) => x.toString(16).padStart(2, '0')).join(' ')})`;
  return null;
}

/** Decodes a snapshot file's bytes; throws KernelSnapshotError naming what is wrong for anything that is not one. */
export function decodeKernelSnapshot(input: ArrayBuffer | Uint8Array | string): KernelSnapshot {
  let text: string;
  if (typeof input === 'string') text = input;
  else {
    const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
    if (bytes.length > MAX_SNAPSHOT_BYTES) throw new KernelSnapshotError(`the file is ${bytes.length} bytes, more than the ${MAX_SNAPSHOT_BYTES} this page reads`);
    const why = notJson(bytes);
    if (why) throw new KernelSnapshotError(`not a slablab snapshot: ${why}`);
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      throw new KernelSnapshotError('not a slablab snapshot: the file is not UTF-8 text');
    }
  }
  if (!text.trim()) throw new KernelSnapshotError('not a slablab snapshot: the file is empty');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new KernelSnapshotError(`not a slablab snapshot: the JSON does not parse (${e instanceof Error ? e.message : String(e)})`);
  }
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new KernelSnapshotError(`not a slablab snapshot: the document is ${kind(doc)}, not an object`);
  const o = doc as Json;
  const format = o.format;
  if (typeof format !== 'string') throw new KernelSnapshotError(`not a slablab snapshot: no "format" field (a snapshot says "format": "${SNAPSHOT_FORMAT}")`);
  if (format !== SNAPSHOT_FORMAT) {
    const [name, version] = format.split('/');
    throw new KernelSnapshotError(
      name === 'slablab-snapshot' ? `snapshot format version ${version ?? '?'}: this page reads ${SNAPSHOT_FORMAT}` : `not a slablab snapshot: its format is "${format}", not "${SNAPSHOT_FORMAT}"`,
    );
  }
  const kernel = kernelInfo(field(o, 'kernel', 'snapshot'));
  const caches = array(o, 'caches', 'snapshot').map((c, i) => cache(c, i, kernel));
  const seen = new Set<string>();
  caches.forEach((c, i) => {
    if (seen.has(c.name)) fail(`caches[${i}] (${c.name})`, 'a second cache of this name');
    seen.add(c.name);
  });
  return { format, kernel, takenAt: string(o, 'taken_at', 'snapshot'), durationNs: whole(o, 'duration_ns', 'snapshot'), caches };
}
