import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Embed } from './app/Embed';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('embed.html has no #root');
createRoot(root).render(
  <StrictMode>
    <Embed />
  </StrictMode>,
);
