// The analysis methods of the API off the thread that answers the timeline.
// findings, stats, scopes, ranges, iterations, concurrency, dependencies and compare need the whole recording loaded
// (and most of them diagnosed): seconds for ten million operations (better-sqlite3 and
// the analysis are synchronous). Run where the windows are answered, they
// would hold up every pan and zoom until done; so the server and the
// desktop app's query worker send them to one thread of their own
// (analysis-worker.ts), which opens the files itself and keeps their
// analyses. A thread that dies (out of memory on a huge recording) fails
// what it was doing with 'internal' and is started again by the next call.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { DiffSummary } from '../contract/diff.ts';
import type { Finding } from '../contract/findings.ts';
import { ApiError } from './api-error.ts';
import type { Iterations, RangeName } from '../contract/iterations.ts';
import type { Scope, ScopeInfo } from '../contract/scope.ts';
import type { SqlAnswer } from '../contract/sql.ts';
import type { SqlRequest } from '../contract/api-schema.ts';
import type {
  ApiErrorShape,
  ConcurrencyRequest,
  ConcurrencyResponse,
  ItemDependencies,
  ItemRef,
  StatsResponse,
  WaitSpans,
  WaitSpansRequest,
} from '../contract/api.ts';

export type AnalysisMethod = 'findings' | 'stats' | 'scopeInfo' | 'ranges' | 'iterations' | 'concurrency' | 'dependencies' | 'waitSpans' | 'compare' | 'sql';

export interface AnalysisTarget {
  id: string;
  file: string;
}

export interface AnalysisRequest {
  n: number;
  method: AnalysisMethod;
  targets: AnalysisTarget[];
  args: unknown[];
}

export type AnalysisResponse = { n: number; ok: true; value: unknown } | { n: number; ok: false; error: ApiErrorShape };

/**
 * The worker's entry beside this module: analysis-worker.ts under Node 22,
 * analysis-worker.cjs in the Electron build (app/vite.config.ts puts
 * entries and chunks in one folder).
 */
function defaultEntry(): URL {
  const bundled = new URL('./analysis-worker.cjs', import.meta.url);
  return fileURLToPath(import.meta.url).endsWith('.cjs') && existsSync(bundled) ? bundled : new URL('./analysis-worker.ts', import.meta.url);
}

export class AnalysisThread {
  readonly #entry: URL | string;
  #worker: Worker | null = null;
  #next = 1;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();

  constructor(entry: URL | string = defaultEntry()) {
    this.#entry = entry;
  }

  findings(target: AnalysisTarget, scope: Scope): Promise<Finding[]> {
    return this.#call('findings', [target], [scope]) as Promise<Finding[]>;
  }

  stats(target: AnalysisTarget, scope: Scope): Promise<StatsResponse> {
    return this.#call('stats', [target], [scope]) as Promise<StatsResponse>;
  }

  scopeInfo(target: AnalysisTarget, scope: Scope): Promise<ScopeInfo> {
    return this.#call('scopeInfo', [target], [scope]) as Promise<ScopeInfo>;
  }

  ranges(target: AnalysisTarget): Promise<RangeName[]> {
    return this.#call('ranges', [target]) as Promise<RangeName[]>;
  }

  iterations(target: AnalysisTarget, name: string | null): Promise<Iterations | null> {
    return this.#call('iterations', [target], [name]) as Promise<Iterations | null>;
  }

  concurrency(target: AnalysisTarget, req: ConcurrencyRequest): Promise<ConcurrencyResponse> {
    return this.#call('concurrency', [target], [req]) as Promise<ConcurrencyResponse>;
  }

  dependencies(target: AnalysisTarget, ref: ItemRef): Promise<ItemDependencies> {
    return this.#call('dependencies', [target], [ref]) as Promise<ItemDependencies>;
  }

  waitSpans(target: AnalysisTarget, req: WaitSpansRequest): Promise<WaitSpans> {
    return this.#call('waitSpans', [target], [req]) as Promise<WaitSpans>;
  }

  compare(base: AnalysisTarget, other: AnalysisTarget, scope: Scope): Promise<DiffSummary> {
    return this.#call('compare', [base, other], [scope]) as Promise<DiffSummary>;
  }

  sql(target: AnalysisTarget, request: SqlRequest): Promise<SqlAnswer> {
    return this.#call('sql', [target], [request]) as Promise<SqlAnswer>;
  }

  /** Stops the thread; calls still waiting fail. */
  async close(): Promise<void> {
    const w = this.#worker;
    this.#worker = null;
    this.#failAll('the analysis thread was closed');
    if (w) await w.terminate();
  }

  #call(method: AnalysisMethod, targets: AnalysisTarget[], args: unknown[] = []): Promise<unknown> {
    const worker = this.#ensureWorker();
    const n = this.#next++;
    // Held while it works (a pending promise alone keeps no process alive); let go when idle.
    worker.ref();
    return new Promise((resolve, reject) => {
      this.#pending.set(n, { resolve, reject });
      worker.postMessage({ n, method, targets, args } satisfies AnalysisRequest);
    });
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(this.#entry);
    // Idle, it must not keep a CLI or a test process alive.
    worker.unref();
    worker.on('message', (msg: AnalysisResponse) => {
      const p = this.#pending.get(msg.n);
      if (!p) return;
      this.#pending.delete(msg.n);
      if (this.#pending.size === 0) worker.unref();
      if (msg.ok) p.resolve(msg.value);
      else p.reject(new ApiError(msg.error.code, msg.error.message, msg.error.file));
    });
    const died = (why: string) => {
      if (this.#worker !== worker) return;
      this.#worker = null;
      this.#failAll(why);
    };
    worker.on('error', (err) => died(`the analysis thread failed: ${err.message}`));
    worker.on('exit', (code) => died(`the analysis thread ended (exit code ${code})`));
    this.#worker = worker;
    return worker;
  }

  #failAll(why: string): void {
    for (const p of this.#pending.values()) p.reject(new ApiError('internal', why));
    this.#pending.clear();
  }
}
