// One call for what the report, the check and the app need from a recording:
// the trace, its host calls and the diagnosis, on one scope (scope.ts; the
// steady state unless told otherwise). What it reads of the recording it
// reads through the loader (load/), then hands the measures what it read.
import type { Db } from '../../store/database.ts';
import { communicationOf } from '../communication.ts';
import type { Communication } from '../../contract/communication.ts';
import type { Stragglers } from '../../contract/stragglers.ts';
import { StagedDiagnosis, type Diagnosis } from './diagnose.ts';
import type { GraphLaunches } from '../../contract/graphs.ts';
import { graphLaunchesOf } from '../graphs.ts';
import { hostOf, type Host } from '../host.ts';
import { callNames, readHostTables } from '../load/calls.ts';
import { loadColumns, timelineRows, type LoadingStep } from '../load/columns.ts';
import { readCommunicationInputs } from '../load/communication.ts';
import { graphRows } from '../load/graphs.ts';
import { rangeInstances, rangeReader } from '../load/ranges.ts';
import { readTraceTables } from '../load/tables.ts';
import { closeWindows, selectScopeWith } from '../scope.ts';
import { type RangeInstance } from '../../cuda/nvtx-ranges.ts';
import { lowerBound, type TimelineColumns } from '../../native/columns.ts';
import { instanceParts, shareFindings } from './attribution.ts';
import { buildContext, deviceSpans, type Context } from './findings/context.ts';
import type { Finding, FixId } from '../../contract/findings.ts';
import type { ReplayResult } from '../replay/replay.ts';
import { estimatesHere, HANDED_WAIT_MS, WHATIF_THREAD_MIN_ROWS, WhatIfThread, type Handed } from './whatif-thread.ts';
import { recordedSpan } from '../replay/whatif.ts';
import { givenOuterCalls } from '../replay/replay-host.ts';
import { STEADY_STATE, type Scope, type ScopeInfo, type Startup } from '../../contract/scope.ts';
import { detectStartup } from '../startup.ts';
import type { ProgressStep } from '../../contract/progress.ts';
import { leftOutNote } from '../../store/row-checks.ts';
import { stragglersOfContext } from './stragglers.ts';
import { traceOf, type Trace } from '../trace.ts';

// The timeline columns, read by load/columns.ts: named here too, where the analysis that starts with them is.
export { loadColumns, type LoadingStep };

export interface Analysis {
  trace: Trace;
  /** The scope's calls per thread, the call of each op, events and waits: built on first use (the diagnosis's context, the graphs). */
  readonly host: Host;
  /**
   * Every rule's findings, what-ifs estimated: diagnosed on first use. The
   * Stats tab's numbers need the context alone, and at 10 M operations the
   * diagnosis is most of an analysis (its what-if replays): the tab waited
   * for it, ten seconds and more, for findings it does not show.
   */
  readonly diagnosis: Diagnosis;
  /**
   * Runs the rules now and begins the what-ifs of the fixes they name, without waiting for them: a caller with other
   * work before it reads `diagnosis` (`report`: its summaries of streams, kernels and copies) does it while a second
   * thread replays them. Once, and nothing where the diagnosis is made already.
   */
  beginDiagnosis(): void;
  /** What the rules read of the trace (per device its busy union and span, the GPU span): the diagnosis's context, built on first use. */
  readonly context: Context;
  /** What was analysed: the scope, its time windows, and start-up as detected. */
  scope: ScopeInfo;
  /** The whole recording's columns (the trace holds the scope's views or copies of them): analyse another scope without reading the file again. */
  columns: TimelineColumns;
  /**
   * NCCL kernels and peer copies, and each rank's compute / communication /
   * copy / idle time with the share of communication hidden behind compute
   * (communication.ts), over the scope's GPU span. Computed on first use.
   */
  readonly communication: Communication;
  /**
   * The NCCL collective instances matched across ranks: arrival skew, who
   * arrived last, the time the others waited, the straggler if one holds
   * the job back (stragglers.ts). Computed once, by the diagnosis's
   * straggler rule or on first use.
   */
  readonly stragglers: Stragglers;
  /** The scope's CUDA graph launches: calls, the operations they ran, their graphs' ids and nodes (graphs.ts). Built on first use. */
  readonly graphs: GraphLaunches;
}

