// The host side of a recording besides its call columns (those are read
// natively: native/addon.ts loadCallColumns; host.ts builds the host model
// from both): the calls' names, CUDA event records and stream waits, and the
// calls' span where their columns are not loaded.
import type { CallColumns } from '../../native/addon.ts';
import type { Db } from '../../store/database.ts';
import { oddColumnSql, refuseOddRow } from '../../store/row-checks.ts';
import { rowsWhere, type RowSubset } from './rows.ts';

/** CUPTI synchronization types (syncs.sync_type). */
export const SyncType = { EventSynchronize: 1, StreamWaitEvent: 2, StreamSynchronize: 3, ContextSynchronize: 4 } as const;

/** A cudaEventRecord as stored (host.ts EventRecord adds the call that made it). */
export interface EventRow {
  pid: number;
  eventId: number;
  stream: number | null;
  correlation: number;
}

/** A cudaStreamWaitEvent as stored (host.ts StreamWait adds the call that made it). */
export interface WaitRow {
  pid: number;
  eventId: number | null;
  stream: number | null;
  correlation: number;
  start: number;
}

/** CUDA event records and stream waits: one read for many scopes of a file. */
export interface HostTables {
  events: EventRow[];
  waits: WaitRow[];
}

/**
 * `subset`: only those rows (a part of a job read rank by rank, rows.ts).
 * A row whose values no writer stores (store/row-checks.ts) refuses the
 * file, checked in the same pass.
 */
export function readHostTables(db: Db, subset?: RowSubset): HostTables {
  const checked = <T>(table: string, rows: (T & { id: number; odd: string | null })[]): T[] =>
    rows.map(({ id, odd, ...row }) => (odd === null ? (row as T) : refuseOddRow(db, db.name, table, id, odd)));
  const ids = [{ name: 'pid' }, { name: 'event_id' }, { name: 'stream_id', nullable: true }, { name: 'correlation_id' }];
  return {
    events: checked(
      'cuda_events',
      db
        .prepare(
          `SELECT id, pid, event_id AS eventId, stream_id AS stream, correlation_id AS correlation, ${oddColumnSql(ids)}
          FROM cuda_events WHERE ${rowsWhere(subset, 'cuda_events')} ORDER BY id`,
        )
        .all() as (EventRow & { id: number; odd: string | null })[],
    ),
    waits: checked(
      'syncs',
      db
        .prepare(
          `SELECT id, pid, event_id AS eventId, stream_id AS stream, correlation_id AS correlation, start_ns AS start,
            ${oddColumnSql([...ids, { name: 'start_ns', time: true }])}
          FROM syncs WHERE sync_type = ${SyncType.StreamWaitEvent} AND ${rowsWhere(subset, 'syncs')} ORDER BY start_ns, id`,
        )
        .all() as (WaitRow & { id: number; odd: string | null })[],
    ),
  };
}

/**
 * The names of the calls: the distinct ids from the loaded column (a join
 * of strings with ten million calls in SQL costs a second), then one lookup.
 */
export function callNames(db: Db, calls: CallColumns): Map<number, string> {
  const nameIds = new Set<number>();
  for (let k = 0, last = NaN; k < calls.length; k++) {
    const id = calls.nameId[k]!;
    if (id !== last) nameIds.add((last = id));
  }
  const names = new Map<number, string>();
  for (const s of db
    .prepare('SELECT id, value FROM strings WHERE id IN (SELECT value FROM json_each(?))')
    .raw()
    .iterate(JSON.stringify([...nameIds])) as Iterable<[number, string]>) {
    names.set(s[0], s[1]);
  }
  return names;
}

/** The first start and latest end of every API call (null without calls): where their columns are not loaded (trace.ts loadTrace). */
export function readCallsExtent(db: Db): { start: number | null; end: number | null } {
  const apiSpan = db.prepare('SELECT min(start_ns) AS s, max(end_ns) AS e FROM api_calls').get() as { s: number | null; e: number | null };
  return { start: apiSpan.s, end: apiSpan.e };
}
