// Entry of the analysis thread (analysis-thread.ts): the API methods that
// need the whole recording analysed — findings, stats, concurrency, dependencies, compare —
// (and scopes, ranges, iterations) answered by RecordingQuery objects of this thread's own. Analysing ten
// million operations takes seconds; here it holds up nothing but other
// analyses, while the thread that draws the timeline keeps answering
// windows.
//
// Messages in:  { n, method, targets: [{ id, file }], args }
// Messages out: { n, ok: true, value } | { n, ok: false, error: ApiErrorShape }
//               { n, progress: ProgressStep | null }: request n began (null),
//               or began a phase (contract/progress.ts); posted from inside
//               the synchronous analysis, they reach the parent at once.
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import { toApiErrorShape } from './api-error.ts';
import { compareRecordings } from './compare.ts';
import { jobAnswer } from './job-analysis.ts';
import { RecordingQuery } from './recording-query.ts';
import type { Scope } from '../contract/scope.ts';
import type { AnalysisProgressMessage, AnalysisRequest, AnalysisResponse } from './analysis-messages.ts';
import type { ProgressStep } from '../contract/progress.ts';
import type { LoadingStep } from '../analysis/diagnosis/analyze.ts';

/** The thread's port, or in a child process (a recording being written: analysis-channel.ts) its IPC channel. */
const port = parentPort ?? processPort();

function processPort(): Pick<NonNullable<typeof parentPort>, 'on' | 'postMessage' | 'close'> {
  if (!process.send) throw new Error('profiler/query/analysis-worker.ts runs as a worker thread or a forked process (see analysis-thread.ts)');
  // The parent went away: nothing is left to answer.
  process.on('disconnect', () => process.exit(0));
  const ipc = {
    on: (event: 'message', listener: (m: unknown) => void) => (process.on(event, listener), ipc),
    postMessage: (m: unknown) => void process.send!(m),
    close: () => process.disconnect(),
  };
  return ipc as never;
}

/**
 * Niceness of the analyses. An analysis keeps a core busy for seconds (its
 * column load every core), and on a machine of two cores the thread that
 * answers windows, the page and the analysis then share them: a wheel zoom
 * during a diagnosis of 10 M operations took seconds to show data. Lowered,
 * the analysis takes what the others leave, and the timeline stays
 * responsive; it runs as fast as before when nothing else wants the CPU.
 * Linux keeps a niceness per thread (setpriority(2), "Notes": who = 0 is
 * the calling thread), so a worker thread lowers itself alone, and the
 * native loader's threads it starts inherit it; elsewhere that would lower
 * the whole process, so only the child process (a recording being written)
 * lowers itself there.
 */
const ANALYSIS_NICENESS = 10;
if (parentPort === null || process.platform === 'linux') {
  try {
    os.setPriority(0, ANALYSIS_NICENESS);
  } catch {
    // Not permitted (a sandbox): the analysis runs at the priority it has.
  }
}

/** Open recordings by file, least recently used first (an analysis of 10 M operations holds about a GB). */
const open = new Map<string, RecordingQuery>();
const KEEP = 3;

/** The request being answered: the one its analyses' progress is for. */
let current = 0;
const onProgress = (progress: ProgressStep) => {
  // The loader's count of rows read is shared memory: a thread's parent reads it as it grows; a process's would get a copy.
  const { rowsRead, ...step } = progress as Partial<LoadingStep> & ProgressStep;
  port.postMessage({ n: current, progress: step, ...(parentPort && rowsRead ? { rowsRead } : {}) } satisfies AnalysisProgressMessage);
};

function query(id: string, file: string): RecordingQuery {
  let q = open.get(file);
  if (q) open.delete(file);
  else q = new RecordingQuery(id, file, { onProgress });
  open.set(file, q);
  while (open.size > KEEP) {
    const [oldest, old] = open.entries().next().value!;
    old.close();
    open.delete(oldest);
  }
  return q;
}

// One request after the other, in the order they came: a job's analysis (job-analysis.ts) awaits its summaries.
let queue: Promise<void> = Promise.resolve();
port.on('message', (msg: AnalysisRequest | { close: true } | { drop: string }) => {
  queue = queue.then(() => answer(msg)).catch(() => undefined);
});

async function answer(msg: AnalysisRequest | { close: true } | { drop: string }): Promise<void> {
  if ('close' in msg) {
    for (const q of open.values()) q.close();
    port.close();
    return;
  }
  if ('drop' in msg) {
    // A recording this process analysed while it grew is finished: the thread takes it from here.
    open.get(msg.drop)?.close();
    open.delete(msg.drop);
    return;
  }
  let out: AnalysisResponse;
  current = msg.n;
  port.postMessage({ n: msg.n, progress: null } satisfies AnalysisProgressMessage);
  try {
    const job = msg.targets[0]?.job;
    if (job) {
      if (msg.method !== 'findings' && msg.method !== 'scopeInfo')
        throw new Error(`the analysis of a job from its ranks' summaries answers findings and scopeInfo, not ${msg.method}`);
      port.postMessage({ n: msg.n, ok: true, value: await jobAnswer(job, msg.method, msg.args[0] as Scope) } satisfies AnalysisResponse);
      return;
    }
    // Both recordings of a comparison are held while it runs.
    const [a, b] = msg.targets.map((t) => query(t.id, t.file));
    const arg = msg.args[0] as never;
    const value =
      msg.method === 'findings'
        ? a!.findings(arg)
        : msg.method === 'stats'
          ? a!.stats(arg)
          : msg.method === 'scopeInfo'
            ? a!.scopeInfo(arg)
            : msg.method === 'ranges'
              ? a!.ranges()
              : msg.method === 'iterations'
                ? a!.iterations(arg, msg.args[1] as boolean | undefined)
                : msg.method === 'concurrency'
                  ? a!.concurrency(arg)
                  : msg.method === 'dependencies'
                    ? a!.dependencies(arg)
                    : msg.method === 'waitSpans'
                      ? a!.waitSpans(arg)
                      : msg.method === 'sql'
                        ? a!.sql(arg)
                        : compareRecordings(a!, b!, arg);
    out = { n: msg.n, ok: true, value };
  } catch (err) {
    out = { n: msg.n, ok: false, error: toApiErrorShape(err, msg.targets[0]?.file) };
  }
  port.postMessage(out);
}
