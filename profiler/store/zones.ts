// Range queries over a recording's timeline tables: the items of one lane
// (a stream, or a thread) in a time window, and lookups by correlation id.
//
// Every range query of the app goes through here so that how the store
// indexes time (see SCHEMA.md, "Zones") is one module's business.
import type { Database } from 'better-sqlite3';

/** Tables whose rows are laid out on lanes. */
export type ZonedTable = 'kernels' | 'memcpys' | 'memsets' | 'syncs' | 'api_calls' | 'nvtx_ranges';

/** GPU tables are laned by stream, host tables by thread. */
export const laneOf = {
  kernels: 'stream',
  memcpys: 'stream',
  memsets: 'stream',
  syncs: 'stream',
  api_calls: 'thread',
  nvtx_ranges: 'thread',
} as const satisfies Record<ZonedTable, 'stream' | 'thread'>;

/** Lane number of a thread: pid and tid are both below Linux's pid_max limit of 2^22. */
export function threadLane(pid: number, tid: number): number {
  return pid * 4194304 + tid;
}

/** A stream lane is the streams.id; a thread lane is threadLane(pid, tid). */
export type Lane = number;

/**
 * Rows of `table` on `lane` that overlap [startNs, endNs] (an item that ends
 * exactly at startNs counts), in start order. `columns` is an SQL select list
 * over the table's columns.
 */
export function itemsInWindow<Row>(db: Database, table: ZonedTable, lane: Lane, startNs: number, endNs: number, columns = '*'): Row[] {
  const where = laneWhere(table);
  const end = table === 'nvtx_ranges' ? 'coalesce(end_ns, start_ns)' : 'end_ns';
  return db
    .prepare(`SELECT ${columns} FROM ${table} WHERE ${where} AND start_ns <= ? AND ${end} >= ? ORDER BY start_ns`)
    .all(...laneArgs(table, lane), endNs, startNs) as Row[];
}

/** Rows of `table` in process `pid` with this CUPTI correlation id. */
export function rowsByCorrelation<Row>(db: Database, table: ZonedTable | 'cuda_events', pid: number, correlationId: number, columns = '*'): Row[] {
  if (table === 'nvtx_ranges') return [];
  const pidWhere =
    table === 'syncs' || table === 'api_calls' || table === 'cuda_events' ? 'pid = ?' : 'context_id IN (SELECT id FROM contexts WHERE pid = ?)';
  return db.prepare(`SELECT ${columns} FROM ${table} WHERE correlation_id = ? AND ${pidWhere}`).all(correlationId, pid) as Row[];
}

function laneWhere(table: ZonedTable): string {
  return laneOf[table] === 'stream' ? 'stream_id = ?' : 'pid = ? AND tid = ?';
}

function laneArgs(table: ZonedTable, lane: Lane): number[] {
  if (laneOf[table] === 'stream') return [lane];
  return [Math.floor(lane / 4194304), lane % 4194304];
}
