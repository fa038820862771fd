#!/usr/bin/env node
// The `streamscope` command line. Each subcommand is a thin layer over the
// profiler library: parse arguments, call, print, choose the exit code.
import fs from 'node:fs';
import { constants as osConstants } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { iterationsOf, pickIterationRange } from '../analysis/iterations.ts';
import { type Iterations } from '../contract/iterations.ts';
import { analyze, type Analysis } from '../analysis/load.ts';
import { ScopeError } from '../analysis/scope.ts';
import { type Scope } from '../contract/scope.ts';
import { exportChromeTrace } from '../export/chrome-trace.ts';
import { importTrace } from '../import/index.ts';
import { diffRecordings } from '../compare/diff.ts';
import { formatDiff } from '../compare/format.ts';
import { diffGateFailures } from '../compare/gate.ts';
import { startServer } from '../serve/server.ts';
import { exposureWarning } from '../serve/listen-address.ts';
import { MIN_TOKEN_LENGTH, readTokenFile, TokenFileError } from '../serve/token-file.ts';
import type { OpenMode } from '../merge/job-cache.ts';
import { repoRoot } from '../native/paths.ts';
import { TraceFormatError } from '../import/json-events.ts';
import { checkLine, CheckUsageError, parseCheckArgs, runCheck } from './check.ts';
import { cmdMerge } from './merge.ts';
import { cmdSql } from './sql.ts';
import { defaultSqlHistoryFile } from './sql-repl.ts';
import { devices } from '../native/addon.ts';
import { RecordError } from '../record/record-error.ts';
import { record } from '../record/recorder.ts';
import { VERSION } from '../contract/version.ts';
import { formatCaptureResult } from '../record/capture-range.ts';
import { ingested, progressLine, type EventFields } from '../record/progress.ts';
import { CaptureRangeError, parseCaptureRange, type CaptureRange } from '../contract/record-request.ts';
import { ingestStreamFiles } from '../record/ingest-files.ts';
import { expandOutputName } from '../record/output-name.ts';
import { workloadArgv } from '../record/workload.ts';
import { SCENARIOS, WORKLOADS } from '../contract/record-request.ts';
import { openRecording, type Db } from '../store/database.ts';
import { readProcesses } from '../store/ranks.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { recordingReadError } from '../store/read-error.ts';
import { buildJobReport, buildReport, formatIterations, formatJobReport, formatReport, type ReportedProcesses } from '../report/report.ts';
import { analyzeJob, gpuProcessCount, JOB_RANKS, loadProcessColumns, ZonesDisagree, type JobAnalysis } from '../analysis/job.ts';
import { readTraceTables } from '../analysis/trace.ts';
import type { RankedProcess } from '../contract/ranks.ts';
import { SCOPE_OPTIONS, SCOPE_USAGE, scopeFromArgs, type ScopeValues } from './scope-args.ts';
import { dumpStream } from '../record/dump.ts';
import { openLiveView, type LiveView } from './live-view.ts';
import { StreamFormatError } from '../record/decoder.ts';

