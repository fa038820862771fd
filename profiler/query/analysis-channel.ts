// Where the analysis methods run (analysis-thread.ts): a worker thread, or —
// for a recording that is still being written — a child process.
//
// Why a process for those: the analysis loads columns through the native
// addon, whose SQLite is a second copy beside better-sqlite3's in the same
// process, and SQLite's locks are POSIX locks, which belong to the process:
// closing any descriptor of a file drops every lock the process holds on it.
// A worker thread closing the addon's connections would drop the locks of
// the windows the query thread is reading at that moment, and the recorder
// could then commit under them: a torn read. A finished recording has no
// writer, so nothing can happen; a growing one is analysed where the two
// SQLite copies are used one after the other, never at once (the child's
// one thread).
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ApiError } from './api-error.ts';
import type { AnalysisProgressMessage, AnalysisRequest, AnalysisResponse } from './analysis-messages.ts';
import type { Finding } from '../contract/findings.ts';
import type { ProgressStep } from '../contract/progress.ts';

type WorkerMessage = AnalysisResponse | AnalysisProgressMessage;

/** A call on its way: what it asked, and once the worker began it, when and how far it has got. */
export interface PendingCall {
  request: Omit<AnalysisRequest, 'n'>;
  /** performance.now() when the worker began it; null while it waits there behind others. */
  startedAt: number | null;
  /** The last phase it began (null: none yet). */
  step: ProgressStep | null;
  /** The findings it told before its what-ifs (ProgressStep.findings), kept through the steps after; null: none told. */
  findings: Finding[] | null;
  /** While it loads, in a worker thread: the loader's count of rows read so far (shared memory, AnalysisProgressMessage). */
  rowsRead: Int32Array | null;
  /** Made ahead of its asking (callAhead), not yet asked for: ranked AHEAD. */
  ahead: boolean;
}

export type ChannelKind = 'thread' | 'process';

/**
 * What the panels wait for before any other call waiting — the overlays and
 * the timeline's iterations row can wait (at 10 M operations the iterations
 * took 20 s, and the Stats tab clicked as the page opened waited 42 s
 * behind them). Among the panels' calls, those that need their scope's
 * analysis loaded but not diagnosed (its label, the Stats tab's tables:
 * analyze.ts diagnoses when the findings are read) before the findings,
 * whose rules and what-ifs are most of an analysis: the findings' own load
 * is a scopeInfo call of its own (analysis-thread.ts), so a Stats tab asked
 * meanwhile goes between the load and the diagnosis. Lower first; the rest 2.
 */
const PANEL_ORDER: Readonly<Record<string, number>> = { scopeInfo: 0, stats: 0, findings: 1 };
const OTHERS = 2;
/**
 * A call made ahead of its asking (callAhead: the Stats tab's tables after the
 * findings): after the panels' calls, before the rest. The overlays and the
 * iterations waited on at 10 M operations run seconds each (the wait-span
 * overlay 2.2 s), and the Stats tab clicked as the findings came waited behind
 * them; its tables, computed before them, cost them 0.6 s. Asked for meanwhile
 * (promote), it is the panel's own call again.
 */
const AHEAD = 1.5;
/** How long a call to an idle worker waits for the others made with it (ms): a few requests of one page, well under what any analysis takes. */
const GATHER_MS = 20;

/** What the two transports have in common, as the channel uses them. */
interface Transport {
  post(message: unknown): void;
  /** Holds the parent process alive while calls are pending; lets it go when idle. */
  hold(on: boolean): void;
  terminate(): Promise<void>;
}

function startThread(entry: URL | string, onMessage: (m: WorkerMessage) => void, onDeath: (why: string) => void): Transport {
  const worker = new Worker(entry);
  worker.on('message', onMessage);
  worker.on('error', (err) => onDeath(`the analysis thread failed: ${err.message}`));
  worker.on('exit', (code) => onDeath(`the analysis thread ended (exit code ${code})`));
  return {
    post: (m) => worker.postMessage(m),
    hold: (on) => (on ? worker.ref() : worker.unref()),
    terminate: async () => void (await worker.terminate()),
  };
}

function startProcess(entry: URL | string, onMessage: (m: WorkerMessage) => void, onDeath: (why: string) => void): Transport {
  const child: ChildProcess = fork(entry instanceof URL ? fileURLToPath(entry) : entry, [], {
    // Not the parent's flags (a test runner's loaders); Electron's binary runs the bundled entry as Node.
    execArgv: [],
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  child.on('message', (m) => onMessage(m as WorkerMessage));
  child.on('error', (err) => onDeath(`the analysis process failed: ${err.message}`));
  child.on('exit', (code, signal) => onDeath(`the analysis process ended (${signal ?? `exit code ${code}`})`));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    post: (m) => child.send(m as never),
    hold: (on) => {
      if (on) {
        child.ref();
        child.channel?.ref();
      } else {
        child.unref();
        child.channel?.unref();
      }
    },
    terminate: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill();
      await exited;
    },
  };
}

/**
 * Calls to one worker (thread or process), numbered, each answered once. A
 * worker that dies fails what it was doing with 'internal' and is started
 * again by the next call.
 */
