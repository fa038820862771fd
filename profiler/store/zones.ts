// Range queries over a recording's timeline tables: the items of one lane
// (a stream, or a thread) in a time window, and lookups by correlation id.
//
// Every range query of the app goes through here, so how the store indexes
// time (block-range zones, SCHEMA.md "Zones") is this module's business.
// A zone names a lane and a rowid range of its table; the queries read the
// zones first and the table by rowid after (CROSS JOIN keeps SQLite from
// choosing the other order), and they filter rows by lane again, so zones
// only have to cover a lane's rows, not to hold nothing else.
import type { Database, Statement } from 'better-sqlite3';
import { THREAD_LANE_FACTOR, ZONED_TABLES, zoneShapeSql, zonesFromRowsSql, type ZonedTable } from './zone-tables.ts';

export type { ZonedTable } from './zone-tables.ts';

/** A stream lane is the streams.id (syncs of no stream: 0); a thread lane is threadLane(pid, tid). */
export type Lane = number;

export function threadLane(pid: number, tid: number): Lane {
  return pid * THREAD_LANE_FACTOR + tid;
}

export function laneKindOf(table: ZonedTable): 'stream' | 'thread' {
  return ZONED_TABLES[table].laneKind;
}

// Prepared statements per connection and query text: a timeline redraw
// issues one query per row.
const statements = new WeakMap<Database, Map<string, Statement<unknown[]>>>();
function prepared(db: Database, sql: string): Statement<unknown[]> {
  let m = statements.get(db);
  if (!m) statements.set(db, (m = new Map()));
  let s = m.get(sql);
  if (!s) m.set(sql, (s = db.prepare<unknown[]>(sql)));
  return s;
}

/** The lane expression over the rows aliased `t`. */
function rowLane(t: { lane: string }): string {
  return t.lane.replace(/\b(stream_id|pid|tid)\b/g, 't.$1');
}

/**
 * Qualifies the bare column names of a select list with `t.` ('*' → 't.*',
 * 'id, start_ns AS s' → 't.id, t.start_ns AS s'): zones has columns of the
 * same names. Anything else (expressions, NULL, numbers) is left as written.
 */
function qualified(columns: string): string {
  if (columns.trim() === '*') return 't.*';
  return columns
    .split(',')
    .map((c) =>
      c.trim().replace(/^(\w+)(\s+AS\s+\w+)?$/i, (m, name: string, as: string | undefined) => (/^(null|\d+)$/i.test(name) ? m : `t.${name}${as ?? ''}`)),
    )
    .join(', ');
}

/**
 * Rows of `table` on `lane` that overlap [startNs, endNs] (an item ending
 * exactly at startNs counts), in start order. `columns` is a select list
 * over the table aliased `t` ('*' for every column).
 */
export function itemsInWindow<Row>(db: Database, table: ZonedTable, lane: Lane, startNs: number, endNs: number, columns = '*'): Row[] {
  const t = ZONED_TABLES[table];
  const rowEnd = t.end.replace(/\b(end_ns|start_ns)\b/g, 't.$1');
  const sql = `SELECT ${qualified(columns)} FROM zones z CROSS JOIN ${table} t ON t.id BETWEEN z.first_id AND z.last_id
    WHERE z.table_id = ${t.id} AND z.lane = @lane AND z.start_ns <= @end AND z.end_ns >= @start
      AND ${rowLane(t)} = @lane AND t.start_ns <= @end AND ${rowEnd} >= @start
    ORDER BY t.start_ns, t.id`;
  return prepared(db, sql).all({ lane, start: startNs, end: endNs }) as Row[];
}

/** Number of rows of `table` on `lane` (from the zones: no row is read). */
export function rowsOnLane(db: Database, table: ZonedTable, lane: Lane): number {
  const r = prepared(db, 'SELECT coalesce(sum(rows), 0) AS n FROM zones WHERE table_id = ? AND lane = ?').get(ZONED_TABLES[table].id, lane) as { n: number };
  return r.n;
}

