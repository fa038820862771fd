// The one typed API between the renderer and a recording.
//
// The renderer (renderer/) talks to recordings only through `StreamScopeApi`.
// It has two implementations: the Electron preload (IPC to app/, which calls
// profiler/query) and the HTTP client of browser mode (`streamscope serve`,
// profiler/serve). Both end in the same `RecordingQuery` class, so what the
// browser tests see is what the desktop app shows.
//
// This file holds types and the lists they come from (no Node imports):
// the renderer bundles it.
// Everything crossing the boundary is plain JSON (structured-clone safe).
// Times are integer nanoseconds relative to the recording origin (meta
// origin_ns), as in the store; they stay far below 2^53.

// The item tables and kinds are their own module (items.ts): the argument
// schemas need them too, and api-schema.ts must not import this file.
export { ITEM_KINDS, ITEM_TABLES } from './items.ts';
export type { ItemKind, ItemTable } from './items.ts';
import type { ItemKind } from './items.ts';
// A process's rank in its job (ProcessInfo).
export type { RankInfo } from './ranks.ts';
import type { RankInfo } from './ranks.ts';

// The arguments the methods below take are defined once, as the schemas
// their checks run (api-schema.ts); their types are derived from them.
export type {
  ConcurrencyRequest,
  ItemRef,
  OverviewDevices,
  RecordRequest,
  SearchCursor,
  SearchRequest,
  SqlRequest,
  TimeRange,
  WaitSpansRequest,
  WindowConcurrencyRequest,
  WindowRequest,
} from './api-schema.ts';
import type {
  API_ARGUMENTS,
  ArgumentValues,
  ConcurrencyRequest,
  ItemRef,
  OverviewDevices,
  RecordRequest,
  SearchRequest,
  SqlRequest,
  TimeRange,
  WaitSpansRequest,
  WindowRequest,
} from './api-schema.ts';

/** What a stream is, from its recorded flags (contract/streams.ts streamKind); unknown: never seen created (an imported trace). */
export type StreamKind = 'legacy-default' | 'per-thread-default' | 'blocking' | 'non-blocking' | 'unknown';

/**
 * A timeline row. Ids are strings so they can sit in URLs:
 *   `stream:<streams.id>`          GPU operations of one stream
 *   `api:<pid>:<tid>`              CUDA runtime/driver calls of a thread
 *   `nvtx:<pid>:<tid>`             NVTX ranges of a thread (nested: depth)
 */
export type RowId = string;

export interface DeviceInfo {
  id: number;
  name: string | null;
  uuid: string | null;
  ordinal: number | null;
  ccMajor: number | null;
  ccMinor: number | null;
  smCount: number | null;
  asyncEngineCount: number | null;
  totalMemoryBytes: number | null;
  /**
   * Work time of the device: the sum of its streams' busy time (time when
   * several streams ran at once counts once per stream). Read from the
   * zones when a recording opens; the union is stats()'s overlap table.
   */
  busyNs: number;
}

export interface StreamInfo {
  rowId: RowId;
  id: number;
  pid: number;
  deviceId: number | null;
  contextId: number;
  /** CUPTI's stream id, what the user's program would print. */
  cuptiStreamId: number;
  kind: StreamKind;
  priority: number | null;
  /** This stream's operation time (its operations run one at a time: a sum). */
  busyNs: number;
  /** busyNs / the device's busyNs: the stream's share of the device's work (the shares add up to 1). */
  shareOfDevice: number;
  counts: { kernels: number; memcpys: number; memsets: number; syncs: number };
}

export interface ThreadInfo {
  pid: number;
  tid: number;
  name: string | null;
  apiRowId: RowId;
  nvtxRowId: RowId;
  apiCalls: number;
  nvtxRanges: number;
}

/**
 * A recorded process: its rank in a distributed job as its launcher set it
 * (rank, localRank, worldSize, rankVariable: null when it was not launched
 * as a rank; contract/ranks.ts), so that views can group by host and rank.
 */
