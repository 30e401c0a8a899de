// theme.ts - light and dark.  A theme choice is `auto` (follow the
// system's prefers-color-scheme), `light` or `dark`; the resolved theme is
// written as data-theme on the element that roots the lab (<html> in the
// app and embed.html, a wrapper inside each <slab-lab>'s shadow root), and
// web/theme.css gives every colour as a custom property of that attribute.
// Canvases read their colours from the same properties (canvasTheme), so a
// drawing follows its own lab's theme, even with two themes on one page.

import { useEffect, useState } from 'react';
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
