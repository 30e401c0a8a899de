import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { kmallocRows, KMALLOC_VARIANTS, parseKmallocNative, parseKmallocVariant } from './bench';

describe('the kmalloc experiment', () => {
  it('has a row per size, each timing both phases of both rule sets, calibrated by a round of 20,000 calls', () => {
    expect(kmallocRows(false).map((r) => r.row)).toEqual([32, 64, 128, 256, 512, 1024, 2048, 4096]);
    expect(kmallocRows(true).map((r) => r.row)).toEqual([32, 256, 4096]);
    const row = kmallocRows(true)[0];
    expect(row).toMatchObject({ model: 'slab', experiment: 'kmalloc', opsPerLoop: 20_000, probeLoops: 1 });
    expect(row?.variants).toEqual(['slab-before:alloc', 'slab-before:free', 'slab-after:alloc', 'slab-after:free']);
    expect(KMALLOC_VARIANTS.map(parseKmallocVariant)).toEqual([
      { rules: 'slab-before', phase: 'alloc' },
      { rules: 'slab-before', phase: 'free' },
      { rules: 'slab-after', phase: 'alloc' },
      { rules: 'slab-after', phase: 'free' },
    ]);
    for (const bad of ['slab-after', 'slub:alloc', 'slab-after:free:x', '']) expect(parseKmallocVariant(bad)).toBeNull();
  });

  it('reads the kmalloc rows of `slablab all --format json`, SLUB included', () => {
    const r = parseKmallocNative(readFileSync(new URL('../../e2e/bench-native.fixture.json', import.meta.url), 'utf8'));
    expect(new Set(r.points.map((p) => p.variant))).toEqual(new Set(['slab-before:alloc', 'slab-before:free', 'slab-after:alloc', 'slab-after:free', 'slub:alloc', 'slub:free']));
    expect(new Set(r.points.map((p) => p.row))).toEqual(new Set([32, 4096]));
    expect(() => parseKmallocNative('{"schema":"slablab-bench/1","experiments":[{"name":"bulk","measurements":[]}]}')).toThrow(/no kmalloc measurements/);
  });
});