export interface ProcessInfo extends RankInfo {
  pid: number;
  command: string | null;
  host: string | null;
  complete: boolean;
  threads: ThreadInfo[];
  /**
   * A merged recording's process: the source it was recorded in
   * (JobSource.id) and, when merge had to give it another pid (an earlier
   * recording had one alike), the pid it had there. null otherwise.
   */
  sourceId: number | null;
  originalPid: number | null;
}

export interface RecordingSummary {
  recordingId: string;
  /** File name for display (never a path the renderer may act on). */
  name: string;
  path: string;
  schemaVersion: number;
  complete: boolean;
  incompleteReason: string | null;
  meta: Record<string, string>;
  /** Time span covered by any item. */
  startNs: number;
  endNs: number;
  /**
   * From the first GPU operation's start to the last one's end (kernels,
   * copies, memsets); null without any. The timeline's first view frames it
   * at once, then narrows it to the steady state's once start-up is known.
   */
  gpuSpan: { startNs: number; endNs: number } | null;
  devices: DeviceInfo[];
  processes: ProcessInfo[];
  streams: StreamInfo[];
  counts: { kernels: number; memcpys: number; memsets: number; syncs: number; apiCalls: number; nvtxRanges: number };
  /** Notes worth showing the user (drops, collector errors, incomplete processes). */
  warnings: string[];
  /**
   * Browser mode only: the files given to `streamscope serve` that could not
   * be opened, with why (the page shows them; there is no other way to tell).
   */
  openErrors?: OpenFailure[];
  /** A recording merged from several (`streamscope merge`, or several opened as one job): its sources and their clock alignment; null otherwise. */
  job: JobInfo | null;
}

/**
 * How far a recording has got (recordingState): cheap enough to ask a few
 * times a second. While a recorder writes the file (`live`), a page polls
 * it and, when `revision` moves, asks again for what grew — the summary,
 * the windows at the end, the overview — and, at a bounded rate, the
 * findings (docs/COMMANDS.md, "Live recordings").
 */
export interface RecordingState {
  /** A recorder on this host is writing the recording now (meta writer_pid: SCHEMA.md). */
  live: boolean;
  /** Changes this side has seen since the recording was opened; another number: the data grew (or the recording was finished). */
  revision: number;
  complete: boolean;
  /** Time span covered by any item so far, as RecordingSummary's. */
  startNs: number;
  endNs: number;
  counts: RecordingSummary['counts'];
}

/** A file that could not be opened: which, why, and the error code. */
export interface OpenFailure {
  file: string;
  message: string;
  code: ApiErrorCode;
}

/**
 * What openRecordings (and the open dialog) opened: the recordings of one
 * job's ranks as one merged recording, any other file as itself; and the
 * files that could not be opened, each with why.
 */
export interface OpenResult {
  opened: RecordingHandle[];
  failed: OpenFailure[];
}

/** One drawable item. */
export interface TimelineItem {
  ref: ItemRef;
  kind: ItemKind;
  startNs: number;
  endNs: number;
  /** strings id of the name (kernel, API function, NVTX range); look up in `strings`. */
  nameId: number;
  /** Nesting level, NVTX rows only (0 = outermost). */
  depth?: number;
}

/** Sub-pixel items merged: [startNs, endNs) is covered by `count` items of `kinds`. */
export interface CoverageSpan {
  startNs: number;
  endNs: number;
  count: number;
  /** Most frequent kind in the span (decides the colour). */
  kind: ItemKind;
  depth?: number;
}

export interface WindowRow {
  rowId: RowId;
  items: TimelineItem[];
  coverage: CoverageSpan[];
  /**
   * Set only when the row was built coarser than asked: the resolution it
   * was built at (ns per pixel). It held more operations in the window than
   * its share of the answer's pixels (query/recording-query.ts
   * MAX_ROW_PIXELS, WINDOW_PIXELS): items shorter than this are in its
   * coverage, as are NVTX ranges nested deeper than 16.
   */
  resolutionNs?: number;
}

