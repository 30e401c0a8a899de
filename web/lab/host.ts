// host.ts - what the page around a lab asks of it.  The full app, the
// iframe embed (embed.html) and the <slab-lab> element (web/embed/) all
// render a view's component; each wraps it in a LabHost that says how much
// chrome to show, whether keys need the focus inside the lab (several labs on
// one page), whether the lab is on screen (Play waits while it is not),
// whether to play once loaded, where the view puts its test hook, and which
// carries commands in (go, play, pause) and the lab's state out.
//
// The engine's useStepLab listens and reports, so every step view gets the
// embed API for free; the hosts turn it into postMessage (web/embed/api.ts)
// or methods and CustomEvents (web/embed/slab-lab.ts).

import { createContext, useContext } from 'react';

/** How much of the lab's chrome to show: everything, the transport and panels, or only the caption and the drawing. */
export const CONTROLS = ['none', 'minimal', 'full'] as const;
export type ControlsLevel = (typeof CONTROLS)[number];

/** What a lab tells its host after every change. */
export interface LabState {
  /** The states of the step shown are on screen. */
  ready: boolean;
  step: number;
  /** Stops in the story (0 while loading). */
  stops: number;
  atEnd: boolean;
  playing: boolean;
  caption: string;
  /** The progress counter ("Step 3 of 6"). */
  position?: string;
}

export type LabCommand = { type: 'go'; step: number } | { type: 'play' } | { type: 'pause' };

/**
 * Commands from the host to the lab on screen.  A command sent before a lab
 * listens (the element was told to play while it loads) waits for it.
 */
export class LabCommands {
  private listener: ((c: LabCommand) => void) | null = null;
  private readonly waiting: LabCommand[] = [];

  send(c: LabCommand): void {
    if (this.listener) this.listener(c);
    else this.waiting.push(c);
  }

  /** The lab's handler while it is mounted; returns the unsubscribe. */
  listen(f: (c: LabCommand) => void): () => void {
    this.listener = f;
    for (const c of this.waiting.splice(0)) f(c);
    return () => {
      if (this.listener === f) this.listener = null;
    };
  }
}

export interface LabHost {
  /** null: the view's own choice (embedded views show the minimal chrome). */
  controls: ControlsLevel | null;
  /** Keys reach the lab only while the focus is inside it (a page holding several). */
  keysNeedFocus: boolean;
  /** The lab is on screen; Play pauses while it is not. */
  active: boolean;
  /** Play from the start once loaded (and on screen). */
  autoplay: boolean;
  /** Where a view publishes its test hook: the window in the app, the element itself in <slab-lab>. */
  hooks: Record<string, unknown>;
  report(state: LabState): void;
  commands: LabCommands;
}

/** The app's host: the view has the page to itself. */
export const PAGE_HOST: LabHost = {
  controls: null,
  keysNeedFocus: false,
  active: true,
  autoplay: false,
  hooks: globalThis as unknown as Record<string, unknown>,
  report: () => undefined,
  commands: new LabCommands(),
};

export const LabHostContext = createContext<LabHost>(PAGE_HOST);

export function useLabHost(): LabHost {
  return useContext(LabHostContext);
}
