// The cross-rank analysis of a job, rank by rank (issue 13, part 5): what
// analyze() gives of a recording of many ranks — each rank's communication
// breakdown, the stragglers across ranks, the serialized-collective finding
// of each rank — without ever holding more than a few ranks in memory, on
// every core.
//
// analyze() loads every operation and call of the file at once: a merged
// job of 64 ranks of 1 M operations is 64 M operations and 64 M calls, 21 s
// to load and 12 GiB on the 2-core development VM before any analysis.
// Each of these analyses is a sum over ranks, or needs little of each rank:
//
//  - the breakdown (communication.ts) is per process and GPU: each part's
//    busy times (communicationPart) add up, and the span — the scope's GPU
//    span, the same for every rank — is applied once every rank is read
//    (finishCommunication);
//  - the stragglers (stragglers.ts) read NCCL kernels only: each part hands
//    over its own, and stragglersOf runs on all of them, in the order the
//    whole recording's columns have them (start, then id);
//  - the serialized-collective rule (findings/serialized-collective.ts) is
//    per process and GPU, on the part's host model (its calls, event records
//    and waits); which of its findings count, and their severity, depend on
//    the GPU span (serializedCollectiveFindings);
//  - the straggler-rank finding is the stragglers' (stragglerFindings).
//
// A part is what is read at once: a merged job's source (its rows are one
// run of ids per table: source_rows), or in a recording that was not merged
// a process (its rows by the zones of its streams and threads, filtered by
// pid); parts that share a GPU are read together, so that what is per GPU
// stays whole. Each is loaded with the native column loader restricted to
// its ids (loadRows), analysed, and only the small results kept; its columns
// are views of a pool reused by the next part (fresh memory costs ~2 s per
// GB on the development VM). Calls are read only where they are needed: an
// NVTX range scope, NCCL's NVTX ranges in the part (which call launched
// each kernel), or a host model for the serialized-collective rule (stream
// waits in the part, or an NCCL kernel on a stream that runs other work:
// collective-groups.ts groupsPossible) — so a job without any reads its
// operations only, and those narrowly (NARROW_OP_COLUMNS).
//
// The scope is the one analyze() takes, with the same meaning: the steady
// state's cut is found for the whole recording first (job-scope.ts), then
// each part selects from its rows as analyze() selects from all of them.
// So every number is the whole analysis's (test/analysis/job.test.ts holds
// them equal on real recordings). What the job analysis leaves out: the
// findings of one rank that do not concern communication (`report --rank
// N` gives a rank's full report), and the what-if replay of the
// serialized-collective fix, which replays the whole job: the finding's
// cost here is the rule's own, the communication time exposed.
//
// Parts are read on worker threads (job-worker.ts), one part at a time
// each, or on this thread with the loader's threads (`workers: 0`).
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { workerEntry } from '../../base/worker-pool.ts';
import { ColumnPool, loadRows, type CallColumns, type RowRanges } from '../../native/addon.ts';
import { openRecording, type Db } from '../../store/database.ts';
import { THREAD_LANE_FACTOR, ZONED_TABLES } from '../../store/zone-tables.ts';
import { RecordingFileError } from '../../store/recording-error.ts';
import type { Communication } from '../../contract/communication.ts';
import type { Finding } from '../../contract/findings.ts';
import { SEVERITY_RANK } from '../../contract/findings.ts';
import { STEADY_STATE, type Scope, type ScopeInfo, type Startup } from '../../contract/scope.ts';
import type { Stragglers } from '../../contract/stragglers.ts';
import type { Ns } from '../../contract/time.ts';
import { groupsPossible } from '../replay/collective-groups.ts';
import {
  commKernelLabels,
  commKernelOps,
  communicationPart,
  finishCommunication,
  mergeCommunicationParts,
  type CommunicationPart,
  type ProcessFacts,
} from '../communication.ts';
import { buildContext } from './findings/context.ts';
import { serializedCollectiveCandidates, serializedCollectiveFindings, type SerializedCollectiveCandidate } from './findings/serialized-collective.ts';
import { stragglerFindings } from './findings/straggler.ts';
import { hostOf } from '../host.ts';
import { extentOf } from '../intervals.ts';
import { jobStartup, type ZoneWork } from '../job-scope.ts';
import { callNames, readHostTables } from '../load/calls.ts';
import { readNcclRanges, readPeerCopyIds, readProcessFacts } from '../load/communication.ts';
import { gpuProcessCount, readContexts, readProcessSources, readSourceRows, readStreamPids } from '../load/parts.ts';
import { rangeInstances, rangeReader, type RangeReader } from '../load/ranges.ts';
import type { RowSubset } from '../load/rows.ts';
import { readTraceTables } from '../load/tables.ts';
import { callsSpan, readZoneIds } from '../load/zones.ts';
import { closeWindows, mergeRangeFacts, rangeNotes, selectScopeWith, windowNotes, type Clipped, type RangeFacts } from '../scope.ts';
import { lowerBound, ofProcesses, type TimelineColumns } from '../../native/columns.ts';
import { stragglersOf } from './stragglers.ts';
import { allocateOps, OpKind, traceOf, type Trace, type TraceTables } from '../trace.ts';

