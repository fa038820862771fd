// The recordings open in one session of the desktop app (its query worker)
// or of the server, by id. Ids are random, so a page cannot guess the id of
// a recording it was not given, and stable while the file stays open.
// Several files opened at once (openFiles) open the recordings of one job's
// ranks as one: merged into a cache (profiler/merge/job-cache.ts), or, for a
// job of many files, from their ranks' summaries without merging
// (job-query.ts: the timeline's first view and a rank's rows; jobViewOf
// says which).
//
// The recent-files list (File ▸ Open Recent) is app/recent-files.ts: only
// the desktop app has one; browser mode never lists local paths.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Finding } from '../contract/findings.ts';
import type { DiffSummary } from '../contract/diff.ts';
import { cachedJob, planOpen, type OpenMode } from '../merge/job-cache.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import type { AnalysisTarget } from './analysis-messages.ts';
import { AnalysisThread } from './analysis-thread.ts';
import { ApiError, apiErrorOf } from './api-error.ts';
import type { Iterations, RangeName } from '../contract/iterations.ts';
import { STEADY_STATE, type Scope, type ScopeInfo } from '../contract/scope.ts';
import type { AnalysisProgress } from '../contract/progress.ts';
import type {
  ConcurrencyRequest,
  ConcurrencyResponse,
  ItemDependencies,
  ItemRef,
  OpenFailure,
  OpenResult,
  RecordingHandle,
  StatsResponse,
  WaitSpans,
  WaitSpansRequest,
} from '../contract/api.ts';
import { compareRecordings } from './compare.ts';
import type { SqlAnswer } from '../contract/sql.ts';
import type { SqlRequest } from '../contract/api-schema.ts';
import { RecordingQuery } from './recording-query.ts';
import { jobAnswer } from './job-analysis.ts';
import { JobQuery, jobViewOf, type JobView } from './job-query.ts';
import { readForOpen, READ_ON_WORKERS_FROM } from './open-read.ts';

/** An open recording, or a job opened from its ranks' summaries: what the timeline's data methods read. */
export type OpenView = RecordingQuery | JobQuery;

export class SessionRegistry {
  readonly #open = new Map<string, OpenView>();
  readonly #analysis: AnalysisThread | null;
  /** SQL queries (sql-console.ts): a thread of their own, so that a query running to its time limit delays no analysis, and no analysis a query. */
  readonly #sql: AnalysisThread | null;

  /**
   * With `analysisThread` (the server, the app's query worker), findings,
   * stats, concurrency, dependencies and compare are computed on a thread of their own
   * (analysis-thread.ts), so windows keep being answered meanwhile; without
   * (tests, scripts), here.
   */
  constructor(opts: { analysisThread?: boolean } = {}) {
    this.#analysis = opts.analysisThread ? new AnalysisThread() : null;
    this.#sql = opts.analysisThread ? new AnalysisThread() : null;
  }

