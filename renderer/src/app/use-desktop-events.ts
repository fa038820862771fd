// Events from the desktop app's main process (DesktopEvent, app/channels.ts
// AppEvent), for as long as the page lives: a recording opened from the
// menu, the command line or a second `streamscope open`; an open that
// failed; the menu items the page carries out (File ▸ Record…, File ▸
// Export…). Browser mode has none. Each event goes to the latest handlers.
import { useEffect, useRef } from 'react';
import type { ApiErrorShape, RecordingHandle } from '../../../profiler/contract/api.ts';
import { getApi } from '../api/client.ts';

export interface DesktopHandlers {
  opened: (handles: RecordingHandle[]) => void;
  openFailed: (error: ApiErrorShape) => void;
  record: () => void;
  export: () => void;
}

export function useDesktopEvents(handlers: DesktopHandlers): void {
  const api = getApi();
  const latest = useRef(handlers);
  useEffect(() => {
    latest.current = handlers;
  });
  useEffect(() => {
    const off = api.onEvent?.((ev) => {
      if (ev.type === 'recording-opened') latest.current.opened([ev.recording]);
      else if (ev.type === 'open-failed') latest.current.openFailed(ev.error);
      else if (ev.type === 'menu' && ev.action === 'record') latest.current.record();
      else if (ev.type === 'menu' && ev.action === 'export') latest.current.export();
    });
    return () => off?.();
  }, [api]);
}