// How many processes have a CUDA context (whether `report` reads a recording rank by rank), read by load/parts.ts.
export { gpuProcessCount };

/** What is read at once: one or more processes (a merged job's source, or a process; those sharing a GPU together). */
export interface JobPart {
  pids: number[];
  /** Its rows, for the tables read by SQL. */
  subset: RowSubset;
  /** Its rows of the timeline tables, for the column loader. */
  ranges: RowRanges;
  /** The ranges hold other processes' rows too (zones of a recording that was not merged): keep `pids`' only. */
  filterPids: boolean;
}

export interface JobPlan {
  parts: JobPart[];
  processes: Map<number, ProcessFacts>;
  /** Processes that ran GPU work (that have a CUDA context): the ranks. */
  gpuProcesses: number[];
  /** Read by the sources of a merged recording (else by processes). */
  merged: boolean;
}

/** Parts of a recording: its sources if merged, else its processes; those sharing a GPU joined (what they are made of read by load/parts.ts). */
export function planJob(db: Db): JobPlan {
  const processes = readProcessFacts(db);
  const contexts = readContexts(db);
  const gpuProcesses = [...new Set(contexts.map((c) => c.pid))].sort((a, b) => a - b);
  const sourceOf = readProcessSources(db);
  const merged = sourceOf.size > 0 && [...sourceOf.values()].every((s) => s !== null);

  // Groups of processes (a source's, or one), then joined where they share a device.
  const groupOf = new Map<number, number>(); // pid → group
  const keyOf = (pid: number) => (merged ? sourceOf.get(pid)! : pid);
  const groups = new Map<number, number>(); // key → group
  for (const pid of [...sourceOf.keys()].sort((a, b) => a - b)) {
    const key = keyOf(pid);
    if (!groups.has(key)) groups.set(key, groups.size);
    groupOf.set(pid, groups.get(key)!);
  }
  const parent = Array.from({ length: groups.size }, (_, g) => g);
  const root = (g: number): number => (parent[g] === g ? g : (parent[g] = root(parent[g]!)));
  const groupOfDevice = new Map<number, number>();
  for (const c of contexts) {
    const g = groupOf.get(c.pid);
    if (g === undefined || c.device === null) continue;
    const other = groupOfDevice.get(c.device);
    if (other === undefined) groupOfDevice.set(c.device, g);
    else parent[root(g)] = root(other);
  }
  const partOf = new Map<number, JobPart>(); // root group → part
  const parts: JobPart[] = [];
  for (const [pid, g] of groupOf) {
    let part = partOf.get(root(g));
    if (!part) {
      partOf.set(root(g), (part = { pids: [], subset: merged ? { ranges: {} } : { pids: [] }, ranges: {}, filterPids: !merged }));
      parts.push(part);
    }
    part.pids.push(pid);
  }

  const add = (list: number[] | undefined, first: number, last: number) => {
    const out = list ?? [];
    out.push(first, last);
    return out;
  };
  const LOADED = { kernels: 'kernels', memcpys: 'memcpys', memsets: 'memsets', api_calls: 'apiCalls' } as const;
  if (merged) {
    const sourcesOfPart = new Map<number, Set<number>>();
    parts.forEach((p, k) => sourcesOfPart.set(k, new Set(p.pids.map((pid) => sourceOf.get(pid)!))));
    const rows = readSourceRows(db);
    parts.forEach((p, k) => {
      const ranges = (p.subset as { ranges: Partial<Record<string, number[]>> }).ranges;
      for (const r of rows) {
        if (!sourcesOfPart.get(k)!.has(r.source)) continue;
        ranges[r.t] = add(ranges[r.t], r.first, r.last);
        const loaded = LOADED[r.t as keyof typeof LOADED];
        if (loaded) p.ranges[loaded] = add(p.ranges[loaded], r.first, r.last);
      }
    });
  } else {
    for (const p of parts) (p.subset as { pids: number[] }).pids = [...p.pids];
    // A process's rows by its zones: streams' for the GPU tables, threads' for the calls.
    const partOfPid = new Map(parts.flatMap((p) => p.pids.map((pid) => [pid, p] as const)));
    const pidOfStream = readStreamPids(db);
    const zones = readZoneIds(db);
    const TABLE = { 1: 'kernels', 2: 'memcpys', 3: 'memsets', 5: 'apiCalls' } as const;
    for (const z of zones) {
      const pid = z.t === ZONED_TABLES.api_calls.id ? Math.floor(z.lane / THREAD_LANE_FACTOR) : pidOfStream.get(z.lane);
      const part = pid === undefined ? undefined : partOfPid.get(pid);
      if (!part) continue;
      const key = TABLE[z.t as keyof typeof TABLE];
      const list = (part.ranges[key] ??= []);
      // Zones in id order: touching or overlapping ranges joined.
      if (list.length && z.first <= list[list.length - 1]! + 1) list[list.length - 1] = Math.max(list[list.length - 1]!, z.last);
      else list.push(z.first, z.last);
    }
  }
  for (const p of parts) p.pids.sort((a, b) => a - b);
  return { parts, processes, gpuProcesses, merged };
}

