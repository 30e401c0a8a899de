// Embed.tsx - one view with minimal chrome, for an iframe in someone else's
// page (embed.html?view=...).  Such pages are usually not cross-origin
// isolated, so this works with the single-threaded build too; the link
// opens the same state in the full lab.

import { useCore } from '../core/use-core';
import { SelftestPanel } from '../lab/SelftestPanel';
import { CoreLoadAlert, CoreStatus } from './CoreStatus';
import { UrlProblems } from './UrlProblems';
import { EMBED_KEYS, toSearch, type UrlState } from './url-state';
import { useUrlState } from './use-url-state';

function labUrl(state: UrlState): string {
  const url = new URL('./', window.location.href);
  url.search = toSearch({ ...state, page: 'lab' }, ['page', 'cpus', 'iters', 'seed']);
  return url.toString();
}

export function Embed() {
  const { state, problems, update } = useUrlState(EMBED_KEYS);
  const core = useCore();
  return (
    <div className="embed">
      <header className="embed-bar">
        <span className="embed-title">slablab</span>
        <CoreStatus core={core} cpus={state.cpus} />
        <a href={labUrl(state)} target="_blank" rel="noopener">
          Open in slablab
        </a>
      </header>
      <UrlProblems problems={problems} />
      <CoreLoadAlert core={core} />
      {state.view === 'selftest' && <SelftestPanel core={core} state={state} update={update} />}
    </div>
  );
}
