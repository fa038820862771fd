// Every `streamscope` command as it is declared: what it is for, its
// operands, its options and examples (usage.ts reads both the parsing and
// the help from these). Declarations only: this module is loaded on every
// start, the command's own module only when it runs (streamscope.ts), so it
// imports nothing but constants.
import { SEVERITY_RANK, type Severity } from '../contract/findings.ts';
import { JOB_RANKS, JOB_VIEW_MERGED_UP_TO, RANK_TOP_FINDINGS } from '../contract/job.ts';
import { SCENARIOS, WORKLOADS } from '../contract/record-request.ts';
import { SQL_ROW_LIMIT, SQL_TIME_LIMIT_MS } from '../contract/sql.ts';
import type { ImportFormat } from '../import/index.ts';
import { MIN_TOKEN_LENGTH } from '../serve/token-file.ts';
import type { CommandSpec, OptionSpec } from './usage.ts';

/** The scope flags of every command that analyses (report, check, diff): scope-args.ts reads them. */
export const SCOPE_OPTIONS = {
  whole: { type: 'boolean', description: 'the whole recording, start-up included', otherwise: 'the steady state, start-up left out' },
  range: { type: 'string', value: 'NAME[#k]', description: 'the GPU work launched inside an NVTX range (all its instances, or the k-th from 1)' },
  from: { type: 'string', value: 'T', description: "a time range's start from the recording's origin: 1.5s, 350ms, 20us (bare: s)", otherwise: 'the start' },
  to: { type: 'string', value: 'T', description: "the time range's end", otherwise: 'the end' },
} as const satisfies Record<string, OptionSpec>;

const SCOPE_DETAILS = `report, check and diff analyse the steady state: start-up (CUDA
initialisation, module loading and JIT, up to where the program's real work
begins) is detected, summarised on one line and left out. --whole includes
it; --range NAME (or NAME#k, the k-th instance from 1) analyses the GPU work
launched inside an NVTX range; --from/--to a time range (1.5s, 350ms, 20us;
a bare number is seconds).`;

/** serve's, and open's: it serves where the desktop app cannot start. */
const VIEW_OPTIONS = {
  job: { type: 'boolean', description: 'open the files as one job (merged), whatever they are', otherwise: "one job's ranks open as one" },
  separate: { type: 'boolean', description: "open each file on its own, even one job's ranks" },
  'job-view': {
    type: 'string',
    value: 'V',
    choices: ['auto', 'merged', 'summaries'],
    default: 'auto',
    description: `a job's files merged into a cache, or from their ranks' summaries (no merge); auto: merged up to ${JOB_VIEW_MERGED_UP_TO} files`,
  },
  port: { type: 'string', value: 'N', default: '0', description: 'the port to listen on (0: a free one)' },
  host: {
    type: 'string',
    value: 'H',
    description: 'the address to listen on (0.0.0.0: every one, over plain HTTP)',
    otherwise: '127.0.0.1, this machine only',
  },
  'token-file': {
    type: 'string',
    value: 'F',
    description: `the access token from F (the owner's alone: chmod 600; ${MIN_TOKEN_LENGTH}+ characters); none printed`,
    otherwise: 'a fresh token, printed in the URL',
  },
  'allow-host': { type: 'string', value: 'NAME', multiple: true, description: 'a further name the server answers to (a DNS name of this machine); repeatable' },
} as const satisfies Record<string, OptionSpec>;

const SERVE_DETAILS = `serve listens on 127.0.0.1 (this machine only) and prints a URL holding a
fresh access token, which every API request must carry; answers only
requests that name it (127.0.0.1, localhost; DNS rebinding is refused).
--host 0.0.0.0 (or an address) serves other machines too, over plain HTTP,
and says so on stderr; --token-file F takes the token from F and prints
none. Beyond loopback the server answers to its addresses and this
machine's name; --allow-host NAME adds a name it is reached by. Several
files of one job's ranks open as one job: up to ${JOB_VIEW_MERGED_UP_TO} files merged into
a cache, more from their ranks' summaries without merging (every rank
folded; a rank's rows read from its file when unfolded; --job-view merged
or summaries decides); --job takes whatever is given as one job,
--separate nothing.`;

const IMPORT_FORMATS = ['kineto', 'chrome', 'nsys'] as const satisfies readonly ImportFormat[];

