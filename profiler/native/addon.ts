// The native addon (native/addon), typed. Loaded lazily, so that code paths
// that never need it (report, decoding) work even where it is not built.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from './paths.ts';

export interface PcieLink {
  currentGeneration: number;
  currentWidth: number;
  maxGeneration: number;
  maxWidth: number;
}

export interface DeviceInfo {
  ordinal: number;
  name: string;
  uuid: string;
  ccMajor: number;
  ccMinor: number;
  smCount: number;
  totalMemoryBytes: number;
  /** Copy engines usable concurrently with kernels. */
  asyncEngineCount: number;
  concurrentKernels: boolean;
  pciDomain: number;
  pciBus: number;
  pciDevice: number;
  clockKhz: number;
  memoryClockKhz: number;
  memoryBusWidthBits: number;
  l2CacheBytes: number;
  pcie: PcieLink | null;
}

export interface DeviceInventory {
  driverVersion: number | null;
  devices: DeviceInfo[];
  /** Why the list is empty (no driver, cuInit failed, ...), else null. */
  error: string | null;
}

export interface CuptiInfo {
  path: string;
  version: number | null;
  error: string | null;
}

export interface IngestProgress {
  /** Bytes of the file stored so far (the next call resumes here). */
  bytesConsumed: number;
  records: number;
  recordsByKind: Record<string, number>;
  /** The stream's End record was seen: its process ended normally. */
  complete: boolean;
  pid: number;
  lastFlush: { reason: number; signal: number; atNs: number } | null;
  /** Error records the collector wrote. */
  errors: { code: number; message: string }[];
  dropped: number;
  /** Kind of the last record stored ('Flush', 'End', ...), null before any. */
  lastKind: string | null;
  /** With `final`: where the stream stops inside a record. */
  truncated: { atByte: number; missingBytes: number } | null;
}

interface IngestInstance {
  ingestFile(path: string, options?: { final?: boolean }): Promise<IngestProgress>;
  finish(options?: { finalSql?: string[] }): Promise<void>;
}

/** The ingest benchmark's ceiling (native/addon/src/insert_ceiling.h): a finished recording's rows, held in memory. */
export interface InsertCeilingInstance {
  /** Every row it holds. */
  readonly rows: number;
  /**
   * Stores them in `target` (a fresh recording, its indexes dropped for the
   * load) with the ingest's statements, pragmas, transactions and batches,
   * then runs `finalSql` as Ingest.finish does; synchronous.
   */
  insert(target: string, options?: { finalSql?: string[] }): { rows: number; rowsSeconds: number; indexSeconds: number };
}

/** The typed array of each column type, by name. */
interface TypedArrays {
  Uint8Array: Uint8Array;
  Int32Array: Int32Array;
  Uint32Array: Uint32Array;
  Float64Array: Float64Array;
}
type ColumnTypes = Record<string, keyof TypedArrays>;
type ColumnsOf<L extends ColumnTypes> = { length: number } & { -readonly [K in keyof L]: TypedArrays[L[K]] };

/**
 * The columns of the native column loader (loadOps/loadCalls/loadTimeline),
 * name → typed array. native/addon/src/timeline_columns.h is the definition
 * (the C++ structs and the JS objects are expanded from it); TypeScript
 * cannot read it, so the lists are spelled out here and the types derived
 * from them. The addon exports its lists (`timelineColumns`) and
 * test/addon/timeline-columns.test.ts fails when these differ.
 */
export const OP_COLUMNS = {
  kind: 'Uint8Array', // 1 kernel, 2 memcpy, 3 memset
  rowId: 'Float64Array',
  start: 'Float64Array',
  end: 'Float64Array',
  stream: 'Int32Array',
  device: 'Int32Array',
  bytes: 'Float64Array',
  detail: 'Int32Array', // kernel: name_id; memcpy: src_kind * 16 + dst_kind; memset: memory_kind
  copyKind: 'Uint8Array',
  correlation: 'Uint32Array',
  pid: 'Int32Array',
  isAsync: 'Uint8Array',
  blocks: 'Float64Array',
  blockThreads: 'Int32Array',
  registers: 'Int32Array',
  sharedBytes: 'Int32Array',
} as const satisfies ColumnTypes;

export const CALL_COLUMNS = {
  rowId: 'Float64Array',
  start: 'Float64Array',
  end: 'Float64Array',
  pid: 'Int32Array',
  tid: 'Int32Array',
  nameId: 'Int32Array',
  correlation: 'Uint32Array',
  domain: 'Uint8Array',
} as const satisfies ColumnTypes;

/** GPU operations read natively, sorted by start. */
export type OpColumns = ColumnsOf<typeof OP_COLUMNS>;
/** CUDA API calls read natively, sorted by start. */
export type CallColumns = ColumnsOf<typeof CALL_COLUMNS>;

/** One SQL statement of the native ingest (native/addon/src/ingest_statements.cc). */
export interface IngestStatement {
  name: string;
  sql: string;
  /** The table it writes; null for a lookup. */
  table: string | null;
  /** The columns it writes; for an INSERT in bind order. */
  columns: string[];
}

