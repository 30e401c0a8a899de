// file-feed.ts - a file the page opened, fed to the worker's file session
// (fileOpen, web/lab/model.ts FileSession) a slice at a time.
//
// The page reads the slices, not the worker: Blob.arrayBuffer fills its
// buffer on the event loop of the thread that asked, so a read the worker
// started would wait until its replay of the slice before was over; the
// page's thread is idle meanwhile.  So the page reads slice k + 1 while the
// worker works on slice k, and keeps two slices in the worker's queue, so
// the worker never waits for the page (docs/replay.md, "In the browser").
// The page holds at most three slices, never the whole file.

import type { Bridge } from '../core/bridge';

/** What the feeding needs of the bridge (tests give a fake). */
export type FileBridge = Pick<Bridge, 'request'>;

/** Bytes per slice: the progress the page shows moves this often. */
export const FILE_SLICE_BYTES = 8 << 20;
/** Slices sent and not yet answered, at most. */
const QUEUED = 2;

/** What a file session's advance answers, as far as the feeding goes. */
export interface FileProgress {
  done: boolean;
}

/**
 * Feeds `file` to session `session` from its start until an answer says done (at the end or at a
 * refusal), passing each answer to `onProgress`; resolves to the last.  Stops feeding and resolves
 * to null once `stop()` is true (the slices already sent are worked on, then ignored).  An empty
 * file is one empty slice.
 */
export async function feedFile<P extends FileProgress>(
  bridge: FileBridge,
  session: number,
  file: Blob,
  onProgress: (p: P) => void,
  stop: () => boolean,
): Promise<P | null> {
  const read = (offset: number) => {
    const slice = file
      .slice(offset, Math.min(file.size, offset + FILE_SLICE_BYTES))
      .arrayBuffer()
      .then((bytes) => ({ offset, bytes }));
    slice.catch(() => {}); // a failed read rejects the await of it; one read ahead and never awaited says nothing
    return slice;
  };
  let reading: Promise<{ offset: number; bytes: ArrayBuffer }> | null = read(0);
  const answers: Promise<P>[] = [];
  for (;;) {
    while (reading && answers.length < QUEUED) {
      const slice: { offset: number; bytes: ArrayBuffer } = await reading;
      const next = slice.offset + slice.bytes.byteLength;
      reading = next < file.size ? read(next) : null;
      const answer = bridge.request('fileAdvance', { session, ...slice }, [slice.bytes]) as Promise<P>;
      answer.catch(() => {}); // a failure rejects the await below; the answers after it say nothing new
      answers.push(answer);
    }
    const p = await answers.shift()!;
    if (stop()) return null;
    onProgress(p);
    if (p.done) return p;
    if (!answers.length && !reading) throw new Error('the file session answered its last slice without saying it was done');
  }
}