export interface WindowResponse {
  startNs: number;
  endNs: number;
  rows: WindowRow[];
  /**
   * Names of the items returned, by strings id, as people read them: the
   * demangled form of a mangled C++ name (SCHEMA.md, strings.demangled),
   * else the stored name. The timeline draws kernels by kernelLabels;
   * details() has both full forms.
   */
  strings: Record<number, string>;
  /**
   * The kernels' names among `strings` as the timeline draws them: labelled
   * over every kernel of the recording (query/kernel-labels.ts,
   * readableNames), so that instances of one template read apart as in the
   * tables. A kernel not in it (one the recording has grown since) is drawn
   * by its shortName.
   */
  kernelLabels: Record<number, string>;
  /** The tracks asked for in WindowRequest.concurrency, in that order. */
  concurrency?: ConcurrencyResponse[];
  /** Set only when rows were built coarser than asked (WindowRow.resolutionNs): how many, and why, in one line. */
  bounded?: string;
}

/**
 * The overview of a whole recording (the minimap) or of a range of it (a
 * folded rank's GPU-busy row), per device: the average
 * number of kernels / copies / other operations in flight per bucket
 * (their busy time in the bucket ÷ its width). From the zones alone: each
 * block of a stream's rows spreads its busy time evenly over its span, so a
 * ten-million-operation recording answers in milliseconds, at the cost of
 * detail finer than a block (≤ 4096 operations of one stream).
 */
/** OverviewResponse's one device when OverviewDevices.total asked for the sum of the devices. */
export const OVERVIEW_TOTAL_DEVICE = -1;

export interface OverviewResponse {
  startNs: number;
  endNs: number;
  bucketNs: number;
  devices: { deviceId: number; kernels: number[]; copies: number[]; other: number[] }[];
}

/** Per bucket, the maximum number of items in flight at any instant in it. */
export interface ConcurrencyResponse {
  deviceId: number;
  startNs: number;
  endNs: number;
  bucketNs: number;
  kernels: number[];
  h2d: number[];
  d2h: number[];
  other: number[];
}

export type FieldValue = string | number | boolean | null;

export interface ItemDetails {
  ref: ItemRef;
  kind: ItemKind;
  /** As stored (a C++ kernel's mangled name). */
  name: string;
  /** The demangled form of `name` (strings.demangled); null when it is not a mangled C++ name. */
  demangledName: string | null;
  startNs: number;
  endNs: number;
  durationNs: number;
  /** Every stored column of the row (raw values), plus derived ones (GB/s, kind names). */
  fields: Record<string, FieldValue>;
  /** GPU op → the API call that launched it; API call → the GPU operations it launched. */
  related: { ref: ItemRef; kind: ItemKind; name: string; demangledName: string | null; startNs: number; endNs: number; rowId: RowId }[];
  rowId: RowId;
  /**
   * A GPU operation a CUDA graph launch ran: its graph, node, launching
   * call and the launch's operations; the call that launched a graph: its
   * operations. Null for everything else (contract/graphs.ts).
   */
  graph: GraphLaunchInfo | null;
}

export interface SearchResponse {
  /**
   * Distinct names that match, with how often and how long in total, most
   * time first; demangledName as in ItemDetails. At most 1,000 (query/search.ts
   * MAX_SEARCH_NAMES): those equal to the text, then those with the most time.
   */
  names: { nameId: number; name: string; demangledName: string | null; count: number; totalNs: number }[];
  /** How many distinct names match: more than `names` holds when it was cut. */
  namesTotal: number;
  /** First matching items in time order, up to `limit`. */
  items: (TimelineItem & { rowId: RowId })[];
  total: number;
}

export interface KernelStat {
  /** As stored (mangled for C++ kernels). */
  name: string;
  /** Its demangled form, null when it is not a mangled C++ name. */
  demangledName: string | null;
  count: number;
  totalNs: number;
  meanNs: number;
  minNs: number;
  maxNs: number;
  /** totalNs / all kernels' time (0..1). */
  share: number;
}

export interface CopyStat {
  direction: string;
  srcKind: string;
  dstKind: string;
  count: number;
  bytes: number;
  totalNs: number;
  gbPerS: number;
}