/**
 * Every row of some processes (one rank of a job, `report --rank N`), as
 * loadTimelineColumns gives a whole recording's: for analyze() with its
 * `pids` option. Read by their part's ranges, in columns of their own.
 */
export function loadProcessColumns(db: Db, pids: number[], plan = planJob(db)): TimelineColumns {
  const ranges: RowRanges = {};
  for (const part of plan.parts) {
    if (!part.pids.some((p) => pids.includes(p))) continue;
    for (const [table, list] of Object.entries(part.ranges) as [keyof RowRanges, number[]][]) ranges[table] = [...(ranges[table] ?? []), ...list];
  }
  // The ranges of a merged source hold its other processes' rows too: kept by pid.
  return loadRows(db.name, { ...ranges, apiCalls: ranges.apiCalls ?? [] }, { pids }, new ColumnPool());
}

// ---------------------------------------------------------------------------
// One part

/** What a part's reader is asked. */
export interface PartRequest {
  part: JobPart;
  scope: Scope;
  /** The whole recording's start-up (jobStartup), for the steady state's cut. */
  startup: Startup | null;
}

/** NCCL kernels as columns, for the stragglers across parts. */
export interface NcclKernels {
  length: number;
  start: Float64Array;
  end: Float64Array;
  rowId: Float64Array;
  pid: Int32Array;
  device: Int32Array;
  stream: Int32Array;
  detail: Int32Array;
}

/** A part's results: small, whatever the part's size. */
export interface PartResult {
  pids: number[];
  /** Every operation of its rows (before the scope), their summed durations, and any that ends before it starts: checked against the zones. */
  rows: { ops: number; kernelNs: number; allNs: number; malformed: number };
  /** Its operations that start before start-up's end (Startup.ops). */
  opsBeforeCut: number;
  /** Of the scope's operations: the first start and latest end of those that last (the GPU span); of all, with the calls read (the trace's span, loadTrace's). */
  extent: { start: Ns; end: Ns } | null;
  span: { start: Ns; end: Ns } | null;
  communication: CommunicationPart;
  nccl: NcclKernels;
  serialized: SerializedCollectiveCandidate[];
  /** Whether its calls were read (and a host model built). */
  withCalls: boolean;
  /** For a range scope: what its notes are made of, on this part's rows (scope.ts RangeFacts). */
  rangeFacts: RangeFacts | null;
  /** For a window: the operations of this part it cut at its edges (scope.ts clipToWindow). */
  clipped: Clipped | null;
  ms: { load: number; analyse: number };
}

const NO_CALLS: CallColumns = {
  length: 0,
  rowId: new Float64Array(0),
  start: new Float64Array(0),
  end: new Float64Array(0),
  pid: new Int32Array(0),
  tid: new Int32Array(0),
  nameId: new Int32Array(0),
  correlation: new Uint32Array(0),
  domain: new Uint8Array(0),
};