/** Rows of `table` in process `pid` with this CUPTI correlation id (ids are per process). */
export function rowsByCorrelation<Row>(db: Database, table: ZonedTable, pid: number, correlationId: number, columns = '*'): Row[] {
  const t = ZONED_TABLES[table];
  if (t.correlation === 'NULL') return [];
  const pidWhere = table === 'syncs' || table === 'api_calls' ? 't.pid = @pid' : 't.context_id IN (SELECT id FROM contexts WHERE pid = @pid)';
  const sql = `SELECT ${qualified(columns)} FROM zones z CROSS JOIN ${table} t ON t.id BETWEEN z.first_id AND z.last_id
    WHERE z.table_id = ${t.id} AND z.min_correlation <= @corr AND z.max_correlation >= @corr
      AND t.correlation_id = @corr AND ${pidWhere}
      AND ${rowLane(t)} = z.lane -- a row inside another lane's zone range is that zone's business
    ORDER BY t.id`;
  return prepared(db, sql).all({ corr: correlationId, pid }) as Row[];
}

/**
 * Zones rows that no zone covers yet (everything after the highest zoned
 * rowid of each table). The native ingest zones what it writes; SQL writers
 * (importers, generators, tests) call this when they are done, and
 * endBulkLoad calls it for them.
 */
export function ensureZones(db: Database): number {
  let added = 0;
  for (const table of Object.keys(ZONED_TABLES) as ZonedTable[]) {
    const t = ZONED_TABLES[table];
    const covered = (prepared(db, 'SELECT coalesce(max(last_id), 0) AS id FROM zones WHERE table_id = ?').get(t.id) as { id: number }).id;
    const last = (prepared(db, `SELECT coalesce(max(id), 0) AS id FROM ${table}`).get() as { id: number }).id;
    if (last > covered) {
      added += prepared(db, zonesFromRowsSql(table)).run({ after: covered }).changes;
      prepared(db, zoneShapeSql(table)).run();
    }
  }
  return added;
}

/**
 * How far before its origin a recording's first row starts (ns, ≤ 0; 0 where
 * none does, or the file has no zones): a launcher recorded with its rank
 * (torchrun under the recorder) initialises CUDA seconds before the rank
 * does, whose stream is the origin. A job's own start is the earliest of its
 * recordings' (merge.ts, job/of-summaries.ts).
 */
export function beforeOriginNs(db: Database): number {
  const zoned = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'zones'").get();
  if (!zoned) return 0;
  return Math.min(0, (db.prepare('SELECT min(start_ns) FROM zones').pluck().get() as number | null) ?? 0);
}

/** Which kind of lane each table is on. */
export const laneOf = Object.fromEntries(Object.entries(ZONED_TABLES).map(([k, v]) => [k, v.laneKind])) as Record<ZonedTable, 'stream' | 'thread'>;

/** The first `limit` rows of `table` on `lane`, in zone order (about start order). */
export function firstRowsOnLane<Row>(db: Database, table: ZonedTable, lane: Lane, limit: number, columns = '*'): Row[] {
  const t = ZONED_TABLES[table];
  const sql = `SELECT ${qualified(columns)} FROM zones z CROSS JOIN ${table} t ON t.id BETWEEN z.first_id AND z.last_id
    WHERE z.table_id = ${t.id} AND z.lane = @lane AND ${rowLane(t)} = @lane
    ORDER BY z.start_ns, t.id LIMIT @limit`;
  return prepared(db, sql).all({ lane, limit }) as Row[];
}

export interface ZoneSpan {
  firstId: number;
  lastId: number;
  startNs: number;
  endNs: number;
  rows: number;
  /** Its longest row, and the widest gap between its rows (schema 6; null in a zone written without them). */
  maxDurNs: number | null;
  maxGapNs: number | null;
  /** memcpys: rows per copy kind, as JSON ({"1": 2048}); null otherwise. */
  copyKindRows: string | null;
}

/**
 * The zones of `lane` overlapping [startNs, endNs], in start order. At a
 * coarse zoom a zone narrower than a pixel or two is drawn as coverage
 * straight from here, without reading its rows: that is what keeps a
 * whole-recording view of millions of operations cheap.
 */
