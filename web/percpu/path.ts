// path.ts - the path a percpu step took, read from the events it emitted
// (web/lab/path.ts): the chunks scanned, a new chunk, the area map's
// memmoves, pages populated, the hints rebuilt.

import { EventKind as K } from '../core/events.generated';
import { eventPath } from '../lab/path';

export const percpuPath = eventPath(
  new Map([
    [K.PCPU_ALLOC_SCAN, 'chunks scanned'],
    [K.PCPU_CHUNK_CREATE, 'a new chunk'],
    [K.PCPU_MAP_EXTEND, 'the area map grown'],
    [K.PCPU_MAP_MEMMOVE, 'area map entries memmoved'],
    [K.PCPU_POPULATE, 'pages populated'],
    [K.PCPU_HINT_REFRESH, 'hints rebuilt'],
    [K.PCPU_SLOT_MOVE, 'the chunk moved to another slot'],
    [K.PCPU_CHUNK_DESTROY, 'an empty chunk destroyed'],
  ]),
);
