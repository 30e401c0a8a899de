// ThemeToggle.tsx - the shell's theme button: follow the system (auto), or
// light, or dark; the choice is kept in localStorage, so it outlives the page
// without entering every shared link.

import { useState } from 'react';
import { THEMES, type Theme, type ThemeChoice } from '../lab/theme';

const STORAGE_KEY = 'slablab-theme';

function stored(): ThemeChoice {
  try {
    const v = localStorage.getItem(STORAGE_KEY);
    return (THEMES as readonly string[]).includes(v ?? '') ? (v as ThemeChoice) : 'auto';
  } catch {
    return 'auto'; // storage refused (a sandboxed frame): the system decides
  }
}

/** The chosen theme and a setter that remembers it. */
export function useThemeChoice(): [ThemeChoice, (c: ThemeChoice) => void] {
  const [choice, setChoice] = useState<ThemeChoice>(stored);
  const set = (c: ThemeChoice) => {
    setChoice(c);
    try {
      localStorage.setItem(STORAGE_KEY, c);
    } catch {
      // not remembered; the page still switches
    }
  };
  return [choice, set];
}

const NEXT: Record<ThemeChoice, ThemeChoice> = { auto: 'light', light: 'dark', dark: 'auto' };

/** One button cycling auto -> light -> dark; its text says what is on. */
export function ThemeToggle({ choice, theme, onChoose }: { choice: ThemeChoice; theme: Theme; onChoose: (c: ThemeChoice) => void }) {
  return (
    <button type="button" className="theme-button" title={`Switch to ${NEXT[choice] === 'auto' ? "the system's theme" : NEXT[choice]}`} onClick={() => onChoose(NEXT[choice])} data-testid="theme-toggle">
      Theme: {choice === 'auto' ? `auto (${theme})` : choice}
    </button>
  );
}
