// The commands that analyse recordings: `report`, `check` and `diff`.
import { iterationsOf, pickIterationRange } from '../analysis/diagnosis/iterations.ts';
import { analyzeJob, gpuProcessCount, loadProcessColumns, ZonesDisagree, type JobAnalysis } from '../analysis/diagnosis/job.ts';
import { analyze, type Analysis } from '../analysis/diagnosis/analyze.ts';
import { ScopeError } from '../analysis/scope.ts';
import { readTraceTables } from '../analysis/trace.ts';
import { diffRecordings } from '../compare/diff.ts';
import { formatDiff } from '../compare/format.ts';
import { diffGateFailures } from '../compare/gate.ts';
import { type Iterations } from '../contract/iterations.ts';
import { JOB_RANKS } from '../contract/job.ts';
import type { RankedProcess } from '../contract/ranks.ts';
import { type Scope } from '../contract/scope.ts';
import { buildJobReport, buildReport, formatIterations, formatJobReport, formatReport, type ReportedProcesses } from '../report/report.ts';
import type { Db } from '../store/database.ts';
import { readProcesses } from '../store/ranks.ts';
import { recordingReadError } from '../store/read-error.ts';
import { checkLine, parseCheckArgs, runCheck } from './check.ts';
import { COMMANDS } from './commands.ts';
import { fail, listed, openForReading } from './common.ts';
import { scopeFromArgs } from './scope-args.ts';
import { parseCommand, UsageError } from './usage.ts';

export async function cmdReport(args: string[]): Promise<number> {
  const { values, operands } = parseCommand(COMMANDS.report, args);
  let file = operands[0]!;
  const scope = scopeFromArgs(values);
  // One job's ranks, one recording each: from their summaries (profiler/job/); one rank with --rank, from its own file.
  if (operands.length > 1) {
    const job = await (await import('./job-commands.ts')).reportJobOfFiles(operands, scope, values);
    if (typeof job === 'number') return job;
    file = job.rankFile;
    if (!values.json) process.stdout.write(`rank ${values.rank} of the job of ${operands.length} recordings: ${file}\n`);
  }
  if (values.rank !== undefined && values.pid !== undefined) throw new UsageError('give --rank or --pid, not both');
  const db = openForReading(file);
  try {
    const processes = readProcesses(db);
    const only = values.rank !== undefined || values.pid !== undefined ? processesToReport(file, processes, values.rank, values.pid) : null;
    // A job of many ranks is read rank by rank (analysis/diagnosis/job.ts): its sections across ranks; one rank with --rank.
    const asJob = !only && (values.job ?? gpuProcessCount(db) > JOB_RANKS);
    if (asJob) {
      if (values.iterations) throw new UsageError(`--iterations reads every rank of ${file} at once: add --rank N (one rank's iterations) or --no-job`);
      const job = await analyzeJobOrNull(db, file, scope);
      if (job) {
        const report = buildJobReport(file, job.analysis, readTraceTables(db), processes, job.seconds);
        process.stdout.write(values.json ? JSON.stringify(report, null, 2) + '\n' : formatJobReport(report));
        return 0;
      }
    }
    const analysis = analyzeOrFail(db, file, scope, only?.pids);
    const report = buildReport(file, analysis, processes, only);
    let iterations: Iterations | null = null;
    if (values.iterations) {
      const named = scope.kind === 'range' ? scope.name : null;
      const name = named ?? pickIterationRange(db);
      iterations = name ? iterationsOf(db, analysis.columns, name, named ? 'named' : 'picked') : null;
    }
    if (values.json) {
      process.stdout.write(JSON.stringify(values.iterations ? { ...report, iterations } : report, null, 2) + '\n');
    } else {
      process.stdout.write(formatReport(report));
      if (values.iterations) process.stdout.write('\n' + formatIterations(iterations) + '\n');
    }
  } catch (err) {
    // A recording that opens but does not read (a corrupt page, a table or
    // column missing, a value of the wrong type) is said about the file, as
    // one that does not open is (fuzzing found these as stack traces).
    if (err instanceof UsageError) throw err;
    const bad = recordingReadError(file, err);
    if (bad) fail(bad.message, 2);
    throw err;
  } finally {
    db.close();
  }
  return 0;
}

/** The analysis of `scope`, or exit 2 when the recording has no such scope (an unknown NVTX range). */
/** `pids`: analyse only these processes' rows (`report --rank N`). */
function analyzeOrFail(db: Db, file: string, scope: Scope, pids?: number[]): Analysis {
  try {
    // The report runs the rules first (report.ts buildReport: beginDiagnosis), their fixes' what-ifs replayed on a
    // second thread while it makes its summaries (analyze.ts).
    return analyze(db, pids ? { scope, file, pids, columns: loadProcessColumns(db, pids) } : { scope, file, whatIfThread: true });
  } catch (err) {
    if (err instanceof ScopeError) fail(err.message, 2);
    throw err;
  }
}

