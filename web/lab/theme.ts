// theme.ts - light and dark.  A theme choice is `auto` (follow the
// system's prefers-color-scheme), `light` or `dark`; the resolved theme is
// written as data-theme on the element that roots the lab (<html> in the
// app and embed.html, a wrapper inside each <slab-lab>'s shadow root), and
// web/theme.css gives every colour as a custom property of that attribute.
// Canvases read their colours from the same properties (canvasTheme), so a
// drawing follows its own lab's theme, even with two themes on one page.

import { createContext, useEffect, useState } from 'react';
import { oneOf } from './params';

export const THEMES = ['auto', 'light', 'dark'] as const;
export type ThemeChoice = (typeof THEMES)[number];
export type Theme = 'light' | 'dark';

export const THEME_PARAM = oneOf(THEMES, 'auto');

const DARK_QUERY = '(prefers-color-scheme: dark)';

/** The theme a choice means now, following the system's changes while it is `auto`. */
export function useResolvedTheme(choice: ThemeChoice): Theme {
  const [systemDark, setSystemDark] = useState(() => typeof matchMedia === 'function' && matchMedia(DARK_QUERY).matches);
  useEffect(() => {
    if (typeof matchMedia !== 'function') return;
    const q = matchMedia(DARK_QUERY);
    const on = () => setSystemDark(q.matches);
    q.addEventListener('change', on);
    return () => q.removeEventListener('change', on);
  }, []);
  return choice === 'auto' ? (systemDark ? 'dark' : 'light') : choice;
}

/** The resolved theme of the lab around a component (the app's <html>, an embed's frame). */
export const ThemeContext = createContext<Theme>('light');

/** The surface colours every view's drawing takes from its theme (a view keeps its own state colours, or a palette per `scheme`). */
export interface CanvasTheme {
  scheme: Theme;
  background: string;
  text: string;
  dim: string;
  lane: string;
  laneAlt: string;
  /** An empty slot or track (an array entry nobody holds). */
  well: string;
  selected: string;
}

const CANVAS_PROPERTIES: Record<Exclude<keyof CanvasTheme, 'scheme'>, string> = {
  background: '--canvas-background',
  text: '--canvas-text',
  dim: '--canvas-dim',
  lane: '--canvas-lane',
  laneAlt: '--canvas-lane-alt',
  well: '--canvas-well',
  selected: '--canvas-selected',
};

/** The canvas colours of the theme `el` is in: web/theme.css's --canvas-* properties. */
export function canvasTheme(el: Element): CanvasTheme {
  const style = getComputedStyle(el);
  const read = (k: keyof typeof CANVAS_PROPERTIES) => style.getPropertyValue(CANVAS_PROPERTIES[k]).trim();
  const scheme: Theme = style.getPropertyValue('--canvas-scheme').trim() === 'dark' ? 'dark' : 'light';
  return { scheme, background: read('background'), text: read('text'), dim: read('dim'), lane: read('lane'), laneAlt: read('laneAlt'), well: read('well'), selected: read('selected') };
}