export interface StreamUtilization {
  rowId: RowId;
  streamId: number;
  deviceId: number | null;
  busyNs: number;
  /** busyNs / recording GPU span of its device (0..1). */
  utilization: number;
  kernels: number;
  copies: number;
}

export interface OverlapMatrix {
  deviceId: number;
  streamIds: number[];
  /** overlapNs[i][j]: time both stream i and stream j had an operation running. */
  overlapNs: number[][];
  /** The device's streams not in the matrix: it holds the 64 busiest (query/stats.ts MAX_OVERLAP_STREAMS). */
  streamsLeftOut: number;
}

/** What a list left out, summed: the names, their launches, their time and its share of all kernels' time. */
export interface KernelsLeftOut {
  names: number;
  count: number;
  totalNs: number;
  share: number;
}

export interface StatsResponse {
  /** The 1,000 kernel names with the most time, most first (query/stats.ts MAX_STATS_KERNELS). */
  kernels: KernelStat[];
  /** The kernels of the names beyond `kernels`, summed; null when every name is listed. */
  kernelsLeftOut: KernelsLeftOut | null;
  copies: CopyStat[];
  streams: StreamUtilization[];
  overlap: OverlapMatrix[];
  /** Per device and kind: sum of busy / union of busy. */
  overlapFactors: { deviceId: number; compute: number; h2d: number; d2h: number; all: number }[];
  /** NCCL kernels and peer copies, each rank's compute / communication / copy / idle time and overlap (communication.ts; `report`'s Communication section). */
  communication: Communication;
  /** NCCL collective instances matched across ranks: arrival skew, who was last, the wait, the straggler (stragglers.ts; `report`'s Stragglers section). */
  stragglers: Stragglers;
}

export interface RecordingHandle {
  recordingId: string;
  name: string;
  path: string;
}

export interface Capabilities {
  mode: 'electron' | 'browser';
  version: string;
  /** Electron: file dialog, drag and drop, recent files. Browser mode is read-only. */
  canOpenFiles: boolean;
  canRecord: boolean;
}

export interface ExportResult {
  path: string;
  /** Trace events written, and of those the launch → GPU work flows. */
  events: number;
  flows: number;
}

export interface RecordProgress {
  jobId: string;
  state: 'starting' | 'running' | 'finishing' | 'done' | 'failed';
  records: number;
  message: string;
  /** Set when state is 'done'; with RecordRequest.live, as soon as the recording exists (it grows while running). */
  recording?: RecordingHandle;
}

/**
 * Error codes the renderer shows distinct messages for ('not-mergeable': recordings that cannot be opened as one job;
 * 'busy': browser mode has too many requests waiting, from this client or all: ask again after the answer's Retry-After).
 */
export type ApiErrorCode =
  'not-found' | 'not-a-recording' | 'newer-schema' | 'locked' | 'corrupt' | 'not-mergeable' | 'no-gpu' | 'bad-request' | 'forbidden' | 'busy' | 'internal';

/** What an implementation rejects with (serialised as JSON in both modes). */
export interface ApiErrorShape {
  code: ApiErrorCode;
  message: string;
  /** The file the error is about, when there is one. */
  file?: string;
}

// The answers of the analysis, each defined beside this file (findings.ts,
// diff.ts, scope.ts, iterations.ts; the finding shape is documented in
// docs/FORMATS.md).
export type { Finding } from './findings.ts';
export type { SqlAnswer, SqlFailure, SqlItemColumn, SqlRows, SqlValue } from './sql.ts';
import type { SqlAnswer } from './sql.ts';
export type { DiffSummary } from './diff.ts';
export type { Scope, ScopeInfo, Startup } from './scope.ts';
export type { Iterations, IterationRow, RangeName } from './iterations.ts';
export type { Collective, CommKernel, Communication, RankDeviceTime, RankTime } from './communication.ts';
export type { CollectiveInstance, CollectiveSkew, Straggler, StragglerRank, Stragglers } from './stragglers.ts';
export type { ClockMethod, JobInfo, JobSource } from './job.ts';
export type { Dependency, DependencyEnd, DependencyKind, ItemDependencies, WaitSpan, WaitSpans } from './dependencies.ts';
import type { ItemDependencies, WaitSpans } from './dependencies.ts';
export type { GraphLaunches, GraphLaunchInfo, GraphSummary } from './graphs.ts';
import type { GraphLaunchInfo } from './graphs.ts';
import type { JobInfo } from './job.ts';
import type { Communication } from './communication.ts';
import type { Stragglers } from './stragglers.ts';
import type { Finding } from './findings.ts';
import type { DiffSummary } from './diff.ts';
import type { Scope, ScopeInfo } from './scope.ts';
import type { Iterations, RangeName } from './iterations.ts';
export type { AnalysisPhase, AnalysisProgress, ProgressStep } from './progress.ts';
import type { AnalysisProgress } from './progress.ts';