/** The process(es) `--rank N` or `--pid P` name; a UsageError naming what the recording has. */
function processesToReport(file: string, processes: RankedProcess[], rank: string | undefined, pid: string | undefined): ReportedProcesses {
  const n = Number(rank ?? pid);
  if (!Number.isInteger(n)) throw new UsageError(`${rank !== undefined ? '--rank' : '--pid'} takes a number, not '${rank ?? pid}'`);
  if (pid !== undefined) {
    const p = processes.find((x) => x.pid === n);
    if (!p) throw new UsageError(`${file} has no process ${n} (its pids: ${listed(processes.map((x) => x.pid))})`);
    return { pids: [n], label: p.rank !== null ? `rank ${p.rank} (pid ${n})` : `pid ${n}` };
  }
  const ranked = processes.filter((x) => x.rank === n);
  if (ranked.length === 0) {
    const ranks = processes.filter((x) => x.rank !== null).map((x) => x.rank!);
    throw new UsageError(
      `${file} has no rank ${n} (${ranks.length ? `its ranks: ${listed([...new Set(ranks)].sort((a, b) => a - b))}` : 'no process has a rank: name one with --pid'})`,
    );
  }
  return { pids: ranked.map((x) => x.pid), label: `rank ${n} (pid ${ranked.map((x) => x.pid).join(', ')})` };
}

/** The job's analysis rank by rank and its wall time; null where its zones disagree with its rows (then analysed whole, as before, after saying why). */
async function analyzeJobOrNull(db: Db, file: string, scope: Scope): Promise<{ analysis: JobAnalysis; seconds: number } | null> {
  const t = performance.now();
  try {
    const analysis = await analyzeJob(db, { scope, file });
    return { analysis, seconds: (performance.now() - t) / 1000 };
  } catch (err) {
    if (err instanceof ScopeError) fail(err.message, 2);
    if (err instanceof ZonesDisagree) {
      process.stderr.write(`streamscope: note: ${file} is analysed whole, not rank by rank: ${err.message}\n`);
      return null;
    }
    throw err;
  }
}

export function cmdCheck(args: string[]): number {
  const parsed = parseCheckArgs(args);
  let result;
  try {
    result = runCheck(parsed.file, parsed.minOverlap, parsed.failOn, parsed.scope);
  } catch (err) {
    // A gate that cannot read its input must not look like a failed check
    // (one that opens but does not read too: store/read-error.ts).
    const bad = err instanceof ScopeError ? err : recordingReadError(parsed.file, err);
    if (bad) fail(bad.message, 2);
    throw err;
  }
  if (parsed.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
  // With --json, stdout is the JSON alone; the one line goes to stderr.
  (result.pass && !parsed.json ? process.stdout : process.stderr).write(checkLine(result) + '\n');
  return result.pass ? 0 : 1;
}

export function cmdDiff(args: string[]): number {
  const { values, operands } = parseCommand(COMMANDS.diff, args);
  const scope = scopeFromArgs(values);
  // Both gates take a number, '%' optional: a percentage of the GPU span, percentage points of overlap.
  const limit = (option: 'fail-if-slower' | 'fail-if-overlap-drops', example: string): number | null => {
    const v = values[option];
    if (v === undefined) return null;
    const m = /^(\d+(?:\.\d+)?)%?$/.exec(v);
    if (!m) throw new UsageError(`--${option}: expected ${example}, got '${v}'`);
    return Number(m[1]);
  };
  const slower = limit('fail-if-slower', 'a percentage such as 5%');
  const overlapDropPoints = limit('fail-if-overlap-drops', 'percentage points such as 10');
  // Both sides on the same scope: the steady state of each, or the same range or times.
  const load = (file: string) => {
    const db = openForReading(file);
    try {
      return analyzeOrFail(db, file, scope);
    } catch (err) {
      // A recording that opens but does not read is said about the file, as report says it.
      const bad = recordingReadError(file, err);
      if (bad) fail(bad.message, 2);
      throw err;
    } finally {
      db.close();
    }
  };
  const [fa, fb] = operands as [string, string];
  const summary = diffRecordings(fa, load(fa), fb, load(fb));
  process.stdout.write(values.json ? JSON.stringify(summary, null, 2) + '\n' : formatDiff(summary));
  const reasons = diffGateFailures(summary, { slower: slower === null ? null : slower / 100, overlapDropPoints });
  if (reasons.length === 0) return 0;
  process.stderr.write(`FAIL ${reasons.join('; ')}\n`);
  return 1;
}