interface AddonModule {
  devices(driverOnly?: boolean): DeviceInventory;
  cuptiInfo(libraryPath?: string): CuptiInfo;
  loadOps(dbPath: string): OpColumns;
  loadCalls(dbPath: string): CallColumns;
  loadTimeline(dbPath: string, options?: TimelineLoadOptions): { ops: OpColumns; calls: CallColumns; via: string; leftOut: LeftOutRows | null };
  loadTimeline(
    dbPath: string,
    options: TimelineLoadOptions & { out: { ops: Omit<OpColumns, 'length'>; calls: Omit<CallColumns, 'length'> } },
  ): { ops: number; calls: number; via: string; leftOut: LeftOutRows | null };
  checkTimeline(dbPath: string): { leftOut: LeftOutRows | null };
  loadRows(
    dbPath: string,
    request: RowRanges & LoadRowsOptions,
    out: { ops: Partial<Omit<OpColumns, 'length'>>; calls: Partial<Omit<CallColumns, 'length'>> },
  ): { ops: number; calls: number; via: string; leftOut: LeftOutRows | null };
  indexCalls(
    calls: Pick<CallColumns, 'length' | 'pid' | 'tid' | 'correlation' | 'domain'>,
    ops: Pick<OpColumns, 'length' | 'pid' | 'correlation'>,
    out: { opCall: Int32Array; threadCalls: Int32Array; tableOf?: (length: number) => Int32Array },
  ): Omit<CallIndexColumns, 'opCall' | 'threadCalls'>;
  outermostCalls(inputs: { calls: number; start: Float64Array; end: Float64Array; threads: Int32Array[]; outer: Int32Array }): void;
  replaySchedule(inputs: ReplayScheduleInputs): ReplayScheduleResult;
  captureGraphs(inputs: CaptureGraphsInputs): CaptureGraphsResult;
  issueWalk(inputs: IssueWalkInputs): void;
  duplexSamples(inputs: DuplexSamplesInputs): DuplexSamples;
  uncontendedDurations(inputs: UncontendedDurationsInputs): void;
  latencySamples(inputs: LatencySamplesInputs): LatencySamples;
  launchGaps(inputs: LaunchGapsInputs): LaunchGaps[];
  opResources(inputs: OpResourcesInputs): void;
  denseIndices(inputs: DenseIndicesInputs): DenseIndicesFound;
  deviceUnions(inputs: DeviceUnionsInputs): NativeDeviceUnions[];
  keepFreedMemory(): boolean;
  prefaultHeap(bytes: number): number;
  mapOwnBlocks(on: boolean): boolean;
  mapFile(path: string, views: { offset: number; bytes: number }[]): ArrayBuffer[] | null;
  writeFileDirect(path: string, pieces: { data: ArrayBufferView; offset: number }[], length: number): Promise<void>;
  Ingest: new (dbPath: string, options: { originNs: bigint }) => IngestInstance;
  InsertCeiling: new (source: string) => InsertCeilingInstance;
  demangle(names: string[]): (string | null)[];
  importKinetoTrace(file: string, options: KinetoTraceOptions): KinetoTraceRows;
  scanTraceEvents(file: string, options: ScanTraceOptions): Record<string, unknown>;
  appendTablePages(output: string, tables: PageMergeTable[]): PageMergeResult;
  timelineColumns: { ops: ColumnTypes; calls: ColumnTypes };
  traceCodes: Record<string, number>;
  ingestStatements: IngestStatement[];
  ingestSchemaVersion: number;
}

export function addonPath(): string {
  return process.env.STREAMSCOPE_ADDON_PATH ?? path.join(repoRoot, 'native/addon/build/Release/streamscope_addon.node');
}

let loaded: AddonModule | null = null;
function addon(): AddonModule {
  if (loaded) return loaded;
  const file = addonPath();
  if (!fs.existsSync(file)) throw new Error(`StreamScope native addon not built (run \`npm run build:native\`): ${file}`);
  // RTLD_DEEPBIND: the addon's references to simdjson (Debian's
  // libsimdjson, native/addon/src/trace_import.cc) must reach that library,
  // not the older copy of simdjson Node links in and exports under the same
  // names (a parse went into Node's copy and crashed).
  const module = { exports: {} as AddonModule };
  process.dlopen(module, file, os.constants.dlopen.RTLD_LAZY | (os.constants.dlopen.RTLD_DEEPBIND ?? 0));
  loaded = module.exports;
  return loaded;
}

/** GPUs through the driver (dlopen): never throws for a missing driver. */
export function devices(): DeviceInventory {
  return addon().devices();
}

/**
 * The driver alone: whether libcuda.so.1 loads, and its version (`devices`
 * empty). No cuInit, which costs 0.1–0.25 s: `record` checks this before
 * the target starts and takes the inventory while it runs.
 */
export function driver(): Pick<DeviceInventory, 'driverVersion' | 'error'> {
  const { driverVersion, error } = addon().devices(true);
  return { driverVersion, error };
}

export function cuptiInfo(libraryPath?: string): CuptiInfo {
  return addon().cuptiInfo(libraryPath);
}

/** Kernels, memcpys and memsets of a recording as columns, in (start, kind, id) order. */
export function loadOpColumns(dbPath: string): OpColumns {
  return addon().loadOps(dbPath);
}

