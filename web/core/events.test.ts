import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { OUTPUT, renderEventsTs } from '../../scripts/gen-events.mjs';
import { loadNodeCore } from '../test/node-core';
import { CoreApi } from './core-api';
import { EVENT_KINDS, EVENT_LAYOUT, EVENT_SIZE, EventKind, NONE32, decodeEvents, eventKindInfo } from './events.generated';

describe('events.generated.ts', () => {
  it('is up to date with events.def and trace.h (else: npm run gen:events)', () => {
    expect(readFileSync(OUTPUT, 'utf8')).toBe(renderEventsTs());
  });

  it('has unique names and numbers', () => {
    expect(new Set(EVENT_KINDS.map((k) => k.num)).size).toBe(EVENT_KINDS.length);
    expect(Object.keys(EventKind)).toEqual(EVENT_KINDS.map((k) => k.name));
    expect(eventKindInfo(EventKind.OP_BEGIN)?.name).toBe('OP_BEGIN');
    expect(eventKindInfo(9999)).toBeUndefined();
  });
});

describe('sl_event layout against the compiled C', () => {
  let api: CoreApi;
  beforeAll(async () => {
    api = new CoreApi(await loadNodeCore());
  });

  it('has the size and field offsets the decoder uses', () => {
    const [size, ...offsets] = api.eventLayout();
    expect(size).toBe(EVENT_SIZE);
    expect(api.eventSize).toBe(EVENT_SIZE);
    const names = ['op', 'cpu', 'kind', 'cache', 'flags', 'slab', 'obj', 'arg0', 'arg1', 'arg2', 'seq'] as const;
    expect(offsets).toEqual(names.map((n) => EVENT_LAYOUT[n].offset));
    expect(Object.keys(EVENT_LAYOUT)).toEqual([...names]);
  });
});

describe('decodeEvents', () => {
  it('decodes little-endian records field by field', () => {
    const buf = new ArrayBuffer(2 * EVENT_SIZE);
    const v = new DataView(buf);
    const at = EVENT_SIZE;
    v.setUint32(at + EVENT_LAYOUT.op.offset, 0x01020304, true);
    v.setUint16(at + EVENT_LAYOUT.cpu.offset, 7, true);
    v.setUint16(at + EVENT_LAYOUT.kind.offset, EventKind.PAGE_ALLOC, true);
    v.setUint16(at + EVENT_LAYOUT.cache.offset, 0xffff, true);
    v.setUint16(at + EVENT_LAYOUT.flags.offset, 0x8001, true);
    v.setUint32(at + EVENT_LAYOUT.slab.offset, 4096, true);
    v.setUint32(at + EVENT_LAYOUT.obj.offset, NONE32, true);
    v.setUint32(at + EVENT_LAYOUT.arg0.offset, 3, true);
    v.setUint32(at + EVENT_LAYOUT.arg1.offset, 0xdeadbeef, true);
    v.setUint32(at + EVENT_LAYOUT.arg2.offset, 42, true);
    v.setUint32(at + EVENT_LAYOUT.seq.offset, 0xfffffffe, true);
    const [first, second] = decodeEvents(new Uint8Array(buf));
    expect(first).toEqual({ op: 0, cpu: 0, kind: 0, cache: 0, flags: 0, slab: 0, obj: 0, arg0: 0, arg1: 0, arg2: 0, seq: 0 });
    expect(second).toEqual({
      op: 0x01020304,
      cpu: 7,
      kind: EventKind.PAGE_ALLOC,
      cache: 0xffff,
      flags: 0x8001,
      slab: 4096,
      obj: NONE32,
      arg0: 3,
      arg1: 0xdeadbeef,
      arg2: 42,
      seq: 0xfffffffe,
    });
  });

  it('refuses a buffer that is not whole records', () => {
    expect(() => decodeEvents(new ArrayBuffer(EVENT_SIZE + 4))).toThrow(new RegExp(`not a multiple of ${EVENT_SIZE}`));
  });
});