/** Milliseconds per phase of one analyze() call (the benchmark prints them). */
export interface AnalysisTimings {
  /** Reading the GPU operations and API calls (native, all cores). */
  load: number;
  /** Start-up detection and the scope's selection of operations and calls. */
  scope: number;
  /** Devices, streams, strings and derived op columns. */
  trace: number;
  /** Calls per thread, call of each op, events and waits, graph launches, the rules' context: the tables read in analyze(), the rest when first asked. */
  host: number;
  /** Every rule, and the what-if replay of the findings it can fix. */
  diagnose: number;
}

export interface AnalyzeOptions {
  /** Default: the steady state. */
  scope?: Scope;
  /** Columns already loaded (Analysis.columns of an earlier call on the same file). */
  columns?: TimelineColumns;
  timings?: AnalysisTimings;
  /** The file's name for messages (default: the database's). */
  file?: string;
  /**
   * `columns` hold only these processes' rows (one rank of a job:
   * job.ts loadProcessColumns): the event records, stream waits, NCCL
   * ranges and peer copies read besides are theirs too.
   */
  pids?: number[];
  /** Filled with the replay of each fix the diagnosis estimated (diagnose's `replays`). */
  replays?: Map<FixId, ReplayResult>;
  /**
   * The fixes' estimates on a second thread (whatif-thread.ts), begun
   * as the rules name them: for a caller that reads the diagnosis at once
   * (`report`, `check`), of a recording of WHATIF_THREAD_MIN_ROWS operations
   * and calls or more, its columns loaded here (not given), for the whole
   * recording or its steady state (a window copies the columns it clips,
   * a range's instances share the fixes' replays: `replays`).
   * `minRows`: another threshold (the tests' small recordings).
   */
  whatIfThread?: boolean | { minRows: number };
  /** A range scope's instances as already read (selectScope's `instances`). */
  instances?: RangeInstance[];
  /**
   * What the analysing thread of the same columns and scope hands over (the what-if worker's analysis,
   * whatif-thread.ts): its start-up, call index and outer calls, each taken where this analysis would make its own.
   */
  handed?: Handed;
  /**
   * Where the steady state is cut, in place of the recording's own start-up: a job's (a rank summarized with its job's
   * other ranks: job/job-cut.ts), in this recording's clock; null: none. Not with `whatIfThread` (its worker would cut
   * the recording's own).
   */
  startup?: Startup | null;
  /**
   * Told each phase as it begins (contract/progress.ts): the analysis
   * thread passes them on to the page, which says how far a long analysis
   * has got. Called synchronously, a few dozen times per analysis.
   */
  onProgress?: (step: ProgressStep) => void;
}

/**
 * Each instance's findings of the NVTX range `name`: the diagnosis of all
 * of them, shared out (attribution.ts), so that an instance (`--range
 * NAME#k`, an iterations row) and the whole range give one answer.
 */
export function instanceFindings(
  db: Db,
  options: AnalyzeOptions,
  columns: TimelineColumns,
  name: string,
  instances: RangeInstance[] = rangeInstances(db, name),
): Finding[][] {
  // Once per recording's columns and range: the iterations and each `--range NAME#k` asked in turn share it.
  // A recording being written keeps its columns a while (query/recording-query.ts) as instances close: those
  // are shared out again, the range's analysis and its share-out on the one list of instances read.
  let byName = shared.get(columns);
  if (!byName) shared.set(columns, (byName = new Map()));
  let found = byName.get(name);
  if (!found || found.length !== instances.length) {
    const replays = new Map<FixId, ReplayResult>();
    // Its progress is the instance's, less the findings before the what-ifs: those are the whole range's, not the instance's share.
    const onProgress = options.onProgress && (({ findings: _, ...step }: ProgressStep) => options.onProgress!(step));
    const whole = analyze(db, { ...options, columns, scope: { kind: 'range', name }, timings: undefined, replays, instances, onProgress });
    found = shareFindings(whole.trace, whole.host, whole.diagnosis.findings, instanceParts(columns, instances, name), replays);
    byName.set(name, found);
  }
  return found;
}
const shared = new WeakMap<TimelineColumns, Map<string, Finding[][]>>();