const HELP = `streamscope ${VERSION}: are my CUDA streams really running concurrently?

usage:
  streamscope record [-o FILE] [--force] [--live] [--capture-range nvtx:NAME|cuda-profiler-api] [--progress text|json] -- COMMAND [ARGS...]
  streamscope record [-o FILE] [--force] [--live] [--capture-range ...] [--progress text|json] --workload NAME --scenario NAME
                     [--size N] [--iterations N] [--streams N] [--chunks N] [--variant V]
  streamscope report FILE [--json] [--iterations] [--job | --no-job | --rank N | --pid P] [--whole | --range NAME[#k] | --from T --to T]
  streamscope open FILE... [--job | --separate]   (the timeline in the desktop app; browser mode where it cannot start)
  streamscope serve FILE... [--job | --separate] [--port N] [--host H] [--token-file F] [--allow-host NAME]...   (the timeline in a browser, read-only, token URL)
  streamscope diff A.sqlite B.sqlite [--json] [--fail-if-slower 5%] [--fail-if-overlap-drops 10] [--whole | --range NAME[#k] | --from T --to T]
  streamscope import TRACE -o OUT.sqlite     (PyTorch profiler / Kineto or any Chrome trace JSON)
  streamscope merge A.sqlite B.sqlite ... -o JOB.sqlite [--force] [--align collectives|wall-clock] [--json]
  streamscope export FILE -o OUT.json        (Chrome trace JSON: Perfetto UI, chrome://tracing)
  streamscope sql FILE ["SELECT …" | -] [--json | --csv] [--timeout 5s] [--max-rows N]   (no query: a prompt)
  streamscope check FILE [--min-overlap X] [--fail-on info|warning|error] [--json] [scope flags]
  streamscope devices [--json]
  streamscope ingest -o FILE [--force] STREAM_FILE_OR_DIR...
  streamscope dump-stream STREAM_FILE [--json]

workloads: ${WORKLOADS.join(', ')}
scenarios: ${SCENARIOS.join(', ')}

record runs the target with StreamScope's CUPTI collector injected, stores
kernels, copies, memsets, synchronizations, CUDA events, API calls and NVTX
ranges per device and stream in one SQLite file, and exits with the target's
exit code. --live opens the timeline on the recording as it grows (the
desktop app, else browser mode: its URL is printed, and it keeps serving the
finished recording until Ctrl-C). --capture-range keeps only the activity inside the instances of an
NVTX range (nvtx:NAME), or per process from cudaProfilerStart to
cudaProfilerStop (cuda-profiler-api), as nsys --capture-range does.
-o may hold %h (the host name), %p (the recorder's pid), %r and %l (its rank
and local rank, from the launcher that started it: torchrun, mpirun, srun)
and %% (a %), so that a job's own launcher can start one recorder per node or
rank: \`srun streamscope record -o run-%h-%r.sqlite -- python3 train.py\`.
Every recorded process's rank is stored either way (report shows it).
--progress json replaces record's own lines on stderr with one JSON object per
line, for programs: {"streamscope":"record-progress","version":1,"phase":...,
"elapsedMs","output","records","bytes","processes",...}; phase preflight, then
running (pid; every 250 ms), finishing (targetExitCode, targetSignal), and
last done (complete, incompleteReason, exitCode, collectorErrors, notes,
capture) or failed (error, exitCode). The target's own output is unchanged.

report, check and diff analyse the steady state: start-up (CUDA
initialisation, module loading and JIT, up to where the program's real work
begins) is detected, summarised on one line and left out. --whole includes
it; --range NAME (or NAME#k, the k-th instance from 1) analyses the GPU work
launched inside an NVTX range; --from/--to a time range (1.5s, 350ms, 20us;
a bare number is seconds). report --iterations adds one row per instance of
the repeating NVTX range (the one given with --range, or the one covering
most time).

A recording of more than ${JOB_RANKS} ranks (processes with GPU work: a merged job)
is reported rank by rank, never holding more than a few in memory: each
rank's communication breakdown, the stragglers and the findings across
ranks, as the whole recording's analysis gives them. --rank N (or --pid P)
reports one rank whole, from its own rows; --job reads any recording so,
--no-job analyses it whole.

serve listens on 127.0.0.1 (this machine only) and prints a URL holding a
fresh access token, which every API request must carry; answers only
requests that name it (127.0.0.1, localhost; DNS rebinding is refused).
--host 0.0.0.0 (or an address) serves other machines too, over plain HTTP,
and says so on stderr; --token-file F takes the token from F (the owner's
alone: chmod 600; at least ${MIN_TOKEN_LENGTH} characters) and prints none. Beyond loopback
the server answers to its addresses and this machine's name; --allow-host
NAME adds a name it is reached by (a DNS name of the machine).

merge puts the recordings of one job (one per rank or node) into one, each
host's clock corrected by the NCCL collectives its ranks share with the
others (the same collective ends at nearly the same time on every rank), and
prints per input the correction and the residual after it; --align
wall-clock keeps the recorded times.

sql runs one read-only query on a recording and prints its rows (a table;
--json, --csv); without a query it opens a prompt (.help, .tables, .schema,
.examples, .quit; history kept in StreamScope's cache directory). Views make
the schema pleasant: kernel_view, copy_view, memset_view, sync_view,
api_view, nvtx_view, operation_view (names demangled, streams by CUPTI id,
GPUs by ordinal, times in µs). Anything that writes, ATTACH, PRAGMAs that
set, more than one statement are refused; a query stops after --timeout
(5 s) and keeps --max-rows rows (10000).

diff compares B with A: spans, overlap, findings, kernels, copies; for jobs
of several ranks (a merged job, or one recorder's torchrun workers) also
each rank against the same rank of the other (by rank, not pid), its streams
paired within it, and the collectives. --fail-if-slower 5% exits 1 when B's
GPU span is more than 5% longer; --fail-if-overlap-drops 10 when a rank's
communication overlap fell by more than 10 percentage points.`;

