// Drag and drop: the desktop app opens dropped recordings (through the
// preload's pathForFile: a sandboxed page cannot see a file's path
// otherwise), several dropped together at once (one job's ranks open as one
// recording); browser mode says it cannot. Answers whether files are being
// dragged over the page (the drop overlay).
import { useEffect, useState } from 'react';
import { getApi } from '../api/client.ts';
import type { Report } from '../base/callbacks.ts';

export function useDropFiles(canOpenFiles: boolean, openPaths: (paths: string[]) => void, report: Report): boolean {
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
      // Opened together: files dropped at once may be the ranks of one job.
      const paths: string[] = [];
      for (const f of files) {
        const path = api.pathForFile?.(f) || (f as File & { path?: string }).path || '';
        if (!path) report({ code: 'bad-request', message: `${f.name}: not a file on disk`, file: f.name });
        else paths.push(path);
      }
      openPaths(paths);
    };
    window.addEventListener('dragover', over);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    return () => {
      window.removeEventListener('dragover', over);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
    };
  }, [api, canOpenFiles, openPaths, report]);
  return dragging;
}
