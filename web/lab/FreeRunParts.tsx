// FreeRunParts.tsx - the free-running mode's controls every view shares:
// start and stop, recording a run and saving it, opening a recording and
// choosing the frame to show (use-free-run.ts does the work), and the line
// that says how the mirror kept up.

import type { Recording } from './recording';
import type { FreeRunLive } from './use-free-run';

export interface RecordControlsProps {
  running: boolean;
  onStartStop: () => void;
  record: boolean;
  setRecord: (on: boolean) => void;
  recordedBytes: number;
  recordingFull: boolean;
  onSave: () => void;
  onOpen: (file: File) => void;
}

/** Record (before Start), Start/Stop, Save recording, Open a recording. */
export function RecordControls(p: RecordControlsProps) {
  return (
    <>
      <label title="Keep every frame's events in the page, to save as a file and replay later.">
        <input type="checkbox" checked={p.record} disabled={p.running} onChange={(e) => p.setRecord(e.target.checked)} /> record the run
      </label>
      <button type="button" onClick={p.onStartStop}>
        {p.running ? 'Stop' : 'Start'}
      </button>
      {p.recordedBytes > 0 && (
        <button type="button" onClick={p.onSave} disabled={p.running}>
          Save recording ({(p.recordedBytes / 1048576).toFixed(1)} MB{p.recordingFull ? ', full' : ''})
        </button>
      )}
      <label>
        Open a recording{' '}
        <input
          type="file"
          accept=".slabrec"
          disabled={p.running}
          onChange={(e) => {
            const f = e.target.files?.[0];
            if (f) p.onOpen(f);
            e.target.value = '';
          }}
        />
      </label>
    </>
  );
}

/** The open recording: what it holds, a slider over its frames, Close. */
export function ReplayBar({ rec, name, frames, pos, setPos, onClose }: { rec: Recording; name: string; frames: readonly { t: number }[]; pos: number; setPos: (p: number) => void; onClose: () => void }) {
  return (
    <section className="freerun-replay" aria-labelledby="replay-title" data-testid="freerun-replay">
      <h3 id="replay-title">Recording {name}</h3>
      <p>
        {rec.workload}, {rec.ncpus} CPUs: {frames.length} frames over {((frames.at(-1)?.t ?? 0) / 1000).toFixed(1)} s, {rec.segments.length} segment
        {rec.segments.length === 1 ? '' : 's'} (a new one at each re-anchor)
      </p>
      <label>
        Position{' '}
        <input type="range" aria-label="Recording position" min={0} max={Math.max(0, frames.length - 1)} value={pos} onChange={(e) => setPos(Number(e.target.value))} />
      </label>{' '}
      <span data-testid="replay-caption">
        frame {pos + 1} of {frames.length} · {((frames[pos]?.t ?? 0) / 1000).toFixed(2)} s
      </span>{' '}
      <button type="button" onClick={onClose}>
        Close the recording
      </button>
    </section>
  );
}

/** How the mirror kept up: events drained, dropped, times it lost track and re-anchored. */
export function MirrorLine({ live }: { live: FreeRunLive<unknown> }) {
  return (
    <p className="lab-hint" data-testid="freerun-events">
      {Math.round(live.eventsPerSec).toLocaleString('en')} events/s drained · {live.events.toLocaleString('en')} in all · {live.dropped.toLocaleString('en')} dropped by full rings · lost
      track {live.lost} time{live.lost === 1 ? '' : 's'}
      {live.lostWhy ? ` (last: ${live.lostWhy})` : ''} · re-anchored on a snapshot {live.anchors} time{live.anchors === 1 ? '' : 's'}
    </p>
  );
}