function fail(message: string, code = 1): never {
  process.stderr.write(`streamscope: ${message}\n`);
  process.exit(code);
}

/**
 * A recording opened read-only for a command that reads it; a file that is
 * not one (missing, truncated, newer schema, ...) ends the command with its
 * message and exit code 2, the code for "could not run", not "failed".
 */
function openForReading(file: string): Db {
  try {
    return openRecording(file, { readonly: true });
  } catch (err) {
    if (err instanceof RecordingFileError) fail(err.message, 2);
    throw err;
  }
}

function stamp(): string {
  return new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
}

async function cmdRecord(args: string[]): Promise<number> {
  const t0 = Date.now();
  const dd = args.indexOf('--');
  const own = dd >= 0 ? args.slice(0, dd) : args;
  const target = dd >= 0 ? args.slice(dd + 1) : [];
  const { values } = parseArgs({
    args: own,
    options: {
      output: { type: 'string', short: 'o' },
      force: { type: 'boolean', short: 'f' },
      workload: { type: 'string' },
      scenario: { type: 'string' },
      size: { type: 'string' },
      iterations: { type: 'string' },
      streams: { type: 'string' },
      chunks: { type: 'string' },
      variant: { type: 'string' },
      quiet: { type: 'boolean', short: 'q' },
      'capture-range': { type: 'string' },
      progress: { type: 'string' },
      live: { type: 'boolean' },
    },
  });
  const mode = values.progress ?? 'text';
  if (mode !== 'text' && mode !== 'json') fail(`--progress: expected text or json, got '${mode}'`, 2);
  const defaultName = values.workload !== undefined ? `${values.workload}-${values.scenario ?? ''}` : path.basename(target[0] ?? 'recording');
  // -o may name the host, pid, rank and local rank (%h %p %r %l): one recorder per node or rank, started by the job's own launcher.
  const named = (): string => (values.output !== undefined ? expandOutputName(values.output) : `streamscope-${defaultName}-${stamp()}.sqlite`);
  if (mode === 'text') return recordTo(values, target, named(), null);
  // JSON: every way this ends is a line, the failures included.
  let output = values.output ?? '';
  const emit = (fields: EventFields) => {
    process.stderr.write(progressLine(fields, { elapsedMs: Date.now() - t0, output }));
  };
  try {
    output = named();
    return await recordTo(values, target, output, emit);
  } catch (err) {
    const failed = failure(err);
    emit({ phase: 'failed', error: failed.message, exitCode: failed.code });
    return failed.code;
  }
}

type RecordValues = {
  output?: string;
  force?: boolean;
  workload?: string;
  scenario?: string;
  size?: string;
  iterations?: string;
  streams?: string;
  chunks?: string;
  variant?: string;
  quiet?: boolean;
  'capture-range'?: string;
  live?: boolean;
};

/**
 * `record` once its options are read; a usage problem is a RecordError with
 * exit code 2. `emit` writes the JSON progress lines; null: the text mode.
 */
