// slab-lab.ts - <slab-lab>: the lab as a custom element, for any static
// page.  One ES module (dist/slab-lab.js); the bridge worker and the
// WebAssembly it loads are found relative to this script's own URL.
//
//   <script type="module" src="https://HOST/slab-lab.js"></script>
//   <slab-lab view="slub" scenario="why-tid" variant="plain" step="8" controls="minimal"></slab-lab>
//
// Attributes are the embed's keys (view, controls, autoplay, theme:
// web/app/url-state.ts EMBED_PARAMS) and every view's URL parameters, read by
// the same parsers as the URL; a bad one is named inside the element and its
// default used.  Changing an attribute updates the view, and the view's own
// changes (a step taken) are written back to the attributes.
//
// Fallback: the element's own children (an <img> of the figure, say) show
// where there is no JavaScript, and in the placeholder until the figure
// loads (printing an unloaded figure prints them); a loaded figure prints its
// canvas at the step on screen, without the buttons (slab-lab.css).
// A click anywhere in the figure gives it the focus, so ←/→ step it.
//
// Life cycle, every setup registered with its teardown (samwho's
// onDisconnect, tldraw's dispose list):
//   connected:    a shadow root holds the styles and the frame; an
//                 IntersectionObserver waits until the element is on screen
//                 before anything loads (the WebAssembly core included);
//   on screen:    a React root renders the same EmbedFrame as embed.html, its
//                 LabHost saying that keys need the focus inside the element,
//                 that the test hook goes on the element, and whether the
//                 element is on screen (Play pauses while it is not);
//   disconnected: the root unmounts, which disposes the element's sessions
//                 in the page's one bridge worker, and the observers stop.
// Several elements share the page's bridge worker, each with sessions of
// its own.  The worker loads the threads build when the page is
// cross-origin isolated, the single-threaded one otherwise.
//
// The API (web/embed/api.ts): go(step), play(), pause(), load(params); the
// `state` property; CustomEvents slab-lab-step and slab-lab-finished (detail:
// the LabState), which bubble out of the shadow root.

import { createElement } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { EmbedFrame, type EmbedHost } from '../app/Embed';
import { EMBED_PARAMS, keyOrder, viewById } from '../app/url-state';
import { provideBridgeWorker } from '../core/bridge';
import { LabCommands, type LabState } from '../lab/host';
import { parseParams, type ParamStore } from '../lab/params';
import bridgeWorkerUrl from '../bridge.worker.ts?worker&url';
import { loadPatch, stateEvents } from './api';

/** Every stylesheet of web/, the shell's first: the shadow root sees none of the page's. */
const STYLES = Object.entries(import.meta.glob<string>('../**/*.css', { query: '?inline', import: 'default', eager: true }))
  .sort(([a], [b]) => Number(b.endsWith('/styles.css')) - Number(a.endsWith('/styles.css')) || a.localeCompare(b))
  .map(([, css]) => css)
  .join('\n');
let sheet: CSSStyleSheet | undefined;

/** The full lab's folder: beside this script once built, the site's root in development. */
const LAB_BASE = new URL(import.meta.env.DEV ? '../../' : '.', import.meta.url);

/**
 * The bridge worker, from beside this script.  A page may load the script
 * from another origin (the lab's own host), and a worker must come from the
 * page's origin: then a same-origin module that imports the worker's module
 * starts it (the host must send CORS headers, as static hosts such as GitHub
 * Pages do; the worker's files are then fetched from there too).
 */
