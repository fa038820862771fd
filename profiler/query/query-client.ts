// The other side of the query thread (query-worker.ts): the data methods of
// the API as promises, each a message to that thread. Used by the desktop
// app's main process and by browser mode's server alike. A thread that dies
// (native crash in a reader, out of memory) rejects what was in flight with
// 'internal' and is started again on the next call (recordings must then be
// opened again: the ids of the old thread are gone).
import { Worker } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { RecordingHandle } from '../contract/api.ts';
import type { OpenMode } from '../merge/job-cache.ts';
import type { JobView } from './job-query.ts';
import { ApiError } from './api-error.ts';
import type { QueryBackend, QueryMethod } from './query-backend.ts';
import type { AnswerEncoding, QueryRequestMessage, QueryResponseMessage } from './query-worker.ts';
import type { OpenFilesResult } from './session.ts';

/**
 * The thread's entry beside this module: query-worker.ts under Node 22,
 * query-worker.cjs in the Electron build and the bundled CLI
 * (app/vite.config.ts puts entries and chunks in one folder).
 */
function defaultEntry(): URL {
  const bundled = new URL('./query-worker.cjs', import.meta.url);
  return fileURLToPath(import.meta.url).endsWith('.cjs') && existsSync(bundled) ? bundled : new URL('./query-worker.ts', import.meta.url);
}

export interface QueryClientOptions {
  /** The thread's entry (defaultEntry() if not given). */
  workerPath?: string | URL;
  /** A query answering later than this is reported as failed (the worker keeps running). */
  timeoutMs?: number;
}

/** How long opening several files as one job may take (the merge runs then). */
const MERGE_TIMEOUT_MS = 30 * 60_000;

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  timer: NodeJS.Timeout;
}

export class QueryClient implements QueryBackend {
  readonly #opts: Required<QueryClientOptions>;
  #worker: Worker | null = null;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();

