// file-feed.test.ts - the page's side of a file session: slices read ahead and two kept in the
// worker's queue, in order, until an answer says done; stopping, an empty file, a failure.
import { describe, expect, it, vi } from 'vitest';
import { FILE_SLICE_BYTES, type FileBridge, feedFile } from './file-feed';

interface Sent {
  offset: number;
  length: number;
  answer: (p: { done: boolean; at: number }) => void;
  fail: (e: Error) => void;
}

/** A bridge whose fileAdvance answers wait until the test gives them. */
function fakeBridge() {
  const sent: Sent[] = [];
  const bridge = {
    request: (type: string, params: { offset: number; bytes: ArrayBuffer }) => {
      expect(type).toBe('fileAdvance');
      return new Promise((answer, fail) => sent.push({ offset: params.offset, length: params.bytes.byteLength, answer, fail }));
    },
  } as unknown as FileBridge;
  return { bridge, sent };
}

const file = (bytes: number) => new Blob([new Uint8Array(bytes)]);

describe('feeding a file to a file session', () => {
  it('keeps two slices in the worker queue, reads the next meanwhile, and stops at done', async () => {
    const { bridge, sent } = fakeBridge();
    const size = 2 * FILE_SLICE_BYTES + 5;
    const seen: number[] = [];
    const fed = feedFile(bridge, 7, file(size), (p: { done: boolean; at: number }) => seen.push(p.at), () => false);
    await vi.waitFor(() => expect(sent.map((s) => s.offset)).toEqual([0, FILE_SLICE_BYTES]));
    sent[0]!.answer({ done: false, at: 1 });
    await vi.waitFor(() => expect(sent.map((s) => s.length)).toEqual([FILE_SLICE_BYTES, FILE_SLICE_BYTES, 5]));
    sent[1]!.answer({ done: false, at: 2 });
    sent[2]!.answer({ done: true, at: 3 });
    expect(await fed).toEqual({ done: true, at: 3 });
    expect(seen).toEqual([1, 2, 3]);
    expect(sent.map((s) => s.offset)).toEqual([0, FILE_SLICE_BYTES, 2 * FILE_SLICE_BYTES]);
  });

  it('ends at the first answer that says done (a refusal), whatever is still queued', async () => {
    const { bridge, sent } = fakeBridge();
    const fed = feedFile(bridge, 1, file(3 * FILE_SLICE_BYTES), () => {}, () => false);
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    sent[0]!.answer({ done: true, at: 0 });
    expect(await fed).toEqual({ done: true, at: 0 });
    expect(sent).toHaveLength(2);
  });

  it('sends an empty file as one empty slice', async () => {
    const { bridge, sent } = fakeBridge();
    const fed = feedFile(bridge, 1, file(0), () => {}, () => false);
    await vi.waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toMatchObject({ offset: 0, length: 0 });
    sent[0]!.answer({ done: true, at: 0 });
    expect(await fed).toMatchObject({ done: true });
  });

  it('stops sending once told to, and resolves to null', async () => {
    const { bridge, sent } = fakeBridge();
    let stop = false;
    const progress = vi.fn();
    const fed = feedFile(bridge, 1, file(4 * FILE_SLICE_BYTES), progress, () => stop);
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    stop = true;
    sent[0]!.answer({ done: false, at: 0 });
    expect(await fed).toBeNull();
    expect(progress).not.toHaveBeenCalled();
    expect(sent).toHaveLength(2);
  });

  it('rejects with the failure of a slice, the later ones failing unheard', async () => {
    const { bridge, sent } = fakeBridge();
    const fed = feedFile(bridge, 1, file(3 * FILE_SLICE_BYTES), () => {}, () => false);
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    sent[0]!.fail(new Error('session 1 is not open'));
    sent[1]!.fail(new Error('session 1 is not open'));
    await expect(fed).rejects.toThrow('session 1 is not open');
  });

  it('rejects with a failed read, and a failed read ahead that nobody awaits goes unheard', async () => {
    // A file whose slices from `bad` on cannot be read (vitest fails the run on an unheard rejection).
    const failing = (size: number, bad: number) =>
      ({
        size,
        slice: (from: number, to: number) => ({
          arrayBuffer: () => (from >= bad ? Promise.reject(new Error('the file was removed')) : Promise.resolve(new ArrayBuffer(to - from))),
        }),
      }) as unknown as Blob;
    const { bridge, sent } = fakeBridge();
    const fed = feedFile(bridge, 1, failing(3 * FILE_SLICE_BYTES, 2 * FILE_SLICE_BYTES), () => {}, () => false);
    await vi.waitFor(() => expect(sent).toHaveLength(2));
    sent[0]!.answer({ done: true, at: 0 }); // a refusal: the third slice, read ahead and failed, is never awaited
    expect(await fed).toEqual({ done: true, at: 0 });
    await expect(feedFile(fakeBridge().bridge, 1, failing(10, 0), () => {}, () => false)).rejects.toThrow('the file was removed');
  });
});