function startBridgeWorker(): Worker {
  const url = new URL(bridgeWorkerUrl, import.meta.url);
  const options: WorkerOptions = { type: 'module', name: 'slablab-bridge' };
  if (url.origin === window.location.origin) return new Worker(url, options);
  const shim = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};`], { type: 'text/javascript' }));
  return new Worker(shim, options);
}
provideBridgeWorker(startBridgeWorker);

/** The element's attributes as a view's parameter store (a new one per render: useParams memoises on it). */
function attributeStore(el: HTMLElement): ParamStore {
  return {
    get: (k) => el.getAttribute(k),
    set: (patch) => {
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) el.removeAttribute(k);
        else el.setAttribute(k, v);
      }
    },
  };
}

export class SlabLabElement extends HTMLElement {
  static readonly observedAttributes = keyOrder(EMBED_PARAMS);

  readonly #commands = new LabCommands();
  readonly #teardown: (() => void)[] = [];
  #frame: HTMLElement | null = null;
  #root: Root | null = null;
  #onScreen = false;
  #host: EmbedHost | null = null;
  #state: LabState | null = null;
  #renderQueued = false;

  /** The lab's state as last reported (null before it loads). */
  get state(): LabState | null {
    return this.#state;
  }

  /** To stop `step` (clamped to the story). */
  go(step: number): void {
    if (!Number.isInteger(step) || step < 0) throw new RangeError(`slab-lab go(): the step must be a whole number >= 0, got ${String(step)}`);
    this.#commands.send({ type: 'go', step });
  }

  play(): void {
    this.#commands.send({ type: 'play' });
  }

  pause(): void {
    this.#commands.send({ type: 'pause' });
  }

  /** A scenario or a script: the view's parameters (others back to their defaults); throws on a bad one, changing nothing. */
  load(params: Readonly<Record<string, string>>): void {
    const current = parseParams(EMBED_PARAMS, (k) => this.getAttribute(k)).values.view;
    const r = loadPatch(params, EMBED_PARAMS, (id) => viewById(id ?? current));
    if (!r.ok) throw new Error(r.error);
    attributeStore(this).set(r.patch);
  }

  connectedCallback(): void {
    if (!this.#frame) this.#buildShadow();
    const seen = new IntersectionObserver((entries) => {
      const last = entries[entries.length - 1];
      if (last) this.#onScreen = last.isIntersecting;
      this.#render();
    });
    seen.observe(this);
    this.#register(() => seen.disconnect());
    // A click anywhere in the figure gives it the keys (←/→ step): the focus goes to the lab unless a control took it.
    const shadow = this.shadowRoot;
    const onPointer = (e: Event) => {
      const target = e.composedPath()[0];
      if (target instanceof HTMLElement && target.closest('button, input, select, textarea, a, [tabindex]')) return;
      const lab = shadow?.querySelector<HTMLElement>('.lab-view');
      if (!lab) return;
      if (!lab.hasAttribute('tabindex')) lab.tabIndex = -1;
      lab.focus({ preventScroll: true });
    };
    shadow?.addEventListener('pointerdown', onPointer);
    this.#register(() => shadow?.removeEventListener('pointerdown', onPointer));
    const onVisibility = () => this.#render();
    document.addEventListener('visibilitychange', onVisibility);
    this.#register(() => document.removeEventListener('visibilitychange', onVisibility));
    this.#register(() => {
      this.#root?.unmount();
      this.#root = null;
      this.#onScreen = false;
    });
  }

  disconnectedCallback(): void {
    for (const f of this.#teardown.splice(0).reverse()) f();
  }

  attributeChangedCallback(): void {
    // Several attributes set at once (a load) render once.
    if (this.#renderQueued || !this.#root) return;
    this.#renderQueued = true;
    queueMicrotask(() => {
      this.#renderQueued = false;
      this.#render();
    });
  }

  #register(teardown: () => void): void {
    this.#teardown.push(teardown);
  }

  #buildShadow(): void {
    const shadow = this.attachShadow({ mode: 'open' });
    if (!sheet) {
      sheet = new CSSStyleSheet();
      sheet.replaceSync(STYLES);
    }
    shadow.adoptedStyleSheets = [sheet];
    this.#frame = document.createElement('div');
    this.#frame.className = 'slab-lab-frame';
    // Until it loads, the placeholder shows the element's own content (a page's fallback image, which no-JS readers and print see too).
    const note = document.createElement('p');
    note.className = 'slab-lab-placeholder';
    note.textContent = 'slablab: the figure loads when it is scrolled into view.';
    this.#frame.append(note, document.createElement('slot'));
    shadow.append(this.#frame);
  }

  /** The host for the lab, the same object while nothing it says changes (the lab's effects depend on it). */
  #hostNow(): EmbedHost {
    const active = this.#onScreen && document.visibilityState !== 'hidden';
    if (this.#host?.active !== active)
      this.#host = {
        keysNeedFocus: true,
        active,
        hooks: this as unknown as Record<string, unknown>,
        commands: this.#commands,
        report: (s) => {
          const events = stateEvents(this.#state, s);
          this.#state = s;
          for (const e of events) this.dispatchEvent(new CustomEvent<LabState>(`slab-lab-${e}`, { detail: s, bubbles: true, composed: true }));
        },
      };
    return this.#host;
  }

  #render(): void {
    if (!this.#frame) return;
    if (!this.#root) {
      if (!this.#onScreen) return; // nothing loads until the element is on screen
      this.#frame.textContent = '';
      this.#root = createRoot(this.#frame);
    }
    const store = attributeStore(this);
    const view = viewById(parseParams(EMBED_PARAMS, store.get).values.view);
    const problems = [...parseParams(EMBED_PARAMS, store.get, 'attribute').problems, ...parseParams(view.params, store.get, 'attribute').problems];
    this.#root.render(createElement(EmbedFrame, { store, problems, labBase: LAB_BASE, host: this.#hostNow() }));
  }
}

declare global {
  interface HTMLElementTagNameMap {
    'slab-lab': SlabLabElement;
  }
  interface HTMLElementEventMap {
    'slab-lab-step': CustomEvent<LabState>;
    'slab-lab-finished': CustomEvent<LabState>;
  }
}

if (!customElements.get('slab-lab')) customElements.define('slab-lab', SlabLabElement);
