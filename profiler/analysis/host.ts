// The host side of a recording, loaded for analysis: CUDA API calls per
// thread, the calls behind each GPU operation (by correlation id), CUDA
// event records and stream waits. Pure data like trace.ts: the diagnosis
// and the what-if replay read these arrays, never SQLite (the calls' names,
// event records and waits are read by load/calls.ts, the calls natively).
import { indexCalls, loadCallColumns, type CallColumns, type CallIndexColumns } from '../native/addon.ts';
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
  /**
   * How many ops have a call, and whether those come in their calls' order, as the call index found them (hostOf);
   * unknown for a host made otherwise (replay-host.ts opsByCall then counts them).
   */
  opCallOrder?: { withCall: number; inCallOrder: boolean };
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
  /**
   * The call index of these ops and calls, made already (indexCalls: the analysing thread's, handed to the what-if
   * thread over shared memory); none: made here.
   */
  index?: CallIndexColumns;
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
  const { byPid, opCall, opCallOrder, threads } = callIndexOf(ops, calls, inputs.index);
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
  return { calls, names, events, waits, opCall, opCallOrder, callOf, threads };
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
  opCallOrder: NonNullable<Host['opCallOrder']>;
  threads: Map<string, Int32Array>;
}

/** A thread's key (pid × THREAD_LANE_FACTOR + tid: both fit below 2^22) as Host.threads names it. */
const threadName = (key: number) => `${Math.floor(key / THREAD_LANE_FACTOR)}:${key % THREAD_LANE_FACTOR}`;

/**
 * The call index, natively (native/addon/src/call_index.cc: at 10 M calls
 * and operations ~0.1 s, where JavaScript took ~0.28 s on each thread that
 * analyses the recording). A process's ids too sparse for an array over
 * their span come as (id, call) pairs, which IdTable makes a Map.
 */
export function callIndexOf(ops: Pick<GpuOps, 'length' | 'pid' | 'correlation'>, calls: HostCalls, found = indexCalls(calls, ops)): CallIndex {
  if (found.opCall.length !== ops.length || found.threadCalls.length !== calls.length)
    throw new Error(`a call index of ${found.opCall.length} ops and ${found.threadCalls.length} calls handed for ${ops.length} and ${calls.length}`);
  const byPid = new Map<number, IdTable>();
  found.pids.forEach((pid, p) => {
    const table = found.tables[p]!;
    if (table instanceof Int32Array) byPid.set(pid, IdTable.over(found.mins[p]!, table));
    else {
      const ids = IdTable.of(table.ids);
      table.ids.forEach((id, x) => ids.set(id, table.calls[x]!));
      byPid.set(pid, ids);
    }
  });
  const threads = new Map<string, Int32Array>();
  found.threadKeys.forEach((key, t) => threads.set(threadName(key), found.threadCalls.subarray(t > 0 ? found.threadEnds[t - 1]! : 0, found.threadEnds[t]!)));
  return { byPid, opCall: found.opCall, opCallOrder: { withCall: found.opsWithCall, inCallOrder: found.opsInCallOrder }, threads };
}

/** The name of call `k` ('' if unknown). */
export function callName(host: Host, k: number): string {
  return k < 0 ? '' : (host.names.get(host.calls.nameId[k]!) ?? '');
}
