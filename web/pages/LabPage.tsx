import type { UrlState } from '../app/url-state';
import type { CoreState } from '../core/use-core';
import { SelftestPanel } from '../lab/SelftestPanel';
import { FreeRunView } from '../slub/FreeRunView';
import { SlubView } from '../slub/SlubView';
import { LAB_MODES, type LabMode } from '../slub/url';

const MODE_TITLES: Record<LabMode, string> = { slub: 'SLUB step by step', free: 'SLUB free-running', selftest: 'CPU self-test' };

/** The Lab: the SLUB view (scenarios, sandbox), its free-running mode, and the CPU self-test. */
export function LabPage({ core, state, update }: { core: CoreState; state: UrlState; update: (p: Partial<UrlState>) => void }) {
  return (
    <>
      <h2 className="visually-hidden">Lab</h2>
      <nav aria-label="Lab views" className="lab-modes">
        {LAB_MODES.map((m) => (
          <button key={m} type="button" aria-pressed={state.mode === m} onClick={() => update({ mode: m })}>
            {MODE_TITLES[m]}
          </button>
        ))}
      </nav>
      {state.mode === 'slub' && <SlubView core={core} state={state} update={update} />}
      {state.mode === 'free' && <FreeRunView core={core} state={state} update={update} />}
      {state.mode === 'selftest' && <SelftestPanel core={core} state={state} update={update} />}
    </>
  );
}