async function recordTo(values: RecordValues, target: string[], output: string, emit: ((fields: EventFields) => void) | null): Promise<number> {
  const usage = (message: string): never => {
    throw new RecordError(message, 2);
  };
  // A malformed range is refused before anything runs.
  let captureRange: CaptureRange | undefined;
  if (values['capture-range'] !== undefined) {
    try {
      captureRange = parseCaptureRange(values['capture-range']);
    } catch (err) {
      if (err instanceof CaptureRangeError) usage(err.message);
      throw err;
    }
  }
  let argv: string[] = target;
  let meta: Record<string, string> = {};
  if (values.workload !== undefined) {
    if (target.length) usage('give either --workload or a command after --, not both');
    if (!values.scenario) usage('--workload needs --scenario');
    try {
      argv = workloadArgv({ ...values, workload: values.workload, scenario: values.scenario! });
    } catch (err) {
      usage((err as Error).message);
    }
    meta = { workload: values.workload, scenario: values.scenario! };
  } else if (!target.length) {
    usage('nothing to record: give --workload NAME --scenario NAME, or -- COMMAND [ARGS...]');
  }
  let pid: number | null = null;
  emit?.({ phase: 'preflight' });
  const tty = !emit && process.stderr.isTTY && !values.quiet;
  let viewer: Promise<LiveView> | null = null;
  const say = (line: string) => process.stderr.write(`${tty ? '\r\x1b[K' : ''}${line}\n`);
  const result = await record({
    onCreated: values.live ? (file) => (viewer = openLiveView(file, say)) : undefined,
    output,
    overwrite: values.force,
    argv,
    meta,
    captureRange,
    onStart: emit
      ? (p) => {
          pid = p;
          emit({ phase: 'running', pid });
        }
      : undefined,
    onProgress: emit
      ? (p) => emit({ phase: 'running', pid, ...ingested(p) })
      : tty
        ? (p, ms) =>
            process.stderr.write(
              `\r\x1b[Kstreamscope: recording… ${p.records.toLocaleString('en-US')} records from ${p.files.size} process(es), ${(ms / 1000).toFixed(1)} s`,
            )
        : undefined,
    onTargetExit: emit ? (s, p) => emit({ phase: 'finishing', targetExitCode: s.code, targetSignal: s.signal, ...ingested(p) }) : undefined,
  });
  if (tty) process.stderr.write('\r\x1b[K');
  const capture = result.capture;
  const captureLine = capture?.error
    ? `error: --capture-range ${capture.spec} could not be applied (${capture.error}): the recording holds everything recorded`
    : capture?.result?.neverOccurred
      ? `warning: ${capture.result.neverOccurred}`
      : capture?.result
        ? formatCaptureResult(capture.result)
        : null;
  let exitCode: number;
  if (result.processes === 0 || result.collectorErrors.some((e) => e.code !== 3)) {
    // Nothing (useful) was recorded: never exit 0 as if all were well.
    exitCode = result.exitCode && result.exitCode !== 0 ? result.exitCode : 1;
  } else if (result.signal) {
    exitCode = 128 + (signalNumber(result.signal) ?? 0);
  } else {
    exitCode = result.exitCode ?? 1;
  }
  if (emit) {
    emit({
      phase: 'done',
      records: result.records,
      bytes: result.bytes,
      processes: result.processes,
      complete: result.complete,
      incompleteReason: result.incompleteReason,
      targetExitCode: result.exitCode,
      targetSignal: result.signal,
      exitCode,
      collectorErrors: result.collectorErrors,
      notes: result.notes,
      capture:
        capture && captureLine
          ? {
              spec: capture.spec,
              error: capture.error,
              neverOccurred: capture.result?.neverOccurred ?? null,
              windows: capture.result?.windows ?? null,
              kept: capture.result?.kept ?? null,
              dropped: capture.result?.dropped ?? null,
              message: captureLine,
            }
          : null,
    });
    return exitCode;
  }
  const state = result.complete ? 'complete' : `INCOMPLETE: ${result.incompleteReason}`;
  process.stderr.write(`streamscope: ${result.records.toLocaleString('en-US')} records from ${result.processes} process(es) → ${result.output} (${state})\n`);
  for (const e of result.collectorErrors) process.stderr.write(`streamscope: collector (pid ${e.pid}): ${e.message}\n`);
  for (const n of result.notes) process.stderr.write(`streamscope: note: ${n}\n`);
  if (captureLine) process.stderr.write(`streamscope: ${captureLine}\n`);
  if (viewer) await keepServing(await viewer);
  return exitCode;
}

/**
 * After `record --live`: browser mode's view of the finished recording
 * stays until Ctrl-C when someone is at the terminal (a script goes on at
 * once). The exit code stays the target's.
 */
