// The zones (SCHEMA.md "Zones": per block of one stream's or thread's rows,
// their earliest start, latest end, row count and summed durations): what a
// job's start-up is found from without reading every row (job-scope.ts,
// startup.ts here), how many rows a load reads (columns.ts), which rows are
// a process's (diagnosis/job.ts planJob), and the span of the calls a whole
// or steady-state scope holds.
import type { Db } from '../../store/database.ts';
import { THREAD_LANE_FACTOR, ZONED_TABLES } from '../../store/zone-tables.ts';
import type { Ns } from '../../contract/time.ts';

export interface Zone {
  table: number;
  lane: number;
  start: Ns;
  end: Ns;
  first: number;
  last: number;
  busy: number;
  rows: number;
}

/** The zones of these tables (ZONED_TABLES ids). */
export function readZones(db: Db, tables: number[]): Zone[] {
  return db
    .prepare(
      `SELECT table_id AS "table", lane, start_ns AS start, end_ns AS "end", first_id AS first, last_id AS last, coalesce(busy_ns, 0) AS busy, rows
      FROM zones WHERE table_id IN (${tables.join(', ')})`,
    )
    .all() as Zone[];
}

/** The rows the zones of these tables count, without reading a row. */
export function zoneRows(db: Db, tables: number[]): number {
  return db
    .prepare(`SELECT coalesce(sum(rows), 0) FROM zones WHERE table_id IN (${tables.join(',')})`)
    .pluck()
    .get() as number;
}

/** A zone's table, lane and ids: whose rows they are (a stream's, a thread's). */
export interface ZoneIds {
  t: number;
  lane: number;
  first: number;
  last: number;
}

/** The zones of the operations and calls (kernels, memcpys, memsets, api_calls), in id order. */
export function readZoneIds(db: Db): ZoneIds[] {
  return db
    .prepare(`SELECT table_id AS t, lane, first_id AS first, last_id AS last FROM zones WHERE table_id IN (1, 2, 3, 5) ORDER BY first_id`)
    .all() as ZoneIds[];
}

/**
 * The first start and latest end of the calls a whole or steady-state scope
 * holds (the trace's span, which closes those scopes' windows: scope.ts
 * closeWindows), from the zones: of every call, or of those that start at
 * or after `from` — where a zone of a thread begins before it and ends after
 * the zones that begin after it, its rows say. Null without calls.
 */
export function callsSpan(db: Db, from: Ns | null): { start: Ns; end: Ns } | null {
  const t = ZONED_TABLES.api_calls.id;
  if (from === null) {
    const r = db.prepare('SELECT min(start_ns) AS start, max(end_ns) AS "end" FROM zones WHERE table_id = ? AND rows > 0').get(t) as {
      start: number | null;
      end: number | null;
    };
    return r.start === null || r.end === null ? null : { start: r.start, end: r.end };
  }
  const after = db.prepare('SELECT min(start_ns) AS start, max(end_ns) AS "end" FROM zones WHERE table_id = ? AND rows > 0 AND start_ns >= ?').get(t, from) as {
    start: number | null;
    end: number | null;
  };
  let start = after.start ?? Infinity;
  let end = after.end ?? -Infinity;
  const across = db
    .prepare('SELECT first_id AS first, last_id AS last, lane FROM zones WHERE table_id = ? AND rows > 0 AND start_ns < ? AND end_ns >= ?')
    .all(t, from, from) as { first: number; last: number; lane: number }[];
  const read = db.prepare(
    `SELECT min(start_ns) AS start, max(end_ns) AS "end" FROM api_calls WHERE id BETWEEN ? AND ? AND pid * ${THREAD_LANE_FACTOR} + tid = ? AND start_ns >= ?`,
  );
  for (const z of across) {
    const r = read.get(z.first, z.last, z.lane, from) as { start: number | null; end: number | null };
    if (r.start !== null && r.start < start) start = r.start;
    if (r.end !== null && r.end > end) end = r.end;
  }
  return Number.isFinite(start) ? { start, end } : null;
}