/** The scope's NCCL kernels of a trace (start order), copied out of the pool's columns. */
function ncclKernelsOf(trace: Trace): NcclKernels {
  const { ops } = trace;
  const index: number[] = [];
  if (commKernelLabels(trace).size > 0) {
    const nccl = commKernelOps(trace);
    for (let i = 0; i < ops.length; i++) if (nccl[i] === 1) index.push(i);
  }
  const n = index.length;
  const out = ncclKernels(n);
  index.forEach((i, k) => {
    out.start[k] = ops.start[i]!;
    out.end[k] = ops.end[i]!;
    out.rowId[k] = ops.rowId[i]!;
    out.pid[k] = ops.pid[i]!;
    out.device[k] = ops.device[i]!;
    out.stream[k] = ops.stream[i]!;
    out.detail[k] = ops.detail[i]!;
  });
  return out;
}

/** Operations, their summed durations (kernels', all) and those that end before they start. */
function rowWork(ops: TimelineColumns['ops']): PartResult['rows'] {
  const { length, kind, start, end } = ops;
  let kernelNs = 0;
  let allNs = 0;
  let malformed = 0;
  for (let i = 0; i < length; i++) {
    const d = end[i]! - start[i]!;
    allNs += d;
    if (kind[i] === OpKind.Kernel) kernelNs += d;
    if (d < 0) malformed++;
  }
  return { ops: length, kernelNs, allNs, malformed };
}

/** Reads parts of one recording, one at a time, into one pool of columns (a worker thread holds one). */
export class PartReader {
  readonly db: Db;
  readonly #file: string;
  readonly #threads: number;
  readonly #pool: ColumnPool;
  readonly #tables: TraceTables;
  readonly #processes: Map<number, ProcessFacts>;
  readonly #ranges: RangeReader;

  /** Whether the reader opened its connection (and closes it), or was handed one. */
  readonly #owns: boolean;

  /**
   * `threads`: the loader's threads for each part (0: every core); `pool`: the columns to load into (one a thread, kept
   * from one reader to the next, is touched once); `opened`: the recording opened already, with its tables and processes
   * read (a rank's summary: opening and checking it again cost ~5 ms of a 1 M-operation rank's ~130), left open by close().
   */
  constructor(file: string, threads = 0, pool = new ColumnPool(), opened?: { db: Db; tables: TraceTables; processes: Map<number, ProcessFacts> }) {
    this.#file = file;
    this.#threads = threads;
    this.#pool = pool;
    this.#owns = !opened;
    this.db = opened?.db ?? openRecording(file, { readonly: true });
    this.#tables = opened?.tables ?? readTraceTables(this.db);
    this.#processes = opened?.processes ?? readProcessFacts(this.db);
    this.#ranges = rangeReader(this.db);
  }

