// CodePanel.tsx - the explainer's code: at each stop, the model's own C
// function that is running, the current line highlighted (the preemption
// point reached, or where the operation's last event was recorded:
// code.ts), and a link to the same kernel function on Bootlin's Elixir for
// the release the view follows.  The map comes from the C sources at build
// time (virtual:slablab/c-source), loaded the first time the panel is open.

import { useEffect, useMemo, useRef, useState } from 'react';
import type { Stop } from '../core/bridge-protocol';
import type { SlEvent } from '../core/events.generated';
import { codeAt, elixirUrl, type CSource } from './code';
import { PanePicker } from './PanePicker';

let loading: Promise<CSource> | undefined;
const loadSource = () => (loading ??= import('virtual:slablab/c-source').then((m) => m.default));

export interface CodePane {
  label: string;
  stop: Stop | undefined;
  events: readonly SlEvent[];
}

export function CodePanel({ model, kernel, panes, startOpen, idPrefix }: { model: string; kernel: { file: string; versions: readonly string[] } | null; panes: readonly CodePane[]; startOpen: boolean; idPrefix: string }) {
  const [open, setOpen] = useState(startOpen);
  const [source, setSource] = useState<CSource | null>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const [which, setWhich] = useState(0);
  const pre = useRef<HTMLPreElement>(null);

  useEffect(() => {
    if (!open || source) return;
    let live = true;
    loadSource().then(
      (s) => live && setSource(s),
      (e: unknown) => live && setFailed(e instanceof Error ? e.message : String(e)),
    );
    return () => {
      live = false;
    };
  }, [open, source]);

  const pane = panes[Math.min(which, panes.length - 1)];
  const src = source?.models[model];
  const stop = pane?.stop;
  const events = pane?.events;
  const at = useMemo(() => (src && stop && events ? codeAt(src, stop, events) : null), [src, stop, events]);

  // Keep the current line in view by scrolling the listing only, a third of the way down.  The line's place is
  // measured against the listing's own box (offsetTop would be the page's: the listing is not positioned).
  useEffect(() => {
    const box = pre.current;
    const row = box?.querySelector<HTMLElement>('.now');
    if (!box || !row) return;
    const rowBox = row.getBoundingClientRect();
    const top = rowBox.top - box.getBoundingClientRect().top + box.scrollTop;
    if (top < box.scrollTop || top + rowBox.height > box.scrollTop + box.clientHeight) box.scrollTop = Math.max(0, top - box.clientHeight / 3);
  }, [at, open]);

  const file = at?.fn.file.split('/').pop() ?? '';
  const version = kernel?.versions[Math.min(which, panes.length - 1)];
  return (
    <details className="lab-code" open={open} onToggle={(e) => setOpen(e.currentTarget.open)} data-testid={`${idPrefix}-code`}>
      <summary>
        Code{at ? `: ${at.fn.name} (${file}:${at.line})` : ''}
      </summary>
      {panes.length > 1 && <PanePicker labels={panes.map((p) => p.label)} which={which} onPick={setWhich} label="Code of" />}
      {failed && <p className="alert alert-error">The model's source could not be loaded: {failed}</p>}
      {open && !failed && !source && <p className="lab-hint">Loading the model's C…</p>}
      {source && !src && <p className="lab-hint">No C source map for the {model} model.</p>}
      {src && !at && <p className="lab-hint">No model code has run yet at this stop.</p>}
      {at && (
        <>
          <p className="lab-code-why" data-testid={`${idPrefix}-code-why`}>
            <code>{at.fn.name}</code> in {at.fn.file}, line {at.line}: {at.reason}.{' '}
            {kernel && version && (
              <a href={elixirUrl(version, kernel.file, at.fn.kernel)} target="_blank" rel="noopener">
                {at.fn.kernel ? `${at.fn.kernel} in Linux ${version}` : `${kernel.file} in Linux ${version}`} on Elixir
              </a>
            )}
          </p>
          <pre className="lab-code-src" ref={pre} tabIndex={0} aria-label={`C source of ${at.fn.name}, line ${at.line} highlighted`}>
            <code>
              {at.fn.lines.map((text, i) => {
                const n = at.fn.first + i;
                return (
                  <span key={n} className={n === at.line ? 'now' : undefined} aria-current={n === at.line ? 'step' : undefined}>
                    <span className="ln" aria-hidden="true">
                      {n}
                    </span>
                    {text}
                    {'\n'}
                  </span>
                );
              })}
            </code>
          </pre>
        </>
      )}
    </details>
  );
}