/** Throws ScopeError when the scope does not exist in this recording. */
export function analyze(db: Db, options: AnalyzeOptions = {}): Analysis {
  let t = performance.now();
  const { timings } = options;
  const lap = (phase: keyof AnalysisTimings) => {
    const now = performance.now();
    if (timings) timings[phase] = now - t;
    t = now;
  };
  const { onProgress } = options;
  const scope = options.scope ?? STEADY_STATE;
  // Started before the load: its modules load meanwhile, on the other core.
  // Whole and steady state only: their rows are views of the columns loaded, which the worker selects again for free,
  // where a window copies the columns it clips (start, end and bytes; every column where the rows it keeps are not
  // contiguous: scope.ts clipToWindow), on both threads (1.13 × the whole's time at 10 M when it copied them all).
  const rows =
    options.whatIfThread && !options.columns && !options.replays && options.startup === undefined && (scope.kind === 'whole' || scope.kind === 'steady-state')
      ? timelineRows(db)
      : null;
  const minRows = typeof options.whatIfThread === 'object' ? options.whatIfThread.minRows : WHATIF_THREAD_MIN_ROWS;
  const thread = rows && rows.ops + rows.calls >= minRows ? new WhatIfThread() : null;
  const ended = <T>(make: () => T): T => {
    try {
      return make();
    } catch (err) {
      thread?.close();
      throw err;
    }
  };
  const columns = options.columns ?? ended(() => loadColumns(db, onProgress, thread ? rows! : undefined));
  lap('load');
  // The columns and the scope to the second thread, which analyses them as below while this thread goes on; should it
  // fail, the estimates are made here, on this analysis's trace and host (declared below, asked for after).
  thread?.handColumns(
    { file: db.name, columns, scope: options.scope, pids: options.pids, handing: HANDED_WAIT_MS },
    { estimates: () => estimatesHere(trace, hostNow()), recorded: () => recordedSpan(trace, hostNow()) },
  );
  onProgress?.({ phase: 'selecting', done: 0, total: columns.ops.length });
  // Read once, for start-up detection and the trace (meta), and for
  // start-up detection and the host model (call names).
  const tables = readTraceTables(db);
  const names = callNames(db, columns.calls);
  // The what-if worker takes the start-up the analysing thread detected (and hands it: the worker selects the same
  // steady state without detecting it again).
  const given = options.startup !== undefined ? options.startup : options.handed?.startup();
  const startup =
    given !== undefined
      ? given && { ...given, ops: lowerBound(columns.ops.start, columns.ops.length, given.endNs) }
      : detectStartup(columns.ops, columns.calls, names, tables.meta);
  thread?.handStartup(startup);
  // A range's instances read once, for its selection and (one instance) its share of the range's findings.
  const instances = scope.kind === 'range' ? (options.instances ?? rangeInstances(db, scope.name)) : undefined;
  const selection = ended(() => selectScopeWith(rangeReader(db), options.file ?? db.name, scope, columns, startup, instances));
  // The call index and outer calls the what-if thread takes, made and handed now, whenever this thread's caller asks
  // for the host (`report` makes its summaries first): the scope's ops and calls are all they read, and the worker,
  // its own trace made, waits for them. hostNow builds on them: this thread's, or in the worker the analysing thread's.
  const own = thread?.handHost(selection.columns.ops, selection.columns.calls);
  const madeHost: Pick<Handed, 'callIndex' | 'outerCalls'> | undefined = own ? { callIndex: () => own.index, outerCalls: () => own.outer } : options.handed;
  lap('scope');
  const trace = traceOf(selection.columns.ops, selection.columns.calls, tables);
  closeWindows(selection.info, trace.span);
  // Rows the loader left out (store/row-checks.ts) are said with every scope: its findings are without them.
  if (columns.leftOut) selection.info.notes = [...(selection.info.notes ?? []), leftOutNote(columns.leftOut)];
  lap('trace');
  const subset = options.pids ? { pids: options.pids } : undefined;
  // Read now, like the inputs below: the file may be closed by the time a report asks.
  const hostTables = readHostTables(db, subset);
  const graphRowsRead = graphRows(db);
  // Read now (the file may be closed by the time it is used): the diagnosis's rules across ranks name processes by them.
  const inputs = readCommunicationInputs(db, subset);
  lap('host');
  // The host model and the rules' context are built when first needed, not here: the scope's label and the Stats
  // tab's tables need neither (the tables read the devices' unions: overlap.ts), and at 10 M operations the two
  // took 0.9 s of the Stats tab clicked as the page opened (issue 30). Their time is the host phase's.
  let host: Host | null = null;
  let context: Context | null = null;
  let graphs: GraphLaunches | null = null;
  const built = <T>(make: () => T): T => {
    const t0 = performance.now();
    const value = make();
    if (timings) timings.host += performance.now() - t0;
    return value;
  };
  const hostNow = (): Host =>
    (host ??= built(() => {
      const index = madeHost?.callIndex() ?? undefined;
      const made = hostOf(trace.ops, selection.columns.calls, { names, scoped: selection.columns !== columns, tables: hostTables, index });
      if (madeHost) givenOuterCalls(made, () => madeHost.outerCalls());
      return made;
    }));
  const contextNow = (): Context => {
    if (context) return context;
    const h = hostNow();
    return (context = built(() => buildContext(trace, h, inputs.processes)));
  };
  // The fixes' estimates on the second thread, else here.
  const staged = new StagedDiagnosis({
    trace,
    host: hostNow,
    context: contextNow,
    estimator: () => thread ?? estimatesHere(trace, hostNow(), options.replays),
    onProgress,
  });
  const diagnosed = <T>(make: () => T): T => {
    const t0 = performance.now();
    const value = make();
    if (timings) timings.diagnose += performance.now() - t0;
    return value;
  };
  // An instance's findings are its share of the range's (attribution.ts): the range's diagnosis, read now, while the
  // file is open. Any other scope is diagnosed when its findings are first asked for (timed then, as the diagnose phase).
  let diagnosis: Diagnosis | null =
    scope.kind === 'range' && scope.instance !== undefined && trace.ops.length > 0
      ? { findings: instanceFindings(db, options, columns, scope.name, instances)[scope.instance - 1]!, context: contextNow() }
      : null;
  lap('diagnose');
  let communication: Communication | null = null;
  return {
    trace,
    get host() {
      return hostNow();
    },
    get context() {
      return contextNow();
    },
    get diagnosis() {
      return (diagnosis ??= diagnosed(() => staged.finish()));
    },
    beginDiagnosis() {
      if (!diagnosis) diagnosed(() => staged.begin());
    },
    scope: selection.info,
    columns,
    get graphs() {
      return (graphs ??= built(() => graphLaunchesOf(graphRowsRead, trace, hostNow())));
    },
    get communication() {
      // The host's calls, built only if NCCL's ranges need them (ncclLaunches).
      return (communication ??= communicationOf(trace, inputs, deviceSpans(trace).gpuSpan, hostNow));
    },
    get stragglers() {
      return stragglersOfContext({ trace, processes: inputs.processes });
    },
  };
}
