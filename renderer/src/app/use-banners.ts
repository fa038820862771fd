// The banners above the views: errors (an API call that failed, a file that
// cannot be opened), warnings (an incomplete recording, what its summary
// warns about) and notices (an export written). The same message is shown
// once; each can be dismissed.
import { useCallback, useRef, useState } from 'react';
import { toApiError } from '../api/client.ts';
import type { Report } from '../base/callbacks.ts';

export interface Banner {
  id: number;
  level: 'error' | 'warning' | 'info';
  title: string;
  message: string;
  file?: string;
}

const ERROR_TITLES: Record<string, string> = {
  'not-a-recording': 'Not a StreamScope recording',
  corrupt: 'Recording is truncated or corrupt',
  locked: 'Recording is locked by another process',
  'newer-schema': 'Recording was written by a newer StreamScope',
  'not-mergeable': 'Recordings cannot be opened as one job',
  'not-found': 'File not found',
  'no-gpu': 'No GPU',
  forbidden: 'Not available here',
  'bad-request': 'Request refused',
  busy: 'The server is busy',
  internal: 'Something went wrong',
};

export interface Banners {
  banners: Banner[];
  report: Report;
  warn: (title: string, message: string) => void;
  inform: (title: string, message: string, file?: string) => void;
  dismiss: (id: number) => void;
}

/** The banners and the (stable) functions that add and remove them. */
export function useBanners(): Banners {
  const [banners, setBanners] = useState<Banner[]>([]);
  const seq = useRef(0);
  const report = useCallback<Report>((err, fallbackFile) => {
    const e = toApiError(err);
    const file = e.file ?? fallbackFile;
    setBanners((b) => {
      if (b.some((x) => x.message === e.message && x.file === file)) return b;
      return [...b, { id: ++seq.current, level: 'error', title: ERROR_TITLES[e.code] ?? 'Error', message: e.message, file }];
    });
  }, []);
  const warn = useCallback((title: string, message: string) => {
    setBanners((b) => (b.some((x) => x.message === message) ? b : [...b, { id: ++seq.current, level: 'warning', title, message }]));
  }, []);
  const inform = useCallback((title: string, message: string, file?: string) => {
    setBanners((b) => [...b, { id: ++seq.current, level: 'info', title, message, file }]);
  }, []);
  const dismiss = useCallback((id: number) => setBanners((list) => list.filter((x) => x.id !== id)), []);
  return { banners, report, warn, inform, dismiss };
}
