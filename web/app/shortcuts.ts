// shortcuts.ts - keyboard shortcuts and the list the help panel ('?') shows.
// A view registers its shortcuts with useShortcuts while it is mounted, so
// the help panel always lists exactly the keys that work on screen.

import { useEffect, useSyncExternalStore } from 'react';

export interface Shortcut {
  /** KeyboardEvent.key, e.g. "?", "r", "1", "Escape". */
  key: string;
  description: string;
  run: () => void;
}

const active = new Set<readonly Shortcut[]>();
const listeners = new Set<() => void>();
let snapshot: Shortcut[] = [];

function changed(): void {
  snapshot = [...active].flat();
  for (const l of listeners) l();
}

function typingInto(target: EventTarget | null): boolean {
  return (
    target instanceof HTMLElement &&
    (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName))
  );
}

function onKeyDown(e: KeyboardEvent): void {
  if (e.ctrlKey || e.metaKey || e.altKey || typingInto(e.target)) return;
  const hit = snapshot.find((s) => s.key === e.key);
  if (!hit) return;
  e.preventDefault();
  hit.run();
}

/** Registers `list` while the calling component is mounted (pass a memoised array). */
export function useShortcuts(list: readonly Shortcut[]): void {
  useEffect(() => {
    if (active.size === 0) window.addEventListener('keydown', onKeyDown);
    active.add(list);
    changed();
    return () => {
      active.delete(list);
      changed();
      if (active.size === 0) window.removeEventListener('keydown', onKeyDown);
    };
  }, [list]);
}

/** Every shortcut currently registered, for the help panel. */
export function useShortcutList(): Shortcut[] {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => snapshot,
  );
}
