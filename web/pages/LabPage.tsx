import type { UrlState } from '../app/url-state';
import type { CoreState } from '../core/use-core';
import { SelftestPanel } from '../lab/SelftestPanel';

/** The Lab: today the CPU self-test; the allocator views join it here. */
export function LabPage({ core, state, update }: { core: CoreState; state: UrlState; update: (p: Partial<UrlState>) => void }) {
  return (
    <>
      <h2 className="visually-hidden">Lab</h2>
      <SelftestPanel core={core} state={state} update={update} />
    </>
  );
}
