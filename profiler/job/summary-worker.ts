// A worker thread of `summarize` (summarize.ts): builds the summaries of the
// recordings it is given, one at a time, with one loader thread, and answers
// each with them as JSON (or the file's error, to be thrown as one again).
import { parentPort } from 'node:worker_threads';
import { ColumnPool } from '../native/addon.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { malformedRowError } from '../store/row-checks.ts';
import { buildRankSummaries, headOf, storedForms, type JobCut, type SummaryHead, type SummaryScope } from './summary.ts';

export interface SummaryRequest {
  n: number;
  file: string;
  scopes: SummaryScope[];
  /** Each scope's top findings too (buildRankSummaries's `withFindings`). */
  findings: boolean;
  /** The steady state cut where the job's start-up ends (buildRankSummaries's `jobCut`). */
  jobCut?: JobCut;
}
/**
 * `json`, `ms` and `heads` in the request's scopes' order: the summaries as stored (without their steps), the time each
 * took and what placing its cut in the job reads (which the answer's reader then need not parse them for); `steps`: the
 * steps' JSON, every scope's (storedForms).
 */
export type SummaryAnswer =
  | { n: number; ok: true; json: string[]; steps: string; ms: number[]; heads: SummaryHead[] }
  | { n: number; ok: false; error: string; file?: string; problem?: string };

// One pool of columns for every recording this worker summarizes: each is loaded into the memory of the one before.
const pool = new ColumnPool();

parentPort!.on('message', ({ n, file, scopes, findings, jobCut }: SummaryRequest) => {
  let answer: SummaryAnswer;
  try {
    const summaries = buildRankSummaries(file, scopes, 1, pool, findings, jobCut);
    const forms = summaries.map(storedForms);
    answer = { n, ok: true, json: forms.map((f) => f.json), steps: forms[0]!.steps, ms: summaries.map((summary) => summary.ms), heads: summaries.map(headOf) };
  } catch (err) {
    const bad = err instanceof RecordingFileError ? err : malformedRowError(err);
    answer = { n, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err), ...(bad ? { file: bad.file, problem: bad.problem } : {}) };
  }
  parentPort!.postMessage(answer);
});
