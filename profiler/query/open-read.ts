// Many recordings opened at once — a job's ranks given to `serve`, `open`
// or the app's File ▸ Open… — each read once, on worker threads, for what
// the open needs of it: its ranks (which files are one job: merge/job-cache.ts
// planOpen) and, for the job view from summaries, its summary, small tables
// and GPU zones (job-query.ts readRank). On the one query thread, 1,024 ranks
// took 2.9 s to plan and 3.6 s more for the view (load 3), every file opened
// twice, before the first frame could be asked for.
//
// A file a worker could not read is left out: planOpen and JobQuery.open
// read it again where they are, and say why it cannot be opened exactly as
// they always have (an error crossing threads would lose its type).
import os from 'node:os';
import { runOnWorkers, workerEntry } from '../base/worker-pool.ts';
import type { Inspected } from '../merge/job-cache.ts';
import type { RankRead } from './job-query.ts';

/** Fewer files than this are read where they are opened: two workers' start (~0.3 s from the sources) would cost more. */
export const READ_ON_WORKERS_FROM = 32;

export interface OpenRequest {
  n: number;
  file: string;
  /** Read what the job view from summaries needs too. */
  view: boolean;
}
export type OpenAnswer = { n: number; inspected: Inspected | null; rank: RankRead | null };

export interface OpenRead {
  /** By absolute path, as planOpen takes them. */
  inspected: Map<string, Inspected>;
  ranks: Map<string, RankRead>;
}

/** `files` (absolute paths) read on `workers` threads; `view`: for the job view from summaries too. */
export async function readForOpen(files: readonly string[], view: boolean, workers = os.availableParallelism()): Promise<OpenRead> {
  const out: OpenRead = { inspected: new Map(), ranks: new Map() };
  await runOnWorkers<OpenRequest, OpenAnswer>(
    'an open worker',
    workerEntry('open-worker', import.meta.url),
    files.map((file, n) => ({ n, file, view })),
    workers,
    ({ n, inspected, rank }) => {
      if (inspected) out.inspected.set(files[n]!, inspected);
      if (rank) out.ranks.set(files[n]!, rank);
    },
  );
  return out;
}