  close(): void {
    if (this.#owns) this.db.close();
  }

  /**
   * The last part loaded, as loaded: still valid, since the pool's columns
   * are views until its next load. A rank's summary reads the same part once
   * per scope (whole, then steady state: a slice of the same rows), and the
   * second read costs no load. Loaded with its calls, it serves a read
   * without them too (`opsOnly`: its operations, no calls): the whole scope
   * may have needed the calls where the steady state does not, and loading
   * the part again narrowly would cost what the first load did.
   */
  #last: { part: JobPart; withCalls: boolean; columns: TimelineColumns; opsOnly: TimelineColumns } | null = null;

  /**
   * The part's rows with their calls, loaded as a read loads them and kept
   * for the part's reads that follow (a rank's summary reads its
   * iterations first: which call launched each operation). Valid until
   * another part is loaded.
   */
  columns(part: JobPart): TimelineColumns {
    return this.#load(part, true);
  }

  /**
   * Every row of the recording, loaded already (`summarize --findings` of a recording of several parts: the diagnosis's
   * load, every column): each part's rows are then taken from them by its processes, as a load of the part alone orders
   * them, rather than read from the file again.
   */
  #every: TimelineColumns | null = null;

  readFrom(every: TimelineColumns): void {
    this.#every = every;
    this.#last = null;
    this.#analysed = null;
  }

  #load(part: JobPart, withCalls: boolean): TimelineColumns {
    const last = this.#last;
    if (last && last.part === part && (last.withCalls || !withCalls)) return withCalls ? last.columns : last.opsOnly;
    this.#last = null;
    this.#analysed = null;
    if (this.#every && part.filterPids) {
      const cols = ofProcesses(this.#every, new Set(part.pids));
      const opsOnly = { ops: cols.ops, calls: NO_CALLS };
      this.#last = { part, withCalls: true, columns: cols, opsOnly };
      return withCalls ? cols : opsOnly;
    }
    const { apiCalls, ...ops } = part.ranges;
    const cols = loadRows(
      this.#file,
      withCalls ? { ...ops, apiCalls: apiCalls ?? [] } : ops,
      { narrow: !withCalls, threads: this.#threads, ...(part.filterPids ? { pids: part.pids } : {}) },
      this.#pool,
    );
    const opsOnly = { ops: cols.ops, calls: NO_CALLS };
    this.#last = { part, withCalls, columns: withCalls ? cols : opsOnly, opsOnly };
    return withCalls ? cols : opsOnly;
  }

  /**
   * The last part's result and the rows it was analysed on: a scope that
   * selects those same rows (the steady state of a recording without
   * start-up is the whole recording) has the same result, and a summary
   * asks for both scopes of every part.
   */
  #analysed: { columns: TimelineColumns; startupEndNs: Ns | null; result: PartResult } | null = null;

  read({ part, scope, startup }: PartRequest): PartResult {
    const t0 = performance.now();
    const { db } = this;
    const hostTables = readHostTables(db, part.subset);
    const ncclRanges = readNcclRanges(db, part.subset);
    // Calls where something reads them (the header): decided before loading where the part's tables say, else after.
    let withCalls = scope.kind === 'range' || ncclRanges.length > 0 || hostTables.waits.length > 0;
    let columns = this.#load(part, withCalls);
    let load = performance.now() - t0;
    let selection = selectScopeWith(this.#ranges, this.#file, scope, columns, startup);
    const known = this.#again(scope, selection.columns, startup);
    if (known) return { ...known, ms: { load, analyse: 0 } };
    let trace = traceOf(selection.columns.ops, selection.columns.calls, this.#tables);
    if (!withCalls && groupsPossible(trace, false)) {
      const t = performance.now();
      withCalls = true;
      columns = this.#load(part, true);
      load += performance.now() - t;
      selection = selectScopeWith(this.#ranges, this.#file, scope, columns, startup);
      trace = traceOf(selection.columns.ops, selection.columns.calls, this.#tables);
    }
    const t1 = performance.now();
    const again = this.#again(scope, selection.columns, startup);
    if (again) return { ...again, ms: { load, analyse: 0 } };

    // The part's rows before the scope: their work (checked against the zones) and those start-up left out.
    const rows = rowWork(columns.ops);
    const opsBeforeCut = startup ? lowerBound(columns.ops.start, columns.ops.length, startup.endNs) : 0;

    const { ops } = trace;
    const extent = extentOf(ops);

    const host = withCalls
      ? hostOf(ops, selection.columns.calls, { names: callNames(db, selection.columns.calls), scoped: selection.columns !== columns, tables: hostTables })
      : null;
    const inputs = { processes: this.#processes, peerCopyIds: readPeerCopyIds(db, part.subset), ncclRanges };
    const communication = communicationPart(trace, inputs, host ?? undefined);
    const nccl = ncclKernelsOf(trace);
    const serialized = host ? serializedCollectiveCandidates(buildContext(trace, host, this.#processes)) : [];
    const result: PartResult = {
      pids: part.pids,
      rows,
      opsBeforeCut,
      extent,
      span: ops.length > 0 || selection.columns.calls.length > 0 ? trace.span : null,
      communication,
      nccl,
      serialized,
      withCalls,
      rangeFacts: selection.facts ?? null,
      clipped: selection.clipped ?? null,
      ms: { load, analyse: performance.now() - t1 },
    };
    this.#analysed =
      scope.kind === 'whole' || scope.kind === 'steady-state' ? { columns: selection.columns, startupEndNs: startup?.endNs ?? null, result } : null;
    return result;
  }

  /** The last result, where `scope` selects the rows it was analysed on: whole and steady state have no notes of their own (a range's facts, a window's cut operations). */
  #again(scope: Scope, selected: TimelineColumns, startup: Startup | null): PartResult | null {
    const last = this.#analysed;
    if (!last || (scope.kind !== 'whole' && scope.kind !== 'steady-state')) return null;
    return last.columns === selected && last.startupEndNs === (startup?.endNs ?? null) ? last.result : null;
  }
}

// ---------------------------------------------------------------------------
// The parts together

/** The analysis of a job, rank by rank: what analyze() gives of it across ranks. */
export interface JobAnalysis {
  /** What was analysed, as analyze() says it (the steady state's start-up found for the whole recording). */
  scope: ScopeInfo;
  /** Processes with GPU work (the ranks), and the parts they were read in. */
  ranks: number;
  parts: number;
  /** Read by sources (a merged job) or by processes. */
  merged: boolean;
  /** The scope's GPU span: first operation start to last end, every rank. */
  gpuSpan: { start: Ns; end: Ns };
  communication: Communication;
  stragglers: Stragglers;
  /** Serialized collectives per rank (cost: their exposed communication) and the straggler rank, worst first. */
  findings: Finding[];
  /** Parts whose calls were read (for NCCL's ranges, a host model or a range scope). */
  partsWithCalls: number;
  /** Milliseconds: the plan, the scope (start-up from the zones), the parts (wall; and summed over the parts, their loads and analyses), the combination. */
  timings: { plan: number; scope: number; parts: number; load: number; analyse: number; combine: number };
  /** Rows read to find start-up, besides the parts. */
  scopeRowsRead: { ops: number; calls: number };
  workers: number;
}

export interface JobOptions {
  /** Default: the steady state. */
  scope?: Scope;
  /** The file's name for messages (default: the database's). */
  file?: string;
  /**
   * Worker threads reading parts, one part each at a time (default: one per
   * core, at most one per part); 0 reads them on this thread, the loader on
   * every core.
   */
  workers?: number;
  /** Called as each part is done (how many, of how many). */
  onPart?: (done: number, of: number) => void;
}

/** A job whose zones disagree with its rows: the caller analyses it whole instead (job-scope.ts says why). */
export class ZonesDisagree extends Error {}

/**
 * The job's cross-rank analysis, rank by rank (the header). Throws
 * ScopeError for a scope the recording does not have, ZonesDisagree where
 * the steady state's cut cannot be trusted (analyse the file whole).
 */
export async function analyzeJob(db: Db, options: JobOptions = {}): Promise<JobAnalysis> {
  const file = options.file ?? db.name;
  const scope = options.scope ?? STEADY_STATE;
  let t = performance.now();
  const lap = () => {
    const now = performance.now();
    const ms = now - t;
    t = now;
    return ms;
  };
  const plan = planJob(db);
  const tables = readTraceTables(db);
  const planMs = lap();
  // Start-up is found whatever the scope, as analyze() finds it (the report says it); the steady state is cut there.
  const found = jobStartup(db, db.name, tables.meta, tables.strings);
  const { startup } = found;
  // The scope's label and windows, as analyze() gives them (nothing is selected from no columns).
  const info = selectScopeWith(rangeReader(db), file, scope, { ops: { length: 0 } as never, calls: NO_CALLS }, startup).info;
  const scopeMs = lap();

  const requests: PartRequest[] = plan.parts.map((part) => ({ part, scope, startup }));
  const workers = Math.min(options.workers ?? os.availableParallelism(), requests.length);
  const results = workers > 0 ? await readOnWorkers(db.name, requests, workers, options.onPart) : readHere(db.name, requests, options.onPart);
  const partsMs = lap();

  checkZones(found.zones, results);
  const job = combine(plan, tables, info, startup, results, db, scope);
  return {
    ...job,
    timings: {
      plan: planMs,
      scope: scopeMs,
      parts: partsMs,
      load: results.reduce((s, r) => s + r.ms.load, 0),
      analyse: results.reduce((s, r) => s + r.ms.analyse, 0),
      combine: lap(),
    },
    scopeRowsRead: found.rowsRead,
    workers,
  };
}

/** The steady state's cut came from the zones: their work must be the rows'. */
function checkZones(zones: ZoneWork, results: PartResult[]): void {
  const sum = (f: (r: PartResult) => number) => results.reduce((s, r) => s + f(r), 0);
  const malformed = sum((r) => r.rows.malformed);
  if (malformed > 0) throw new ZonesDisagree(`${malformed} operation(s) end before they start: the zones cannot place start-up's end`);
  const rows = { ops: sum((r) => r.rows.ops), kernelNs: sum((r) => r.rows.kernelNs), allNs: sum((r) => r.rows.allNs) };
  if (rows.ops !== zones.opRows || rows.kernelNs !== zones.kernelNs || rows.allNs !== zones.allNs) {
    throw new ZonesDisagree(
      `the zones count ${zones.opRows} operations of ${zones.allNs} ns (kernels ${zones.kernelNs} ns), the rows ${rows.ops} of ${rows.allNs} ns (kernels ${rows.kernelNs} ns)`,
    );
  }
}

function readHere(file: string, requests: PartRequest[], onPart?: (done: number, of: number) => void): PartResult[] {
  const reader = new PartReader(file, 0);
  try {
    return requests.map((r, k) => {
      const result = reader.read(r);
      onPart?.(k + 1, requests.length);
      return result;
    });
  } finally {
    reader.close();
  }
}

/** What job-worker.ts answers. */
/** A failure that is the file's (RecordingFileError) carries its file and problem, to be thrown as one again. */
export type WorkerAnswer = { n: number; ok: true; result: PartResult } | { n: number; ok: false; error: string; file?: string; problem?: string };

/** Each worker reads the next part not yet taken; the results in the requests' order. */
async function readOnWorkers(file: string, requests: PartRequest[], count: number, onPart?: (done: number, of: number) => void): Promise<PartResult[]> {
  const results: PartResult[] = new Array(requests.length);
  let next = 0;
  let done = 0;
  const pool = Array.from({ length: count }, () => new Worker(workerEntry('job-worker', import.meta.url), { workerData: { file, threads: 1 } }));
  try {
    await Promise.all(
      pool.map(
        (worker) =>
          new Promise<void>((resolve, reject) => {
            const give = () => {
              if (next >= requests.length) return resolve();
              const n = next++;
              worker.postMessage({ n, request: requests[n] });
            };
            worker.on('message', (m: WorkerAnswer) => {
              if (!m.ok) return reject(m.file !== undefined && m.problem !== undefined ? new RecordingFileError(m.file, m.problem) : new Error(m.error));
              results[m.n] = m.result;
              onPart?.(++done, requests.length);
              give();
            });
            worker.on('error', reject);
            worker.on('exit', (code) =>
              next < requests.length || done < requests.length ? reject(new Error(`a job worker ended (exit code ${code})`)) : undefined,
            );
            give();
          }),
      ),
    );
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
  return results;
}

/** Columns for `n` NCCL kernels, to be filled. */
function ncclKernels(n: number): NcclKernels {
  return {
    length: n,
    start: new Float64Array(n),
    end: new Float64Array(n),
    rowId: new Float64Array(n),
    pid: new Int32Array(n),
    device: new Int32Array(n),
    stream: new Int32Array(n),
    detail: new Int32Array(n),
  };
}

/** Sorted lists of NCCL kernels, one per part, merged in (start, id) order: the whole recording's columns' order. */
export function mergeNccl(lists: NcclKernels[]): NcclKernels {
  const n = lists.reduce((s, l) => s + l.length, 0);
  const out = ncclKernels(n);
  // A binary heap of the lists' heads, by (start, id).
  const at = new Int32Array(lists.length);
  const heap: number[] = [];
  const before = (a: number, b: number) => {
    const x = lists[a]!;
    const y = lists[b]!;
    const sa = x.start[at[a]!]!;
    const sb = y.start[at[b]!]!;
    return sa < sb || (sa === sb && x.rowId[at[a]!]! < y.rowId[at[b]!]!);
  };
  const down = (k: number) => {
    for (;;) {
      const l = 2 * k + 1;
      if (l >= heap.length) return;
      const c = l + 1 < heap.length && before(heap[l + 1]!, heap[l]!) ? l + 1 : l;
      if (!before(heap[c]!, heap[k]!)) return;
      [heap[c], heap[k]] = [heap[k]!, heap[c]!];
      k = c;
    }
  };
  lists.forEach((l, k) => {
    if (l.length > 0) heap.push(k);
  });
  for (let k = (heap.length >> 1) - 1; k >= 0; k--) down(k);
  for (let o = 0; o < n; o++) {
    const k = heap[0]!;
    const l = lists[k]!;
    const i = at[k]!;
    out.start[o] = l.start[i]!;
    out.end[o] = l.end[i]!;
    out.rowId[o] = l.rowId[i]!;
    out.pid[o] = l.pid[i]!;
    out.device[o] = l.device[i]!;
    out.stream[o] = l.stream[i]!;
    out.detail[o] = l.detail[i]!;
    at[k] = i + 1;
    if (i + 1 >= l.length) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    down(0);
  }
  return out;
}

/** The NCCL kernels as a trace: what stragglersOf reads of one (kernels' columns, names, devices). */
function ncclTrace(kernels: NcclKernels, tables: TraceTables): Trace {
  const ops = allocateOps(kernels.length);
  ops.kind.fill(OpKind.Kernel);
  ops.start.set(kernels.start);
  ops.end.set(kernels.end);
  ops.rowId.set(kernels.rowId);
  ops.pid.set(kernels.pid);
  ops.device.set(kernels.device);
  ops.stream.set(kernels.stream);
  ops.detail.set(kernels.detail);
  return { ...tables, ops, span: { start: 0, end: 0 } };
}

/**
 * What the job analysis answers across ranks, from its parts' results: the
 * communication breakdown per rank, the stragglers, and the findings
 * (serialized collectives per rank, the straggler rank), worst first. The
 * parts' ids and times are the job's (one recording's, or placed on one
 * clock and one set of ids: profiler/job/of-summaries.ts).
 */
export function crossRankAnswers(
  results: Pick<PartResult, 'communication' | 'nccl' | 'serialized'>[],
  processes: Map<number, ProcessFacts>,
  tables: TraceTables,
  gpuSpan: { start: Ns; end: Ns },
): { communication: Communication; stragglers: Stragglers; findings: Finding[] } {
  const communication = finishCommunication(mergeCommunicationParts(results.map((r) => r.communication)), { ...tables, processes }, gpuSpan);
  const stragglers = stragglersOf(ncclTrace(mergeNccl(results.map((r) => r.nccl)), tables), processes);
  const findings = [
    ...serializedCollectiveFindings(
      results.flatMap((r) => r.serialized),
      gpuSpan,
    ),
    ...stragglerFindings(stragglers, gpuSpan),
  ];
  const rankOf = (f: Finding) => processes.get(f.pid ?? -1)?.rank ?? Infinity;
  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.costNs - a.costNs || rankOf(a) - rankOf(b) || (a.pid ?? 0) - (b.pid ?? 0));
  return { communication, stragglers, findings };
}

function combine(
  plan: JobPlan,
  tables: TraceTables,
  info: ScopeInfo,
  startup: Startup | null,
  results: PartResult[],
  db: Db,
  scope: Scope,
): Omit<JobAnalysis, 'timings' | 'scopeRowsRead' | 'workers'> {
  // The GPU span (Context.gpuSpan) and the trace's span, from every part.
  let gs = Infinity;
  let ge = -Infinity;
  let ts = Infinity;
  let te = -Infinity;
  for (const r of results) {
    if (r.extent) {
      gs = Math.min(gs, r.extent.start);
      ge = Math.max(ge, r.extent.end);
    }
    if (r.span) {
      ts = Math.min(ts, r.span.start);
      te = Math.max(te, r.span.end);
    }
  }
  const gpuSpan = Number.isFinite(gs) ? { start: gs, end: ge } : { start: 0, end: 0 };
  if (startup) startup.ops = results.reduce((s, r) => s + r.opsBeforeCut, 0);
  // A range scope's notes, from every part's facts: what analyze() says on all the rows at once.
  if (scope.kind === 'range') {
    const facts = mergeRangeFacts(results.flatMap((r) => (r.rangeFacts ? [r.rangeFacts] : [])));
    const notes = facts ? rangeNotes(facts, scope.instance !== undefined ? scope.instance - 1 : -1, rangeInstances(db, scope.name)) : [];
    if (notes.length && results.some((r) => r.rows.ops > 0)) info.notes = notes;
  }
  // A window's note, from every part's cut operations: what analyze() says on all the rows at once.
  if (scope.kind === 'window') {
    const clipped = { ops: 0, ns: 0, keptNs: 0 };
    for (const c of results) {
      if (!c.clipped) continue;
      clipped.ops += c.clipped.ops;
      clipped.ns += c.clipped.ns;
      clipped.keptNs += c.clipped.keptNs;
    }
    Object.assign(info, windowNotes(clipped));
  }
  // The windows of a whole or steady-state scope close on the span of the scope's operations and calls (loadTrace's).
  if (scope.kind === 'whole' || scope.kind === 'steady-state') {
    const calls = callsSpan(db, scope.kind === 'steady-state' && startup ? startup.endNs : null);
    if (calls) {
      ts = Math.min(ts, calls.start);
      te = Math.max(te, calls.end);
    }
    closeWindows(info, Number.isFinite(ts) ? { start: ts, end: te } : { start: 0, end: 0 });
  }

  const { communication, stragglers, findings } = crossRankAnswers(results, plan.processes, tables, gpuSpan);
  return {
    scope: info,
    ranks: plan.gpuProcesses.length,
    parts: plan.parts.length,
    merged: plan.merged,
    gpuSpan,
    communication,
    stragglers,
    findings,
    partsWithCalls: results.filter((r) => r.withCalls).length,
  };
}
