// Whole multi-rank jobs for the diff and compare tests: one recording per
// rank CONSTRUCTED through RecordingWriter (rank-recordings.ts: compute
// kernels on stream 7, then an NCCL all-reduce on stream 13 per step; not
// recorded on GPUs), merged into one job by the real `streamscope merge`
// (profiler/merge), as a user merges the files of a job. Two jobs of the
// same program differ in what a change would change: the all-reduce
// overlapped with compute or not, the pids, the order the files were
// merged in, a rank missing.
import path from 'node:path';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { writeRankRecording } from './rank-recordings.ts';

/** True time of every job's start, ns since the epoch. */
const JOB = 1_795_000_000_000_000_000n;
export const JOB_STEPS = 40;

export interface JobSpec {
  /** Ranks 0 … ranks − 1, two per host. */
  ranks: number;
  /** Record each process's rank (torchrun's variables); false: no rank recorded, as an importer that knows none. */
  ranked: boolean;
  /** Rank r's pid. */
  pid: (rank: number) => number;
  /** The order the per-rank files are given to merge (default rank order): ids, pids and devices of the job follow it. */
  mergeOrder?: number[];
  /** Passed to every rank (rank-recordings.ts): how much of each all-reduce may run behind compute. */
  overlapNs?: number;
}

/** Writes the per-rank recordings into `dir` and merges them into `dir/<name>.sqlite`; returns that path. */
export function mergedJob(dir: string, name: string, spec: JobSpec): string {
  const files = Array.from({ length: spec.ranks }, (_, rank) => {
    const file = path.join(dir, `${name}-rank${rank}.sqlite`);
    writeRankRecording(
      {
        file,
        host: `node-${Math.floor(rank / 2)}`,
        rank,
        pid: spec.pid(rank),
        clockOffsetNs: 0,
        originNs: JOB + BigInt(rank * 250_000),
        steps: JOB_STEPS,
        jitterNs: 1_000,
        seed: 500 + rank,
        worldSize: spec.ranked ? spec.ranks : undefined,
        overlapNs: spec.overlapNs,
      },
      JOB,
    );
    return file;
  });
  const out = path.join(dir, `${name}.sqlite`);
  mergeRecordings(
    (spec.mergeOrder ?? files.map((_, r) => r)).map((r) => files[r]!),
    out,
    { overwrite: true },
  );
  return out;
}
