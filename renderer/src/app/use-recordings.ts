// The open recordings, one tab each, and how they get there: the ones this
// session already holds (the files given to `serve` in browser mode; the
// one in the URL is shown first), Open… and Recent (desktop app), paths
// (drag and drop; several: one job's ranks as one merged recording), `opened` for the rest (a file opened from the desktop's
// menu or command line, a finished recording). Also what this side may do:
// capabilities().
import { useCallback, useEffect, useState } from 'react';
import type { Capabilities, OpenResult, RecordingHandle } from '../../../profiler/contract/api.ts';
import { getApi, toApiError } from '../api/client.ts';
import type { Report } from '../base/callbacks.ts';
import { readUrl } from './url-state.ts';

export interface Recordings {
  caps: Capabilities | null;
  recordings: RecordingHandle[];
  /** The recording whose tab is shown. */
  activeId: string | null;
  select: (id: string) => void;
  /** Recent files (desktop app). */
  recent: string[];
  /** Recordings that were opened: added as tabs, the first one shown; the recent list follows. */
  opened: (handles: RecordingHandle[]) => void;
  openPath: (path: string) => void;
  /** Several at once (a drop): one job's ranks open as one merged recording, the others alone; what failed is reported. */
  openPaths: (paths: string[]) => void;
  /** File ▸ Open… */
  openDialog: () => void;
  close: (id: string) => void;
}

export function useRecordings(report: Report): Recordings {
  const api = getApi();
  const [caps, setCaps] = useState<Capabilities | null>(null);
  const [recordings, setRecordings] = useState<RecordingHandle[]>([]);
  const [activeId, setActiveId] = useState<string | null>(null);
  const [recent, setRecent] = useState<string[]>([]);

  const refreshRecent = useCallback(() => {
    api
      .recentFiles()
      .then(setRecent)
      .catch(() => setRecent([]));
  }, [api]);

  const opened = useCallback(
    (handles: RecordingHandle[]) => {
      if (handles.length > 0) {
        setRecordings((list) => {
          const next = [...list];
          for (const h of handles) if (!next.some((x) => x.recordingId === h.recordingId)) next.push(h);
          return next;
        });
        setActiveId(handles[0]!.recordingId);
      }
      refreshRecent();
    },
    [refreshRecent],
  );

  const openPath = useCallback(
    (path: string) => {
      api
        .openRecording(path)
        .then((h) => opened([h]))
        .catch((e) => report(e, path));
    },
    [api, opened, report],
  );

  /** What several files gave: the recordings opened (the first is shown), a banner per file that failed. */
  const took = useCallback(
    (r: OpenResult | null) => {
      if (!r) return;
      opened(r.opened);
      for (const f of r.failed) report(f, f.file);
    },
    [opened, report],
  );

  const openPaths = useCallback(
    (paths: string[]) => {
      if (paths.length === 1) openPath(paths[0]!);
      else if (paths.length > 1)
        api
          .openRecordings(paths)
          .then(took)
          .catch((e) => report(e));
    },
    [api, openPath, took, report],
  );

  const openDialog = useCallback(() => {
    api
      .showOpenDialog()
      .then(took)
      .catch((e) => report(e));
  }, [api, took, report]);

  const close = useCallback(
    (id: string) => {
      setRecordings((list) => list.filter((r) => r.recordingId !== id));
      setActiveId((active) => (active === id ? (recordings.find((r) => r.recordingId !== id)?.recordingId ?? null) : active));
      // Close the file in the query worker (the desktop app; browser mode
      // keeps serving it). Already gone is fine: the tab is closed either way.
      api.closeRecording(id).catch((err: unknown) => {
        if (toApiError(err).code !== 'not-found') report(err);
      });
    },
    [api, recordings, report],
  );

  // Start: capabilities (and with them the recent files), the recordings of this session.
  useEffect(() => {
    api
      .capabilities()
      .then((c) => {
        setCaps(c);
        if (c.canOpenFiles) refreshRecent();
      })
      .catch((e) => report(e));
    api
      .listRecordings()
      .then((list) => {
        setRecordings(list);
        const wanted = readUrl().rec;
        const first = list.find((r) => r.recordingId === wanted) ?? list[0];
        if (first) setActiveId(first.recordingId);
      })
      .catch((e) => report(e));
  }, [api, refreshRecent, report]);

  return { caps, recordings, activeId, select: setActiveId, recent, opened, openPath, openPaths, openDialog, close };
}