export interface StreamScopeApi {
  capabilities(): Promise<Capabilities>;
  /** Recordings open in this session (browser mode: the files given to `serve`). */
  listRecordings(): Promise<RecordingHandle[]>;
  /** Electron only (browser mode rejects with 'forbidden'). */
  openRecording(path: string): Promise<RecordingHandle>;
  /**
   * Electron only: several files at once (dropped together). Recordings of
   * one job's ranks (ranks in each, none twice, the same world size) open
   * as one recording, merged into the app's cache and reused while the
   * files are unchanged; any other file opens as itself. Files that cannot
   * be opened (or merged) are in `failed`, each with why.
   */
  openRecordings(paths: string[]): Promise<OpenResult>;
  /**
   * Closes a recording of this session (a tab the user closed): the query
   * side closes its file; its id answers 'not-found' from then on. (The
   * analysis thread keeps its own copy among its three most recently used
   * recordings until others push it out.) Browser mode serves the files `serve` was given for as
   * long as it runs, to every page, so there it releases nothing.
   */
  closeRecording(recordingId: string): Promise<null>;
  /** Electron only: shows the file dialog (several files: as openRecordings); null when cancelled. */
  showOpenDialog(): Promise<OpenResult | null>;
  recentFiles(): Promise<string[]>;
  summary(recordingId: string): Promise<RecordingSummary>;
  /**
   * Whether the recording is still being written, and how far it has got:
   * what a page polls to follow a recording as it grows (a finished one
   * answers live: false and the same revision for ever).
   */
  recordingState(recordingId: string): Promise<RecordingState>;
  window(recordingId: string, request: WindowRequest): Promise<WindowResponse>;
  concurrency(recordingId: string, request: ConcurrencyRequest): Promise<ConcurrencyResponse>;
  /**
   * Per device, `buckets` columns over `range` (null: the whole recording)
   * of its average operations in flight, from the zones alone
   * (OverviewResponse): the minimap, and a folded rank's GPU-busy row.
   * `devices` (null: each device of the recording): only those, or their
   * sum (OverviewDevices).
   */
  overview(recordingId: string, buckets: number, range: TimeRange | null, devices: OverviewDevices | null): Promise<OverviewResponse>;
  details(recordingId: string, ref: ItemRef): Promise<ItemDetails>;
  search(recordingId: string, request: SearchRequest): Promise<SearchResponse>;
  /**
   * What an item waited for and what waited for it — event waits with their
   * wait time, the legacy barrier, synchronize calls — and a GPU
   * operation's critical chain back to the host call that made it possible
   * (ItemDependencies; its launch is in details()). Computed on the
   * analysis thread; the first call on a recording walks it once.
   */
  dependencies(recordingId: string, ref: ItemRef): Promise<ItemDependencies>;
  /** The spans event waits held operations' starts on these stream rows over a window: the timeline hatches them. */
  waitSpans(recordingId: string, request: WaitSpansRequest): Promise<WaitSpans>;
  /** Kernel, copy, stream and overlap statistics of `scope`. */
  stats(recordingId: string, scope: Scope): Promise<StatsResponse>;
  /** The diagnosis of `scope`: why streams did not overlap, worst first, with evidence ids and what-if estimates. */
  findings(recordingId: string, scope: Scope): Promise<Finding[]>;
  /**
   * What `scope` resolves to in this recording: its label, time windows
   * and start-up as detected. 'bad-request' for a range the recording does
   * not have.
   */
  scopeInfo(recordingId: string, scope: Scope): Promise<ScopeInfo>;
  /**
   * The analysis of this recording running now on the analysis thread
   * (findings, stats, … of some scope), how far it has got and how many
   * wait behind it; null when none runs. Cheap, answered at once beside the
   * windows: the findings panel and the Stats tab poll it while they wait
   * (contract/progress.ts).
   */
  analysisProgress(recordingId: string): Promise<AnalysisProgress | null>;
  /** NVTX range names with their instance counts and total time, most time first (the range picker). */
  ranges(recordingId: string): Promise<RangeName[]>;
  /**
   * One row per instance of the NVTX range `name` (null: the repeating
   * range covering most time; null answer when nothing repeats), warm-up
   * and outliers flagged: `streamscope report --iterations`. `findings`:
   * with each instance's top finding (its share of the range's diagnosis,
   * what-ifs included: 20 s at 10 M operations); without, the rows alone
   * (the timeline's iterations row: a second or two there).
   */
  iterations(recordingId: string, name: string | null, findings: boolean): Promise<Iterations | null>;
  /**
   * What changed from `baseId` to `otherId` (both open), each on `scope`:
   * the summary `streamscope diff BASE OTHER --json` prints
   * (docs/FORMATS.md), for the compare view.
   */
  compare(baseId: string, otherId: string, scope: Scope): Promise<DiffSummary>;
  /**
   * Runs one read-only SQL query on the recording (the Query tab; what
   * `streamscope sql` runs): its rows, at most `rowLimit` (10 000), with
   * the columns that name an operation, or why it gave none — SQLite's
   * error with where it points, a statement refused (anything that writes,
   * ATTACH, a PRAGMA that sets), the time limit (5 s) passed
   * (contract/sql.ts). Runs on a thread of its own: a query never holds up
   * the timeline or the findings.
   */
  sql(recordingId: string, request: SqlRequest): Promise<SqlAnswer>;
  /**
   * File ▸ Export…: the recording as Chrome trace JSON (what `streamscope
   * export` writes), to a file the user picks in a save dialog. Null when
   * the dialog was cancelled. Desktop app only: browser mode answers
   * 'forbidden' (it writes nothing; use `streamscope export`).
   */
  exportTrace(recordingId: string): Promise<ExportResult | null>;
  /** Electron only: starts `streamscope record`; poll with recordStatus. */
  record(request: RecordRequest): Promise<RecordProgress>;
  recordStatus(jobId: string): Promise<RecordProgress>;
}