/**
 * How the native loader reads a recording's rows (native/addon/src/table_loader.h):
 * 'pages' straight from the file's table b-trees (throws where the file
 * cannot be read so), 'sql' through SQLite alone, 'auto' (the default)
 * pages where it can, else SQLite. STREAMSCOPE_LOAD_VIA=sql|pages overrides auto.
 */
export type LoadVia = 'auto' | 'pages' | 'sql';

export interface TimelineLoadOptions {
  via?: LoadVia;
  /**
   * Rows read so far, added to as the load goes (element 0, atomically): an
   * Int32Array over a SharedArrayBuffer lets another thread tell the load's
   * progress while this one is blocked in it. Back to 0 where the pages
   * fail and SQLite reads everything again.
   */
  progress?: Int32Array;
}

/**
 * Rows a load read and left out (native/addon/src/row_rules.h: an end
 * before its start, a negative size): how many, and the first, said as
 * "kernels row 3: end_ns 5 is before start_ns 9".
 */
export interface LeftOutRows {
  rows: number;
  first: string;
}

/**
 * Ops and calls at once, every table read on all cores. `via`: how the rows
 * were read, 'pages' or 'sql: ' and why not through the pages. Every row is
 * checked (row_rules.h): a row refused throws an Error whose code is
 * 'STREAMSCOPE_MALFORMED_ROW' (store/row-checks.ts says it about the
 * file); `leftOut`: the rows left out, or null.
 */
export function loadTimelineColumns(
  dbPath: string,
  options: TimelineLoadOptions = {},
): { ops: OpColumns; calls: CallColumns; via: string; leftOut: LeftOutRows | null } {
  return addon().loadTimeline(dbPath, options);
}

/**
 * loadTimelineColumns into arrays over SharedArrayBuffers, which another
 * thread can be handed without a copy (postMessage shares their memory):
 * the analysis's what-if thread (analysis/diagnosis/whatif-thread.ts) reads the
 * columns the analysis loaded. `rows`: at least as many operations and calls
 * as the file holds (a load that finds more throws a RangeError); the
 * columns are views of the first rows.
 */
export function loadSharedTimelineColumns(
  dbPath: string,
  rows: { ops: number; calls: number },
  options: TimelineLoadOptions = {},
): { ops: OpColumns; calls: CallColumns; via: string; leftOut: LeftOutRows | null } {
  const shared = (columns: Record<string, keyof typeof TYPED_ARRAYS>, n: number) =>
    Object.fromEntries(
      Object.entries(columns).map(([name, type]) => {
        // A typed array over shared memory is one over an ArrayBufferLike (the constructors' types say ArrayBuffer).
        const memory = new SharedArrayBuffer(Math.max(1, n) * TYPED_ARRAYS[type].BYTES_PER_ELEMENT) as unknown as ArrayBuffer;
        return [name, new TYPED_ARRAYS[type](memory)];
      }),
    );
  // Each column a map of its own, which the loader first touches as it writes it, backed by huge pages (where a
  // one-shot command's heap would have served it: memory_policy.cc mapOwnBlocks).
  const own = mapOwnBlocks(true);
  const out = (() => {
    try {
      return { ops: shared(OP_COLUMNS, rows.ops), calls: shared(CALL_COLUMNS, rows.calls) };
    } finally {
      if (own) mapOwnBlocks(false);
    }
  })();
  return loadedColumns(out, addon().loadTimeline(dbPath, { ...options, out: out as never }));
}

/**
 * A load the addon wrote into the caller's arrays (`out`, by column name) as
 * the columns it read: each a view of its first rows (`n`'s counts); a
 * column not in `out` (a narrow load's) `missing`'s array of that type.
 */
function loadedColumns(
  out: { ops: Record<string, AnyTypedArray>; calls: Record<string, AnyTypedArray> },
  n: { ops: number; calls: number; via: string; leftOut: LeftOutRows | null },
  missing?: (type: keyof typeof TYPED_ARRAYS, length: number) => AnyTypedArray,
): { ops: OpColumns; calls: CallColumns; via: string; leftOut: LeftOutRows | null } {
  const view = (columns: Record<string, keyof typeof TYPED_ARRAYS>, got: Record<string, AnyTypedArray>, length: number) => {
    const c: Record<string, unknown> = { length };
    for (const [name, type] of Object.entries(columns)) c[name] = (got[name] ?? missing!(type, length)).subarray(0, length);
    return c;
  };
  return {
    ops: view(OP_COLUMNS, out.ops, n.ops) as unknown as OpColumns,
    calls: view(CALL_COLUMNS, out.calls, n.calls) as unknown as CallColumns,
    via: n.via,
    leftOut: n.leftOut,
  };
}

/** The checks of loadTimelineColumns on every operation and call, keeping none: throws as it does; the rows it would leave out. */
export function checkTimelineRows(dbPath: string): LeftOutRows | null {
  return addon().checkTimeline(dbPath).leftOut;
}

/**
 * The host calls' indexes over loaded columns (native/addon/src/call_index.cc; analysis/host.ts hostOf): per process
 * (`pids`) its calls by correlation id, an array from `mins[p]` (-1: none), or its (id, call) pairs where the ids are
 * too sparse for an array over their span (id-table.ts); the call behind each operation (`opCall`); each thread's calls
 * in start order, one thread after another in `threadCalls`, thread t's up to `threadEnds[t]`, its key
 * pid × THREAD_LANE_FACTOR + tid in `threadKeys`, threads in order of first sight.
 */
