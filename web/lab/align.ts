// align.ts - side-by-side panes lined up row by row, as Perfetto lines up
// its tracks: every pane is laid out alone first, then each is laid out
// again with every row at least as tall as the tallest row of the same key in
// any pane, so the same list, CPU or cache sits at the same height in each.
// A view names its rows (a SLUB section's title, a SLAB cache's CPU strip, a
// percpu chunk) and honours the minimum heights it is given; the rows'
// places go on the canvas for the tests (CanvasLayout.alignedRows, data-rows).

/** A row of a drawing: its key (the same thing in every pane) and where it is, in CSS pixels. */
export interface Row {
  key: string;
  y: number;
  h: number;
}

/** Each key's tallest height over the given layouts' rows. */
export function tallestRows(rowsOfPanes: Iterable<Iterable<Pick<Row, 'key' | 'h'>>>): Map<string, number> {
  const minH = new Map<string, number>();
  for (const rows of rowsOfPanes) for (const r of rows) minH.set(r.key, Math.max(minH.get(r.key) ?? 0, r.h));
  return minH;
}

/**
 * The layout of `s` lined up with the panes beside it (`others`, which may include `s`): `layout`
 * lays out a state with rows at least as tall as `minH` says (absent: its own heights), `rows`
 * names a layout's rows.  Alone, `s` is laid out once.
 */
export function alignedLayout<S, L>(s: S, others: readonly S[], layout: (x: S, minH?: ReadonlyMap<string, number>) => L, rows: (l: L) => Iterable<Pick<Row, 'key' | 'h'>>): L {
  const rest = others.filter((x) => x !== s);
  if (!rest.length) return layout(s);
  return layout(s, tallestRows([s, ...rest].map((x) => rows(layout(x)))));
}

/** A row's height given the tallest of its key beside it. */
export const rowHeight = (minH: ReadonlyMap<string, number> | undefined, key: string, h: number) => Math.max(h, minH?.get(key) ?? 0);
