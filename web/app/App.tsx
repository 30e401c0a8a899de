// App.tsx - the lab's shell: header with the core's mode, page tabs (Lab,
// Benchmarks, About; the page is in the URL), URL problems, the keyboard
// help panel.  Pages live in web/pages/; canvas views in web/views/.

import { useMemo, useState } from 'react';
import { useCore } from '../core/use-core';
import { AboutPage } from '../pages/AboutPage';
import { BenchmarksPage } from '../pages/BenchmarksPage';
import { LabPage } from '../pages/LabPage';
import { CoreLoadAlert, CoreStatus } from './CoreStatus';
import { HelpPanel } from './HelpPanel';
import { useShortcuts } from './shortcuts';
import { UrlProblems } from './UrlProblems';
import { APP_KEYS, PAGES, type Page } from './url-state';
import { useUrlState } from './use-url-state';

const TITLES: Record<Page, string> = { lab: 'Lab', benchmarks: 'Benchmarks', about: 'About' };

export function App() {
  const { state, problems, update } = useUrlState(APP_KEYS);
  const core = useCore();
  const [help, setHelp] = useState(false);

  useShortcuts(
    useMemo(
      () => [
        { key: '?', description: 'Show or hide this help', run: () => setHelp((h) => !h) },
        ...PAGES.map((p, i) => ({ key: String(i + 1), description: `Go to ${TITLES[p]}`, run: () => update({ page: p }) })),
      ],
      [update],
    ),
  );

  return (
    <div className="app">
      <header className="topbar">
        <h1>slablab</h1>
        <nav aria-label="Pages">
          <ul className="tabs">
            {PAGES.map((p) => (
              <li key={p}>
                <a
                  href={`?page=${p}`}
                  aria-current={state.page === p ? 'page' : undefined}
                  onClick={(e) => {
                    e.preventDefault();
                    update({ page: p });
                  }}
                >
                  {TITLES[p]}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <CoreStatus core={core} cpus={state.cpus} />
        <button type="button" className="help-button" aria-label="Keyboard shortcuts" onClick={() => setHelp(true)}>
          ?
        </button>
      </header>
      <main>
        <UrlProblems problems={problems} />
        <CoreLoadAlert core={core} />
        {state.page === 'lab' && <LabPage core={core} state={state} update={update} />}
        {state.page === 'benchmarks' && <BenchmarksPage />}
        {state.page === 'about' && <AboutPage core={core} />}
      </main>
      <HelpPanel open={help} onClose={() => setHelp(false)} />
    </div>
  );
}
