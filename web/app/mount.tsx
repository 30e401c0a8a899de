// mount.tsx - starts a page: says how to start the bridge worker (its entry
// point, web/bridge.worker.ts, serves the models of web/models.ts) and
// renders the page's root component.
import { StrictMode, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import { provideBridgeWorker } from '../core/bridge';
import '../theme.css';
import '../styles.css';

export function mount(element: ReactNode): void {
  provideBridgeWorker(() => new Worker(new URL('../bridge.worker.ts', import.meta.url), { type: 'module', name: 'slablab-bridge' }));
  const root = document.getElementById('root');
  if (!root) throw new Error(`${window.location.pathname} has no #root`);
  createRoot(root).render(<StrictMode>{element}</StrictMode>);
}
