// mount.tsx - starts a page: says how to start the bridge workers (their
// entry points, web/bridge.worker.ts and the Benchmarks page's
// web/bench.worker.ts, serve the models of web/models.ts) and renders the
// page's root component.
import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { provideBridgeWorker } from '../core/bridge';
import '../theme.css';
import '../styles.css';

export function mount(element: ReactNode): void {
  provideBridgeWorker(() => new Worker(new URL('../bridge.worker.ts', import.meta.url), { type: 'module', name: 'slablab-bridge' }));
  provideBridgeWorker(() => new Worker(new URL('../bench.worker.ts', import.meta.url), { type: 'module', name: 'slablab-bench' }), 'bench');
  const root = document.getElementById('root');
  if (!root) throw new Error(`${window.location.pathname} has no #root`);
  createRoot(root).render(<StrictMode>{element}</StrictMode>);
}
