// shortcuts.ts - keyboard shortcuts and the list the help panel ('?') shows.
// A component registers its shortcuts with useShortcuts while it is mounted,
// so the help panel always lists exactly the keys that work on screen.
//
// Scopes, so that two labs on one page do not fight over the same keys: a
// lab registers its keys with its root element.  A key pressed with the focus
// inside a scope goes to that scope; pressed elsewhere (on the page body) it
// goes to the scope the user last clicked or focused, or else to the first
// one mounted.  Keys registered without a scope (the shell's: '?', page
// numbers) work everywhere, after the scoped ones.  A scope registered as
// needing the focus (a <slab-lab> element among a page's prose) gets keys
// only while the focus is inside it: Space keeps scrolling the page.
//
// Targets are read through shadow roots (composedPath, the deep active
// element), so a lab inside an element's shadow DOM routes like any other.

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
  needsFocus: boolean;
}

const active: Registration[] = [];
const listeners = new Set<() => void>();
let snapshot: Shortcut[] = [];
/** The scope element the user last clicked or focused in. */
let lastScope: HTMLElement | null = null;

function scopeOf(r: Registration): HTMLElement | null {
  return r.scope?.current ?? null;
}

/** What routing needs of a scope's element. */
interface ScopeElement {
  contains(other: Node | null): boolean;
}

/**
 * The shortcuts a key aimed at `target` reaches, in the order they are
 * tried: the scope holding the target, else the scope used last (`last`),
 * else the first scope mounted, leaving out scopes that need the focus;
 * then the unscoped ones.
 */
export function route<S extends ScopeElement>(
  regs: readonly { list: readonly Shortcut[]; scope: S | null; scoped: boolean; needsFocus?: boolean }[],
  target: unknown,
  last: S | null,
): Shortcut[] {
  const scoped = regs.filter((r) => r.scoped);
  const inside = scoped.filter((r) => r.scope?.contains(target as Node | null) === true);
  const fallback = scoped.filter((r) => !r.needsFocus);
  const usedLast = fallback.filter((r) => last !== null && r.scope === last);
  const first = fallback.filter((r) => r.scope === (fallback[0]?.scope ?? null));
  const chosen = inside.length ? inside : usedLast.length ? usedLast : first;
  return [...chosen, ...regs.filter((r) => !r.scoped)].flatMap((r) => r.list);
}

function routeNow(target: unknown): Shortcut[] {
  return route(active.map((r) => ({ list: r.list, scope: scopeOf(r), scoped: r.scope !== null, needsFocus: r.needsFocus })), target, lastScope);
}

/** The focused element, inside shadow roots too. */
function deepActiveElement(): Element | null {
  let el = typeof document === 'undefined' ? null : document.activeElement;
  while (el?.shadowRoot?.activeElement) el = el.shadowRoot.activeElement;
  return el;
}

/** Where an event really happened (an element inside a shadow root, not its host). */
function deepTarget(e: Event): EventTarget | null {
  return e.composedPath()[0] ?? e.target;
}

function changed(): void {
  snapshot = routeNow(deepActiveElement());
  for (const l of listeners) l();
}

function typingInto(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}

function onKeyDown(e: KeyboardEvent): void {
  const target = deepTarget(e);
  if (e.ctrlKey || e.metaKey || e.altKey || typingInto(target)) return;
  const hit = routeNow(target).find((s) => s.key === e.key);
  if (!hit) return;
  e.preventDefault();
  hit.run();
}

function onFocusOrPointer(e: Event): void {
  const target = deepTarget(e);
  const scope = active.map(scopeOf).find((el) => el && target instanceof Node && el.contains(target));
  if (scope && scope !== lastScope) {
    lastScope = scope;
    changed();
  }
}

/**
 * Registers `list` while the calling component is mounted (pass a memoised
 * array), for the element `scope` holds if given; with `needsFocus`, only
 * while the focus is inside it.
 */
export function useShortcuts(list: readonly Shortcut[], scope: RefObject<HTMLElement | null> | null = null, needsFocus = false): void {
  useEffect(() => {
    const r: Registration = { list, scope, needsFocus };
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
  }, [list, scope, needsFocus]);
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

/**
 * The keys that move a view's selection without the canvas having focus
 * (with focus, the arrows do it): `move(dx, dy)` steps through the view's
 * items (dx: objects, bits) and their groups (dy: slabs, chunks).
 */
export function selectionShortcuts(move: (dx: number, dy: number) => void, item = 'object', group = 'slab'): Shortcut[] {
  return [
    { key: ']', description: `Select the next ${item} (arrows do this when the canvas has focus)`, run: () => move(1, 0) },
    { key: '[', description: `Select the previous ${item}`, run: () => move(-1, 0) },
    { key: '}', description: `Select the next ${group}`, run: () => move(0, 1) },
    { key: '{', description: `Select the previous ${group}`, run: () => move(0, -1) },
  ];
}
