// StreamScopeApi as the desktop app answers it: recordings through the query
// worker, files through the dialog and the recent list, recordings through
// record jobs. Plain module: Electron's pieces (the dialog) come in as
// functions, so tests run the real worker, list and jobs under Node.
import type { Capabilities, RecordingHandle, StreamScopeApi } from '../profiler/contract/api.ts';
import { ApiError, toApiError } from './ipc.ts';
import type { QueryBackend } from './query-backend.ts';
import type { RecentFiles } from './recent-files.ts';
import type { RecordJobs } from './record-jobs.ts';

export interface MainApiDeps {
  query: QueryBackend;
  recent: RecentFiles;
  jobs: RecordJobs;
  version: string;
  /** Electron's open dialog: chosen paths, or null when cancelled. */
  showOpenDialog: () => Promise<string[] | null>;
  /** Electron's save dialog, starting at `defaultName`: the chosen path, or null when cancelled. */
  showSaveDialog: (defaultName: string) => Promise<string | null>;
  /** Whether this machine can record (a GPU the driver reports); asked once. */
  canRecord: () => Promise<boolean>;
  /** Told after every successful open (menu, dialog, drop, argv, record). */
  onOpened?: (recording: RecordingHandle) => void;
}

export function createMainApi(deps: MainApiDeps): StreamScopeApi & { openFile(path: string): Promise<RecordingHandle> } {
  let canRecord: Promise<boolean> | null = null;

  /** Opens a file and keeps the recent list in step (a file that is gone leaves it). */
  const openFile = async (file: string): Promise<RecordingHandle> => {
    try {
      const handle = await deps.query.openRecording(file);
      deps.recent.add(file);
      deps.onOpened?.(handle);
      return handle;
    } catch (err) {
      if (toApiError(err).code === 'not-found') deps.recent.remove(file);
      throw err;
    }
  };

  return {
    openFile,
    async capabilities(): Promise<Capabilities> {
      canRecord ??= deps.canRecord().catch(() => false);
      return { mode: 'electron', version: deps.version, canOpenFiles: true, canRecord: await canRecord };
    },
    listRecordings: () => deps.query.listRecordings(),
    openRecording: (file) => openFile(file),
    closeRecording: (id) => deps.query.closeRecording(id),
    async showOpenDialog() {
      const files = await deps.showOpenDialog();
      if (!files || files.length === 0) return null;
      const handles: RecordingHandle[] = [];
      for (const f of files) handles.push(await openFile(f));
      return handles;
    },
    recentFiles: async () => deps.recent.list(),
    summary: (id) => deps.query.summary(id),
    window: (id, r) => deps.query.window(id, r),
    concurrency: (id, r) => deps.query.concurrency(id, r),
    overview: (id, buckets) => deps.query.overview(id, buckets),
    details: (id, ref) => deps.query.details(id, ref),
    search: (id, r) => deps.query.search(id, r),
    stats: (id, scope) => deps.query.stats(id, scope),
    findings: (id, scope) => deps.query.findings(id, scope),
    scopeInfo: (id, scope) => deps.query.scopeInfo(id, scope),
    ranges: (id) => deps.query.ranges(id),
    iterations: (id, name) => deps.query.iterations(id, name),
    compare: (base, other, scope) => deps.query.compare(base, other, scope),
    async exportTrace(id) {
      const handle = (await deps.query.listRecordings()).find((h) => h.recordingId === id);
      if (!handle) throw new ApiError('not-found', `no open recording with id '${id}'`);
      const out = await deps.showSaveDialog(handle.name.replace(/\.(sqlite|db)$/i, '') + '.json');
      if (!out) return null;
      try {
        const r = await deps.query.exportTraceTo(id, out);
        return { path: out, events: r.events, flows: r.flows };
      } catch (err) {
        throw new ApiError('internal', `${out}: cannot write the trace: ${(err as Error).message}`, out);
      }
    },
    record: async (request) => deps.jobs.start(request),
    recordStatus: async (jobId) => deps.jobs.status(jobId),
  };
}
