// SeededModel.tsx - "Open this cache in the model": the SLUB view's own lab
// (web/slub/SlubView.tsx, the lab engine's controls: alloc and free by hand,
// Step, Back by replay) on one world seeded from the picked cache (seed.ts).
// Its parameters live in memory, not in the page's URL: the seed comes from
// a file the URL cannot name.  The world's configuration holds the seed, so
// every replay starts from it.

import { useMemo, useState } from 'react';
import type { CoreState } from '../core/use-core';
import type { ParamStore } from '../lab/params';
import { SANDBOX, slubStepView } from '../slub/view';
import { SlubView } from '../slub/SlubView';
import type { CacheSeed } from './seed';

/** A ParamStore over a map in React state (a new object on every change, as the URL store). */
function useMemoryStore(initial: Record<string, string>): ParamStore {
  const [map, setMap] = useState<Readonly<Record<string, string>>>(initial);
  return useMemo(
    () => ({
      get: (k: string) => map[k] ?? null,
      set: (patch: Readonly<Record<string, string | null>>) =>
        setMap((m) => {
          const next: Record<string, string> = { ...m };
          for (const [k, v] of Object.entries(patch)) {
            if (v === null) delete next[k];
            else next[k] = v;
          }
          return next;
        }),
    }),
    [map],
  );
}

export function SeededModel({ core, name, seed }: { core: CoreState; name: string; seed: CacheSeed }) {
  const v = seed.config.version;
  const store = useMemoryStore({ scenario: SANDBOX, cpus: String(seed.config.cpus), kernel: v ? `${v.major}.${v.minor}` : '6.17' });
  const view = useMemo(() => ({ ...slubStepView, panes: () => [{ label: '', world: seed.config }] }), [seed]);
  return (
    <section className="kernel-seeded" aria-labelledby="kernel-seeded-title" data-testid="kernel-seeded">
      <h3 id="kernel-seeded-title">{name} in the model</h3>
      <p className="lab-figures">
        The SLUB model started from this cache: {seed.listed} slabs on their lists with their free objects in their real order,
        {seed.full > 0 ? ` and full slabs (${seed.full} in the kernel).` : ' no full slab.'} Allocate and free with the controls below; Back replays from the seed.
      </p>
      {seed.notes.length > 0 && (
        <ul className="kernel-notes" data-testid="kernel-seeded-notes">
          {seed.notes.map((n, i) => (
            <li key={i}>{n}</li>
          ))}
        </ul>
      )}
      <SlubView core={core} store={store} embedded={false} stepView={view} />
    </section>
  );
}
