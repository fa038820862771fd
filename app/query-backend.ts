// The data side of the API — the methods that read recordings — over the
// session registry of profiler/query (profiler/query/session.ts), which holds
// one RecordingQuery per open file. Runs inside the query worker
// (query-worker.ts), never on the main process's event loop.
import type { StreamScopeApi } from '../profiler/query/api.ts';

/** The API methods answered by the query worker. */
export const queryMethods = ['listRecordings', 'openRecording', 'summary', 'window', 'concurrency', 'details', 'search', 'stats', 'findings'] as const;
export type QueryMethod = (typeof queryMethods)[number];
export type QueryBackend = Pick<StreamScopeApi, QueryMethod> & { close(): void };

export function isQueryMethod(m: string): m is QueryMethod {
  return (queryMethods as readonly string[]).includes(m);
}

/**
 * What app/ needs from profiler/query/session.ts. Kept to this one place:
 * if the registry's shape changes, only `createQueryBackend` changes.
 */
interface RegistryLike {
  open(path: string): RecordingHandleLike | Promise<RecordingHandleLike>;
  list(): RecordingHandleLike[] | Promise<RecordingHandleLike[]>;
  get(recordingId: string): QueryLike;
  close?(): void;
  closeAll?(): void;
}
type RecordingHandleLike = Awaited<ReturnType<StreamScopeApi['openRecording']>>;
interface QueryLike {
  summary(): unknown;
  window(request: unknown): unknown;
  concurrency(request: unknown): unknown;
  details(ref: unknown): unknown;
  search(request: unknown): unknown;
  stats(): unknown;
  findings(): unknown;
}

export async function createQueryBackend(): Promise<QueryBackend> {
  const session = (await import('../profiler/query/session.ts')) as Record<string, unknown>;
  const Registry = (session.SessionRegistry ?? session.RecordingRegistry ?? session.Session) as (new () => RegistryLike) | undefined;
  const factory = session.createSessionRegistry as (() => RegistryLike) | undefined;
  if (!Registry && !factory) throw new Error('profiler/query/session.ts exports no session registry (SessionRegistry)');
  const registry = factory ? factory() : new Registry!();
  const q = (id: string) => registry.get(id);
  return {
    listRecordings: async () => registry.list(),
    openRecording: async (file) => registry.open(file),
    summary: async (id) => q(id).summary() as never,
    window: async (id, r) => q(id).window(r) as never,
    concurrency: async (id, r) => q(id).concurrency(r) as never,
    details: async (id, ref) => q(id).details(ref) as never,
    search: async (id, r) => q(id).search(r) as never,
    stats: async (id) => q(id).stats() as never,
    findings: async (id) => q(id).findings() as never,
    close: () => (registry.closeAll ?? registry.close)?.call(registry),
  };
}
