#!/usr/bin/env node
// The `streamscope` command line. Each subcommand is a thin layer over the
// profiler library: parse arguments, call, print, choose the exit code.
import { JOB_RANKS } from '../contract/job.ts';
import { SCENARIOS, WORKLOADS } from '../contract/record-request.ts';
import { VERSION } from '../contract/version.ts';
import { MIN_TOKEN_LENGTH } from '../serve/token-file.ts';
import { fail, failure } from './common.ts';

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

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  // Each command's modules are loaded when it runs: loading all of them took
  // a third of a second on every start (190 modules), which `record` added
  // to the wall time of every program it records.
  switch (command) {
    case 'record':
      return (await import('./record-command.ts')).cmdRecord(rest);
    case 'report':
      return (await import('./analysis-commands.ts')).cmdReport(rest);
    case 'check':
      return (await import('./analysis-commands.ts')).cmdCheck(rest);
    case 'export':
      return (await import('./file-commands.ts')).cmdExport(rest);
    case 'import':
      return (await import('./file-commands.ts')).cmdImport(rest);
    case 'diff':
      return (await import('./analysis-commands.ts')).cmdDiff(rest);
    case 'merge':
      return (await import('./merge.ts')).cmdMerge(rest);
    case 'sql': {
      const [{ cmdSql }, { defaultSqlHistoryFile }] = await Promise.all([import('./sql.ts'), import('./sql-repl.ts')]);
      return cmdSql(rest, { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, historyFile: defaultSqlHistoryFile() });
    }
    case 'serve':
      return (await import('./serve-command.ts')).cmdServe(rest);
    case 'open':
      return (await import('./serve-command.ts')).cmdOpen(rest);
    case 'devices':
      return (await import('./record-command.ts')).cmdDevices(rest);
    case 'ingest':
      return (await import('./file-commands.ts')).cmdIngest(rest);
    case 'dump-stream':
      return (await import('./file-commands.ts')).cmdDumpStream(rest);
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
