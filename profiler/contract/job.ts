// Recordings merged as one job (issue 13), as the views show them: where a
// merged recording's processes came from (the `sources` table, schema 9,
// SCHEMA.md "Merged recordings") and how well their clocks were lined up.
// RecordingSummary.job carries it; the app shows `jobHeadline` above the
// timeline ("4 recordings merged as one job, clocks aligned by NCCL
// collectives, residual 0.2 µs") and `jobWarnings` as warnings.
import type { Finding } from './findings.ts';
import { formatDuration } from './time.ts';

/** More processes with GPU work than this, and `report` analyses the recording as a job, rank by rank. */
export const JOB_RANKS = 8;

/** How many of a rank's own findings its summary keeps (`summarize --findings`: profiler/job/summary.ts): the worst, as its report orders them. */
export const RANK_TOP_FINDINGS = 5;

/**
 * One recording's own top findings in the report of a job from its ranks'
 * summaries (job/of-summaries.ts): its rank's diagnosis, in the job's ids
 * and clock, each title starting with whose it is as in a merged file.
 */
export interface RankFindings {
  file: string;
  /** The ranks of its processes (none: a process launched without one). */
  ranks: number[];
  /** The worst few, worst first; null where its summary holds none (built without --findings). */
  findings: Finding[] | null;
  /** How many its diagnosis found in all; null with `findings`. */
  total: number | null;
}

/**
 * How several files of one job open on the timeline: merged into one
 * cached file (merge/job-cache.ts), or from the ranks' summaries without
 * merging (query/job-query.ts); auto: from the summaries above
 * JOB_VIEW_MERGED_UP_TO files (`serve`/`open --job-view`).
 */
export type JobView = 'auto' | 'merged' | 'summaries';

/**
 * A job of at most this many files opens merged (auto): what the page
 * shows unfolded (renderer rows.ts FOLD_RANKS_ABOVE, the same 8), with
 * findings, stats and search over every rank's rows; above it, from the
 * ranks' summaries, every rank folded.
 */
export const JOB_VIEW_MERGED_UP_TO = 8;

/** Whether a job of `files` files opens merged or from its summaries. */
export function jobViewOf(files: number, asked: JobView = 'auto'): 'merged' | 'summaries' {
  if (asked !== 'auto') return asked;
  return files > JOB_VIEW_MERGED_UP_TO ? 'summaries' : 'merged';
}

/**
 * How a source's times were placed on the merged clock (sources.clock):
 * reference — the first input, every other is aligned to its clock;
 * collectives — its clock corrected by the NCCL collectives it shares with
 * the others; same-host — none of its own matched, corrected as its host's
 * other recordings were; wall-clock — its times as recorded (its host's
 * clock, error unknown). profiler/merge/align.ts defines them.
 */
export type ClockMethod = 'reference' | 'collectives' | 'same-host' | 'wall-clock';

/** How one merged recording was placed on the job's clock: what merge reports of it and the sources table keeps. */
export interface SourceAlignment {
  /** Its path when it was merged. */
  file: string;
  host: string | null;
  clock: ClockMethod;
  /** Added to each of its times. */
  shiftNs: number;
  /** The part of the shift that corrects its host's clock against the reference. */
  correctionNs: number;
  /** Its collectives compared with the other recordings' ranks. */
  collectives: number;
  /** Median and largest |end − the other ranks' median end| of those collectives after the shift; null when none matched. */
  residualNs: number | null;
  residualMaxNs: number | null;
}

/** One recording the job was merged from (a sources row). */
export interface JobSource extends SourceAlignment {
  id: number;
  /** null: an input of the merge that wrote the file; else the merged input it came in. */
  parentId: number | null;
}

export interface JobInfo {
  /** Every source, in sources.id order (an input, then the sources a merged input held). */
  sources: JobSource[];
  /**
   * Opened from its ranks' summaries, not merged (query/job-query.ts): the
   * same placement as a merge's, each rank's rows read from its own file
   * when shown. Absent: a merged recording.
   */
  fromSummaries?: boolean;
}

