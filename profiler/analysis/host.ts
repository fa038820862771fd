// The host side of a recording, loaded for analysis: CUDA API calls per
// thread, the calls behind each GPU operation (by correlation id), CUDA
// event records and stream waits. Pure data like trace.ts: the diagnosis
// and the what-if replay read these arrays, never SQLite (the calls' names,
// event records and waits are read by load/calls.ts, the calls natively).
import { indexCalls, loadCallColumns, type CallColumns } from '../native/addon.ts';
import type { Db } from '../store/database.ts';
import type { GpuOps } from './trace.ts';
import { IdTable } from '../base/id-table.ts';
import { THREAD_LANE_FACTOR } from '../store/zone-tables.ts';
import { callNames, readHostTables, type EventRow, type HostTables, type WaitRow } from './load/calls.ts';

/** API calls in (start, id) order, as the native loader reads them. */
export type HostCalls = CallColumns;

/** A cudaEventRecord: the event completes when the work issued before it on `stream` has. */
export interface EventRecord extends EventRow {
  /** Index of the API call that recorded it, or -1. */
  call: number;
}

/** A cudaStreamWaitEvent: work issued later on `stream` waits for the event's last record before the call. */
export interface StreamWait extends WaitRow {
  call: number;
}

export interface Host {
  calls: HostCalls;
  names: Map<number, string>;
  events: EventRecord[];
  waits: StreamWait[];
  /** For each GPU op (index into GpuOps), the index of the API call that issued it, or -1. */
  opCall: Int32Array;
  /** Index of the API call with this correlation id in this process, or -1. */
  callOf(pid: number, correlation: number): number;
  /** Calls of each thread in start order: key `${pid}:${tid}` → call indexes. */
  threads: Map<string, Int32Array>;
}

/** What the host model is built of besides the calls' columns, as load/calls.ts reads it. */
export interface HostInputs {
  /** Call names by strings id (load/calls.ts callNames). */
  names: Map<number, string>;
  /**
   * The calls are a scope's selection (analysis/scope.ts): CUDA event records
   * and stream waits whose call is not among them are left out.
   */
  scoped?: boolean;
  /** CUDA event records and stream waits (load/calls.ts readHostTables): one read for many scopes of a file. */
  tables: HostTables;
}

export type LoadHostOptions = Partial<HostInputs>;

/**
 * The host model of a recording, what is not given read from it: the calls
 * natively (like the operations, trace.ts: millions of calls), their names
 * and the event records and waits by load/calls.ts. For the callers above
 * the analysis that hold a file; the analysis itself builds it with hostOf.
 */
export function loadHost(db: Db, ops: GpuOps, columns?: CallColumns, options: LoadHostOptions = {}): Host {
  const calls: HostCalls = columns ?? loadCallColumns(db.name);
  const names = options.names ?? callNames(db, calls);
  const tables = options.tables ?? readHostTables(db);
  return hostOf(ops, calls, { names, tables, scoped: options.scoped });
}

/** The host model of the loaded calls (`calls`, in start order) behind `ops`. */
export function hostOf(ops: GpuOps, calls: HostCalls, inputs: HostInputs): Host {
  const { byPid, opCall, threads } = callIndexOf(ops, calls);
  const callOf = (pid: number, correlation: number): number => {
    const e = byPid.get(pid);
    return e ? e.get(correlation) : -1;
  };
  const { names, tables } = inputs;
  let events: EventRecord[] = tables.events.map((e) => ({ ...e, call: callOf(e.pid, e.correlation) }));
  let waits: StreamWait[] = tables.waits.map((w) => ({ ...w, call: callOf(w.pid, w.correlation) }));
  if (inputs.scoped) {
    events = events.filter((e) => e.call >= 0);
    waits = waits.filter((w) => w.call >= 0);
  }
  return { calls, names, events, waits, opCall, callOf, threads };
}

/**
 * Each process's calls by correlation id (the runtime call where a driver
 * call inside it has the same id: the one the user wrote), the call behind
 * each operation, each thread's calls in start order (key `${pid}:${tid}`,
 * threads in order of first sight).
 */
interface CallIndex {
  byPid: Map<number, IdTable>;
  opCall: Int32Array;
  threads: Map<string, Int32Array>;
}

/** A thread's key (pid × THREAD_LANE_FACTOR + tid: both fit below 2^22) as Host.threads names it. */
const threadName = (key: number) => `${Math.floor(key / THREAD_LANE_FACTOR)}:${key % THREAD_LANE_FACTOR}`;

/**
 * The call index, natively (native/addon/src/call_index.cc: at 10 M calls
 * and operations ~0.05 s, where these passes took ~0.3 s on each thread that
 * analyses the recording); here where a process's correlation ids are too
 * sparse for an array over their span (callIndexHere), or `here` asks.
 */