export interface CallIndexColumns {
  opCall: Int32Array;
  threadCalls: Int32Array;
  pids: Int32Array;
  mins: Float64Array;
  tables: (Int32Array | { ids: Uint32Array; calls: Int32Array })[];
  threadKeys: Float64Array;
  threadEnds: Int32Array;
  /** How many ops have a call (opCall ≥ 0), and whether those come in their calls' order. */
  opsWithCall: number;
  opsInCallOrder: boolean;
}

/**
 * `shared`: its arrays over SharedArrayBuffers (all but a sparse process's pairs, which are few), so that another
 * thread is handed them without a copy (whatif-thread.ts: the what-if thread takes the analysing thread's).
 */
export function indexCalls(
  calls: Pick<CallColumns, 'length' | 'pid' | 'tid' | 'correlation' | 'domain'>,
  ops: Pick<OpColumns, 'length' | 'pid' | 'correlation'>,
  shared = false,
): CallIndexColumns {
  const int32 = (n: number) => (shared ? new Int32Array(new SharedArrayBuffer(4 * n)) : new Int32Array(n));
  const out = { opCall: int32(ops.length), threadCalls: int32(calls.length) };
  return { ...out, ...addon().indexCalls(calls, ops, shared ? { ...out, tableOf: int32 } : out) };
}

/**
 * What a native pass over the analysis's arrays is handed (replay_scheduler.cc,
 * graph_capture.cc): counts and numbers by name, typed
 * arrays read or written in place (native/addon/src/typed_arrays.h checks
 * each one's type), null for an optional one that is absent.
 */
type NativeInputs = Record<string, number | Int32Array | Uint8Array | Float32Array | Float64Array | null>;

/**
 * Per call, the outermost call containing it (a driver call inside a
 * runtime call), itself if outermost, written into `outer`: each thread's
 * calls (`threads`, in start order) walked (native/addon/src/call_index.cc).
 */
export function outermostCallsNatively(calls: Pick<CallColumns, 'length' | 'start' | 'end'>, threads: Int32Array[], outer: Int32Array): void {
  addon().outermostCalls({ calls: calls.length, start: calls.start, end: calls.end, threads, outer });
}

/**
 * What the what-if replay's simulation reads (native/addon/src/replay_scheduler.cc
 * Inputs; profiler/analysis/replay/replay.ts builds it): counts, per-op and
 * per-call arrays, the fix's options (null where absent), the scratch and
 * the result's arrays, written in place.
 */
export interface ReplayScheduleInputs extends NativeInputs {
  ops: number;
  calls: number;
  devices: number;
  contexts: number;
  threads: number;
}

export interface ReplayScheduleResult {
  firstIssue: number;
  gpuStart: number;
  gpuEnd: number;
}

/** Runs one what-if replay's simulation (replay.ts): start, end and busy written in place. */
export function replaySchedule(inputs: ReplayScheduleInputs): ReplayScheduleResult {
  return addon().replaySchedule(inputs);
}

/** What the CUDA-graph fix's passes read and write (native/addon/src/graph_capture.cc; replay/whatif.ts captureGraphs). */
export interface CaptureGraphsInputs extends NativeInputs {
  ops: number;
  calls: number;
  threads: number;
  minKernels: number;
  launchNsPerNode: number;
  launchMinNs: number;
  nodeGapNs: number;
}

/** Kernel launches seen; the runs captured, their kernels, the host time gone (callGap, callDuration, afterLatency written where graphs > 0). */
export interface CaptureGraphsResult {
  launches: number;
  graphs?: number;
  captured?: number;
  hostNs?: number;
}

/** The CUDA-graph fix's runs and what the replay changes for them (replay/whatif.ts captureGraphs). */
export function captureGraphsNatively(inputs: CaptureGraphsInputs): CaptureGraphsResult {
  return addon().captureGraphs(inputs);
}

/** What the host model's walk reads and writes (native/addon/src/issue_walk.cc; replay/replay-host.ts issueWalk builds it). */
export interface IssueWalkInputs extends NativeInputs {
  ops: number;
  calls: number;
  streams: number;
  contexts: number;
  threads: number;
  /** 1 where every op has a call (none is issued by its own start), else 0. */
  allOpsHaveCalls: number;
}

/** The host model's walk in issue order (replay-host.ts): its outputs written in place. */
export function issueWalkNatively(inputs: IssueWalkInputs): void {
  addon().issueWalk(inputs);
}

/** The op columns duplex contention's passes read (native/addon/src/duplex_work.cc; analysis/bandwidth.ts). */
interface DuplexOps extends NativeInputs {
  ops: number;
  kind: Uint8Array;
  category: Uint8Array;
  detail: Int32Array;
  device: Int32Array;
  start: Float64Array;
  end: Float64Array;
}

export interface DuplexSamplesInputs extends DuplexOps {
  bytes: Float64Array;
  /** Written: per op, the time pinned copies of the other direction overlapped it. */
  overlap: Float64Array;
  largeBytes: number;
  aloneBelow: number;
  overAbove: number;
  samples: number;
}

