// FreeRunPage.tsx - the page of a free-running view, assembled by the engine
// around the parts the view declares: its heading, its pickers (the
// engine's record and start controls after them), its per-CPU table of the
// live run, the inspector's words and the drawing of the state on screen.
// The page adds what every free run has: what the build runs the CPUs on,
// the error alert, a recording's frame bar (ReplayBar), the line that says
// how the mirror kept up, the inspector's frame and the view's keys scoped
// to the page.

import { useRef, type ReactNode } from 'react';
import type { CoreState } from '../core/use-core';
import { MirrorLine, RecordControls, ReplayBar, type RecordControlsProps } from './FreeRunParts';
import { useShortcuts, type Shortcut } from './shortcuts';
import type { FreeRunLive, useRecordingReplay } from './use-free-run';

export interface FreeRunPageProps {
  core: CoreState;
  /** Prefix of the page's ids and test ids ("freerun": freerun-view, freerun-inspector). */
  idPrefix: string;
  title: string;
  shortcuts: readonly Shortcut[];
  /** The view's own choices (CPUs, workload, ...), before the record and start controls. */
  pickers: ReactNode;
  record: RecordControlsProps;
  error: string | null;
  /** The recording open (useRecordingReplay), shown instead of the live run while it is. */
  replay: Pick<ReturnType<typeof useRecordingReplay>, 'replay' | 'pos' | 'setPos' | 'close'>;
  replaying: boolean;
  live: FreeRunLive<unknown> | null;
  /** The live run's per-CPU table (the view's counters). */
  table: ReactNode;
  /** The inspector's words, '' for none (then `inspectHint`). */
  inspector: string;
  inspectHint: string;
  /** The drawing of the state on screen, null before there is one. */
  canvas: ReactNode;
}

/** A free-running view's page: nothing until the core is ready. */
export function FreeRunPage(p: FreeRunPageProps) {
  const root = useRef<HTMLElement>(null);
  useShortcuts(p.shortcuts, root);
  if (p.core.status !== 'ready') return null;
  const threads = p.core.info.mode === 'threads';
  const { replay } = p.replay;
  return (
    <section className="lab-view" ref={root} aria-labelledby={`${p.idPrefix}-title`} data-testid={`${p.idPrefix}-view`}>
      <h2 id={`${p.idPrefix}-title`}>{p.title}</h2>
      <p>
        {threads
          ? "Each simulated CPU runs the workload on its own CPU worker (a pthread sharing the core's memory). Every frame the view drains the CPUs' event rings and replays the events on its own copy of the state; operations on different CPUs overlap, so now and then an event contradicts that copy, and the view re-anchors it on a snapshot."
          : 'This page is not cross-origin isolated, so there are no CPU threads: the CPUs run interleaved on the one bridge worker between frames, and the view replays their events exactly. Serve the lab with COOP/COEP (npm start) for real threads.'}
      </p>
      <div className="lab-pickers">
        {p.pickers}
        <RecordControls {...p.record} />
      </div>
      {p.error && (
        <div className="alert alert-error" role="alert">
          {p.error}
        </div>
      )}
      {p.replaying && replay && <ReplayBar rec={replay.rec} name={replay.name} frames={replay.frames} pos={p.replay.pos} setPos={p.replay.setPos} onClose={p.replay.close} />}
      {p.live && !p.replaying && (
        <>
          {p.table}
          <MirrorLine live={p.live} />
        </>
      )}
      {p.canvas && (
        <>
          <section className="lab-inspector" aria-labelledby={`${p.idPrefix}-inspector-title`}>
            <h3 id={`${p.idPrefix}-inspector-title`}>Inspector</h3>
            <p data-testid={`${p.idPrefix}-inspector`} aria-live="polite">
              {p.inspector || p.inspectHint}
            </p>
          </section>
          {p.canvas}
        </>
      )}
    </section>
  );
}
