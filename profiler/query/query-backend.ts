// The data side of the API — the methods that read recordings — over the
// session registry (session.ts), which holds one RecordingQuery per open
// file. Runs inside the query thread (query-worker.ts), never on the event
// loop of the desktop app's main process or of browser mode's server.
import type { ExportSummary } from '../export/chrome-trace.ts';
import type { StreamScopeApi } from '../contract/api.ts';
import type { OpenMode } from '../merge/job-cache.ts';
import type { JobView } from './job-query.ts';
import { SessionRegistry, type OpenFilesResult } from './session.ts';

/** The API methods answered by the query worker. */
export const queryMethods = [
  'listRecordings',
  'openRecording',
  'openFiles',
  'closeRecording',
  'summary',
  'recordingState',
  'window',
  'concurrency',
  'overview',
  'details',
  'search',
  'dependencies',
  'waitSpans',
  'stats',
  'findings',
  'scopeInfo',
  'analysisProgress',
  'ranges',
  'iterations',
  'compare',
  'sql',
  'exportTraceTo',
] as const;
export type QueryMethod = (typeof queryMethods)[number];
export type QueryBackend = Pick<StreamScopeApi, Exclude<QueryMethod, 'exportTraceTo' | 'openFiles'>> & {
  /** exportTrace's work, once main has the path from the save dialog: the worker holds the open file. */
  exportTraceTo(recordingId: string, out: string): Promise<ExportSummary>;
  /**
   * Several files at once (SessionRegistry.openFiles): one job's ranks
   * opened as one — merged into `jobCacheDir`, or from their summaries
   * (`jobView`, job-query.ts jobViewOf) —, the others alone. The merge runs
   * here, on the worker: the main process stays free meanwhile. With the
   * job merged, taken from the cache or from summaries (the CLI says which).
   */
  openFiles(paths: string[], jobCacheDir: string, mode?: OpenMode, jobView?: JobView): Promise<OpenFilesResult>;
  close(): void;
};

export function isQueryMethod(m: string): m is QueryMethod {
  return (queryMethods as readonly string[]).includes(m);
}

export function createQueryBackend(): QueryBackend {
  const registry = new SessionRegistry({ analysisThread: true });
  // The timeline's data methods: also a job opened from its ranks' summaries (job-query.ts).
  const v = (id: string) => registry.view(id);
  return {
    listRecordings: async () => registry.list(),
    openRecording: async (file) => registry.open(file),
    openFiles: (paths, jobCacheDir, mode, jobView) => registry.openFiles(paths, { jobCacheDir, mode, jobView }),
    closeRecording: async (id) => {
      registry.close(id);
      return null;
    },
    summary: async (id) => v(id).summary(),
    recordingState: async (id) => v(id).recordingState(),
    window: async (id, r) => v(id).window(r),
    concurrency: (id, r) => registry.concurrency(id, r),
    overview: async (id, buckets, range, devices) => v(id).overview(buckets, range, devices),
    details: async (id, ref) => v(id).details(ref),
    search: async (id, r) => registry.get(id, 'a search').search(r),
    dependencies: (id, ref) => registry.dependencies(id, ref),
    waitSpans: (id, r) => registry.waitSpans(id, r),
    stats: (id, scope) => registry.stats(id, scope),
    findings: (id, scope) => registry.findings(id, scope),
    scopeInfo: (id, scope) => registry.scopeInfo(id, scope),
    analysisProgress: (id) => registry.analysisProgress(id),
    ranges: (id) => registry.ranges(id),
    iterations: (id, name, findings) => registry.iterations(id, name, findings),
    compare: (base, other, scope) => registry.compare(base, other, scope),
    sql: (id, request) => registry.sql(id, request),
    exportTraceTo: (id, out) => registry.get(id, 'an export').exportTrace(out),
    close: () => registry.closeAll(),
  };
}
