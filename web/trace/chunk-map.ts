// chunk-map.ts - the percpu chunks of a replay, one strip per chunk across
// its unit: areas in use and free, from the granule map the replay's percpu
// model rebuilt (sl_api_replay_chunk_granules: one byte per 4-byte granule,
// 0 free, 1 an area's start, 2 its continuation).  Drawn with the percpu
// view's own column coverage and colours (web/percpu/render.ts), so the two
// read alike; area starts are ticks when a granule is two pixels wide.
import { numberText as fmt } from '../lab/describe';
import type { CanvasLayout } from '../lab/LabCanvas';
import type { CanvasTheme } from '../lab/theme';
import { coverage, fillColumns, palette } from '../percpu/render';

export interface ChunkMap {
  unitSize: number;
  chunks: { label: string; granules: Uint8Array }[];
}

export interface ChunkMapLayout extends CanvasLayout {
  x0: number;
  w: number;
  rowH: number;
}

const ROW_H = 34;

export function layoutChunkMap(map: ChunkMap, width: number): ChunkMapLayout {
  return { width, height: Math.max(1, map.chunks.length) * ROW_H + 6, x0: 8, w: Math.max(100, width - 16), rowH: ROW_H };
}

/** Runs of granules in use, as byte spans. */
function usedSpans(g: Uint8Array, emit: (start: number, end: number) => void): void {
  let i = 0;
  while (i < g.length) {
    if (!g[i]) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < g.length && g[j]) j++;
    emit(i * 4, j * 4);
    i = j;
  }
}

export function drawChunkMap(ctx: CanvasRenderingContext2D, map: ChunkMap, l: ChunkMapLayout, colors: CanvasTheme): void {
  const C = palette(colors.scheme);
  ctx.fillStyle = C.background;
  ctx.fillRect(0, 0, l.width, l.height);
  ctx.textBaseline = 'top';
  const zoom = { from: 0, span: map.unitSize };
  map.chunks.forEach((c, i) => {
    const y = 4 + i * l.rowH;
    const used = c.granules.reduce((n, g) => n + (g ? 4 : 0), 0);
    ctx.fillStyle = C.text;
    ctx.font = '12px system-ui, sans-serif';
    ctx.fillText(`${c.label} · ${fmt(used)} of ${fmt(map.unitSize)} bytes in use`, l.x0, y);
    const stripY = y + 16;
    const stripH = l.rowH - 20;
    ctx.fillStyle = C.free;
    ctx.fillRect(l.x0, stripY, l.w, stripH);
    const cov = coverage({ w: l.w, zoom }, (emit) => usedSpans(c.granules, emit));
    fillColumns(ctx, l.x0, stripY, stripH, cov, (v) => (v >= 0.99 ? C.used : v > 0.01 ? C.mixed : null));
    if ((l.w * 4) / map.unitSize >= 2) {
      ctx.fillStyle = C.tick;
      c.granules.forEach((g, k) => g === 1 && ctx.fillRect(Math.round(l.x0 + (k * 4 * l.w) / map.unitSize), stripY, 1, stripH));
    }
  });
}