export const COMMANDS = {
  record: {
    summary: 'run a program (or a bundled workload) with the CUPTI collector and store what its GPUs did',
    operands: [],
    passthrough: { name: 'COMMAND [ARGS...]', description: 'the program to record and its arguments (or --workload and --scenario)' },
    options: {
      output: {
        type: 'string',
        short: 'o',
        value: 'FILE',
        description: 'the recording to write; %h %p %r %l become host, pid, rank, local rank (%% a %)',
        otherwise: 'streamscope-NAME-TIME.sqlite here',
      },
      force: { type: 'boolean', short: 'f', description: 'overwrite FILE if it exists' },
      live: { type: 'boolean', description: 'open the timeline on the recording as it grows' },
      'capture-range': {
        type: 'string',
        value: 'nvtx:NAME|cuda-profiler-api',
        description: "keep only the activity inside an NVTX range's instances, or cudaProfilerStart..Stop",
        otherwise: 'everything',
      },
      progress: { type: 'string', choices: ['text', 'json'], default: 'text', description: "record's own lines on stderr: text, or one JSON object a line" },
      quiet: { type: 'boolean', short: 'q', description: 'no progress line on a terminal' },
      workload: { type: 'string', value: 'NAME', description: `record the bundled CUDA runner: ${WORKLOADS.join(', ')}` },
      scenario: { type: 'string', value: 'NAME', description: `the workload's scenario: ${SCENARIOS.join(', ')}` },
      size: { type: 'string', value: 'N', description: "the workload's problem size", otherwise: "the workload's own" },
      iterations: { type: 'string', value: 'N', description: "the workload's iterations (launch-loop: launches)", otherwise: "the workload's own" },
      streams: { type: 'string', value: 'N', description: "the workload's streams", otherwise: "the workload's own" },
      chunks: { type: 'string', value: 'N', description: "the workload's chunks of work", otherwise: "the workload's own" },
      variant: {
        type: 'string',
        value: 'V',
        description: "the workload's kernel variant (matmul, transpose: naive, tiled, ...)",
        otherwise: "the workload's own",
      },
    },
    examples: [
      ['record -o run.sqlite -- python3 train.py', 'record a program; the exit code is its own'],
      ['record --workload normalise --scenario concurrent', 'record a bundled workload (no program of your own needed)'],
      ['record --capture-range nvtx:train_step -o steps.sqlite -- python3 train.py', 'keep only what the train_step ranges launched'],
      ['record -o run-%h-%r.sqlite -- python3 train.py', 'under srun or torchrun: one recording per node and rank'],
    ],
    details: `record runs the target with StreamScope's CUPTI collector injected, stores
kernels, copies, memsets, synchronizations, CUDA events, API calls and NVTX
ranges per device and stream in one SQLite file, and exits with the target's
exit code. --live opens the timeline on the recording as it grows (the
desktop app, else browser mode: its URL is printed, and it keeps serving the
finished recording until Ctrl-C). --capture-range keeps only the activity
inside the instances of an NVTX range (nvtx:NAME), or per process from
cudaProfilerStart to cudaProfilerStop (cuda-profiler-api), as nsys
--capture-range does.

-o may hold %h (the host name), %p (the recorder's pid), %r and %l (its rank
and local rank, from the launcher that started it: torchrun, mpirun, srun)
and %% (a %), so that a job's own launcher can start one recorder per node or
rank. Every recorded process's rank is stored either way (report shows it).

--progress json replaces record's own lines on stderr with one JSON object per
line, for programs: {"streamscope":"record-progress","version":1,"phase":...,
"elapsedMs","output","records","bytes","processes",...}; phase preflight, then
running (pid; every 250 ms), finishing (targetExitCode, targetSignal), and
last done (complete, incompleteReason, exitCode, collectorErrors, notes,
capture) or failed (error, exitCode). The target's own output is unchanged.`,
  },
  report: {
    summary: "a recording's devices, overlap, findings, streams, kernels and copies, as text or JSON",
    operands: [
      { name: 'FILE', description: 'a recording (recorded, imported or merged)' },
      { name: 'RANK.sqlite', optional: true, many: true, description: "more: one job's recordings, one per rank, reported as one job from their summaries" },
    ],
    options: {
      json: { type: 'boolean', description: 'the report as JSON (shape: docs/FORMATS.md)' },
      iterations: { type: 'boolean', description: 'one row per instance of the repeating NVTX range' },
      job: {
        type: 'boolean',
        negatable: true,
        description: 'read it rank by rank, as a job of many ranks; --no-job: whole',
        otherwise: `rank by rank above ${JOB_RANKS} ranks`,
      },
      rank: { type: 'string', value: 'N', description: 'report one rank whole, from its own rows' },
      pid: { type: 'string', value: 'P', description: 'report one process whole, from its own rows' },
      ...SCOPE_OPTIONS,
    },
    examples: [
      ['report run.sqlite', "the steady state's report"],
      ['report run.sqlite --range train_step#3 --json', 'the third train_step range, as JSON'],
      ['report job.sqlite --rank 3', 'one rank of a merged job'],
      ['report run-rank*.sqlite', "a job's ranks, from their summaries (streamscope summarize)"],
      ['report run.sqlite --iterations', 'the report, then one row per iteration'],
    ],
    details: `${SCOPE_DETAILS}
--iterations adds one row per instance of the repeating NVTX range (the one
given with --range, or the one covering most time).

A recording of more than ${JOB_RANKS} ranks (processes with GPU work: a merged job)
is reported rank by rank, never holding more than a few in memory: each
rank's communication breakdown, the stragglers and the findings across
ranks, as the whole recording's analysis gives them. --rank N (or --pid P)
reports one rank whole, from its own rows; --job reads any recording so,
--no-job analyses it whole.

Several recordings, one per rank of a job, are reported as that job from
their summaries (streamscope summarize): clocks aligned by the collectives as
merge aligns them, each rank's communication breakdown, the stragglers and
the findings across ranks, then each rank's own top findings where its
summary holds them (summarize --findings, the recorder's), without merging
or reading their rows. A
recording without a current summary is summarized for this report only (say
summarize once to keep it); the steady state is each rank's own, after its
own start-up. --iterations gives every rank's steps from the summaries too,
each with its communication, exposed communication and idle time. With
--rank N, the one recording that holds rank N is reported (its own rows, as
with that file alone; --iterations there gives that rank's).`,
  },
  summarize: {
    summary: "each rank recording's summary for job analysis, stored in it (report a job from summaries)",
    operands: [{ name: 'FILE', many: true, description: "recordings: a job's ranks, one file each" }],
    options: {
      force: { type: 'boolean', short: 'f', description: 'build again where a current summary is stored' },
      findings: {
        type: 'boolean',
        description: "each with its rank's top findings (its own diagnosis: ~4x the time), for the job's report; a summary without them is built again",
      },
      workers: { type: 'string', value: 'N', description: 'worker threads', otherwise: 'one per core' },
      json: { type: 'boolean', description: 'one line per recording as JSON on stdout' },
    },
    examples: [
      ['summarize run-rank*.sqlite', 'then: streamscope report run-rank*.sqlite (the job, in seconds)'],
      ['srun streamscope summarize run-%h-%r.sqlite', "on a cluster: each rank's node summarizes its own recording"],
      ['summarize --findings run-rank*.sqlite', "with each rank's top findings: the job's report lists them after its own"],
    ],
    details: `The recorder of a job's rank writes its summary when the rank ends; summarize
builds it for recordings that have none (older, imported, a node's recording
of several ranks). It reads each recording once and stores in it (table rank_summary,
profiler/store/SCHEMA.md) what the analysis of a job needs of one rank: the
busy times by role per GPU, its NCCL kernels, its serialized-collective
candidates and its collectives' end times, for the whole recording and its
steady state. --findings adds the rank's own top findings (the ${RANK_TOP_FINDINGS} worst of
its diagnosis for each scope, what-ifs included, as \`report FILE\` lists them;
the recorder's summary holds them): the job's report lists them after the
findings across ranks. A summary is taken while it is current: the same recording
(origin and last ids), StreamScope version and summary format, and with
--findings, holding them; else it is built again. A recording that cannot be
written is left as it is (said, exit 0): a job report summarizes it again each time.`,
  },
  check: {
    summary: 'a concurrency gate for CI: exit 1 when the overlap or the findings break a rule',
    operands: [{ name: 'FILE', description: 'a recording' }],
    options: {
      'min-overlap': {
        type: 'string',
        value: 'X',
        description: "fail where a GPU's overlap factor is below X (1.0 = no overlap)",
        otherwise: 'no overlap rule',
      },
      'fail-on': {
        type: 'string',
        choices: Object.keys(SEVERITY_RANK) as Severity[],
        description: 'fail on a finding of this severity or worse',
        otherwise: 'no findings rule',
      },
      json: { type: 'boolean', description: 'the result as JSON on stdout (the one line goes to stderr)' },
      ...SCOPE_OPTIONS,
    },
    examples: [
      ['check run.sqlite --min-overlap 1.5', 'fail unless every GPU ran 1.5 operations at once on average'],
      ['check run.sqlite --fail-on warning --range train_step', 'fail on a warning in the train_step ranges'],
    ],
    details: `Exit 0: the recording passes (PASS line on stdout); 1: it does not (FAIL line
on stderr, one reason per broken rule); 2: bad usage or a file that cannot
be read. ${SCOPE_DETAILS}`,
  },
  diff: {
    summary: 'compare two recordings: spans, overlap, findings, kernels, copies; per rank for jobs',
    operands: [
      { name: 'A.sqlite', description: 'the recording to compare with (before)' },
      { name: 'B.sqlite', description: 'the recording compared (after)' },
    ],
    options: {
      json: { type: 'boolean', description: 'the difference as JSON' },
      'fail-if-slower': {
        type: 'string',
        value: 'PERCENT',
        description: "exit 1 when B's GPU span is more than PERCENT longer than A's",
        otherwise: 'no gate',
      },
      'fail-if-overlap-drops': {
        type: 'string',
        value: 'POINTS',
        description: "exit 1 when a rank's communication overlap fell by more than POINTS points",
        otherwise: 'no gate',
      },
      ...SCOPE_OPTIONS,
    },
    examples: [
      ['diff before.sqlite after.sqlite', 'what changed, in text'],
      ['diff main.sqlite branch.sqlite --fail-if-slower 5%', "a CI gate on the GPU span: exit 1 when B's is 5% longer"],
    ],
    details: `diff compares B with A: spans, overlap, findings, kernels, copies; for jobs
of several ranks (a merged job, or one recorder's torchrun workers) also
each rank against the same rank of the other (by rank, not pid), its streams
paired within it, and the collectives. ${SCOPE_DETAILS} Both sides get the
same scope.`,
  },
  open: {
    summary: 'the timeline in the desktop app (browser mode where it cannot start)',
    operands: [{ name: 'FILE', many: true, description: "recordings; one job's ranks open as one" }],
    options: VIEW_OPTIONS,
    examples: [
      ['open run.sqlite', 'the timeline of one recording'],
      ['open rank0.sqlite rank1.sqlite', 'two ranks of one job, merged into one timeline'],
    ],
    details: `open starts the desktop app; where it cannot (no Electron binary, no display,
the app not built) it serves browser mode instead and says why, with
serve's options.

${SERVE_DETAILS}`,
  },
  serve: {
    summary: 'the timeline in a browser: a read-only server with a token URL',
    operands: [{ name: 'FILE', many: true, description: "recordings; one job's ranks open as one" }],
    options: VIEW_OPTIONS,
    examples: [
      ['serve run.sqlite', 'serve on 127.0.0.1 and print the URL (Ctrl-C stops)'],
      ['serve run.sqlite --host 0.0.0.0 --port 8080 --token-file ~/.streamscope-token', 'serve other machines too, with your own token'],
    ],
    details: SERVE_DETAILS,
  },
  import: {
    summary: "another tool's trace as a recording: PyTorch profiler (Kineto), Chrome trace JSON, Nsight Systems SQLite",
    operands: [
      {
        name: 'TRACE',
        many: true,
        description: 'the trace file (.json, .json.gz, or an nsys export .sqlite); several, or a folder of traces: each to its own recording',
      },
    ],
    options: {
      output: {
        type: 'string',
        short: 'o',
        value: 'OUT',
        description: 'the recording to write (required for one trace); for several, the folder to write them in',
        otherwise: 'for several, each beside its trace',
      },
      format: { type: 'string', choices: IMPORT_FORMATS, description: "the trace's format", otherwise: 'from its content, then its name' },
      force: { type: 'boolean', short: 'f', description: 'overwrite an existing recording (never a trace)' },
      workers: { type: 'string', value: 'N', description: 'worker threads importing several traces at once', otherwise: 'one per core' },
    },
    examples: [
      ['import trace.json -o run.sqlite', 'a PyTorch profiler trace, ready for report, open, diff'],
      ['import report.sqlite --format nsys -o run.sqlite', 'an Nsight Systems export'],
      ['import traces/rank*.json', "a job's traces, each to rank*.sqlite beside it; then: streamscope report traces/rank*.sqlite"],
      ['import traces/ -o recordings/', 'every trace of a folder (*.json, *.json.gz) into recordings/'],
    ],
    details: `With several traces (or a folder), each is imported into its own recording, on
worker threads, a line per trace as it is done. A trace that cannot be
imported is said with its problem, the others still import, and the command
exits 1 after naming every one that failed. An existing recording is never
replaced without --force.`,
  },
  merge: {
    summary: 'the recordings of one job (one per rank or node) as one, clocks aligned by NCCL collectives',
    operands: [
      { name: 'A.sqlite', description: 'a recording of the job' },
      { name: 'B.sqlite', optional: true, many: true, description: 'the others' },
    ],
    options: {
      output: { type: 'string', short: 'o', value: 'JOB.sqlite', required: true, description: 'the merged recording to write' },
      force: { type: 'boolean', short: 'f', description: 'overwrite JOB.sqlite if it exists (never an input)' },
      align: {
        type: 'string',
        choices: ['collectives', 'wall-clock'],
        default: 'collectives',
        description: "how each host's clock is placed: by shared NCCL collectives, or as recorded",
      },
      json: { type: 'boolean', description: 'the result as JSON on stdout' },
    },
    examples: [
      ['merge run-node0.sqlite run-node1.sqlite -o job.sqlite', 'one job from two nodes, clocks aligned'],
      ['merge rank*.sqlite -o job.sqlite --align wall-clock', 'keep the recorded times'],
    ],
    details: `merge corrects each host's clock by the NCCL collectives its ranks share with
the others (the same collective ends at nearly the same time on every rank),
and prints per input the correction and the residual after it; --align
wall-clock keeps the recorded times. Nothing is written when an input cannot
be merged (exit 2).`,
  },
  export: {
    summary: 'a recording as Chrome trace JSON (Perfetto UI, chrome://tracing)',
    operands: [{ name: 'FILE', description: 'a recording' }],
    options: {
      output: { type: 'string', short: 'o', value: 'OUT.json', required: true, description: 'the trace to write' },
      format: { type: 'string', choices: ['chrome'], default: 'chrome', description: 'the format (Chrome trace JSON, the one there is)' },
      force: { type: 'boolean', short: 'f', description: 'overwrite OUT.json if it exists (never the recording)' },
    },
    examples: [['export run.sqlite -o run.json', 'open run.json in ui.perfetto.dev']],
  },
  sql: {
    summary: 'a read-only SQL query on a recording, or a prompt',
    operands: [
      { name: 'FILE', description: 'a recording' },
      { name: 'QUERY|-', optional: true, description: 'one SELECT; - reads it from stdin; none opens a prompt' },
    ],
    options: {
      json: { type: 'boolean', description: 'the rows as JSON' },
      csv: { type: 'boolean', description: 'the rows as CSV' },
      timeout: { type: 'string', value: 'T', default: `${SQL_TIME_LIMIT_MS / 1000}s`, description: 'stop a query after T (1.5s, 350ms)' },
      'max-rows': { type: 'string', value: 'N', default: String(SQL_ROW_LIMIT), description: 'keep at most N rows' },
      interactive: { type: 'boolean', description: "the prompt's banner and prompts even when stdin is not a terminal" },
    },
    examples: [
      ['sql run.sqlite "SELECT name, count(*) FROM kernel_view GROUP BY name"', 'kernels by name, as a table'],
      ['sql run.sqlite', 'a prompt (.help, .tables, .schema, .examples, .quit)'],
    ],
    details: `Views make the schema pleasant: kernel_view, copy_view, memset_view,
sync_view, api_view, nvtx_view, operation_view (names demangled, streams by
CUPTI id, GPUs by ordinal, times in µs). Anything that writes, ATTACH,
PRAGMAs that set, more than one statement are refused. The prompt keeps its
history in StreamScope's cache directory.`,
  },
  devices: {
    summary: "this machine's CUDA devices, as the collector sees them",
    operands: [],
    options: { json: { type: 'boolean', description: 'the devices as JSON' } },
    examples: [['devices', 'one line per GPU: name, compute capability, SMs, memory, copy engines']],
  },
  ingest: {
    summary: "record-stream files (the collector's, written elsewhere or left by a recorder) as a recording",
    operands: [{ name: 'STREAM_FILE_OR_DIR', many: true, description: 'record-stream files (.ssr), or directories of them' }],
    options: {
      output: { type: 'string', short: 'o', value: 'FILE', required: true, description: 'the recording to write' },
      force: { type: 'boolean', short: 'f', description: 'overwrite FILE if it exists (never a stream)' },
    },
    examples: [['ingest -o run.sqlite streams/', 'a recording from the .ssr files of a directory']],
  },
  'dump-stream': {
    summary: 'a record-stream file as text, record by record (for debugging the collector)',
    operands: [{ name: 'STREAM_FILE', description: 'a record-stream file (.ssr)' }],
    options: { json: { type: 'boolean', description: 'the decoded header and records as JSON' } },
    examples: [['dump-stream streams/4242.ssr', 'its header, then one line per record']],
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMANDS;

export function isCommand(name: string): name is CommandName {
  return Object.hasOwn(COMMANDS, name);
}
