// BenchChart.tsx - one uPlot chart of the Benchmarks page, redrawn whenever
// its options or data change and sized to its element's width; `label` says
// in words what it shows (the figures are also in a table beside it).

import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export function Chart({ opts, data, label }: { opts: uPlot.Options; data: uPlot.AlignedData; label: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const plot = new uPlot({ ...opts, width: Math.max(320, el.clientWidth) }, data, el);
    return () => plot.destroy();
  }, [opts, data]);
  return <div ref={ref} role="img" aria-label={label} className="bench-chart" />;
}
