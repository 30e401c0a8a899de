// page-drop.ts - the whole page as a drop target for a file, while a view
// that takes files is on screen: a file dragged anywhere over the page is
// announced (`dragging`: the view shows its drop overlay), and a file
// dropped anywhere is handed to the view, never opened by the browser in
// place of the app.  Drags that carry no file (text, links) are left alone.

import { useEffect, useRef, useState } from 'react';

const carriesFiles = (e: DragEvent) => !!e.dataTransfer && [...e.dataTransfer.types].includes('Files');

/** Listens on the window while mounted; `onFile` gets the first file dropped. Returns whether a file is being dragged over the page. */
export function usePageDrop(onFile: (file: File) => void): boolean {
  const [dragging, setDragging] = useState(false);
  const take = useRef(onFile);
  take.current = onFile;
  useEffect(() => {
    // dragenter and dragleave come in pairs for every element crossed: count them to know when the drag left the page.
    let depth = 0;
    const enter = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      depth++;
      setDragging(true);
    };
    const over = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      // Without this the browser would navigate to the file on drop.
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const leave = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const drop = (e: DragEvent) => {
      if (!carriesFiles(e)) return;
      e.preventDefault();
      depth = 0;
      setDragging(false);
      const f = e.dataTransfer?.files[0];
      if (f) take.current(f);
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragover', over);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragover', over);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, []);
  return dragging;
}
