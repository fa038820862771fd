// How many rows a recording's tables hold at most, without counting them.
import type { Database } from 'better-sqlite3';

/**
 * How many rows `tables` hold at most: max(id) − min(id) + 1 each, two seeks per table (each aggregate alone: SQLite's
 * min/max shortcut), where count(*) reads every page (~14 ms for 1 M operations). Ids are only ever appended, so this
 * is their count where none was deleted; as many rows loaded as this is every row (job/summary.ts), and room for this
 * many holds every row (analysis/load/columns.ts).
 */
export function rowsAtMost(db: Database, tables: readonly string[]): number {
  let most = 0;
  for (const table of tables) {
    const [lo, hi] = db.prepare(`SELECT (SELECT min(id) FROM ${table}), (SELECT max(id) FROM ${table})`).raw().get() as [number | null, number | null];
    if (lo !== null && hi !== null) most += hi - lo + 1;
  }
  return most;
}

/** How many operations (kernels, memcpys, memsets) and API calls the recording holds at most (rowsAtMost). */
export function timelineRows(db: Database): { ops: number; calls: number } {
  return { ops: rowsAtMost(db, ['kernels', 'memcpys', 'memsets']), calls: rowsAtMost(db, ['api_calls']) };
}