export function zonesInWindow(db: Database, table: ZonedTable, lane: Lane, startNs: number, endNs: number): ZoneSpan[] {
  const sql = `SELECT first_id AS firstId, last_id AS lastId, start_ns AS startNs, end_ns AS endNs, rows,
      max_dur_ns AS maxDurNs, max_gap_ns AS maxGapNs, copy_kind_rows AS copyKindRows FROM zones
    WHERE table_id = ${ZONED_TABLES[table].id} AND lane = @lane AND start_ns <= @end AND end_ns >= @start ORDER BY start_ns, first_id`;
  return prepared(db, sql).all({ lane, start: startNs, end: endNs }) as ZoneSpan[];
}

/**
 * Rows of `table` on `lane` in the rowid range of one zone that overlap
 * [startNs, endNs], as arrays of `columns`, in rowid order; with `minDurationNs`, only those at
 * least that long (the rest go to coverageInZone). Rowid order is start
 * order for zones the native ingest wrote (it sorts each lane's batch);
 * callers that need start order sort (the window sorts across zones
 * anyway), so SQLite does not sort each zone first (a third of a zoomed-in
 * window's time).
 */
export function itemsInZone(
  db: Database,
  table: ZonedTable,
  lane: Lane,
  zone: ZoneSpan,
  startNs: number,
  endNs: number,
  columns = '*',
  minDurationNs = 0,
): unknown[][] {
  const t = ZONED_TABLES[table];
  const rowEnd = t.end.replace(/\b(end_ns|start_ns)\b/g, 't.$1');
  const sql = `SELECT ${qualified(columns)} FROM ${table} t WHERE t.id BETWEEN @first AND @last
    AND ${rowLane(t)} = @lane AND t.start_ns <= @end AND ${rowEnd} >= @start AND ${rowEnd} - t.start_ns >= @min ORDER BY t.id`;
  // Rows as arrays in `columns` order: a zoomed-in window reads ~250 k rows,
  // and an object with named properties per row costs more than the read.
  return prepared(db, sql).raw(true).all({ first: zone.firstId, last: zone.lastId, lane, start: startNs, end: endNs, min: minDurationNs }) as unknown[][];
}

export interface CoverageBucket {
  startNs: number;
  endNs: number;
  count: number;
  /** memcpys: the copy kind of the bucket's copies (one bucket per kind). */
  copyKind: number | null;
}

/**
 * The rows of one zone shorter than `resolutionNs`, summed per pixel
 * (`resolutionNs`-wide bucket from `originNs`) inside SQLite: a dense zone
 * costs one row per pixel, not one JS object per operation. A row ending
 * before its start is not counted, as itemsInZone does not read it (the
 * analysis leaves it out: row-checks.ts).
 */
export function coverageInZone(
  db: Database,
  table: ZonedTable,
  lane: Lane,
  zone: ZoneSpan,
  startNs: number,
  endNs: number,
  originNs: number,
  resolutionNs: number,
): CoverageBucket[] {
  const t = ZONED_TABLES[table];
  const rowEnd = t.end.replace(/\b(end_ns|start_ns)\b/g, 't.$1');
  const kind = table === 'memcpys' ? 't.copy_kind' : 'NULL';
  const sql = `SELECT min(t.start_ns) AS startNs, max(${rowEnd}) AS endNs, count(*) AS count, ${kind} AS copyKind
    FROM ${table} t WHERE t.id BETWEEN @first AND @last AND ${rowLane(t)} = @lane AND t.start_ns <= @end AND ${rowEnd} >= @start
      AND ${rowEnd} - t.start_ns < @res AND ${rowEnd} >= t.start_ns
    GROUP BY CAST((t.start_ns - @origin) / @res AS INTEGER), ${kind} ORDER BY 1`;
  return prepared(db, sql).all({
    first: zone.firstId,
    last: zone.lastId,
    lane,
    start: startNs,
    end: endNs,
    res: resolutionNs,
    origin: originNs,
  }) as CoverageBucket[];
}
