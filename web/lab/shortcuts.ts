// shortcuts.ts - keyboard shortcuts and the list the help panel ('?') shows.
// A component registers its shortcuts with useShortcuts while it is mounted,
// so the help panel always lists exactly the keys that work on screen.
//
// Scopes, so that two labs on one page do not fight over the same keys: a
// lab registers its keys with its root element.  A key pressed with the focus
// inside a scope goes to that scope; pressed elsewhere (on the page body) it
// goes to the scope the user last clicked or focused, or else to the first
// one mounted.  Keys registered without a scope (the shell's: '?', page
// numbers) work everywhere, after the scoped ones.

import { useEffect, useSyncExternalStore, type RefObject } from 'react';

export interface Shortcut {
  /** KeyboardEvent.key, e.g. "?", "r", "1", "Escape". */
  key: string;
  description: string;
  run: () => void;
}

interface Registration {
  list: readonly Shortcut[];
  scope: RefObject<HTMLElement | null> | null;
}

const active: Registration[] = [];
const listeners = new Set<() => void>();
let snapshot: Shortcut[] = [];
/** The scope element the user last clicked or focused in. */
let lastScope: HTMLElement | null = null;

function scopeOf(r: Registration): HTMLElement | null {
  return r.scope?.current ?? null;
}

/** The scoped registrations the keys go to now, for a key event aimed at `target`. */
function current(target: EventTarget | null): Registration[] {
  const scoped = active.filter((r) => r.scope);
  const inside = target instanceof Node ? scoped.filter((r) => scopeOf(r)?.contains(target)) : [];
  if (inside.length) return inside;
  const last = scoped.filter((r) => lastScope && scopeOf(r) === lastScope);
  if (last.length) return last;
  const first = scopeOf(scoped[0] ?? { list: [], scope: null });
  return scoped.filter((r) => scopeOf(r) === first);
}

function changed(): void {
  snapshot = [...current(typeof document === 'undefined' ? null : document.activeElement), ...active.filter((r) => !r.scope)].flatMap((r) => r.list);
  for (const l of listeners) l();
}

function typingInto(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

function onKeyDown(e: KeyboardEvent): void {
  if (e.ctrlKey || e.metaKey || e.altKey || typingInto(e.target)) return;
  const hit = [...current(e.target), ...active.filter((r) => !r.scope)].flatMap((r) => r.list).find((s) => s.key === e.key);
  if (!hit) return;
  e.preventDefault();
  hit.run();
}

function onFocusOrPointer(e: Event): void {
  const scope = active.map(scopeOf).find((el) => el && e.target instanceof Node && el.contains(e.target));
  if (scope && scope !== lastScope) {
    lastScope = scope;
    changed();
  }
}

/** Registers `list` while the calling component is mounted (pass a memoised array), for the element `scope` holds if given. */
export function useShortcuts(list: readonly Shortcut[], scope: RefObject<HTMLElement | null> | null = null): void {
  useEffect(() => {
    const r: Registration = { list, scope };
    if (active.length === 0) {
      window.addEventListener('keydown', onKeyDown);
      document.addEventListener('focusin', onFocusOrPointer);
      document.addEventListener('pointerdown', onFocusOrPointer);
    }
    active.push(r);
    changed();
    return () => {
      active.splice(active.indexOf(r), 1);
      if (lastScope && !active.some((x) => scopeOf(x) === lastScope)) lastScope = null;
      changed();
      if (active.length === 0) {
        window.removeEventListener('keydown', onKeyDown);
        document.removeEventListener('focusin', onFocusOrPointer);
        document.removeEventListener('pointerdown', onFocusOrPointer);
      }
    };
  }, [list, scope]);
}

/** The shortcuts the keys reach right now, for the help panel. */
export function useShortcutList(): Shortcut[] {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => snapshot,
  );
}
