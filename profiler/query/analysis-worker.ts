// Entry of the analysis thread (analysis-thread.ts): the API methods that
// need the whole recording analysed — findings, stats, concurrency, dependencies, compare —
// (and scopes, ranges, iterations) answered by RecordingQuery objects of this thread's own. Analysing ten
// million operations takes seconds; here it holds up nothing but other
// analyses, while the thread that draws the timeline keeps answering
// windows.
//
// Messages in:  { n, method, targets: [{ id, file }], args }
// Messages out: { n, ok: true, value } | { n, ok: false, error: ApiErrorShape }
import { parentPort } from 'node:worker_threads';
import { toApiErrorShape } from './api-error.ts';
import { compareRecordings } from './compare.ts';
import { RecordingQuery } from './recording-query.ts';
import type { AnalysisRequest, AnalysisResponse } from './analysis-thread.ts';

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

/** Open recordings by file, least recently used first (an analysis of 10 M operations holds about a GB). */
const open = new Map<string, RecordingQuery>();
const KEEP = 3;

function query(id: string, file: string): RecordingQuery {
  let q = open.get(file);
  if (q) open.delete(file);
  else q = new RecordingQuery(id, file);
  open.set(file, q);
  while (open.size > KEEP) {
    const [oldest, old] = open.entries().next().value!;
    old.close();
    open.delete(oldest);
  }
  return q;
}

port.on('message', (msg: AnalysisRequest | { close: true } | { drop: string }) => {
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
  try {
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
                ? a!.iterations(arg)
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
});