export class AnalysisChannel {
  readonly #kind: ChannelKind;
  readonly #entry: URL | string;
  #transport: Transport | null = null;
  #next = 1;
  /** The call the worker has now (null: none); the others wait here (#postNext). */
  #posted: number | null = null;
  /** A call came to an idle worker: the next is posted after GATHER_MS. */
  #gathering = false;
  readonly #pending = new Map<number, PendingCall & { resolve: (v: unknown) => void; reject: (e: unknown) => void }>();
  /** Stop once the calls on their way are answered (closeWhenIdle). */
  #closeWhenIdle = false;

  constructor(kind: ChannelKind, entry: URL | string) {
    this.#kind = kind;
    this.#entry = entry;
  }

  get running(): boolean {
    return this.#transport !== null;
  }

  call(request: Omit<AnalysisRequest, 'n'>): Promise<unknown> {
    return this.#make(request, false).answer;
  }

  /** A call made before anyone asks for it (AHEAD); `promote` when someone does: from then on it is ranked as its method is. */
  callAhead(request: Omit<AnalysisRequest, 'n'>): { answer: Promise<unknown>; promote: () => void } {
    const { n, answer } = this.#make(request, true);
    return {
      answer,
      promote: () => {
        const p = this.#pending.get(n);
        if (p) p.ahead = false;
      },
    };
  }

  #make(request: Omit<AnalysisRequest, 'n'>, ahead: boolean): { n: number; answer: Promise<unknown> } {
    const t = this.#ensure();
    this.#closeWhenIdle = false;
    const n = this.#next++;
    // Held while it works (a pending promise alone keeps no process alive); let go when idle.
    t.hold(true);
    const answer = new Promise((resolve, reject) => {
      this.#pending.set(n, { request, startedAt: null, step: null, findings: null, rowsRead: null, ahead, resolve, reject });
      // To an idle worker, a moment later: the calls a page makes together as it opens (its
      // overlays and its findings, as separate requests) then go in the order #postNext gives them.
      if (this.#posted === null && !this.#gathering) {
        this.#gathering = true;
        setTimeout(() => {
          this.#gathering = false;
          if (this.#transport) this.#postNext(this.#transport);
        }, GATHER_MS);
      }
    });
    return { n, answer };
  }

  /**
   * Hands the worker its next call when it has none: the first waiting of
   * the lowest PANEL_ORDER, else the first call waiting. The worker holds
   * one call at a time so that the rest can still be reordered: a page asks
   * for the wait-span overlay and the iterations as it opens, and on ten
   * million operations those took a minute ahead of its findings.
   */
  #postNext(t: Transport): void {
    if (this.#posted !== null || this.#gathering) return;
    let next: number | null = null;
    let best = Infinity;
    for (const [n, p] of this.#pending) {
      // Pending in the order made: the first of each rank wins.
      const rank = p.ahead ? AHEAD : (PANEL_ORDER[p.request.method] ?? OTHERS);
      if (rank < best) [next, best] = [n, rank];
    }
    if (next === null) return;
    this.#posted = next;
    t.post({ ...this.#pending.get(next)!.request, n: next });
  }

  /** The calls on their way, in the order they were made (the one the worker has now: startedAt set). */
  pending(): PendingCall[] {
    return [...this.#pending.values()].map(({ resolve: _, reject: __, ...call }) => call);
  }

  /** A message that wants no answer (analysis-worker.ts: drop a recording). */
  tell(message: object): void {
    this.#transport?.post(message);
  }

  /**
   * Stops the worker once the calls on their way are answered (at once
   * when there are none); a call made meanwhile keeps it. What the process
   * of a recording being written does when the recording is finished
   * (analysis-thread.ts): the answers it was computing are still answers,
   * and a page must not see its request fail because the file ended.
   */
  closeWhenIdle(): void {
    if (!this.#transport) return;
    if (this.#pending.size === 0) void this.close();
    else this.#closeWhenIdle = true;
  }

  /** Stops the worker; calls still waiting fail. */
  async close(why = `the analysis ${this.#kind} was closed`): Promise<void> {
    const t = this.#transport;
    this.#transport = null;
    this.#closeWhenIdle = false;
    this.#failAll(why);
    if (t) await t.terminate();
  }

  #ensure(): Transport {
    if (this.#transport) return this.#transport;
    const start = this.#kind === 'thread' ? startThread : startProcess;
    const t: Transport = start(
      this.#entry,
      (msg) => {
        const p = this.#pending.get(msg.n);
        if (!p) return;
        if ('progress' in msg) {
          p.startedAt ??= performance.now();
          if (msg.progress) {
            const { findings, ...step } = msg.progress;
            p.step = step;
            if (findings) p.findings = findings;
            p.rowsRead = msg.rowsRead ?? null;
          }
          return;
        }
        this.#pending.delete(msg.n);
        if (this.#posted === msg.n) this.#posted = null;
        this.#postNext(t);
        if (this.#pending.size === 0) t.hold(false);
        if (msg.ok) p.resolve(msg.value);
        else p.reject(new ApiError(msg.error.code, msg.error.message, msg.error.file));
        if (this.#pending.size === 0 && this.#closeWhenIdle) void this.close();
      },
      (why) => {
        if (this.#transport !== t) return;
        this.#transport = null;
        this.#failAll(why);
      },
    );
    // Idle, it must not keep a CLI or a test process alive.
    t.hold(false);
    this.#transport = t;
    return t;
  }

  #failAll(why: string): void {
    for (const p of this.#pending.values()) p.reject(new ApiError('internal', why));
    this.#pending.clear();
    this.#posted = null;
  }
}
