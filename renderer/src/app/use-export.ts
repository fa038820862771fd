// File ▸ Export… and the Export… button (desktop app): the shown recording
// as Chrome trace JSON, where the save dialog says; a notice says what was
// written.
import { useCallback } from 'react';
import { getApi } from '../api/client.ts';
import type { Banners } from './use-banners.ts';

export function useExport(activeId: string | null, report: Banners['report'], inform: Banners['inform']): () => void {
  const api = getApi();
  return useCallback(() => {
    if (!activeId) return;
    api
      .exportTrace(activeId)
      .then((r) => {
        if (!r) return;
        const message = `${r.events.toLocaleString('en-US')} trace events (${r.flows.toLocaleString('en-US')} launch flows) written: open it in Perfetto UI or chrome://tracing.`;
        inform('Exported', message, r.path);
      })
      .catch((e) => report(e));
  }, [api, activeId, report, inform]);
}