async function keepServing(view: LiveView): Promise<void> {
  if (!view.url || !process.stdin.isTTY) return view.stop();
  process.stderr.write(`streamscope: the live view keeps serving the finished recording at ${view.url} (Ctrl-C stops it)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  view.stop();
}

/** The message and exit code of an error that ends a command (as `main` prints it). */
function failure(err: unknown): { message: string; code: number } {
  if (err instanceof RecordError) return { message: err.message, code: err.exitCode };
  if (err instanceof RecordingFileError || err instanceof StreamFormatError) return { message: err.message, code: 1 };
  if (err instanceof Error && (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) return { message: err.message, code: 2 };
  return { message: err instanceof Error ? (err.stack ?? err.message) : String(err), code: 70 };
}

function signalNumber(sig: NodeJS.Signals): number | undefined {
  return (osConstants.signals as Record<string, number>)[sig];
}

const REPORT_USAGE = `usage: streamscope report FILE [--json] [--iterations] [--job | --no-job | --rank N | --pid P] ${SCOPE_USAGE}`;

async function cmdReport(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    allowNegative: true,
    options: {
      json: { type: 'boolean' },
      iterations: { type: 'boolean' },
      job: { type: 'boolean' },
      rank: { type: 'string' },
      pid: { type: 'string' },
      ...SCOPE_OPTIONS,
    },
  });
  if (positionals.length !== 1) fail(REPORT_USAGE, 2);
  const file = positionals[0]!;
  const scope = scopeOrFail(values);
  if (values.rank !== undefined && values.pid !== undefined) fail('report: give --rank or --pid, not both', 2);
  const db = openForReading(file);
  try {
    const processes = readProcesses(db);
    const only = values.rank !== undefined || values.pid !== undefined ? processesToReport(file, processes, values.rank, values.pid) : null;
    // A job of many ranks is read rank by rank (analysis/job.ts): its sections across ranks; one rank with --rank.
    const asJob = !only && (values.job ?? gpuProcessCount(db) > JOB_RANKS);
    if (asJob) {
      if (values.iterations) fail(`report: --iterations reads every rank of ${file} at once: add --rank N (one rank's iterations) or --no-job`, 2);
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
    const bad = recordingReadError(file, err);
    if (bad) fail(bad.message, 2);
    throw err;
  } finally {
    db.close();
  }
  return 0;
}

/** The scope flags, or exit 2 with what is wrong with them. */
function scopeOrFail(values: ScopeValues): Scope {
  try {
    return scopeFromArgs(values);
  } catch (err) {
    if (err instanceof ScopeError) fail(err.message, 2);
    throw err;
  }
}

/** The analysis of `scope`, or exit 2 when the recording has no such scope (an unknown NVTX range). */
/** `pids`: analyse only these processes' rows (`report --rank N`). */
function analyzeOrFail(db: Db, file: string, scope: Scope, pids?: number[]): Analysis {
  try {
    return analyze(db, pids ? { scope, file, pids, columns: loadProcessColumns(db, pids) } : { scope, file });
  } catch (err) {
    if (err instanceof ScopeError) fail(err.message, 2);
    throw err;
  }
}

/** The process(es) `--rank N` or `--pid P` name, or exit 2 naming what the recording has. */
function processesToReport(file: string, processes: RankedProcess[], rank: string | undefined, pid: string | undefined): ReportedProcesses {
  const n = Number(rank ?? pid);
  if (!Number.isInteger(n)) fail(`report: ${rank !== undefined ? '--rank' : '--pid'} takes a number, not '${rank ?? pid}'`, 2);
  if (pid !== undefined) {
    const p = processes.find((x) => x.pid === n);
    if (!p) fail(`report: ${file} has no process ${n} (its pids: ${listed(processes.map((x) => x.pid))})`, 2);
    return { pids: [n], label: p.rank !== null ? `rank ${p.rank} (pid ${n})` : `pid ${n}` };
  }
  const ranked = processes.filter((x) => x.rank === n);
  if (ranked.length === 0) {
    const ranks = processes.filter((x) => x.rank !== null).map((x) => x.rank!);
    fail(
      `report: ${file} has no rank ${n} (${ranks.length ? `its ranks: ${listed([...new Set(ranks)].sort((a, b) => a - b))}` : 'no process has a rank: name one with --pid'})`,
      2,
    );
  }
  return { pids: ranked.map((x) => x.pid), label: `rank ${n} (pid ${ranked.map((x) => x.pid).join(', ')})` };
}

/** At most 12 numbers, then how many more. */
function listed(xs: number[]): string {
  return xs.length <= 12 ? xs.join(', ') : `${xs.slice(0, 12).join(', ')} and ${xs.length - 12} more`;
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

function cmdCheck(args: string[]): number {
  let parsed;
  try {
    parsed = parseCheckArgs(args);
  } catch (err) {
    if (err instanceof CheckUsageError || err instanceof ScopeError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS'))
      fail((err as Error).message, 2);
    throw err;
  }
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

async function cmdExport(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { output: { type: 'string', short: 'o' }, format: { type: 'string' } } });
  if (positionals.length !== 1 || !values.output) fail('usage: streamscope export FILE -o OUT.json [--format chrome]', 2);
  if (values.format && values.format !== 'chrome')
    fail(`--format: only 'chrome' (Chrome trace JSON, opened by Perfetto UI and chrome://tracing) is supported, got '${values.format}'`, 2);
  const db = openForReading(positionals[0]!);
  try {
    const r = await exportChromeTrace(db, values.output!);
    process.stderr.write(
      `streamscope: ${r.events.toLocaleString('en-US')} trace events (${r.flows.toLocaleString('en-US')} launch flows) → ${values.output}\n`,
    );
  } catch (err) {
    fail(`${values.output}: cannot write: ${(err as Error).message}`);
  } finally {
    db.close();
  }
  return 0;
}

async function cmdImport(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { output: { type: 'string', short: 'o' }, format: { type: 'string' }, force: { type: 'boolean', short: 'f' } },
  });
  if (positionals.length !== 1 || !values.output) fail('usage: streamscope import TRACE -o OUT.sqlite [--format kineto|chrome|nsys] [--force]', 2);
  try {
    const r = await importTrace(positionals[0]!, values.output!, { format: values.format, overwrite: values.force });
    const c = r.counts;
    process.stderr.write(
      `streamscope: ${r.format}: ${c.kernels} kernels, ${c.memcpys} copies, ${c.memsets} memsets, ${c.apiCalls} API calls, ` +
        `${c.ranges} host ranges (${r.skipped} other events skipped) → ${values.output}\n`,
    );
    return 0;
  } catch (err) {
    if (err instanceof TraceFormatError || err instanceof RecordingFileError) fail(err.message, 2);
    throw err;
  }
}

