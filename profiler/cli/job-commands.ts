// A job's ranks as their own recordings, one file each (profiler/job/):
// `streamscope summarize FILE…` stores each one's summary in it, and
// `streamscope report A.sqlite B.sqlite …` reports the job from the
// summaries — stored ones where current, else built for this report only.
import type { Scope } from '../contract/scope.ts';
import { jobIterations } from '../job/iterations.ts';
import { analyzeJobOfSummaries } from '../job/of-summaries.ts';
import { summarizeFiles, type FileSummaries } from '../job/summarize.ts';
import type { SummaryScope } from '../job/summary.ts';
import { buildJobReport, formatJobIterations, formatJobReport } from '../report/report.ts';
import { openRecording } from '../store/database.ts';
import { readProcesses } from '../store/ranks.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { COMMANDS } from './commands.ts';
import { fail, listed, openForReading, workersOf } from './common.ts';
import { parseCommand, UsageError } from './usage.ts';

/** The summaries, or exit 2 naming the recording that cannot be summarized. */
async function summariesOrFail(files: string[], opts: Parameters<typeof summarizeFiles>[1]): Promise<FileSummaries[]> {
  try {
    return await summarizeFiles(files, opts);
  } catch (err) {
    if (err instanceof RecordingFileError) fail(err.message, 2);
    throw err;
  }
}

export async function cmdSummarize(args: string[]): Promise<number> {
  const { values, operands } = parseCommand(COMMANDS.summarize, args);
  const t0 = performance.now();
  const progress = process.stderr.isTTY && !values.json;
  const results = await summariesOrFail(operands, {
    store: true,
    force: values.force ?? false,
    findings: values.findings ?? false,
    workers: workersOf(values.workers),
    onFile: progress ? (done, of) => process.stderr.write(`\rstreamscope: summarized ${done} of ${of}`) : undefined,
  });
  if (progress) process.stderr.write('\n');
  for (const r of results) {
    const { ms } = r;
    if (values.json) {
      process.stdout.write(
        JSON.stringify({
          file: r.file,
          from: r.from,
          stored: r.stored,
          findings: r.findings,
          ...(r.notStoredBecause ? { notStoredBecause: r.notStoredBecause } : {}),
          seconds: ms / 1000,
        }) + '\n',
      );
      continue;
    }
    const line =
      r.from === 'stored'
        ? `its summary is current${r.findings ? ', with its top findings' : ''} (kept; --force builds it again)`
        : r.stored
          ? `summarized${r.findings ? ' with its top findings' : ''} in ${(ms / 1000).toFixed(2)} s, stored in it`
          : `summarized in ${(ms / 1000).toFixed(2)} s, NOT stored (${r.notStoredBecause}): a job report summarizes it again each time`;
    process.stderr.write(`streamscope: ${r.file}: ${line}\n`);
  }
  if (!values.json) {
    const built = results.filter((r) => r.from === 'built').length;
    // Summarized together, the ranks' steady states are cut where the job's start-up ended (summarize.ts), as a merged file's.
    const cut = results.length > 1 && results.every((r) => r.heads['steady-state']?.jobCut) ? ', every steady state cut where the job started' : '';
    process.stderr.write(
      `streamscope: ${results.length} recording${results.length > 1 ? 's' : ''} (${built} summarized now${cut}) in ${((performance.now() - t0) / 1000).toFixed(1)} s; the job: streamscope report ${results.length > 3 ? 'with the same files' : results.map((r) => r.file).join(' ')}\n`,
    );
  }
  return 0;
}

/**
 * `report A.sqlite B.sqlite …`: the job of these recordings, one per rank,
 * from their summaries. Only the whole recording and the steady state are
 * summarized; one rank's whole report is its own file's. `--iterations`:
 * every rank's steps, from the summaries too (job/iterations.ts).
 */