  constructor(opts: QueryClientOptions = {}) {
    this.#opts = { timeoutMs: 120_000, workerPath: opts.workerPath ?? defaultEntry(), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) };
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(this.#opts.workerPath);
    worker.on('message', (msg: QueryResponseMessage) => {
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.result.ok) p.resolve(msg.result.value);
      else p.reject(msg.result.error);
    });
    const died = (why: string) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      for (const [id, p] of this.#pending) {
        clearTimeout(p.timer);
        p.reject({ code: 'internal', message: `the query worker stopped (${why}); try again` });
        this.#pending.delete(id);
      }
    };
    worker.on('error', (err) => died(err.message));
    worker.on('exit', (code) => died(`exit code ${code}`));
    // Idle worker must not keep a CLI or a test process alive.
    worker.unref();
    this.#worker = worker;
    return worker;
  }

  #call<T>(method: QueryMethod, args: unknown[], timeoutMs = this.#opts.timeoutMs, encoding?: AnswerEncoding): Promise<T> {
    const worker = this.#ensureWorker();
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new ApiError('internal', `${method} took longer than ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, timer });
      if (this.#pending.size === 1) worker.ref();
      worker.postMessage({ id, method, args, ...(encoding ? { encoding } : {}) } satisfies QueryRequestMessage);
    }).finally(() => {
      if (this.#pending.size === 0) this.#worker?.unref();
    });
  }

  listRecordings(): Promise<RecordingHandle[]> {
    return this.#call('listRecordings', []);
  }
  openRecording(path: string): Promise<RecordingHandle> {
    return this.#call('openRecording', [path]);
  }
  /** Merging a big job takes minutes (64 ranks of a million operations: about one), not a query's seconds. */
  openFiles(paths: string[], jobCacheDir: string, mode?: OpenMode, jobView?: JobView): Promise<OpenFilesResult> {
    return this.#call('openFiles', [paths, jobCacheDir, mode, jobView], Math.max(this.#opts.timeoutMs, MERGE_TIMEOUT_MS));
  }

  /**
   * Any data method's answer ready to send: JSON text, or a window's binary
   * form (browser mode's server: the answer is serialized on the query
   * thread, and its own thread only writes it). Rejects with ApiErrorShape.
   */
  answer(method: QueryMethod, args: unknown[], encoding: 'json'): Promise<string>;
  answer(method: 'window', args: unknown[], encoding: 'window-binary'): Promise<Uint8Array>;
  answer(method: QueryMethod, args: unknown[], encoding: 'json' | 'window-binary'): Promise<string | Uint8Array> {
    return this.#call(method, args, method === 'openFiles' ? Math.max(this.#opts.timeoutMs, MERGE_TIMEOUT_MS) : this.#opts.timeoutMs, encoding);
  }
  closeRecording(recordingId: string): Promise<null> {
    return this.#call('closeRecording', [recordingId]);
  }
  summary(id: string) {
    return this.#call<Awaited<ReturnType<QueryBackend['summary']>>>('summary', [id]);
  }
  recordingState(id: string) {
    return this.#call<Awaited<ReturnType<QueryBackend['recordingState']>>>('recordingState', [id]);
  }
  window(id: string, r: Parameters<QueryBackend['window']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['window']>>>('window', [id, r]);
  }
  concurrency(id: string, r: Parameters<QueryBackend['concurrency']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['concurrency']>>>('concurrency', [id, r]);
  }
  details(id: string, ref: Parameters<QueryBackend['details']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['details']>>>('details', [id, ref]);
  }
  search(id: string, r: Parameters<QueryBackend['search']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['search']>>>('search', [id, r]);
  }
  dependencies(id: string, ref: Parameters<QueryBackend['dependencies']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['dependencies']>>>('dependencies', [id, ref]);
  }
  waitSpans(id: string, r: Parameters<QueryBackend['waitSpans']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['waitSpans']>>>('waitSpans', [id, r]);
  }
  stats(id: string, scope: Parameters<QueryBackend['stats']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['stats']>>>('stats', [id, scope]);
  }
  findings(id: string, scope: Parameters<QueryBackend['findings']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['findings']>>>('findings', [id, scope]);
  }
  scopeInfo(id: string, scope: Parameters<QueryBackend['scopeInfo']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['scopeInfo']>>>('scopeInfo', [id, scope]);
  }
  analysisProgress(id: string) {
    return this.#call<Awaited<ReturnType<QueryBackend['analysisProgress']>>>('analysisProgress', [id]);
  }
  ranges(id: string) {
    return this.#call<Awaited<ReturnType<QueryBackend['ranges']>>>('ranges', [id]);
  }
  iterations(id: string, name: string | null, findings: boolean) {
    return this.#call<Awaited<ReturnType<QueryBackend['iterations']>>>('iterations', [id, name, findings]);
  }
  exportTraceTo(id: string, out: string) {
    return this.#call<Awaited<ReturnType<QueryBackend['exportTraceTo']>>>('exportTraceTo', [id, out]);
  }
  overview(id: string, buckets: number, range: Parameters<QueryBackend['overview']>[2], devices: Parameters<QueryBackend['overview']>[3]) {
    return this.#call<Awaited<ReturnType<QueryBackend['overview']>>>('overview', [id, buckets, range, devices]);
  }
  compare(base: string, other: string, scope: Parameters<QueryBackend['compare']>[2]) {
    return this.#call<Awaited<ReturnType<QueryBackend['compare']>>>('compare', [base, other, scope]);
  }

  sql(id: string, request: Parameters<QueryBackend['sql']>[1]) {
    return this.#call<Awaited<ReturnType<QueryBackend['sql']>>>('sql', [id, request]);
  }

  /** Closes every recording and ends the worker. */
  close(): void {
    const w = this.#worker;
    this.#worker = null;
    if (!w) return;
    w.postMessage({ close: true });
    const t = setTimeout(() => void w.terminate(), 2_000);
    t.unref();
  }

  async terminate(): Promise<void> {
    const w = this.#worker;
    this.#worker = null;
    if (w) await w.terminate();
  }
}
