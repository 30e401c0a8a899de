// The two kernel snapshots of a .slabcap, read as a stream (gzip or not), and each way a file
// can fail to be one.  The archives are built here the way slablab capture lays them out
// (docs/slabcap.md): metadata, sysfs, snapshot-start.json, the trace, the end metadata,
// snapshot-end.json.
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { looksLikeSlabcap, slabcapSnapshots } from './slabcap';
import { KernelSnapshotError } from './snapshot-file';

const SAMPLES = new URL('../../public/samples/', import.meta.url);
const start = new Uint8Array(readFileSync(new URL('snapshot-6.18.json', SAMPLES)));
const end = new Uint8Array(readFileSync(new URL('snapshot-6.18-b.json', SAMPLES)));
const enc = new TextEncoder();

/** Plain ustar members and the end marker, as slablab capture writes them. */
function writeTar(entries: readonly { path: string; data: Uint8Array }[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const e of entries) {
    const h = new Uint8Array(512);
    const put = (at: number, text: string) => h.set(enc.encode(text), at);
    put(0, e.path);
    put(100, '0000644');
    put(124, e.data.length.toString(8).padStart(11, '0'));
    put(148, '        ');
    put(156, '0');
    put(257, 'ustar');
    put(263, '00');
    put(148, `${h.reduce((n, x) => n + x, 0).toString(8).padStart(6, '0')}\0 `);
    parts.push(h, e.data, new Uint8Array((512 - (e.data.length % 512)) % 512));
  }
  parts.push(new Uint8Array(1024));
  return new Uint8Array(Buffer.concat(parts));
}
/** 3 MB of trace lines between the snapshots, as a capture has. */
const trace = enc.encode('  cat-1 [000] .....  1.000000: kmem_cache_alloc: call_site=x ptr=0xffff888100000000\n'.repeat(36_000));

function capture(members: string[]): Uint8Array {
  const data: Record<string, Uint8Array> = {
    'slabcap.meta': enc.encode('format=slabcap/1\n'),
    'proc/slabinfo': enc.encode('slabinfo - version: 2.1\n'),
    'snapshot-start.json': start,
    trace,
    'slabcap-end.meta': enc.encode('events=36000\n'),
    'snapshot-end.json': end,
  };
  return writeTar(members.map((path) => ({ path, data: data[path]! })));
}
const ALL = ['slabcap.meta', 'proc/slabinfo', 'snapshot-start.json', 'trace', 'slabcap-end.meta', 'snapshot-end.json'];

async function refusal(bytes: Uint8Array): Promise<string> {
  try {
    await slabcapSnapshots(new Blob([new Uint8Array(bytes)]));
  } catch (e) {
    expect(e).toBeInstanceOf(KernelSnapshotError);
    return (e as Error).message;
  }
  throw new Error('not refused');
}

describe('slabcapSnapshots', () => {
  it('finds both snapshots of a gzip capture, byte for byte, past its trace', async () => {
    const gz = gzipSync(capture(ALL));
    expect(looksLikeSlabcap(gz.subarray(0, 512))).toBe(true);
    const found = await slabcapSnapshots(new Blob([new Uint8Array(gz)]));
    expect([...found.keys()]).toEqual(['snapshot-start.json', 'snapshot-end.json']);
    // Compared as buffers (a deep comparison of 1.5 MB element by element takes minutes).
    expect(Buffer.from(found.get('snapshot-start.json')!).equals(Buffer.from(start))).toBe(true);
    expect(Buffer.from(found.get('snapshot-end.json')!).equals(Buffer.from(end))).toBe(true);
  });

  it('reads a plain (not gzip) capture, and one with only the start snapshot', async () => {
    const tar = capture(ALL.filter((m) => m !== 'snapshot-end.json'));
    expect(looksLikeSlabcap(tar.subarray(0, 512))).toBe(true);
    const found = await slabcapSnapshots(new Blob([new Uint8Array(tar)]));
    expect([...found.keys()]).toEqual(['snapshot-start.json']);
    expect(looksLikeSlabcap(start.subarray(0, 512))).toBe(false);
  });

  it('refuses a capture without snapshots, a gzip that is no archive, a cut or damaged archive', async () => {
    expect(await refusal(capture(['slabcap.meta', 'trace']))).toMatch(/holds no kernel snapshot \(snapshot-start\.json\)/);
    expect(await refusal(gzipSync(trace))).toBe('not a .slabcap: the gzip data is not a tar archive');
    const whole = capture(ALL);
    expect(await refusal(whole.subarray(0, 5000))).toMatch(/cut short inside snapshot-start\.json/);
    expect(await refusal(gzipSync(whole).subarray(0, 2000))).toMatch(/cut short|does not inflate/);
    const bad = whole.slice();
    bad[1024 + 10] = (bad[1024 + 10] ?? 0) ^ 0x55; // the second member's header (after the first's header and its one block of data)
    expect(await refusal(bad)).toMatch(/checksum does not match/);
  });
});
