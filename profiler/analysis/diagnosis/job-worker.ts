// A worker thread of the job analysis (job.ts): reads the parts it is
// given, one at a time, into its own pool of columns, and answers each
// with the part's small results.
import { parentPort, workerData } from 'node:worker_threads';
import { PartReader, type PartRequest, type WorkerAnswer } from './job.ts';
import { RecordingFileError } from '../../store/recording-error.ts';
import { malformedRowError } from '../../store/row-checks.ts';

const { file, threads } = workerData as { file: string; threads: number };
const reader = new PartReader(file, threads);
parentPort!.on('message', ({ n, request }: { n: number; request: PartRequest }) => {
  let answer: WorkerAnswer;
  try {
    answer = { n, ok: true, result: reader.read(request) };
  } catch (err) {
    // The file's own error (a row refused: store/row-checks.ts) crosses as what it says, to be the file's error again.
    const bad = err instanceof RecordingFileError ? err : malformedRowError(err);
    answer = { n, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err), ...(bad ? { file: bad.file, problem: bad.problem } : {}) };
  }
  parentPort!.postMessage(answer);
});
