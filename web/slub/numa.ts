// numa.ts - the NUMA nodes of a SLUB world as the page draws them.  The
// snapshot (format 2, docs/snapshot-format.md) has one node section: every
// node's partial list in node order with the counters summed, and one barn
// count.  So the worker (worker.ts) appends a trailer of its own after the
// snapshot's `total` bytes when the world has more than one node, read from
// sl_api_slub_topology and sl_api_slub_node_state (wasm-core/bindings/
// api_slub.c), and decodeSnapshot reads it back into `numa`:
//
//   u32 magic "NUMA", nodes, memory-node mask, barn-node mask, online-CPU mask,
//       exact (1: read with every CPU quiet; 0: a stop inside an operation,
//       where the node counts are unknown and the nodes below come from the
//       quiet states around it)
//   u32 per CPU (8 each): node, memory node (numa_mem_id), barn node (get_barn)
//   u32 per node (4 each): nr_partial, nr_slabs, total_objects, barn full, barn empty
//   u32 n, then n pairs (sheaf id, node): the barns' sheaves
//
// A slab's node is the snapshot's own (byte 30 of its slab record, slab.nid).
// One node: no trailer, so one-node snapshots stay byte for byte as before.

/** SL_SLUB_MAX_CPUS and SL_SLUB_MAX_NODES. */
export const NUMA_MAX_CPUS = 8;
export const NUMA_MAX_NODES = 4;
const MAGIC = 0x414d554e;

export interface NumaNode {
  nid: number;
  hasMemory: boolean;
  hasBarn: boolean;
  /** The node's counts (null at a stop inside an operation). */
  nrPartial: number | null;
  nrSlabs: number | null;
  totalObjects: number | null;
  barnFull: number | null;
  barnEmpty: number | null;
}

export interface NumaState {
  nodes: NumaNode[];
  /** Read with every CPU quiet (false: a stop inside an operation). */
  exact: boolean;
  onlineCpus: number;
  /** Per CPU: its node, its memory node (numa_mem_id) and its barn's node (get_barn). */
  cpuNode: number[];
  cpuMemNode: number[];
  cpuBarnNode: number[];
  /** Barn sheaf id -> the node of the barn holding it. */
  barnSheafNode: ReadonlyMap<number, number>;
}

/** The trailer for `n` (the inverse of decodeNuma). */
export function encodeNuma(n: NumaState): Uint8Array {
  const words: number[] = [MAGIC, n.nodes.length, mask(n.nodes.filter((x) => x.hasMemory)), mask(n.nodes.filter((x) => x.hasBarn)), n.onlineCpus, n.exact ? 1 : 0];
  for (const per of [n.cpuNode, n.cpuMemNode, n.cpuBarnNode]) for (let c = 0; c < NUMA_MAX_CPUS; c++) words.push(per[c] ?? 0);
  const known = (v: number | null) => (v === null ? 0xffffffff : v);
  for (let nid = 0; nid < NUMA_MAX_NODES; nid++) {
    const x = n.nodes[nid];
    words.push(...(x ? [x.nrPartial, x.nrSlabs, x.totalObjects, x.barnFull, x.barnEmpty].map(known) : [0, 0, 0, 0, 0]));
  }
  words.push(n.barnSheafNode.size);
  for (const [k, v] of n.barnSheafNode) words.push(k, v);
  return new Uint8Array(Uint32Array.from(words).buffer);
}

const mask = (nodes: readonly NumaNode[]) => nodes.reduce((m, x) => m | (1 << x.nid), 0);

/** The trailer at byte `at` of `u8`, or undefined when there is none; throws on a cut or bad one. */
export function decodeNuma(u8: Uint8Array, at: number): NumaState | undefined {
  if (u8.byteLength < at + 4) return undefined;
  const v = new DataView(u8.buffer, u8.byteOffset + at, u8.byteLength - at);
  let p = 0;
  const next = () => {
    if (p + 4 > v.byteLength) throw new Error('the NUMA trailer is cut short');
    const x = v.getUint32(p, true);
    p += 4;
    return x;
  };
  if (next() !== MAGIC) return undefined;
  const nr = next();
  if (nr < 1 || nr > NUMA_MAX_NODES) throw new Error(`the NUMA trailer names ${nr} nodes`);
  const memNodes = next();
  const barnNodes = next();
  const onlineCpus = next();
  const exact = next() === 1;
  const perCpu = () => Array.from({ length: NUMA_MAX_CPUS }, next);
  const cpuNode = perCpu();
  const cpuMemNode = perCpu();
  const cpuBarnNode = perCpu();
  const known = (x: number) => (x === 0xffffffff ? null : x);
  const nodes: NumaNode[] = [];
  for (let nid = 0; nid < NUMA_MAX_NODES; nid++) {
    const [nrPartial, nrSlabs, totalObjects, barnFull, barnEmpty] = Array.from({ length: 5 }, () => known(next()));
    if (nid < nr)
      nodes.push({ nid, hasMemory: ((memNodes >> nid) & 1) === 1, hasBarn: ((barnNodes >> nid) & 1) === 1, nrPartial: nrPartial ?? null, nrSlabs: nrSlabs ?? null, totalObjects: totalObjects ?? null, barnFull: barnFull ?? null, barnEmpty: barnEmpty ?? null });
  }
  const pairs = next();
  if (pairs > 1 << 20) throw new Error(`the NUMA trailer lists ${pairs} pairs`);
  const barnSheafNode = new Map<number, number>();
  for (let i = 0; i < pairs; i++) barnSheafNode.set(next(), next());
  return { nodes, exact, onlineCpus, cpuNode, cpuMemNode, cpuBarnNode, barnSheafNode };
}

/** The CPUs of node `nid` among the first `ncpus`. */
export function cpusOfNode(n: NumaState, nid: number, ncpus: number): number[] {
  return Array.from({ length: ncpus }, (_, c) => c).filter((c) => n.cpuNode[c] === nid);
}
