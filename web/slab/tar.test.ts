// The caches panel's tar reader against tars made by GNU tar (plain, with
// long names, pax) of the development machine's /sys/kernel/slab fixture:
// the cache list it makes gives slab-types the totals `slab-types --sysfs`
// gives for the same folder; aliases (symlinks) are skipped, NUL padding
// ignored, and a damaged tar is refused with where it is wrong.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadNodeCore } from '../test/node-core';
import { SlabApi, type SlabModule } from './slab-api';
import { readTar, sysfsCacheList, TarError, writeTar } from './tar';

const fixture = fileURLToPath(new URL('../../tests/fixtures/slab/sysfs-6.18', import.meta.url));
let api: SlabApi;
let dir: string;

beforeAll(async () => {
  api = new SlabApi(await loadNodeCore<SlabModule>());
  dir = mkdtempSync(join(tmpdir(), 'slab-tar-'));
  cpSync(fixture, join(dir, 'slab'), { recursive: true });
  // An alias of a merged cache, as SLUB's sysfs has them, and a value padded as GNU tar pads a file that read short.
  symlinkSync(':0000024', join(dir, 'slab', 'kmalloc-alias'));
  writeFileSync(join(dir, 'slab', 'dentry', 'align'), '8\n\0\0\0\0');
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tar = (...args: string[]) => new Uint8Array(execFileSync('tar', ['-C', dir, '-cf', '-', ...args, 'slab'], { maxBuffer: 64 << 20 }));
const totals = (text: string) => api.slabTypes(text, { format: 'caches', kernel: '6.7', initOnFree: false, cpus: 2, rules: 'both', source: 't' }).totals;

describe('a tar of /sys/kernel/slab', () => {
  it("gives the totals `slab-types --sysfs` gives for this machine's caches, in every tar format", () => {
    for (const format of ['gnu', 'ustar', 'pax']) {
      const list = sysfsCacheList(readTar(tar(`--format=${format}`)));
      expect(list.caches).toBe(235);
      expect(totals(list.text)).toEqual({
        before: { total: 235, objfreelist: 0, normal_leftover: 119, normal: 50, off: 66 },
        after: { total: 235, objfreelist: 155, normal_leftover: 39, normal: 35, off: 6 },
      });
    }
  });

  it('reads the flags and alignments, skips the aliases', () => {
    const entries = readTar(tar());
    expect(entries.find((e) => e.path === 'slab/kmalloc-alias')?.type).toBe('symlink');
    const lines = sysfsCacheList(entries).text.split('\n');
    expect(lines.some((l) => l.startsWith('kmalloc-alias'))).toBe(false);
    expect(lines.find((l) => l.startsWith('dentry '))).toBe('dentry 192 align=8 reclaim');
    expect(lines.find((l) => l.startsWith('TCP '))).toMatch(/^TCP \d+ align=\d+ rcu hwcache$/);
  });

  it('reads names past 100 bytes (GNU long names, pax paths)', () => {
    const top = `${'d'.repeat(90)}/${'e'.repeat(40)}`;
    for (const format of ['gnu', 'pax']) {
      const d = mkdtempSync(join(tmpdir(), 'slab-long-'));
      try {
        for (const [cache, size] of [['kmalloc-256', '256'], ['dentry', '192']] as const) {
          mkdirSync(join(d, top, 'slab', cache), { recursive: true });
          writeFileSync(join(d, top, 'slab', cache, 'object_size'), `${size}\n`);
        }
        const entries = readTar(new Uint8Array(execFileSync('tar', ['-C', d, `--format=${format}`, '-cf', '-', 'd'.repeat(90)])));
        expect(entries.map((e) => e.path)).toContain(`${top}/slab/dentry/object_size`);
        expect(sysfsCacheList(entries).text).toBe('dentry 192\nkmalloc-256 256\n');
      } finally {
        rmSync(d, { recursive: true, force: true });
      }
    }
  });

  it('round-trips what writeTar writes (the build serves the fixture with it)', () => {
    const data = new TextEncoder().encode('256\n');
    const entries = readTar(writeTar([{ path: 'slab' }, { path: 'slab/a-256' }, { path: 'slab/a-256/object_size', data }]));
    expect(entries.map((e) => [e.path, e.type])).toEqual([
      ['slab', 'dir'],
      ['slab/a-256', 'dir'],
      ['slab/a-256/object_size', 'file'],
    ]);
    expect(sysfsCacheList(entries).text).toBe('a-256 256\n');
  });

  it('refuses what is not a tar, a truncated one, and one without caches, saying where', () => {
    const good = writeTar([{ path: 'slab/a-256/object_size', data: new TextEncoder().encode('256') }]);
    expect(() => readTar(new TextEncoder().encode('slabinfo - version: 2.1\n'.repeat(40)))).toThrow(/not a tar file: the (checksum|size) field of the header at byte 0|bad checksum/);
    const bad = good.slice();
    bad[0] = 0x41;
    expect(() => readTar(bad)).toThrow(new TarError('not a tar file: the header at byte 0 has a bad checksum'));
    expect(() => readTar(good.subarray(0, 514))).toThrow(/the tar ends inside "slab\/a-256\/object_size"/);
    expect(() => readTar(new Uint8Array(1024))).toThrow(/holds no member/);
    expect(() => sysfsCacheList(readTar(writeTar([{ path: 'x/y', data: new Uint8Array(1) }])))).toThrow(/no cache directory/);
    expect(() => sysfsCacheList(readTar(writeTar([{ path: 'slab/a/object_size', data: new TextEncoder().encode('huge') }])))).toThrow('slab/a/object_size: "huge" is not a size of 1 to 4194304');
    expect(() => sysfsCacheList(readTar(writeTar([{ path: 'slab/a/object_size', data: new TextEncoder().encode('8') }, { path: 'slab/a/align', data: new TextEncoder().encode('12') }])))).toThrow(/slab\/a\/align: "12" is not a power of two/);
  });
});
