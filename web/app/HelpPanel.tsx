import { useEffect, useRef } from 'react';
import { useShortcutList } from '../lab/shortcuts';

/** The keyboard help ('?'): every shortcut registered on screen right now. */
export function HelpPanel({ open, onClose }: { open: boolean; onClose: () => void }) {
  const shortcuts = useShortcutList();
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} className="help" aria-labelledby="help-title" onClose={onClose}>
      <h2 id="help-title">Keyboard shortcuts</h2>
      <table>
        <tbody>
          {shortcuts.map((s) => (
            <tr key={s.key}>
              <td>
                <kbd>{s.key === ' ' ? 'Space' : s.key}</kbd>
              </td>
              <td>{s.description}</td>
            </tr>
          ))}
          <tr>
            <td>
              <kbd>Escape</kbd>
            </td>
            <td>Close this panel</td>
          </tr>
        </tbody>
      </table>
      <button type="button" onClick={onClose} autoFocus>
        Close
      </button>
    </dialog>
  );
}