  /**
   * Opens `file` read-only (or returns the handle it already has: opening
   * the same file twice shows one recording). Throws an ApiError with the
   * file's problem (not-found, not-a-recording, corrupt, locked, newer-schema).
   */
  open(file: string): RecordingHandle {
    const abs = path.resolve(file);
    for (const q of this.#open.values()) if (q instanceof RecordingQuery && q.path === abs) return handleOf(q);
    const id = crypto.randomBytes(8).toString('hex');
    const q = new RecordingQuery(id, abs);
    this.#open.set(id, q);
    return handleOf(q);
  }

  /**
   * Opens several files at once: the recordings of one job's ranks as one
   * recording, merged into `jobCacheDir` (or taken from it when the same
   * files were merged before: merge/job-cache.ts), every other file alone.
   * Never throws for a file: each that cannot be opened, or a job that
   * cannot be merged, is in `failed` with why ('not-mergeable' for the
   * merge's own refusals, naming the file).
   */
  async openFiles(files: readonly string[], opts: { jobCacheDir: string; mode?: OpenMode; jobView?: JobView }): Promise<OpenFilesResult> {
    // Many files (a job's ranks): each read once, on worker threads, for the plan and the job view (open-read.ts).
    const many = files.length >= READ_ON_WORKERS_FROM && opts.mode !== 'separate';
    // Workers that could not start (a bundle without their entry) leave the reading to this thread, as below 32 files.
    const read = many
      ? await readForOpen([...new Set(files.map((f) => path.resolve(f)))], jobViewOf(files.length, opts.jobView) === 'summaries').catch(() => null)
      : null;
    const plan = planOpen(files, opts.mode, read?.inspected);
    const failed: OpenFailure[] = plan.failed.map(({ file, error }) => failure(apiErrorOf(error, file), file));
    const opened: RecordingHandle[] = [];
    let job: OpenFilesResult['job'] = null;
    if (plan.job.length && jobViewOf(plan.job.length, opts.jobView) === 'summaries') {
      const t0 = performance.now();
      try {
        const id = crypto.randomBytes(8).toString('hex');
        // planOpen opened every file through the store's checks a moment ago.
        const q = await JobQuery.open(id, plan.job, { checked: true, read: read?.ranks });
        this.#open.set(id, q);
        const handle = handleOf(q);
        opened.push(handle);
        job = { handle, inputs: plan.job, reused: false, seconds: (performance.now() - t0) / 1000, view: 'summaries', summarized: q.summarized };
      } catch (err) {
        failed.push(jobFailure(err, plan.job));
      }
    } else if (plan.job.length) {
      const t0 = performance.now();
      try {
        const cached = cachedJob(plan.job, opts.jobCacheDir);
        let handle: RecordingHandle;
        try {
          handle = this.open(cached.file);
        } catch (err) {
          // A cached job that no longer opens (a disk that filled, say): merged again, once.
          if (!cached.reused) throw err;
          fs.rmSync(cached.file, { force: true });
          handle = this.open(cachedJob(plan.job, opts.jobCacheDir).file);
        }
        opened.push(handle);
        job = { handle, inputs: plan.job, reused: cached.reused, seconds: (performance.now() - t0) / 1000, view: 'merged', summarized: [] };
      } catch (err) {
        failed.push(jobFailure(err, plan.job));
      }
    }
    for (const file of plan.separate) {
      try {
        opened.push(this.open(file));
      } catch (err) {
        failed.push(failure(apiErrorOf(err, file), file));
      }
    }
    this.#loadAhead(opened[0]);
    return { opened, failed, job };
  }

  /**
   * The steady state of the recording a page shows first, loaded on the
   * analysis thread as soon as it is open: the page asks for it (its
   * scope's label, then the findings and the Stats tab) once its first
   * frame is drawn, and at 10 M operations the load alone is ~2 s of what
   * those then wait for. The same call as the page's (analysis-thread.ts
   * shares a call on its way and keeps its answer); a failure is the
   * page's to hear when it asks. Not a recording being written (its
   * analyses follow it as it grows) nor a job of summaries (no rows).
   */
  #loadAhead(handle: RecordingHandle | undefined): void {
    const q = handle && this.#open.get(handle.recordingId);
    if (!this.#analysis || !(q instanceof RecordingQuery) || q.beingWritten()) return;
    this.#analysis.scopeInfo(targetOf(q), STEADY_STATE).catch(() => {});
  }

  list(): RecordingHandle[] {
    return [...this.#open.values()].map(handleOf);
  }

  /** The open recording or job with this id, for the timeline's data methods; 'not-found' for any other. */
  view(id: string): OpenView {
    const q = this.#open.get(id);
    if (!q) throw new ApiError('not-found', `no open recording with id '${String(id).slice(0, 64)}'`);
    return q;
  }

  /**
   * The open recording with this id, for `what` (a method that reads its
   * rows); a job opened from its ranks' summaries is refused, saying where
   * that answer is (JobQuery.refusal). 'not-found' for any other id.
   */
  get(id: string, what = 'this'): RecordingQuery {
    const q = this.view(id);
    if (q instanceof JobQuery) throw q.refusal(what);
    return q;
  }

  /** Closes the open recording with this id; 'not-found' for any other. */
  close(id: string): void {
    this.view(id).close();
    this.#open.delete(id);
  }

  closeAll(): void {
    for (const q of this.#open.values()) q.close();
    this.#open.clear();
    void this.#analysis?.close();
    void this.#sql?.close();
  }

  async findings(id: string, scope: Scope): Promise<Finding[]> {
    const v = this.view(id);
    // A job from its ranks' summaries: the job report's findings (job-analysis.ts), on the analysis thread.
    if (v instanceof JobQuery) return (await this.#jobAnswer(v, 'findings', scope)) as Finding[];
    const q = v;
    return this.#analysis ? refusing(q, this.#analysis.findings(targetOf(q), scope)) : q.findings(scope);
  }

  async stats(id: string, scope: Scope): Promise<StatsResponse> {
    const q = this.get(id, 'the stats');
    return this.#analysis ? refusing(q, this.#analysis.stats(targetOf(q), scope)) : q.stats(scope);
  }

  async scopeInfo(id: string, scope: Scope): Promise<ScopeInfo> {
    const v = this.view(id);
    if (v instanceof JobQuery) return (await this.#jobAnswer(v, 'scopeInfo', scope)) as ScopeInfo;
    const q = v;
    return this.#analysis ? refusing(q, this.#analysis.scopeInfo(targetOf(q), scope)) : q.scopeInfo(scope);
  }

  /** The findings or scope of a job opened from its ranks' summaries: on the analysis thread where there is one. */
  #jobAnswer(q: JobQuery, method: 'findings' | 'scopeInfo', scope: Scope): Promise<Finding[] | ScopeInfo> {
    if (!this.#analysis) return jobAnswer(q.files, method, scope);
    const target = { id: q.recordingId, file: q.path, job: [...q.files] };
    return method === 'findings' ? this.#analysis.findings(target, scope) : this.#analysis.scopeInfo(target, scope);
  }

  /** The analysis of this recording running now, and how far it has got (analysis-thread.ts); null without an analysis thread (everything here is answered when asked). */
  async analysisProgress(id: string): Promise<AnalysisProgress | null> {
    const q = this.view(id);
    if (q instanceof JobQuery) return null;
    return this.#analysis?.progress(q.path) ?? null;
  }

  async ranges(id: string): Promise<RangeName[]> {
    // A job from its ranks' summaries: no range scope (the summaries hold the whole and the steady state).
    const v = this.view(id);
    if (v instanceof JobQuery) return [];
    const q = v;
    return this.#analysis ? refusing(q, this.#analysis.ranges(targetOf(q))) : q.ranges();
  }

  async iterations(id: string, name: string | null, findings: boolean): Promise<Iterations | null> {
    const v = this.view(id);
    // A job from its ranks' summaries: their steps (no findings: a summary has none per step).
    if (v instanceof JobQuery) return v.iterations(name);
    const q = v;
    return this.#analysis ? refusing(q, this.#analysis.iterations(targetOf(q), name, findings)) : q.iterations(name, findings);
  }

  async concurrency(id: string, req: ConcurrencyRequest): Promise<ConcurrencyResponse> {
    const q = this.get(id, 'the concurrency track');
    return this.#analysis ? refusing(q, this.#analysis.concurrency(targetOf(q), req)) : q.concurrency(req);
  }

  async sql(id: string, request: SqlRequest): Promise<SqlAnswer> {
    const q = this.get(id, 'SQL');
    return this.#sql ? this.#sql.sql(targetOf(q), request) : q.sql(request);
  }

  async dependencies(id: string, ref: ItemRef): Promise<ItemDependencies> {
    const q = this.get(id, 'the dependencies');
    return this.#analysis ? refusing(q, this.#analysis.dependencies(targetOf(q), ref)) : q.dependencies(ref);
  }

  async waitSpans(id: string, req: WaitSpansRequest): Promise<WaitSpans> {
    const q = this.get(id, 'the event waits');
    return this.#analysis ? refusing(q, this.#analysis.waitSpans(targetOf(q), req)) : q.waitSpans(req);
  }

  async compare(baseId: string, otherId: string, scope: Scope): Promise<DiffSummary> {
    const base = this.get(baseId, 'a comparison');
    const other = this.get(otherId, 'a comparison');
    return this.#analysis
      ? refusing(base, refusing(other, this.#analysis.compare(targetOf(base), targetOf(other), scope)))
      : compareRecordings(base, other, scope);
  }
}

/** openFiles' answer: the API's OpenResult, and the job it merged or took from the cache (the CLI says which). */
export interface OpenFilesResult extends OpenResult {
  /** view: merged (reused: from the cache), or from the ranks' summaries (summarized: files whose summary was built for it). */
  job: { handle: RecordingHandle; inputs: string[]; reused: boolean; seconds: number; view: 'merged' | 'summaries'; summarized: string[] } | null;
}

function failure(e: ApiError, file: string): OpenFailure {
  return { file: e.file ?? file, message: e.message, code: e.code };
}

/** Why a job's files could not be opened as one job (merged or from their summaries): a file's problem names the file. */
function jobFailure(err: unknown, files: string[]): OpenFailure {
  const e =
    err instanceof RecordingFileError
      ? new ApiError('not-mergeable', `cannot open ${files.length} recordings as one job: ${err.message}`, err.file)
      : apiErrorOf(err, files[0]);
  return failure(e, files[0]!);
}

/**
 * `answer` of the analysis thread about `q`'s file; where it is the file's
 * error (a row refused: store/row-checks.ts; a corrupt page), `q` answers
 * it from then on too (RecordingQuery.refuse): the timeline must not draw
 * what the analysis refused to read.
 */
async function refusing<T>(q: RecordingQuery, answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (err) {
    if (err instanceof ApiError && FILE_ERRORS.has(err.code) && err.file === q.path) q.refuse(err);
    throw err;
  }
}

/** The API code of a file refused for what it holds (api-error.ts codeOfProblem): it stays so (a corrupt page may be a copy still arriving). */
const FILE_ERRORS: ReadonlySet<string> = new Set(['not-a-recording']);

function targetOf(q: RecordingQuery): AnalysisTarget {
  return { id: q.recordingId, file: q.path, live: q.beingWritten() };
}

function handleOf(q: OpenView): RecordingHandle {
  return { recordingId: q.recordingId, name: q instanceof JobQuery ? q.name : path.basename(q.path), path: q.path };
}