function cmdDiff(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { json: { type: 'boolean' }, 'fail-if-slower': { type: 'string' }, 'fail-if-overlap-drops': { type: 'string' }, ...SCOPE_OPTIONS },
  });
  if (positionals.length !== 2) fail(`usage: streamscope diff A.sqlite B.sqlite [--json] [--fail-if-slower 5%] [--fail-if-overlap-drops 10] ${SCOPE_USAGE}`, 2);
  const scope = scopeOrFail(values);
  // Both gates take a number, '%' optional: a percentage of the GPU span, percentage points of overlap.
  const limit = (option: 'fail-if-slower' | 'fail-if-overlap-drops', example: string): number | null => {
    const v = values[option];
    if (v === undefined) return null;
    const m = /^(\d+(?:\.\d+)?)%?$/.exec(v);
    if (!m) fail(`--${option}: expected ${example}, got '${v}'`, 2);
    return Number(m[1]);
  };
  const slower = limit('fail-if-slower', 'a percentage such as 5%');
  const overlapDropPoints = limit('fail-if-overlap-drops', 'percentage points such as 10');
  // Both sides on the same scope: the steady state of each, or the same range or times.
  const load = (file: string) => {
    const db = openForReading(file);
    try {
      return analyzeOrFail(db, file, scope);
    } finally {
      db.close();
    }
  };
  const [fa, fb] = positionals as [string, string];
  const summary = diffRecordings(fa, load(fa), fb, load(fb));
  process.stdout.write(values.json ? JSON.stringify(summary, null, 2) + '\n' : formatDiff(summary));
  const reasons = diffGateFailures(summary, { slower: slower === null ? null : slower / 100, overlapDropPoints });
  if (reasons.length === 0) return 0;
  process.stderr.write(`FAIL ${reasons.join('; ')}\n`);
  return 1;
}

/**
 * Options of `serve` and `open` (open falls back to serving). Several files:
 * the recordings of one job's ranks open as one (merged into the job cache,
 * profiler/merge/job-cache.ts); --job merges whatever was given, --separate
 * nothing.
 */
