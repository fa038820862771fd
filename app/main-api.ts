// StreamScopeApi as the desktop app answers it: recordings through the query
// worker (several files at once: one job's ranks merged there into the
// job cache, profiler/merge/job-cache.ts), files through the dialog and the
// recent list, recordings through record jobs. Plain module: Electron's pieces (the dialog) come in as
// functions, so tests run the real worker, list and jobs under Node.
import type { Capabilities, OpenResult, RecordingHandle, StreamScopeApi } from '../profiler/contract/api.ts';
import type { OpenMode } from '../profiler/merge/job-cache.ts';
import { ApiError, toApiError } from './ipc.ts';
import type { QueryBackend } from '../profiler/query/query-backend.ts';
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
  /** Where several recordings opened as one job are merged (userData/jobs): never beside the user's files. */
  jobCacheDir: string;
}

/** What main.ts calls besides the API: one file (record jobs, Open Recent), several with a mode (the command line's --job / --separate). */
export interface MainApi extends StreamScopeApi {
  openFile(path: string): Promise<RecordingHandle>;
  openPaths(paths: string[], mode: OpenMode): Promise<OpenResult>;
}

export function createMainApi(deps: MainApiDeps): MainApi {
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

  /**
   * Several files (the dialog, a drop, the command line): one job's ranks as
   * one merged recording, the others alone; the recent list gets what was
   * opened (a job's merged file: reopening it needs no merge) and loses
   * the files that are gone.
   */
  const openPaths = async (paths: string[], mode: OpenMode): Promise<OpenResult> => {
    const result = await deps.query.openFiles(paths, deps.jobCacheDir, mode);
    for (const f of result.failed) if (f.code === 'not-found') deps.recent.remove(f.file);
    for (const handle of result.opened) {
      deps.recent.add(handle.path);
      deps.onOpened?.(handle);
    }
    return { opened: result.opened, failed: result.failed };
  };

  return {
    openFile,
    openPaths,
    async capabilities(): Promise<Capabilities> {
      canRecord ??= deps.canRecord().catch(() => false);
      return { mode: 'electron', version: deps.version, canOpenFiles: true, canRecord: await canRecord };
    },
    listRecordings: () => deps.query.listRecordings(),
    openRecording: (file) => openFile(file),
    openRecordings: (paths) => openPaths(paths, 'auto'),
    closeRecording: (id) => deps.query.closeRecording(id),
    async showOpenDialog() {
      const files = await deps.showOpenDialog();
      if (!files || files.length === 0) return null;
      return openPaths(files, 'auto');
    },
    recentFiles: async () => deps.recent.list(),
    summary: (id) => deps.query.summary(id),
    recordingState: (id) => deps.query.recordingState(id),
    window: (id, r) => deps.query.window(id, r),
    concurrency: (id, r) => deps.query.concurrency(id, r),
    overview: (id, buckets, range, devices) => deps.query.overview(id, buckets, range, devices),
    details: (id, ref) => deps.query.details(id, ref),
    search: (id, r) => deps.query.search(id, r),
    dependencies: (id, ref) => deps.query.dependencies(id, ref),
    waitSpans: (id, r) => deps.query.waitSpans(id, r),
    stats: (id, scope) => deps.query.stats(id, scope),
    findings: (id, scope) => deps.query.findings(id, scope),
    scopeInfo: (id, scope) => deps.query.scopeInfo(id, scope),
    analysisProgress: (id) => deps.query.analysisProgress(id),
    ranges: (id) => deps.query.ranges(id),
    iterations: (id, name, findings) => deps.query.iterations(id, name, findings),
    compare: (base, other, scope) => deps.query.compare(base, other, scope),
    sql: (id, request) => deps.query.sql(id, request),
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