/** The large pinned copies' rates (bytes per ns) by the share of their time overlapped, per slot * 2 + direction (0 HtoD, 1 DtoH). */
export interface DuplexSamples {
  /** Every op's device, in order of first sight. */
  devices: number[];
  /** The device of each slot. */
  slots: number[];
  alone: number[][];
  over: number[][];
}

/** Each op's time overlapped by pinned copies of the other direction on its device, and the copies' rates alone and overlapped. */
export function duplexSamplesNatively(inputs: DuplexSamplesInputs): DuplexSamples {
  return addon().duplexSamples(inputs);
}

export interface UncontendedDurationsInputs extends DuplexOps {
  overlap: Float64Array;
  /** Written (may be `overlap` itself). */
  out: Float64Array;
  /** Per device listed, its factors; defaultHtoD / defaultDtoH for any other. */
  factorDevices: Int32Array;
  htod: Float64Array;
  dtoh: Float64Array;
  defaultHtoD: number;
  defaultDtoH: number;
  /** Where given, each op's dense stream (of `streams`): an op's work also ends where the next on its stream began. */
  streamOf: Int32Array | null;
  streams: number;
}

/** Each op's duration had it run alone (the overlapped share of a pinned copy scaled back by its device's factor). */
export function uncontendedDurationsNatively(inputs: UncontendedDurationsInputs): void {
  addon().uncontendedDurations(inputs);
}

/** What the host model's latency pass reads (native/addon/src/latency_samples.cc; replay/replay-host.ts measureLatencies). */
export interface LatencySamplesInputs extends NativeInputs {
  ops: number;
  calls: number;
  devices: number;
  /** The first this many samples of each list. */
  samples: number;
  /** A wait counts where what decided the start came this long after the call returned… */
  clearNs: number;
  /** …and the op started within this long of it. */
  withinNs: number;
}

/** Lags (ns) per device × op kind (launch, dependency), device × engine (engine, chain) and device (all). */
export interface LatencySamples {
  launch: number[][];
  dependency: number[][];
  engine: number[][];
  chain: number[][];
  all: number[][];
}

/** The samples of the GPU's own latencies, one pass over every op. */
export function latencySamplesNatively(inputs: LatencySamplesInputs): LatencySamples {
  return addon().latencySamples(inputs);
}

/** What the launch-bound rule's passes read (native/addon/src/launch_gaps.cc; diagnosis/findings/launch-bound.ts). */
export interface LaunchGapsInputs {
  ops: number;
  calls: number;
  kind: Uint8Array;
  start: Float64Array;
  end: Float64Array;
  opCall: Int32Array;
  callStart: Float64Array;
  callEnd: Float64Array;
  /** Per device, its ops' indexes in start order. */
  onDevice: Int32Array[];
  minKernels: number;
  /** A short kernel counts where the gap before it is under this many launches. */
  gapFactor: number;
  /** How many of the short kernels to list. */
  evidence: number;
}

/** One device's kernels and launches; where both reach minKernels, its median launch, short kernels, the idle time before them, the first of them. */
export type LaunchGaps =
  | { kernels: number; launches: number }
  | { kernels: number; launches: number; launchNs: number; short: number; idleNs: number; evidence: number[] };

/** Per device, its median kernel launch and the short kernels the GPU idled before. */
export function launchGapsNatively(inputs: LaunchGapsInputs): LaunchGaps[] {
  return addon().launchGaps(inputs);
}

/** What the host model's dense indexes read and write (native/addon/src/dense_indices.cc; replay/replay-host.ts denseIndices). */
export interface DenseIndicesInputs {
  ops: number;
  device: Int32Array;
  stream: Int32Array;
  pid: Int32Array;
  /** The devices table's ids and their dense indexes. */
  tableDevices: Float64Array;
  tableDeviceIndex: Float64Array;
  /** The streams table's ids, in its order (dense streams 0, 1, …), and each one's context id (NaN: none). */
  tableStreams: Float64Array;
  tableStreamContext: Float64Array;
  /** Written: per op its dense device (where not 0), stream and context (where not 0). */
  devOf: Int32Array;
  streamOfOp: Int32Array;
  ctxOfOp: Int32Array;
}

/** In order of first sight: the devices and streams only ops name (each stream's process), the contexts' keys and processes. */
export interface DenseIndicesFound {
  devices: number[];
  streams: number[];
  streamPids: number[];
  contexts: number[];
  contextPids: number[];
}

/** Each op's dense device, stream and context, written into the inputs' arrays. */
export function denseIndicesNatively(inputs: DenseIndicesInputs): DenseIndicesFound {
  return addon().denseIndices(inputs);
}

/** What the replay's resources per op read and write (native/addon/src/op_resources.cc; replay/replay-resources.ts). */
export interface OpResourcesInputs {
  ops: number;
  /** Dense devices (the host model's). */
  devices: number;
  kind: Uint8Array;
  category: Uint8Array;
  detail: Int32Array;
  devOf: Int32Array;
  blocks: Float64Array;
  blockThreads: Int32Array;
  registers: Int32Array;
  sharedBytes: Int32Array;
  /** Per op, 1 for a communication kernel. */
  commOps: Uint8Array;
  /** Per dense device, 1 where one engine serves both directions. */
  sharedEngine: Uint8Array;
  /** Per dense device, its SMs; 0 where unknown. */
  smCount: Float64Array;
  /** Blocks per SM of a kernel shape on a dense device (asked once per shape). */
  perSm(device: number, threads: number, registers: number, shared: number): number;
  /** Written: per op its engine, its SM share, whether it takes part in duplex contention (zeroed by the caller). */
  engine: Int32Array;
  share: Float32Array;
  duplex: Uint8Array;
}

