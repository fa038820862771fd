// The analysis methods of the API off the thread that answers the timeline.
// findings, stats, scopes, ranges, iterations, concurrency, dependencies and compare need the whole recording loaded
// (and most of them diagnosed): seconds for ten million operations (better-sqlite3 and
// the analysis are synchronous). Run where the windows are answered, they
// would hold up every pan and zoom until done; so the server and the
// desktop app's query worker send them to one thread of their own
// (analysis-worker.ts), which opens the files itself and keeps their
// analyses. A thread that dies (out of memory on a huge recording) fails
// what it was doing with 'internal' and is started again by the next call.
// A recording still being written is analysed by the same code in a child
// process instead (analysis-channel.ts says why), until it is finished:
// then the thread takes it over, and the process answers what it was still
// computing before it stops (a request never fails because the file ended).
import { workerEntry } from '../base/worker-pool.ts';
import type { DiffSummary } from '../contract/diff.ts';
import type { Finding } from '../contract/findings.ts';
import { AnalysisChannel } from './analysis-channel.ts';
import type { AnalysisMethod, AnalysisRequest, AnalysisTarget } from './analysis-messages.ts';
import type { Iterations, RangeName } from '../contract/iterations.ts';
import type { Scope, ScopeInfo } from '../contract/scope.ts';
import type { AnalysisProgress, ProgressStep } from '../contract/progress.ts';
import type { SqlAnswer } from '../contract/sql.ts';
import type { SqlRequest } from '../contract/api-schema.ts';
import type { ConcurrencyRequest, ConcurrencyResponse, ItemDependencies, ItemRef, StatsResponse, WaitSpans, WaitSpansRequest } from '../contract/api.ts';

/**
 * What a panel asks again — the findings, their scope's label, the Stats
 * tab's — answered here for a finished recording once the worker has
 * answered it: the worker runs one analysis at a time, and the Stats tab
 * opened a second time at 10 M operations waited 30 s behind the timeline's
 * iterations for an answer it had already computed. The last KEEP_ANSWERS
 * (a few hundred kB each at most).
 */
const KEPT_METHODS: ReadonlySet<AnalysisMethod> = new Set(['findings', 'stats', 'scopeInfo']);
const KEEP_ANSWERS = 64;

/** What identifies a kept answer: the method, the files (not the page's ids for them), the arguments. */
function answerKey(method: AnalysisMethod, targets: AnalysisTarget[], args: unknown[]): string {
  return JSON.stringify([method, targets.map(({ id: _, ...t }) => t), args]);
}

/** The methods whose first argument is a scope. */
const SCOPED_METHODS: ReadonlySet<string> = new Set(['findings', 'stats', 'scopeInfo', 'compare']);

/** The worker's entry beside this module (the Electron build puts entries and chunks in one folder: app/vite.config.ts). */
const defaultEntry = (): URL => workerEntry('analysis-worker', import.meta.url);

export class AnalysisThread {
  readonly #thread: AnalysisChannel;
  /** Recordings being written are analysed in a process of their own (analysis-channel.ts says why); started when one is asked about. */
  readonly #process: AnalysisChannel;
  /** The files the process holds: it is told to drop each once finished, and stopped when it holds none. */
  readonly #inProcess = new Set<string>();
  /** The panels' answers for finished recordings (KEPT_METHODS), least recently asked first. */
  readonly #answers = new Map<string, Promise<unknown>>();
  /** Of those, the ones made ahead of their asking (#ahead) and not asked for yet: by key, what makes each a panel's own call. */
  readonly #promote = new Map<string, () => void>();

  constructor(entry: URL | string = defaultEntry()) {
    this.#thread = new AnalysisChannel('thread', entry);
    this.#process = new AnalysisChannel('process', entry);
  }

