// pickers.tsx - the small controls every step view's pickers and operations
// by hand are made of: a labelled choice (CPUs, "as CPU", an allocator, a
// kernel), and the scenario picker with its sandbox entry.  Each is a <label>
// around its <select>, so getByLabel and screen readers find it by its words.

import type { ReactNode } from 'react';

/** A labelled <select> of choices (names or numbers), each shown as `text(c)` (the choice itself by default). */
export function ChoicePicker<T extends string | number>({ label, value, choices, onPick, text = String }: { label: ReactNode; value: T; choices: readonly T[]; onPick: (c: T) => void; text?: (c: T) => string }) {
  return (
    <label>
      {label}{' '}
      <select
        value={value}
        onChange={(e) => {
          const picked = choices.find((c) => String(c) === e.target.value);
          if (picked !== undefined) onPick(picked);
        }}
      >
        {choices.map((c) => (
          <option key={c} value={c}>
            {text(c)}
          </option>
        ))}
      </select>
    </label>
  );
}

/** Whole numbers from..to. */
export const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, k) => from + k);

/** The view's stories, numbered, and its sandbox (a hand-made script) last. */
export function ScenarioPicker({ scenarios, value, sandbox, onPick }: { scenarios: readonly { id: string; title: string }[]; value: string; sandbox: string; onPick: (id: string) => void }) {
  return (
    <label>
      Scenario{' '}
      <select value={value} onChange={(e) => onPick(e.target.value)}>
        {scenarios.map((s, i) => (
          <option key={s.id} value={s.id}>
            {i + 1}. {s.title}
          </option>
        ))}
        <option value={sandbox}>Sandbox (your own steps)</option>
      </select>
    </label>
  );
}
