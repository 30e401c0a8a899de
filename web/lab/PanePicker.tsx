// PanePicker.tsx - "Of: cmpxchg | plain": which pane's events or code a panel
// shows when the view runs several side by side.

export function PanePicker({ labels, which, onPick, label }: { labels: readonly string[]; which: number; onPick: (i: number) => void; label: string }) {
  return (
    <label>
      Of{' '}
      <select value={which} onChange={(e) => onPick(Number(e.target.value))} aria-label={label}>
        {labels.map((l, i) => (
          <option key={i} value={i}>
            {l}
          </option>
        ))}
      </select>
    </label>
  );
}