function parseServeArgs(
  command: string,
  args: string[],
): { files: string[]; port: number; host: string; allowRemote: boolean; openMode: OpenMode; tokenFile: string | null; allowedHosts: string[] } {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      job: { type: 'boolean' },
      separate: { type: 'boolean' },
      'token-file': { type: 'string' },
      'allow-host': { type: 'string', multiple: true },
    },
  });
  if (positionals.length === 0) {
    fail(`usage: streamscope ${command} FILE... [--job | --separate] [--port N] [--host 127.0.0.1] [--token-file F] [--allow-host NAME]...`, 2);
  }
  if (values.job && values.separate) fail('--job and --separate: give one or the other', 2);
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) fail(`--port: expected a port number (0–65535), got '${values.port}'`, 2);
  // A non-loopback --host is the explicit request startServer wants for serving beyond this machine.
  return {
    files: positionals,
    port,
    host: values.host ?? '127.0.0.1',
    allowRemote: values.host !== undefined,
    openMode: values.job ? 'job' : values.separate ? 'separate' : 'auto',
    tokenFile: values['token-file'] ?? null,
    allowedHosts: values['allow-host'] ?? [],
  };
}

/**
 * Serves `files` read-only in browser mode and prints the URL (with its
 * access token, unless it came from --token-file) on stdout, until
 * SIGINT/SIGTERM. Beyond loopback, what that exposes is said on stderr
 * first (serve/listen-address.ts). Files that cannot be opened are
 * reported on stderr and left out; if none can, exit 2.
 */