/** Each op's engine, SM share and duplex flag, written into the inputs' arrays. */
export function opResourcesNatively(inputs: OpResourcesInputs): void {
  addon().opResources(inputs);
}

/** What the devices' busy unions read (native/addon/src/device_unions.cc; analysis/overlap.ts deviceUnions). */
export interface DeviceUnionsInputs {
  ops: number;
  device: Int32Array;
  pid: Int32Array;
  category: Uint8Array;
  start: Float64Array;
  end: Float64Array;
}

/** Busy time of a group of intervals: their count, the sum of their lengths, the length of their union. */
export interface NativeBusy {
  count: number;
  sum: number;
  union: number;
}

/** One device's busy time per category and every op's union ([s0, e0, s1, e1, …] in union[0 .. length)). */
export interface NativeDeviceUnions {
  deviceId: number;
  operations: number;
  pid: number | null;
  compute: NativeBusy;
  htod: NativeBusy;
  dtoh: NativeBusy;
  all: NativeBusy;
  union: Float64Array;
  length: number;
}

/** Each device's busy time and union of operations, devices in the order their first op comes. */
export function deviceUnionsNatively(inputs: DeviceUnionsInputs): NativeDeviceUnions[] {
  return addon().deviceUnions(inputs);
}

/**
 * This process's heap keeps the memory it frees for its next allocations,
 * for the rest of its life (native/addon/src/memory_policy.cc says what it
 * saves and costs): for a command that ends when its work does. Whether
 * the allocator took it (glibc's does).
 */
export function keepFreedMemory(): boolean {
  return addon().keepFreedMemory();
}

/**
 * Maps the heap's pages for a block of `bytes` now, on this thread, for the
 * thread that allocates there next (native/addon/src/memory_policy.cc): a
 * thread with nothing to do takes the page faults another would take on
 * its way. The bytes mapped; 0 unless keepFreedMemory's policy is in force.
 */
export function prefaultHeap(bytes: number): number {
  return addon().prefaultHeap(bytes);
}

/**
 * ArrayBuffers over a file's bytes [offset, offset + bytes), one per view,
 * without a copy (native/addon/src/file_map.cc): a private, writable map
 * of the file, whose pages are the page cache's (a write copies its page,
 * never reaching the file), unmapped when the last view is collected.
 * Offsets are multiples of the page size. Null where the runtime refuses
 * buffers over outside memory (Electron's V8 sandbox); throws, naming the
 * file, where it cannot be opened or mapped or is shorter than the views.
 */
export function mapFile(file: string, views: { offset: number; bytes: number }[]): ArrayBuffer[] | null {
  return addon().mapFile(file, views);
}

/**
 * Writes the file `file` (created or emptied) on a thread of the pool,
 * around the page cache where the file system allows (O_DIRECT: no fresh
 * page-cache memory, the disk's time only; native/addon/src/file_map.cc):
 * each piece's bytes at its offset, zeros to the next 4 KiB, the file
 * `length` bytes long, synced. Offsets and `length` are multiples of 4096,
 * the pieces in order without overlap; their arrays are held, and must not
 * change, until the promise settles. It rejects naming the file.
 */
export function writeFileDirect(file: string, pieces: { data: ArrayBufferView; offset: number }[], length: number): Promise<void> {
  return addon().writeFileDirect(file, pieces, length);
}

/**
 * While `on`, large blocks are maps of their own rather than the kept
 * heap's (native/addon/src/memory_policy.cc): for arrays that live as long
 * as the process and that a loader writes whole. Whether it took (false
 * where keepFreedMemory's policy is not in force: such blocks are maps of
 * their own anyway).
 */
export function mapOwnBlocks(on: boolean): boolean {
  return addon().mapOwnBlocks(on);
}

/** API calls of a recording as columns, in (start, id) order. */
export function loadCallColumns(dbPath: string): CallColumns {
  return addon().loadCalls(dbPath);
}

/** Inclusive rowid ranges of some rows, per table, flat: [lo, hi, lo, hi, …]. A table left out: none of its rows. */
export interface RowRanges {
  kernels?: number[];
  memcpys?: number[];
  memsets?: number[];
  apiCalls?: number[];
}

export interface LoadRowsOptions {
  /** Only these processes' rows (an operation's by its context); default every row of the ranges. */
  pids?: number[];
  /**
   * Operations with only NARROW_OP_COLUMNS read (the others are 0), which
   * SQLite then does not decode: what the job analysis's breakdown,
   * stragglers and spans read.
   */
  narrow?: boolean;
  /** Threads to read on (default every core). */
  threads?: number;
  /** Only rows that start at or before this (ns). */
  maxStart?: number;
  /**
   * Only the rows of these zones, per table: flat (lane, first id, last id)
   * triples (a lane as in `zones`: an op's stream, a call's pid × 2^22 + tid).
   * The ranges may hold other lanes' rows; these keep a zone's own.
   */
  zones?: RowRanges;
  /** Calls: only those named one of these (strings ids) or lasting callMinNs or more. */
  callNames?: number[];
  callMinNs?: number;
  /** Only these op columns are written (the others read 0): less memory to fill for a caller that reads few. */
  opColumns?: readonly (keyof typeof OP_COLUMNS)[];
  /** How to read the rows (LoadVia; default 'auto'). */
  via?: LoadVia;
}

