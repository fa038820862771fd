// Drag and drop: the desktop app opens dropped recordings (through the
// preload's pathForFile: a sandboxed page cannot see a file's path
// otherwise); browser mode says it cannot. Answers whether files are being
// dragged over the page (the drop overlay).
import { useEffect, useState } from 'react';
import { getApi } from '../api/client.ts';
import type { Report } from './use-banners.ts';

export function useDropFiles(canOpenFiles: boolean, openPath: (path: string) => void, report: Report): boolean {
  const api = getApi();
  const [dragging, setDragging] = useState(false);
  useEffect(() => {
    const hasFiles = (e: DragEvent) => !!e.dataTransfer && Array.from(e.dataTransfer.types).includes('Files');
    const over = (e: DragEvent) => {
      if (hasFiles(e)) {
        e.preventDefault();
        setDragging(true);
      }
    };
    const leave = (e: DragEvent) => {
      if (!e.relatedTarget) setDragging(false);
    };
    const drop = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      setDragging(false);
      const files = Array.from(e.dataTransfer!.files);
      if (!canOpenFiles) {
        report({
          code: 'forbidden',
          message: 'Opening files needs the desktop app; browser mode shows the recordings given to `streamscope serve FILE…`.',
          file: files[0]?.name,
        });
        return;
      }
      for (const f of files) {
        const path = api.pathForFile?.(f) || (f as File & { path?: string }).path || '';
        if (!path) report({ code: 'bad-request', message: `${f.name}: not a file on disk`, file: f.name });
        else openPath(path);
      }
    };
    window.addEventListener('dragover', over);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragover', over);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, [api, canOpenFiles, openPath, report]);
  return dragging;
}
