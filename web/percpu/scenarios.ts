// scenarios.ts - the percpu view's guided stories, from seed 003's
// evaluation (commit 40064aeca35c) and the scan-hint series.  Every story
// runs on any of the three allocators, and is best watched on all three side
// by side (`allocator=areamap,bitmap,scanhint`): the same steps, each world
// freeing its own areas (a free names the step that allocated them).
//
// The worlds boot like a small kernel: 16 KiB units (four pages, so four
// metadata blocks per chunk), a first chunk with a 4 KiB static region, a
// 2 KiB reserved region and an 8 KiB dynamic region (the unit's last 2 KiB
// serve nobody), as "s4096 r2048 d8192 u16384" in the boot log.  Chunks the
// model creates later serve their whole unit.

import { StoryBuilder } from '../lab/story';
import type { Scenario as LabScenario, Story as LabStory } from '../lab/view';
import type { PercpuConfig } from './percpu-api';
import { DEFAULT_ALIGN, type PercpuScript, type Step } from './script';
import type { Allocator } from './snapshot';

/** The first chunk's layout and the unit size of every story's world. */
export const LAB_BOOT = { unitSize: 16384, staticSize: 4096, reservedSize: 2048, dynSize: 8192 } as const;

export interface StoryContext {
  cpus: number;
}

export type Story = LabStory<PercpuScript>;
export type Scenario = LabScenario<PercpuScript, StoryContext>;

/** A story's steps: allocations and frees of the areas earlier steps made. */
class PercpuStory extends StoryBuilder<Step> {
  alloc(size: number, count: number, caption: string, align = DEFAULT_ALIGN): number {
    return this.op({ kind: 'alloc', cpu: 0, size, align, count, reserved: false }, caption);
  }
  /** Frees `count` areas of step `of` from area `first`, every `stride`-th, last first when `reverse`. */
  free(of: number, first: number, count: number, caption: string, { stride = 1, reverse = false } = {}): number {
    return this.op({ kind: 'free', cpu: 0, of, first, count, stride, reverse }, caption);
  }
  story(intro: string, outro: string): Story {
    return { script: { steps: this.ops }, captions: this.captions, intro, outro, ...(this.setups ? { setup: this.setups } : {}) };
  }
}

const inOrder: Scenario = {
  id: 'in-order',
  title: 'Seed 003: freeing small areas in order',
  build() {
    const b = new PercpuStory();
    const small = b.alloc(4, 256, 'Allocate 256 four-byte areas. They pack the first chunk\'s dynamic region from its start. The area map adds one map entry per area (a sorted array of offsets, bit 0 = in use); the bitmaps set one bit per 4-byte granule and a bound_map tick at each area\'s start.');
    b.free(small, 0, 1, 'Free the first area. Both its neighbours are in use, so nothing merges: the area map only clears the entry\'s in-use bit, the bitmaps clear one bit.');
    b.free(small, 1, 1, 'Free the second. It merges with the free first one: the area map removes an entry, moving the whole rest of the map one entry to the left (memmove). The bitmaps clear a bit and leave the stale bound_map tick behind.');
    b.free(small, 2, 254, 'Free the other 254 in order. Every free merges with the free run before it, so the area map moves the rest of the map each time: the entries memmoved add up to about 254 x 254 / 2. The bitmaps only clear bits and fix a block hint.');
    const big = b.alloc(4, 2048, 'Now eight times as many: 2,048 four-byte areas, the first chunk\'s whole dynamic region.');
    b.free(big, 0, 2048, 'Free them in order. The area map\'s memmove per free grows with the map, so eight times the areas cost about 64 times the entries moved; the bitmaps\' cost per free stays flat. This is seed 003\'s 4770 ms against 70 ms for a million 4-byte frees.');
    return b.story(
      'Seed 003 replaced the area map with a bitmap because freeing many small areas in order made every free memmove the map. Watch the counters under each world: entries memmoved, blocks and chunks scanned.',
      'The area map pays for a free with a memmove of everything after it; the bitmap pays with a bit and a hint.',
    );
  },
};

const freeOrders: Scenario = {
  id: 'free-orders',
  title: 'Alternating and reverse frees',
  build() {
    const b = new PercpuStory();
    const a = b.alloc(4, 1024, 'Allocate 1,024 four-byte areas.');
    b.free(a, 0, 512, 'Free every other area (the 1st, 3rd, 5th, ...). Each freed area sits between two areas in use: the area map clears in-use bits and moves nothing.', { stride: 2 });
    b.free(a, 1, 512, 'Free the rest. Now each free joins its two free neighbours: the area map removes two entries and moves the rest of the map two to the left, every time.', { stride: 2 });
    const r = b.alloc(4, 1024, 'Allocate 1,024 again.');
    b.free(r, 0, 1024, 'Free them last first. Each freed area joins the free tail of the region, which is at the end of the map: almost nothing is left to move. Reverse order is the area map\'s best case; the bitmaps cost the same in every order.', { reverse: true });
    return b.story(
      'Seed 003 timed three free orders: in order, alternating (every other area first, then the rest) and in reverse. Here are the last two, one step per half.',
      'The area map\'s free cost depends on the order; the bitmaps\' does not (seed 003: 22, 23 and 23 ms for the three orders at 4 bytes).',
    );
  },
};