/** The op columns a narrow load (LoadRowsOptions.narrow) reads. */
export const NARROW_OP_COLUMNS: readonly (keyof typeof OP_COLUMNS)[] = ['kind', 'rowId', 'start', 'end', 'stream', 'device', 'bytes', 'detail', 'copyKind', 'pid'];

type AnyTypedArray = Uint8Array | Int32Array | Uint32Array | Float64Array;
/** The typed arrays the columns are, by name (OP_COLUMNS, CALL_COLUMNS). */
export const TYPED_ARRAYS = { Uint8Array, Int32Array, Uint32Array, Float64Array } as const;

/**
 * The typed arrays loadRows writes into, kept from one load to the next and
 * grown when a load needs more: the columns of a load are views of them,
 * valid until the next load with the same pool. Loading rank after rank
 * into one pool touches its memory once (fresh pages cost ~2 s per GB on
 * a VM whose host takes freed memory back).
 */
export class ColumnPool {
  readonly #arrays = new Map<string, AnyTypedArray>();

  /** The array `key` of type `type` with room for n values (its contents as the last load left them). */
  array(key: string, type: keyof typeof TYPED_ARRAYS, n: number): AnyTypedArray {
    const have = this.#arrays.get(key);
    if (have && have.length >= n) return have;
    const made = new TYPED_ARRAYS[type](Math.max(1024, Math.ceil(n * 1.25)));
    this.#arrays.set(key, made);
    return made;
  }

  /** A zeroed array of `type` with room for n values, never written: the columns a narrow load leaves out. */
  zeros(type: keyof typeof TYPED_ARRAYS, n: number): AnyTypedArray {
    return this.array(`zero:${type}`, type, n);
  }
}

/** Σ (hi − lo + 1): the most rows the ranges can hold. */
function slotsOf(ranges: number[] | undefined): number {
  let n = 0;
  for (let k = 0; ranges && k + 1 < ranges.length; k += 2) n += Math.max(0, ranges[k + 1]! - ranges[k]! + 1);
  return n;
}

/**
 * Some rows of a recording, by rowid ranges (a merged job's source, a
 * process's zones), read natively and ordered as loadTimelineColumns
 * orders them (ops by (start, kind, id), calls by (start, id)), into
 * `pool`'s arrays: the columns are views, valid until the pool's next load.
 */
export function loadRows(
  dbPath: string,
  ranges: RowRanges,
  options: LoadRowsOptions,
  pool: ColumnPool,
): { ops: OpColumns; calls: CallColumns; via: string; leftOut: LeftOutRows | null } {
  const opSlots = slotsOf(ranges.kernels) + slotsOf(ranges.memcpys) + slotsOf(ranges.memsets);
  const callSlots = slotsOf(ranges.apiCalls);
  const out = { ops: {} as Record<string, AnyTypedArray>, calls: {} as Record<string, AnyTypedArray> };
  for (const [name, type] of Object.entries(OP_COLUMNS)) {
    const wanted = options.opColumns ?? (options.narrow ? NARROW_OP_COLUMNS : null);
    if (!wanted || wanted.includes(name as keyof typeof OP_COLUMNS)) out.ops[name] = pool.array(`ops:${name}`, type, opSlots);
  }
  for (const [name, type] of Object.entries(CALL_COLUMNS)) out.calls[name] = pool.array(`calls:${name}`, type, callSlots);
  const { opColumns: _, ...request } = options;
  return loadedColumns(out, addon().loadRows(dbPath, { ...ranges, ...request }, out), (type, length) => pool.zeros(type, length));
}

export interface KinetoTraceOptions {
  /** The recording to write the rows into (created, its connection closed); null: stop at the first timed event (does the import get that far?). */
  output: string | null;
  /** CUPTI copy kinds and memory kinds by Kineto's names for them, the categories kept as host ranges, and those that are CPU operations (cpu_ops.kind by category). */
  copyKinds: Record<string, number>;
  memoryKinds: Record<string, number>;
  hostRanges: string[];
  cpuOps: Record<string, number>;
  /** Every event through `parse` (JSON.parse), none through simdjson: the tests hold both paths to the same rows. */
  parseAllInJs?: boolean;
  /** JSON.parse of UTF-8 bytes: the top-level members, and the events simdjson refuses or that need JavaScript's conversions. */
  parse(bytes: Buffer): unknown;
  /** The most bytes one event may have; a larger one is a TRACE_FORMAT error naming its byte offset (import/json-events.ts MAX_EVENT_BYTES). */
  maxEventBytes: number;
}