/** The method names, for validating IPC channels and HTTP routes against one list. */
export const apiMethods = [
  'capabilities',
  'listRecordings',
  'openRecording',
  'openRecordings',
  'closeRecording',
  'showOpenDialog',
  'recentFiles',
  'summary',
  'recordingState',
  'window',
  'concurrency',
  'overview',
  'details',
  'search',
  'dependencies',
  'waitSpans',
  'stats',
  'findings',
  'scopeInfo',
  'analysisProgress',
  'ranges',
  'iterations',
  'compare',
  'sql',
  'exportTrace',
  'record',
  'recordStatus',
] as const satisfies readonly (keyof StreamScopeApi)[];

export type ApiMethod = (typeof apiMethods)[number];

// Compile time: each method's checked arguments (api-schema.ts) are exactly
// the parameters StreamScopeApi declares for it, and every method has them
// (a method whose schema and signature disagree is named in the error).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Disagreeing = { [M in ApiMethod]: Same<ArgumentValues<(typeof API_ARGUMENTS)[M]>, Parameters<StreamScopeApi[M]>> extends true ? never : M }[ApiMethod];
type Unknown = Exclude<keyof typeof API_ARGUMENTS, ApiMethod>;
const argumentsMatchTheApi: [Disagreeing | Unknown] extends [never] ? true : Disagreeing | Unknown = true;
void argumentsMatchTheApi;
