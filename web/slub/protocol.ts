// protocol.ts - what the SLUB view sends through the engine's requests and
// gets back (web/core/bridge-protocol.ts), checked on arrival by the SLUB
// model adapter (worker.ts): the world configuration, the free run's
// parameters, and the model's own parts of the replies.

import type { KernelParams, KernelVersion, StatNames } from './slub-api';
import type { BulkForm, Fastpath } from './snapshot';

export interface WorldConfig {
  cpus: number;
  objectSize: number;
  fastpath: Fastpath;
  bulkFree: BulkForm;
  seed: number;
  arenaBytes: number;
  /** The kernel's boot parameters and options; absent: the defaults. */
  kernel?: KernelParams;
  /** CONFIG_SLAB_FREELIST_HARDENED: free pointers stored encoded (ptr ^ s->random ^ swab(&ptr)). */
  hardened?: true;
  /** The Linux version the cache follows (eras.h); absent: 6.17. */
  version?: KernelVersion;
  /** kmem_cache_args.sheaf_capacity: 6.18's opt-in (vm_area_struct asks for 32); in 7.0 a floor. */
  sheafCapacity?: number;
  /** Model: the sheaves get sheafCapacity as given in 7.0 too (small sheaves, to watch them fill). */
  exactCapacity?: true;
  /** 7.0: a kmalloc cache created before bootstrap_cache_sheaves (the zero-capacity bootstrap sheaf until bootstrap). */
  earlyBoot?: true;
  /** NUMA nodes (docs/slub.md, "NUMA nodes"); absent: one node. */
  numa?: NumaConfig;
  /** A real cache's slabs the world starts from (web/kernel/seed.ts's words, sl_slub_seed); absent: empty. */
  kernelSeed?: number[];
}

/** A world's NUMA topology (sl_slub_config's nr_nodes, cpu_node, memoryless, offline_cpus). */
export interface NumaConfig {
  /** 2 to 4 nodes. */
  nodes: number;
  /** Each CPU's node (cpu_to_node). */
  cpuNode: number[];
  /** Mask of nodes with CPUs and no memory. */
  memoryless: number;
  /** Mask of CPUs that start offline (a CPU-online step brings one up). */
  offline?: number;
}

/** worldInfo: the cache's geometry for the world's object size, CPU count and kernel. */
export interface SlubWorldInfo {
  objects: number;
  order: number;
  size: number;
  /** The order a new slab falls back to when the page allocator runs short (s->min), and its objects. */
  fallbackOrder: number;
  fallbackObjects: number;
}

/** LoadReply.extra: the same script's results with the other bulk-free form (scenario 5's comparison), and the counters' sysfs names. */
export interface SlubLoadExtra {
  otherBulkForm: { form: BulkForm; results: number[] };
  statNames: StatNames;
}

export const WORKLOADS = ['local', 'prodcons', 'bursts'] as const;
export type Workload = (typeof WORKLOADS)[number];

export interface FreerunStartParams {
  cpus: number;
  objectSize: number;
  workload: Workload;
  /** Slabs to fill before starting (objects left allocated as a background). */
  prefillSlabs: number;
  seed: number;
  /** Share of the time (1..100 %) each CPU thread runs; below 100 it sleeps between rounds to leave the page a core. */
  duty: number;
  /** At most this many operations per second per CPU (0: no cap), so that a frame's events fit the rings. */
  rate: number;
  /** The Linux version the cache follows (absent: 6.17); in 6.18 it opts in to sheaves, as the sheaf stories' caches do. */
  version?: KernelVersion;
}

/** The counters a free run reports per CPU (FreerunCpu.counters), by their kernel names (a version without one reads 0). */
export const FREERUN_COUNTERS = [
  'ALLOC_FASTPATH', 'ALLOC_SLOWPATH', 'FREE_FASTPATH', 'FREE_SLOWPATH', 'CMPXCHG_DOUBLE_CPU_FAIL', 'CMPXCHG_DOUBLE_FAIL',
  'ALLOC_CPU_SHEAF', 'FREE_CPU_SHEAF', 'BARN_GET', 'BARN_PUT', 'SHEAF_REFILL', 'SHEAF_FLUSH',
] as const;
