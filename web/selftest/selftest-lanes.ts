// selftest-lanes.ts - draws one lane per simulated CPU for a self-test run:
// how many increments it landed, and which worker ran it (lanes that share a
// colour ran in the same worker).

import type { SelftestResult } from '../core/layouts';
import type { CanvasLayout } from '../lab/LabCanvas';
import type { CanvasTheme } from '../lab/theme';

const PALETTE = ['#4e79a7', '#f28e2b', '#59a14f', '#e15759', '#76b7b2', '#edc948', '#b07aa1', '#9c755f'];
export const LANE_HEIGHT = 26;

export function laneDrawer(r: SelftestResult): (ctx: CanvasRenderingContext2D, layout: CanvasLayout, colors: CanvasTheme) => void {
  const workers = [...new Set(r.threadIds.map(String))];
  return (ctx, { width, height }, colors) => {
    ctx.fillStyle = colors.background;
    ctx.fillRect(0, 0, width, height);
    const labelW = 150;
    ctx.font = '12px system-ui, sans-serif';
    ctx.textBaseline = 'middle';
    r.perCpuDone.forEach((done, cpu) => {
      const y = cpu * LANE_HEIGHT;
      const worker = workers.indexOf(String(r.threadIds[cpu]));
      const frac = r.iterations ? Number(done) / r.iterations : 0;
      ctx.fillStyle = colors.well;
      ctx.fillRect(labelW, y + 4, width - labelW - 4, LANE_HEIGHT - 8);
      ctx.fillStyle = PALETTE[worker % PALETTE.length] ?? '#888';
      ctx.fillRect(labelW, y + 4, (width - labelW - 4) * frac, LANE_HEIGHT - 8);
      ctx.fillStyle = colors.text;
      ctx.fillText(`CPU ${cpu} · worker ${worker + 1}`, 4, y + LANE_HEIGHT / 2);
      ctx.fillStyle = '#fff';
      ctx.fillText(`${done} / ${r.iterations}`, labelW + 6, y + LANE_HEIGHT / 2);
    });
  };
}
