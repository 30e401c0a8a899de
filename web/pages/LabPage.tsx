import type { CoreState } from '../core/use-core';
import type { ParamStore } from '../lab/params';
import type { LabViewEntry } from '../lab/view';
import { VIEWS } from '../views';
import '../lab/lab.css';

/** The Lab: a button per view (web/views.ts), and the view the URL's `mode` names. */
export function LabPage({ core, store, view, onMode }: { core: CoreState; store: ParamStore; view: LabViewEntry; onMode: (id: string) => void }) {
  return (
    <>
      <h2 className="visually-hidden">Lab</h2>
      <nav aria-label="Lab views" className="lab-modes">
        {VIEWS.map((v) => (
          <button key={v.id} type="button" aria-pressed={view.id === v.id} onClick={() => onMode(v.id)}>
            {v.title}
          </button>
        ))}
      </nav>
      <view.Component key={view.id} core={core} store={store} embedded={false} />
    </>
  );
}