/** The recordings the merge that wrote the file was given (a merged input's own sources are inside it). */
export function jobInputs(job: JobInfo): JobSource[] {
  return job.sources.filter((s) => s.parentId === null);
}

function fileName(file: string): string {
  return file.split(/[\\/]/).pop() ?? file;
}

/**
 * One line saying what the job is and how far to trust its common clock:
 * "4 recordings merged as one job, clocks aligned by NCCL collectives,
 * residual 0.2 µs (worst collective 1.10 µs)". The residual is the largest
 * of the inputs' median residuals: how far the collectives' ends still lie
 * apart after the alignment, the number the alignment is judged by.
 */
export function jobHeadline(job: JobInfo): string {
  const inputs = jobInputs(job);
  const aligned = inputs.filter((s) => s.clock === 'collectives');
  const sameHost = inputs.filter((s) => s.clock === 'same-host');
  const asRecorded = inputs.filter((s) => s.clock === 'wall-clock');
  const others = inputs.length - 1; // every input but the reference is placed somehow
  const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  let clocks: string;
  if (inputs.length < 2) clocks = 'one clock';
  else if (aligned.length === others) clocks = 'clocks aligned by NCCL collectives';
  else if (asRecorded.length === others) clocks = 'times as recorded (no NCCL collective matched across recordings)';
  else {
    const parts = [
      aligned.length ? `${aligned.length} aligned by NCCL collectives` : '',
      sameHost.length ? `${sameHost.length} as their host's other recordings` : '',
      asRecorded.length ? `${asRecorded.length} as recorded` : '',
    ].filter(Boolean);
    clocks = `clocks: ${parts.join(', ')}`;
  }
  const residuals = inputs.filter((s) => s.residualNs !== null);
  const residual = residuals.length
    ? `, residual ${formatDuration(residuals.reduce((m, s) => Math.max(m, s.residualNs!), -Infinity))} (worst collective ${formatDuration(residuals.reduce((m, s) => Math.max(m, s.residualMaxNs ?? s.residualNs!), -Infinity))})`
    : '';
  const how = job.fromSummaries ? "as one job from their summaries (not merged: a rank's rows are read from its file when shown)" : 'merged as one job';
  return `${plural(inputs.length, 'recording')} ${how}, ${clocks}${residual}`;
}

/** What the user must know before trusting times across recordings: each input placed by its recorded times, by name. */
export function jobWarnings(job: JobInfo): string[] {
  if (jobInputs(job).length < 2) return [];
  return jobInputs(job)
    .filter((s) => s.clock === 'wall-clock')
    .map(
      (s) =>
        `${fileName(s.file)}${s.host ? ` (host ${s.host})` : ''}: no NCCL collective matched another recording's, so its clock could not be aligned: ` +
        "placed by its recorded times (its host's clock; the error is unknown)",
    );
}

/** How one source was placed, for the list of sources: "collectives, corrected +1.20 ms, residual 0.2 µs over 40". */
export function describeSource(s: JobSource): string {
  const how =
    s.clock === 'reference'
      ? 'reference clock'
      : s.clock === 'collectives'
        ? `aligned by NCCL collectives, corrected ${s.correctionNs < 0 ? '−' : '+'}${formatDuration(Math.abs(s.correctionNs))}`
        : s.clock === 'same-host'
          ? `corrected ${s.correctionNs < 0 ? '−' : '+'}${formatDuration(Math.abs(s.correctionNs))} as its host's other recordings`
          : 'as recorded (not aligned)';
  const residual =
    s.residualNs !== null
      ? `, residual ${formatDuration(s.residualNs)} (max ${formatDuration(s.residualMaxNs ?? s.residualNs)}) over ${s.collectives.toLocaleString('en-US')} collectives`
      : '';
  return `${how}${residual}`;
}