export function callIndexOf(ops: Pick<GpuOps, 'length' | 'pid' | 'correlation'>, calls: HostCalls, here = false): CallIndex {
  const found = here ? null : indexCalls(calls, ops);
  if (!found) return callIndexHere(ops, calls);
  const byPid = new Map<number, IdTable>();
  found.pids.forEach((pid, p) => byPid.set(pid, IdTable.over(found.mins[p]!, found.tables[p]!)));
  const threads = new Map<string, Int32Array>();
  found.threadKeys.forEach((key, t) => threads.set(threadName(key), found.threadCalls.subarray(t > 0 ? found.threadEnds[t - 1]! : 0, found.threadEnds[t]!)));
  return { byPid, opCall: found.opCall, threads };
}

/** The call index in JavaScript: IdTable makes a sparse process's table a Map. */
function callIndexHere(ops: Pick<GpuOps, 'length' | 'pid' | 'correlation'>, calls: HostCalls): CallIndex {
  // One process's calls by correlation id. Ids are handed out in sequence
  // within a process, so IdTable's array finds a call in O(1) without a
  // 10-million-entry Map.
  const byPid = new Map<number, IdTable>();
  {
    const range = new Map<number, [number, number, number]>(); // min, max, count
    // Calls of one process come in long runs: keep the run's range in
    // locals and merge it into the map when the pid changes.
    const { pid, correlation } = calls;
    let lastPid = NaN;
    let lo = 0;
    let hi = 0;
    let count = 0;
    const flush = () => {
      if (count === 0) return;
      const r = range.get(lastPid);
      if (!r) range.set(lastPid, [lo, hi, count]);
      else range.set(lastPid, [Math.min(r[0], lo), Math.max(r[1], hi), r[2] + count]);
    };
    for (let k = 0; k < calls.length; k++) {
      const p = pid[k]!;
      const c = correlation[k]!;
      if (p !== lastPid) {
        flush();
        lastPid = p;
        lo = hi = c;
        count = 0;
      }
      if (c < lo) lo = c;
      if (c > hi) hi = c;
      count++;
    }
    flush();
    for (const [p, [min, max, count]] of range) {
      byPid.set(p, new IdTable(min, max, count));
    }
    let fillPid = NaN;
    let e = new IdTable(0, 0, 0);
    const domain = calls.domain;
    for (let k = 0; k < calls.length; k++) {
      if (pid[k] !== fillPid) e = byPid.get((fillPid = pid[k]!))!;
      const c = correlation[k]!;
      // Runtime calls win over the driver calls inside them: the runtime
      // call is the one the user wrote.
      if (domain[k] === 1 || e.get(c) === -1) e.set(c, k);
    }
  }

  // Ops of one process come in long runs: find its table when the pid changes.
  const opCall = new Int32Array(ops.length);
  let opPid = NaN;
  let table: IdTable | undefined;
  const { pid: opPids, correlation: opCorrelations } = ops;
  for (let k = 0; k < ops.length; k++) {
    if (opPids[k] !== opPid) table = byPid.get((opPid = opPids[k]!));
    opCall[k] = table ? table.get(opCorrelations[k]!) : -1;
  }

  // Calls per thread, by counting then filling (no per-call array growth,
  // no per-call string keys).
  const threadIndex = new Map<number, number>();
  const threadOfCall = new Int32Array(calls.length);
  const sizes: number[] = [];
  let lastKey = NaN;
  let t = -1;
  const { pid: callPids, tid: callTids } = calls;
  for (let k = 0; k < calls.length; k++) {
    const key = callPids[k]! * THREAD_LANE_FACTOR + callTids[k]!;
    if (key !== lastKey) {
      lastKey = key;
      const known = threadIndex.get(key);
      if (known === undefined) {
        threadIndex.set(key, (t = sizes.length));
        sizes.push(0);
      } else t = known;
    }
    threadOfCall[k] = t;
    sizes[t]!++;
  }
  const lists = sizes.map((n) => new Int32Array(n));
  const fill = new Int32Array(sizes.length);
  for (let k = 0; k < calls.length; k++) {
    const t = threadOfCall[k]!;
    lists[t]![fill[t]!++] = k;
  }
  const threads = new Map<string, Int32Array>([...threadIndex].map(([key, t]) => [threadName(key), lists[t]!]));
  return { byPid, opCall, threads };
}

/** The name of call `k` ('' if unknown). */
export function callName(host: Host, k: number): string {
  return k < 0 ? '' : (host.names.get(host.calls.nameId[k]!) ?? '');
}
