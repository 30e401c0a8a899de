// BenchChart.tsx - one uPlot chart of the Benchmarks page, redrawn whenever
// its options or data change and sized to its element's width (resized with
// it, down to a phone's); `label` says
// in words what it shows (the figures are also in a table beside it).  Axes,
// ticks and grid take the theme's ink and rule colours (redrawn when the
// theme changes).

import { useContext, useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { ThemeContext } from './theme';

export function Chart({ opts, data, label }: { opts: uPlot.Options; data: uPlot.AlignedData; label: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const theme = useContext(ThemeContext);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const style = getComputedStyle(el);
    const ink = style.getPropertyValue('--ink').trim();
    const rule = style.getPropertyValue('--rule').trim();
    const axes = opts.axes?.map((a) => ({ stroke: ink, grid: { stroke: rule }, ticks: { stroke: rule }, ...a }));
    const width = () => Math.max(200, el.clientWidth);
    // The height keeps the options' proportions on a narrow screen (a 320 px tall chart 240 px wide reads badly).
    const height = () => Math.round(Math.min(opts.height, Math.max(180, (width() * opts.height) / Math.max(1, opts.width))));
    // How many WebAssembly points the chart shows (a value at an x inside the x scale, once uPlot has set its scales): the page's tests compare it with the table's rows.
    const countShown = (u: uPlot) => {
      const xs = data[0] as ArrayLike<number>;
      const min = u.scales.x?.min ?? -Infinity;
      const max = u.scales.x?.max ?? Infinity;
      let shown = 0;
      for (let s = 1; s < data.length; s++)
        if (String(opts.series[s]?.label ?? '').startsWith('wasm'))
          Array.from(data[s] as ArrayLike<number | null | undefined>).forEach((v, i) => {
            const x = xs[i];
            if (v !== null && v !== undefined && x !== undefined && x >= min && x <= max) shown++;
          });
      el.dataset.wasmPoints = String(shown);
    };
    const hooks = { ...opts.hooks, ready: [...(opts.hooks?.ready ?? []), countShown] };
    const plot = new uPlot({ ...opts, ...(axes ? { axes } : {}), hooks, width: width(), height: height() }, data, el);
    let last = el.clientWidth;
    const resized = new ResizeObserver(() => {
      if (el.clientWidth === last) return;
      last = el.clientWidth;
      plot.setSize({ width: width(), height: height() });
    });
    resized.observe(el);
    return () => {
      resized.disconnect();
      plot.destroy();
    };
  }, [opts, data, theme]);
  return <div ref={ref} role="img" aria-label={label} className="bench-chart" />;
}