export interface KinetoTraceRows {
  /** Whether the file held any event; whether a timed one (the writer's first row) was reached. */
  any: boolean;
  timed: boolean;
  /** The first timed event's time, ns in the trace's clock: the recording's origin. */
  originNs: number;
  counts: { kernels: number; memcpys: number; memsets: number; apiCalls: number; ranges: number; syncs: number; cudaEvents: number; cpuOps: number };
  skipped: number;
  /** The ends of fwdbwd flows (autograd's forward operator → its backward one), in file order: [id, 0 start | 1 finish, pid, tid, time (ns, as stored)]. */
  flows: [number, 0 | 1, number, number, number][];
  hostPid: number | null;
  gpuPid: number | null;
  processNames: [number, string][];
  /** Top-level members other than traceEvents, parsed. */
  members: Record<string, unknown>;
  /** Events that went through JSON.parse (none in a trace as Kineto writes it). */
  slowEvents: number;
}

/**
 * The rows of a Kineto Chrome-trace JSON file, written natively
 * (native/addon/src/trace_import.cc); synchronous. A problem with the trace
 * throws an Error with code 'TRACE_FORMAT', `problem` and `at` (a byte
 * offset, -1 for none); a failed write one with SQLite's code.
 */
export function importKinetoTrace(file: string, options: KinetoTraceOptions): KinetoTraceRows {
  return addon().importKinetoTrace(file, options);
}

/** scanTraceEvents' options: JSON.parse of an event's bytes, a batch of parsed events, and KinetoTraceOptions' maxEventBytes. */
export interface ScanTraceOptions {
  parse(bytes: Buffer): unknown;
  onEvents(events: unknown[]): void;
  maxEventBytes: number;
}

/**
 * The Chrome-trace scan alone (the generic Chrome importer maps the events
 * in JavaScript): each event parsed by `parse`, handed to `onEvents` in
 * batches, in file order; returns the top-level members, parsed. Errors as
 * importKinetoTrace's.
 */
export function scanTraceEvents(file: string, options: ScanTraceOptions): Record<string, unknown> {
  return addon().scanTraceEvents(file, options);
}

/**
 * Each name's demangled form (the C++ runtime's abi::__cxa_demangle), or
 * null when it is not a mangled C++ name (`_Z…`) or does not demangle.
 */
export function demangle(names: string[]): (string | null)[] {
  return addon().demangle(names);
}

/** What happens to one column of a record written as pages: kept, moved by a constant, mapped (values not listed kept or NULL). */
export type PageColumnOp = { kind: 'keep' } | { kind: 'add'; add: number } | { kind: 'map'; pairs: number[]; keepOthers: boolean };

/** One table to append: its root page in the output, and each input's root page, rowid move and column operations, in output order. */
export interface PageMergeTable {
  name: string;
  root: number;
  inputs: { file: string; root: number; rowidAdd: number; columns: PageColumnOp[] }[];
}

export interface PageMergeResult {
  /** [table][input]: rows appended, their first and last rowid (as moved). */
  rows: { rows: number; firstRowid: number; lastRowid: number }[][];
  /** The output's pages now. */
  pages: number;
  threads: number;
}

/**
 * Appends the tables' rows of every input to `output` as SQLite pages, on
 * all cores (native/addon/src/page_merge.h: the merge's big tables). The
 * output must be a recording no connection holds open, the tables empty
 * and without indexes. An input it cannot write as pages throws an error
 * whose code is 'PAGE_MERGE_UNSUPPORTED'; the output is unusable after any
 * error.
 */
export function appendTablePages(output: string, tables: PageMergeTable[]): PageMergeResult {
  return addon().appendTablePages(output, tables);
}

/**
 * The SQL console's time limit (native/addon/src/sql_time_limit.cc): a
 * SQLite extension compiled into the addon, for better-sqlite3's
 * loadExtension(file, entryPoint). Loading it goes through SQLite's own
 * dlopen of the same file; the addon is loaded first so that a missing
 * build is named here.
 */
export function sqlTimeLimitExtension(): { file: string; entryPoint: string } {
  addon();
  return { file: addonPath(), entryPoint: 'sqlite3_streamscope_time_limit_init' };
}

/**
 * The vocabularies the addon shares with TypeScript, as the built addon has
 * them: the column lists of the loader, every statement of the ingest and
 * the schema version it writes. For the drift tests.
 */
export function nativeVocabulary(): {
  timelineColumns: { ops: ColumnTypes; calls: ColumnTypes };
  traceCodes: Record<string, number>;
  ingestStatements: IngestStatement[];
  ingestSchemaVersion: number;
} {
  const a = addon();
  return { timelineColumns: a.timelineColumns, traceCodes: a.traceCodes, ingestStatements: a.ingestStatements, ingestSchemaVersion: a.ingestSchemaVersion };
}

/** Bench only: reads every row of the finished recording `source` that the ingest writes, for InsertCeilingInstance.insert. */
export function insertCeiling(source: string): InsertCeilingInstance {
  return new (addon().InsertCeiling)(source);
}

/**
 * Native record-stream → SQLite ingest into an existing recording.
 * `originNs` is the recording origin: stored times are relative to it.
 */
export class Ingest {
  readonly #native: IngestInstance;
  constructor(dbPath: string, options: { originNs: bigint }) {
    this.#native = new (addon().Ingest)(dbPath, options);
  }
  ingestFile(file: string, options: { final?: boolean } = {}): Promise<IngestProgress> {
    return this.#native.ingestFile(file, options);
  }
  /** Closes the recording; `finalSql` (index DDL) runs first, on the warm connection. */
  finish(options: { finalSql?: string[] } = {}): Promise<void> {
    return this.#native.finish(options);
  }
}
