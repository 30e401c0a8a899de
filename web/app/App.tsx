// App.tsx - the lab's shell: header with the core's mode, page tabs (Lab,
// Benchmarks, About; the page is in the URL), URL problems, the keyboard
// help panel.  Pages live in web/pages/; the Lab's views are web/views.ts's.

import { useEffect, useMemo, useState } from 'react';
import { useCore } from '../core/use-core';
import { formatParams, parseParams } from '../lab/params';
import { useShortcuts } from '../lab/shortcuts';
import { ThemeContext, useResolvedTheme } from '../lab/theme';
import { useParams, useUrlStore } from '../lab/url-store';
import { AboutPage } from '../pages/AboutPage';
import { BenchmarksPage } from '../pages/BenchmarksPage';
import { LabPage } from '../pages/LabPage';
import { CoreLoadAlert, CoreStatus } from './CoreStatus';
import { HelpPanel } from './HelpPanel';
import { ThemeToggle, useThemeChoice } from './ThemeToggle';
import { UrlProblems } from './UrlProblems';
import { APP_PARAMS, keyOrder, PAGES, urlProblems, viewById, viewCpus, type Page } from './url-state';

const TITLES: Record<Page, string> = { lab: 'Lab', benchmarks: 'Benchmarks', about: 'About' };
const APP_KEYS = keyOrder(APP_PARAMS);

export function App() {
  const store = useUrlStore(APP_KEYS);
  const { values, update } = useParams(APP_PARAMS, store);
  const [problems] = useState(() => urlProblems(window.location.search, APP_PARAMS, (get) => viewById(parseParams(APP_PARAMS, get).values.mode)));
  const view = viewById(values.mode);
  const core = useCore();
  const [help, setHelp] = useState(false);
  const [themeChoice, setThemeChoice] = useThemeChoice();
  const theme = useResolvedTheme(themeChoice);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
  }, [theme]);
  /** A new page is a new history entry, so Back returns to the one before. */
  const goTo = useMemo(() => (page: Page) => store.set(formatParams(APP_PARAMS, { page }), page !== values.page), [store, values.page]);

  useShortcuts(
    useMemo(
      () => [
        { key: '?', description: 'Show or hide this help', run: () => setHelp((h) => !h) },
        ...PAGES.map((p, i) => ({ key: String(i + 1), description: `Go to ${TITLES[p]}`, run: () => goTo(p) })),
      ],
      [goTo],
    ),
  );

  return (
    <ThemeContext.Provider value={theme}>
      <div className="app">
        <header className="topbar">
          <h1>slablab</h1>
          <nav aria-label="Pages">
            <ul className="tabs">
              {PAGES.map((p) => (
                <li key={p}>
                  <a
                    href={`?page=${p}`}
                    aria-current={values.page === p ? 'page' : undefined}
                    onClick={(e) => {
                      e.preventDefault();
                      goTo(p);
                    }}
                  >
                    {TITLES[p]}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <CoreStatus core={core} cpus={viewCpus(view, store)} />
          <ThemeToggle choice={themeChoice} theme={theme} onChoose={setThemeChoice} />
          <button type="button" className="help-button" aria-label="Keyboard shortcuts" onClick={() => setHelp(true)}>
            ?
          </button>
        </header>
        <main>
          <UrlProblems problems={problems} />
          <CoreLoadAlert core={core} />
          {values.page === 'lab' && <LabPage core={core} store={store} view={view} onMode={(mode) => update({ mode })} />}
          {values.page === 'benchmarks' && <BenchmarksPage />}
          {values.page === 'about' && <AboutPage core={core} />}
        </main>
        <HelpPanel open={help} onClose={() => setHelp(false)} />
      </div>
    </ThemeContext.Provider>
  );
}