const secondHalf: Scenario = {
  id: 'second-half',
  title: 'The chunk whose second half is filled first',
  build() {
    const b = new PercpuStory();
    const fill = b.alloc(4, 2048, 'Fill the first chunk\'s dynamic region with 2,048 four-byte areas.');
    b.free(fill, 0, 1024, 'Free its first half, last first: now the first half is free and the second half full (the seed\'s prefill, untimed there).', { reverse: true });
    const a = b.alloc(4, 1024, 'Allocate 1,024 four-byte areas: they go into the free first half. Each allocation splits the free run in front of the full second half, and the area map inserts an entry by moving every entry after it, the whole second half, one to the right.');
    b.free(a, 0, 1024, 'Free them in order: the memmoves to the left again.');
    return b.story(
      'Seed 003: "The area map allocator runs into trouble when it is allocating in chunks where the latter half is full." Allocation, not only freeing, then pays a memmove per area.',
      'With the second half full, the area map\'s allocations cost as much as its frees (seed 003: 4118 ms against the bitmap\'s 481 for a million 4-byte areas).',
    );
  },
};

const align8: Scenario = {
  id: 'align8',
  title: '4-byte areas, 8-byte aligned',
  build() {
    const b = new PercpuStory();
    const c0 = b.alloc(4, 2048, 'Fill the first chunk\'s dynamic region with 4-byte areas.');
    const c1 = b.alloc(4, 4096, 'Fill a second chunk (4,096 areas).');
    const c2 = b.alloc(4, 4096, 'And a third.');
    b.free(c0, 1, 1, 'Free the second area of the first chunk: a 4-byte hole at an offset that is 4 past a multiple of 8.');
    b.free(c1, 1, 1, 'The same hole in the second chunk.');
    b.free(c2, 1, 1, 'And in the third. Each chunk\'s largest free run is now 4 bytes, misaligned for an 8-byte alignment.');
    b.alloc(4, 1, 'Allocate 4 bytes aligned to 8. The area map\'s contig_hint (4 bytes) admits every one of these chunks, so it scans each chunk\'s whole map before the alignment rules it out. The bitmaps\' chunk hint knows where its run starts and rejects each chunk at once; scan hints relegate each chunk they fail to slot 0.', 8);
    b.alloc(4, 1, 'Again: the area map rescans every chunk; the 2017 bitmap tries each chunk\'s hint again; scan hints no longer look at the relegated chunks.', 8);
    b.alloc(4, 64, 'Sixty-four more: the counters add up what each allocator scanned.', 8);
    return b.story(
      'Seed 003\'s corner case: "iteration is triggered over all chunks if the contig_hint is the right size, but wrong alignment". A million 4-byte areas aligned to 8 took 52 minutes with the area map, about 16 s with the bitmap.',
      'The chunks scanned and entries visited per allocation grow with every full chunk for the area map; the bitmap skips them by their hints, and the scan-hint series (v5.2) stops trying them.',
    );
  },
};

const bpfBurst: Scenario = {
  id: 'bpf-burst',
  title: 'A burst of per-CPU counters (a BPF map)',
  build() {
    const b = new PercpuStory();
    const m1 = b.alloc(8, 2048, 'A BPF_MAP_TYPE_PERCPU_HASH map of 2,048 entries with 8-byte values is created: it preallocates one 8-byte, 8-aligned per-CPU area per entry. The first chunk fills, the allocation creates a chunk and populates its pages, and the balance step keeps empty populated pages in reserve.', 8);
    const m2 = b.alloc(8, 2048, 'A second such map.', 8);
    b.free(m1, 0, 2048, 'The first map is freed, its elements in order: with the area map each free merges into the free run before it and moves the rest of the map.');
    b.free(m2, 0, 2048, 'The second map goes too. Chunks become empty; the balance step destroys all empty chunks but one.');
    return b.story(
      'The percpu allocator was replaced because "allocating and freeing large numbers of counters as in BPF" did not scale (seed 003). Watch chunks being created, populated, moved between slot lists and destroyed.',
      'The bitmap allocator\'s frees stay cheap however many counters a chunk holds.',
    );
  },
};

export const SCENARIOS: readonly Scenario[] = [inOrder, freeOrders, secondHalf, align8, bpfBurst];
export const SCENARIO_IDS = SCENARIOS.map((s) => s.id);

export function scenarioById(id: string): Scenario | undefined {
  return SCENARIOS.find((s) => s.id === id);
}

/** The world of one pane: an allocator with `cpus` units, booted as LAB_BOOT. */
export function labWorld(allocator: Allocator, cpus: number): PercpuConfig {
  return { allocator, cpus, ...LAB_BOOT };
}
