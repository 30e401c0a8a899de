// view.ts - the contract between the lab engine and a view.
//
// A view is a folder, web/<id>/, holding only what is its own, and one line
// in web/views.ts (the shell's list) plus, if it runs a model, one in
// web/models.ts (the bridge worker's list of adapters, web/<id>/worker.ts).
// The engine (web/lab/) and the core (web/core/) never import a view: they
// see it through these interfaces (web/lab/imports.test.ts checks it).  A
// view that draws or reads with another view's modules declares them
// (ViewUses, its index.ts's USES).

import type { ComponentType } from 'react';
import type { Stop } from '../core/bridge-protocol';
import type { SlEvent } from '../core/events.generated';
import type { CoreState } from '../core/use-core';
import type { OpNames } from './describe';
import type { CanvasLayout } from './LabCanvas';
import type { ParamSpecs, ParamStore, ParamValues } from './params';
import type { CanvasTheme } from './theme';

export interface ViewProps {
  core: CoreState;
  /** The view's parameters (the URL's query in the app). */
  store: ParamStore;
  /** Minimal chrome: the embed (embed.html?view=<id>). */
  embedded: boolean;
}

/**
 * The other views' modules a folder imports, by view and module (its path in
 * that folder, without the extension): `{ slub: ['layout', 'render'] }`.
 * Each view folder's index.ts (and web/pages/index.ts) exports its list as
 * `USES`; web/lab/imports.test.ts fails on an import the list does not name,
 * and on a name nothing imports.
 */
export type ViewUses = Readonly<Record<string, readonly string[]>>;

/** An entry of web/views.ts: a lab mode (`?mode=<id>`), and an embed view (`embed.html?view=<id>`) if embeddable. */
export interface LabViewEntry {
  id: string;
  /** The Lab's button for it. */
  title: string;
  embeddable: boolean;
  /** Its parameters, each read on its own (the shell reports bad ones when the page loads). */
  params: ParamSpecs;
  Component: ComponentType<ViewProps>;
}

/** One world of a view; several run the same script side by side. */
export interface Pane<World> {
  /** What tells it from the others ("cmpxchg", "plain"); '' when it is alone. */
  label: string;
  world: World;
}

/** What a view runs: a script and the words for each of its operations. */
export interface Story<Script> {
  script: Script;
  /** One caption per operation. */
  captions: string[];
  intro: string;
  /** Said at the end. */
  outro: string;
  /** The first operations that only set the story up: they run before the opening frame, which shows their result (no step of their own; absent: 0). */
  setup?: number;
}

/** A guided story a view offers (`scenario=<id>`). */
export interface Scenario<Script, Ctx> {
  id: string;
  title: string;
  /** The story for one world (`ctx`: what it depends on, e.g. SLUB's CPUs and objects per slab). */
  build(ctx: Ctx): Story<Script>;
}

/** The text form of a hand-made script (the URL's `ops=`). */
export interface ScriptCodec<Script, World> {
  parse(text: string, world: World): { ok: true; script: Script } | { ok: false; error: string };
  format(script: Script): string;
}

/**
 * A free-running view's copy of the model state, fed by drained events
 * between snapshots (use-free-run.ts).
 */
export interface Mirror<Snap> {
  /** Applies merged event records; returns how many contradicted the mirror. */
  apply(events: Uint8Array): number;
  /** The mirrored state, in the snapshot's shape. */
  view(): Snap;
  /** The first contradiction, in words. */
  readonly firstMismatch: string;
}

/** What an event does to what the Perfetto export counts (web/lab/perfetto.ts). */
export interface EventEffect {
  /** The counter track it changes ("cache 1", "chunk 2"). */
  track: string;
  /** An object handed out or given back, by a key unique while it lives (its place). */
  object?: { key: string; alloc: boolean };
  /** Slabs (percpu: chunks, as `noun` says) of the track gained (+1) or lost (-1). */
  slabs?: { delta: 1 | -1; noun: string };
}

/** The timeline's words and filters for a model's events. */
export interface EventWords<Names> {
  /** One line for an event; `names` turns operation numbers into the script's words. */
  event(e: SlEvent, names: Names): string;
  /** The kind filter: group id -> its name. */
  groups: Readonly<Record<string, string>>;
  groupOf(kind: number): string;
  /** For the export: the objects and slabs an event hands out or takes back, where the model's events say (null: none). */
  effect?(e: SlEvent): EventEffect | null;
}

/**
 * A step-by-step view: everything the engine needs from a model to load its
 * worlds, step through them and draw them.  `Snap` is the decoded snapshot,
 * `L` the canvas layout, `Hit` what a click selects, `Overlay` what the view
 * draws over the state (selection, marks).
 */
export interface StepView<P extends ParamSpecs, World, Script, Snap, L extends CanvasLayout, Hit, Overlay, Info> {
  /** The model adapter's id in the worker (web/models.ts): the view's id, and its C folder wasm-core/src/<model>/. */
  model: string;
  /** The kernel the model follows, for the code panel's links to Bootlin's Elixir: its file and the release pane `pane` follows for these values (a tag such as "v6.17"). */
  kernel?: { file: string; version(values: ParamValues<P>, pane: number): string };
  params: P;
  /** One pane per world: several when a parameter lists values to compare. */
  panes(values: ParamValues<P>): Pane<World>[];
  scenarios: readonly Scenario<Script, unknown>[];
  script: ScriptCodec<Script, World>;
  /** The story the parameters ask for (a scenario's, or a hand-made script's); throws an Error that says what is wrong. */
  story(values: ParamValues<P>, worldInfo: () => Promise<Info>): Promise<Story<Script>>;
  /** Snapshot bytes to the typed state the drawing reads (throws on bytes that are not one). */
  decode(bytes: ArrayBuffer): Snap;
  /** A copy of the state fed by drained events, for free runs and their recordings (use-free-run.ts). */
  mirror?(anchor: Snap): Mirror<Snap>;
  /** Where everything goes for a width (the overlay may carry display choices, e.g. SLUB's "show full slabs"). */
  layout(s: Snap, width: number, o: Overlay): L;
  /** Synchronous: paints only what has already been fetched, on the theme's surface colours. */
  draw(ctx: CanvasRenderingContext2D, s: Snap, l: L, o: Overlay, colors: CanvasTheme): void;
  hit(l: L, s: Snap, x: number, y: number): Hit | null;
  /** Everything the canvas shows, also in words (the inspector, the timeline, screen readers, tests). */
  describe: {
    /** A micro-step of one pane in words ("CPU 0 is in slab_alloc_node: ..."). */
    stop(stop: Stop, script: Script): string;
    /** Operation i of a script in words ("alloc on CPU 0"). */
    op(script: Script, i: number): string;
    /** What was hit (selected), in words; `names` turns operation numbers into the script's steps. */
    hit(s: Snap, h: Hit, names: OpNames | null): string;
    /** The path an operation took, from the events it emitted ("fast path", "slow path: a slab from the node partial list"); '' when nothing says. The caption ends with it. */
    path?(events: readonly SlEvent[]): string;
    /** The "find address" box: what the typed address is (cache, slab, list, state), or what is wrong with the text. */
    find?(s: Snap, text: string, names: OpNames | null): string;
    /** The timeline's words and filters for the model's events. */
    events: EventWords<OpNames>;
  };
}