  findings(target: AnalysisTarget, scope: Scope): Promise<Finding[]> {
    // The scope loaded by a call of its own, made with the findings' and handed out first (analysis-channel.ts
    // PANEL_ORDER): a Stats tab asked meanwhile goes between the load and the diagnosis, instead of after all of it
    // (clicked as the page opened on 10 M operations: 15 s). Not for a job's summaries: one analysis answers both.
    if (!target.job) this.scopeInfo(target, scope).catch(() => {}); // its failure is the findings' too
    const findings = this.#call('findings', [target], [scope]) as Promise<Finding[]>;
    // The Stats tab's tables of the scope, computed after the findings and before the overlays (analysis-channel.ts
    // AHEAD): at 10 M operations the tab clicked as the findings came waited 2.9 s, 2.2 s of it behind the wait-span
    // overlay; the tables cost 0.6 s. Not a job's (no Stats tab) nor a recording's being written (its stats change).
    if (!target.job && !target.live) this.#ahead('stats', [target], [scope]);
    return findings;
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

  iterations(target: AnalysisTarget, name: string | null, findings = true): Promise<Iterations | null> {
    return this.#call('iterations', [target], [name, findings]) as Promise<Iterations | null>;
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

  /**
   * The analysis of `file` the worker runs now (the thread's, else the
   * process's: a recording is analysed in one of them at a time), how far
   * it has got, and how many of the file's wait behind it; null when none
   * runs. From what the worker told as it went (analysis-worker.ts): the
   * worker itself is busy, so this never waits for it.
   */
  progress(file: string): AnalysisProgress | null {
    for (const channel of [this.#thread, this.#process]) {
      const mine = channel.pending().filter((p) => p.request.targets.some((t) => t.file === file));
      const running = mine.find((p) => p.startedAt !== null);
      // A call made ahead that nobody asked for yet (the Stats tab's tables) is no analysis anyone waits for, unless
      // another of the file's waits behind it.
      if (!running || (running.ahead && !mine.some((p) => !p.ahead))) continue;
      const { method, args } = running.request;
      let step: ProgressStep = running.step ?? { phase: 'starting', done: 0, total: 0 };
      // The rules' findings while the what-ifs replay: a scope's, for the methods that analyse one recording's scope.
      if (running.findings && method !== 'compare') step = { ...step, findings: running.findings };
      // Loading: the rows read so far, as the loader counts them now.
      if (step.phase === 'loading' && running.rowsRead) step = { ...step, done: Math.min(step.total, Atomics.load(running.rowsRead, 0)) };
      return {
        ...step,
        method,
        scope: SCOPED_METHODS.has(method) ? (args[0] as Scope) : null,
        elapsedMs: Math.round(performance.now() - running.startedAt!),
        // Calls made ahead that nobody asked for yet (the Stats tab's tables) are not what anyone waits for.
        queued: mine.filter((p) => !p.ahead || p === running).length - 1,
      };
    }
    return null;
  }

  /** Whether the process for recordings being written runs (it stops once none is left and it has answered). */
  get processRunning(): boolean {
    return this.#process.running;
  }

  /** Stops the thread (and the process); calls still waiting fail. */
  async close(): Promise<void> {
    this.#inProcess.clear();
    await Promise.all([this.#thread.close(), this.#process.close()]);
  }

  #call(method: AnalysisMethod, targets: AnalysisTarget[], args: unknown[] = []): Promise<unknown> {
    if (!KEPT_METHODS.has(method) || targets.some((t) => t.live)) return this.#send(method, targets, args);
    // A panel's answer for a finished recording: asked again, it is the same (and the same call on its way is shared).
    const key = answerKey(method, targets, args);
    let answer = this.#answers.get(key);
    if (answer) {
      // Made ahead and asked for now: the panel's own call from here on.
      this.#promote.get(key)?.();
      this.#promote.delete(key);
    } else answer = this.#send(method, targets, args);
    this.#keep(key, answer);
    return answer;
  }

  /** A panel's call made before it is asked for (a finished recording's: kept among #answers), unless made already. */
  #ahead(method: AnalysisMethod, targets: AnalysisTarget[], args: unknown[]): void {
    const key = answerKey(method, targets, args);
    if (this.#answers.has(key)) return;
    const { answer, promote } = this.#thread.callAhead({ method, targets, args });
    this.#promote.set(key, promote);
    answer.finally(() => this.#promote.delete(key)).catch(() => {});
    this.#keep(key, answer);
  }

  /** Keeps `answer` as the latest asked (a failed one is let go: asked again, it is computed again). */
  #keep(key: string, answer: Promise<unknown>): void {
    if (!this.#answers.delete(key)) answer.catch(() => this.#answers.get(key) === answer && this.#answers.delete(key));
    this.#answers.set(key, answer);
    while (this.#answers.size > KEEP_ANSWERS) this.#answers.delete(this.#answers.keys().next().value!);
  }

  #send(method: AnalysisMethod, targets: AnalysisTarget[], args: unknown[]): Promise<unknown> {
    const live = targets.filter((t) => t.live);
    for (const t of targets) {
      if (t.live || !this.#inProcess.has(t.file)) continue;
      // Finished since: its analyses from now on are the thread's.
      this.#inProcess.delete(t.file);
      this.#process.tell({ drop: t.file });
    }
    // No recording being written left: the process goes once it has answered what it was asked (a page's
    // stats of the last moment before the file ended are still its answer, not an error).
    if (live.length === 0 && this.#inProcess.size === 0 && this.#process.running) this.#process.closeWhenIdle();
    for (const t of live) this.#inProcess.add(t.file);
    const request: Omit<AnalysisRequest, 'n'> = { method, targets, args };
    return (live.length ? this.#process : this.#thread).call(request);
  }
}
