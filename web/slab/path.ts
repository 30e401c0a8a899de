// path.ts - the path a SLAB operation took, read from the events it emitted
// (web/lab/path.ts): a hit on the CPU's array, or a refill (from the shared
// array, from slabs, a new slab grown), a flush of a full array.

import { EventKind as K } from '../core/events.generated';
import { eventPath } from '../lab/path';

export const slabPath = eventPath(
  new Map([
    [K.SLAB_ALLOC_HIT, "from the CPU's array"],
    [K.SLAB_FREE_HIT, "to the CPU's array"],
    [K.SLAB_REFILL, 'array empty: refill'],
    [K.SLAB_REFILL_SHARED, 'from the shared array'],
    [K.SLAB_GET_OBJ, 'objects taken from slabs'],
    [K.SLAB_GROW, 'a new slab grown'],
    [K.SLAB_FLUSH, 'array full: flush'],
    [K.SLAB_PUT_OBJ, 'objects back to their slabs'],
    [K.SLAB_DESTROY, 'a free slab destroyed'],
    [K.SLAB_KMALLOC_LARGE, 'pages straight from the page allocator (kmalloc_large)'],
  ]),
);