async function serveUntilStopped(opts: ReturnType<typeof parseServeArgs>): Promise<number> {
  let token: string | undefined;
  if (opts.tokenFile !== null) {
    try {
      token = readTokenFile(opts.tokenFile);
    } catch (err) {
      if (err instanceof TokenFileError) fail(err.message, 2);
      throw err;
    }
  }
  let server;
  try {
    server = await startServer({
      files: opts.files,
      port: opts.port,
      host: opts.host,
      allowRemote: opts.allowRemote,
      token,
      allowedHosts: opts.allowedHosts,
      staticDir: path.join(repoRoot, 'renderer/dist'),
      onOpenError: (_file, message) => process.stderr.write(`streamscope: ${message}\n`),
      openMode: opts.openMode,
      onJob: (job) =>
        process.stderr.write(
          `streamscope: ${job.inputs.length} recordings opened as one job: ${job.handle.path} ` +
            `(${job.reused ? 'merged before, taken from the cache' : `merged in ${job.seconds.toFixed(1)} s`})\n`,
        ),
    });
  } catch (err) {
    fail(`cannot serve on ${opts.host}:${opts.port}: ${(err as Error).message}`, 2);
  }
  if (server.failed.length === opts.files.length) {
    await server.close();
    fail('none of the files could be opened', 2);
  }
  const warning = exposureWarning(opts.host, server.port, opts.tokenFile);
  if (warning) process.stderr.write(`streamscope: ${warning}\n`);
  // A token of the user's own is not printed: the URL says where it is.
  const url = opts.tokenFile === null ? server.url : `${server.url.split('?')[0]}?token=<the token in ${opts.tokenFile}>`;
  process.stdout.write(`StreamScope (read-only browser mode): ${url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      void server.close().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // Started by `record --live` (live-view.ts) with an IPC channel: it ends with the recorder.
    if (process.connected) process.once('disconnect', stop);
  });
  return 0;
}

async function cmdServe(args: string[]): Promise<number> {
  return serveUntilStopped(parseServeArgs('serve', args));
}

/**
 * `open`: the desktop app where it can start; otherwise (no Electron binary,
 * no display, app not built) browser mode, saying why.
 */
async function cmdOpen(args: string[]): Promise<number> {
  const opts = parseServeArgs('open', args);
  for (const f of opts.files) {
    // The app shows bad files itself, but a typo is quicker to fix from here.
    if (!fs.existsSync(f)) fail(`${f}: no such file`, 2);
  }
  let launched = false;
  try {
    // Imported only here: app/ is the Electron side, and `serve` must work without it.
    const { launchElectron } = (await import('../../app/launch.ts')) as {
      launchElectron: (files: string[], opts: { openMode: OpenMode }) => Promise<boolean>;
    };
    launched = await launchElectron(opts.files, { openMode: opts.openMode });
  } catch (err) {
    process.stderr.write(`streamscope: the desktop app cannot start here: ${(err as Error).message}\n`);
  }
  if (launched) {
    process.stdout.write(`StreamScope opened ${opts.files.map((f) => path.basename(f)).join(', ')} in the desktop app.\n`);
    return 0;
  }
  process.stderr.write('streamscope: opening in browser mode instead (read-only)\n');
  return serveUntilStopped(opts);
}

function cmdDevices(args: string[]): number {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean' } } });
  const inv = devices();
  if (values.json) {
    process.stdout.write(JSON.stringify(inv, null, 2) + '\n');
    return 0;
  }
  if (inv.error) process.stdout.write(`no CUDA devices: ${inv.error}\n`);
  for (const d of inv.devices) {
    const pcie = d.pcie ? `, PCIe gen ${d.pcie.currentGeneration} x${d.pcie.currentWidth}` : '';
    process.stdout.write(
      `${d.ordinal}: ${d.name} (cc ${d.ccMajor}.${d.ccMinor}, ${d.smCount} SMs, ${(d.totalMemoryBytes / 2 ** 30).toFixed(1)} GiB, ` +
        `${d.asyncEngineCount} copy engines, concurrent kernels ${d.concurrentKernels ? 'yes' : 'no'}${pcie}) ${d.uuid}\n`,
    );
  }
  return 0;
}

async function cmdIngest(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { output: { type: 'string', short: 'o' }, force: { type: 'boolean', short: 'f' } },
  });
  if (!values.output || positionals.length === 0) fail('usage: streamscope ingest -o FILE STREAM_FILE_OR_DIR...', 2);
  let r: Awaited<ReturnType<typeof ingestStreamFiles>>;
  try {
    r = await ingestStreamFiles(values.output, positionals, { overwrite: values.force });
  } catch (err) {
    // The recording could not be written (a full disk): what was stored before the failure is kept, marked incomplete.
    if ((err as Error).message.includes(`${values.output}: `))
      fail(`${values.output}: cannot write: ${(err as Error).message.split(`${values.output}: `).at(-1)}; it holds what was stored before, marked incomplete`);
    throw err;
  }
  const state = r.complete ? 'complete' : `INCOMPLETE: ${r.incompleteReason}`;
  process.stderr.write(`streamscope: ${r.records.toLocaleString('en-US')} records from ${r.processes} stream(s) → ${values.output} (${state})\n`);
  return 0;
}

function cmdDumpStream(args: string[]): number {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { json: { type: 'boolean' } } });
  if (positionals.length !== 1) fail('usage: streamscope dump-stream STREAM_FILE [--json]', 2);
  process.stdout.write(dumpStream(positionals[0]!, values.json ?? false));
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'record':
      return cmdRecord(rest);
    case 'report':
      return cmdReport(rest);
    case 'check':
      return cmdCheck(rest);
    case 'export':
      return cmdExport(rest);
    case 'import':
      return cmdImport(rest);
    case 'diff':
      return cmdDiff(rest);
    case 'merge':
      return cmdMerge(rest);
    case 'sql':
      return cmdSql(rest, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, historyFile: defaultSqlHistoryFile() });
    case 'serve':
      return cmdServe(rest);
    case 'open':
      return cmdOpen(rest);
    case 'devices':
      return cmdDevices(rest);
    case 'ingest':
      return cmdIngest(rest);
    case 'dump-stream':
      return cmdDumpStream(rest);
    case '--version':
    case '-v':
      process.stdout.write(`${VERSION}\n`);
      return 0;
    case undefined:
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(HELP + '\n');
      return command ? 0 : 2;
    default:
      fail(`unknown command '${command}' (see streamscope --help)`, 2);
  }
}

main(process.argv.slice(2)).then(
  // Once stdout has taken everything written: a pipe takes 64 KiB at a time, and exiting at once cut a long report there.
  (code) => process.stdout.write('', () => process.exit(code)),
  (err: unknown) => {
    const f = failure(err);
    fail(f.message, f.code);
  },
);