export async function reportJobOfFiles(
  files: string[],
  scope: Scope,
  values: { json?: boolean; rank?: string; pid?: string; iterations?: boolean; job?: boolean },
): Promise<{ rankFile: string } | number> {
  if (values.pid !== undefined) throw new UsageError('--pid names a process of one recording (ranks of a job may share pids): report its file, or give --rank');
  // One rank's detail is its own file's report: the file that holds it.
  if (values.rank !== undefined) return { rankFile: fileOfRank(files, values.rank) };
  if (values.job === false) throw new UsageError('--no-job analyses one recording whole: merge them first (streamscope merge), or report one');
  if (scope.kind !== 'whole' && scope.kind !== 'steady-state')
    throw new UsageError(
      `a job of several recordings is reported from their summaries, which hold the whole recording and the steady state: for ${scope.kind === 'range' ? 'an NVTX range' : 'a window'}, merge them (streamscope merge) and report the merged file`,
    );
  const t0 = performance.now();
  const summaryScope: SummaryScope = scope.kind;
  const results = await summariesOrFail(files, { scopes: [summaryScope] });
  const built = results.filter((r) => r.from === 'built' && !r.recut);
  const list = (rs: typeof results) => (rs.length > 3 ? '…' : rs.map((r) => r.file).join(' '));
  if (built.length > 0)
    process.stderr.write(
      `streamscope: note: ${built.length} of ${results.length} recordings had no current summary and were summarized for this report only: streamscope summarize ${list(built)} keeps them\n`,
    );
  // The recorders' summaries: each rank's steady state cut where its own start-up ended (summarize.ts).
  const recut = results.filter((r) => r.recut);
  if (recut.length > 0)
    process.stderr.write(
      `streamscope: note: ${recut.length} of ${results.length} recordings' steady states were cut again where the job's start-up ended (their summaries cut each rank's own), for this report only: streamscope summarize ${list(results)} keeps them so\n`,
    );
  let job;
  try {
    job = analyzeJobOfSummaries(results.map((r) => r.summaries[summaryScope]!));
  } catch (err) {
    if (err instanceof RecordingFileError) fail(err.message, 2);
    throw err;
  }
  const label = `${files.length} recordings (${files.length > 3 ? `${files.slice(0, 2).join(', ')} … ${files.at(-1)}` : files.join(', ')})`;
  const report = buildJobReport(label, job.analysis, job.tables, job.processes, (performance.now() - t0) / 1000, {
    clocks: job.sources,
    rankFindings: job.rankFindings,
  });
  if (!values.iterations) {
    process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : formatJobReport(report));
    return 0;
  }
  let iterations;
  try {
    // The steps are read from each recording now (stored apart from its summary: store/rank-summary.ts STEPS_ROW).
    iterations = jobIterations(
      results.map((r) => r.summaries[summaryScope]!),
      job.placement,
    );
  } catch (err) {
    if (err instanceof RecordingFileError) fail(err.message, 2);
    throw err;
  }
  process.stdout.write(
    values.json ? JSON.stringify({ ...report, iterations }, null, 2) + '\n' : formatJobReport(report) + '\n' + formatJobIterations(iterations) + '\n',
  );
  return 0;
}

/** The one recording among `files` whose processes include rank `rank` (`report FILE… --rank N`); a UsageError naming the ranks there are, or the files that both hold it. */
export function fileOfRank(files: string[], rank: string): string {
  const n = Number(rank);
  if (!Number.isInteger(n)) throw new UsageError(`--rank takes a number, not '${rank}'`);
  const holding: string[] = [];
  const ranks = new Set<number>();
  for (const file of files) {
    const db = openForReading(file);
    try {
      for (const p of readProcesses(db)) {
        if (p.rank === null) continue;
        ranks.add(p.rank);
        if (p.rank === n && holding.at(-1) !== file) holding.push(file);
      }
    } finally {
      db.close();
    }
  }
  if (holding.length === 1) return holding[0]!;
  if (holding.length > 1)
    throw new UsageError(
      `rank ${n} is in ${holding.length} of these recordings (${holding.join(', ')}): are they ranks of one job? report one file with --rank`,
    );
  const sorted = [...ranks].sort((a, b) => a - b);
  throw new UsageError(
    `no recording of these ${files.length} holds rank ${n} (${sorted.length ? `their ranks: ${listed(sorted)}` : 'no process in them has a rank'})`,
  );
}

/**
 * After `record`, where the recording holds a job's rank (a process a
 * launcher gave a rank): its summary with its top findings, built here
 * where the rank ran and stored in it, so that the job's report reads it
 * (issue 29). The line to
 * say, or null for a recording of no rank. Never fails the recording: a
 * summary that cannot be built or stored is said, with how to build it later.
 */
export async function summarizeRecordedRank(file: string): Promise<string | null> {
  try {
    const db = openRecording(file, { readonly: true });
    let ranks: number[];
    try {
      ranks = readProcesses(db).flatMap((p) => (p.rank === null ? [] : [p.rank]));
    } finally {
      db.close();
    }
    if (ranks.length === 0) return null;
    const t = performance.now();
    // With its top findings: the rank ran for minutes, its diagnosis (~1.3 s at 1 M operations) is cheap beside it.
    const [r] = await summarizeFiles([file], { store: true, force: true, findings: true, workers: 0 });
    const which = ranks.length === 1 ? `rank ${ranks[0]}` : `ranks ${ranks.join(', ')}`;
    return r!.stored
      ? `summarized ${which} with its top findings for the job's report in ${((performance.now() - t) / 1000).toFixed(2)} s (streamscope report with every rank's recording)`
      : `${which} summarized but not stored (${r!.notStoredBecause}): the job's report summarizes it again`;
  } catch (err) {
    return `no summary for the job's report (${(err as Error).message.split('\n')[0]}): streamscope summarize ${file} builds it`;
  }
}
