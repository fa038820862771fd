// What the query service and its analysis worker (a thread, or a child
// process for a recording still being written) say to each other: the
// requests, the answers, and the progress the worker reports meanwhile.
// Both ends import these; neither imports the other for them.
import type { ApiErrorShape } from '../contract/api.ts';
import type { ProgressStep } from '../contract/progress.ts';

export type AnalysisMethod = 'findings' | 'stats' | 'scopeInfo' | 'ranges' | 'iterations' | 'concurrency' | 'dependencies' | 'waitSpans' | 'compare' | 'sql';

export interface AnalysisTarget {
  id: string;
  file: string;
  /** Still being written (RecordingQuery.beingWritten): analysed in the process, not the thread. */
  live?: boolean;
  /** A job opened from its ranks' summaries (job-query.ts): its files, in merge order; `file` is the first. Findings and scopeInfo only (job-analysis.ts). */
  job?: string[];
}

export interface AnalysisRequest {
  n: number;
  method: AnalysisMethod;
  targets: AnalysisTarget[];
  args: unknown[];
}

export type AnalysisResponse = { n: number; ok: true; value: unknown } | { n: number; ok: false; error: ApiErrorShape };

/** From the worker while it answers request n: it began (progress null), or began a phase of its analysis. */
export interface AnalysisProgressMessage {
  n: number;
  progress: ProgressStep | null;
  /**
   * With a loading step, from a worker thread: the native loader's count of
   * rows read, shared memory that grows while the worker is blocked in the
   * load (analysis/diagnosis/analyze.ts LoadingStep). A child process cannot share it.
   */
  rowsRead?: Int32Array;
}
