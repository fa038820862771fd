// The timeline tables that `zones` indexes, and how a row maps to its zone
// key. Shared by the schema migration that introduced zones, the SQL zone
// builder (rows written by SQL: importers, generators) and the range
// queries; the native ingest writes the same table_id and lane values
// (native/addon/src/zone_tables.h; test/contract/shared-constants.test.ts
// holds the two together).
import type { ItemTable } from '../contract/api.ts';

/** Every table of timeline items (contract/api.ts, ITEM_TABLES) is zoned. */
export type ZonedTable = ItemTable;

export interface ZonedTableInfo {
  /** zones.table_id; stored, so it never changes. */
  id: number;
  /** SQL for a row's lane (over the table's columns). */
  lane: string;
  /** SQL for a row's end time (NVTX markers have none). */
  end: string;
  /** SQL for a row's correlation id, or NULL. */
  correlation: string;
  /** GPU tables are laned by stream, host tables by thread. */
  laneKind: 'stream' | 'thread';
}

/** pid and tid are both below Linux's pid_max limit of 2^22. */
export const THREAD_LANE_FACTOR = 4194304;

const threadLaneSql = `pid * ${THREAD_LANE_FACTOR} + tid`;

export const ZONED_TABLES: Record<ZonedTable, ZonedTableInfo> = {
  kernels: { id: 1, lane: 'stream_id', end: 'end_ns', correlation: 'correlation_id', laneKind: 'stream' },
  memcpys: { id: 2, lane: 'stream_id', end: 'end_ns', correlation: 'correlation_id', laneKind: 'stream' },
  memsets: { id: 3, lane: 'stream_id', end: 'end_ns', correlation: 'correlation_id', laneKind: 'stream' },
  // Lane 0: synchronizations that involve no stream (context, event).
  syncs: { id: 4, lane: 'coalesce(stream_id, 0)', end: 'end_ns', correlation: 'correlation_id', laneKind: 'stream' },
  api_calls: { id: 5, lane: threadLaneSql, end: 'end_ns', correlation: 'correlation_id', laneKind: 'thread' },
  nvtx_ranges: { id: 6, lane: threadLaneSql, end: 'coalesce(end_ns, start_ns)', correlation: 'NULL', laneKind: 'thread' },
};

/** Rows per zone (the native ingest uses the same cap). */
export const ZONE_ROWS = 4096;

/**
 * SQL that zones every row of `table` with id > @after (and ≤ @upto when
 * `bounded`: merge zones one input's rows while later inputs' are there). Rows are grouped per
 * lane and per block of ZONE_ROWS rowids: correct for any row order (range
 * queries filter rows by lane too), tight when the rows of a lane are
 * contiguous, as importers and generators that write lane by lane make them.
 */
export function zonesFromRowsSql(table: ZonedTable, schemaVersion = 5, bounded = false): string {
  const t = ZONED_TABLES[table];
  // Schema 3's migration builds its zones before schema 5 added busy_ns.
  const busy = schemaVersion >= 5;
  return `INSERT INTO zones (table_id, lane, start_ns, first_id, last_id, end_ns, rows, min_correlation, max_correlation${busy ? ', busy_ns' : ''})
    SELECT ${t.id}, ${t.lane} AS zone_lane, min(start_ns), min(id), max(id), max(${t.end}), count(*),
           min(${t.correlation}), max(${t.correlation})${busy ? `, sum(${t.end} - start_ns)` : ''}
    FROM ${table} WHERE id > @after${bounded ? ' AND id <= @upto' : ''} GROUP BY zone_lane, id / ${ZONE_ROWS}`;
}

/** SQL that fills busy_ns of the zones of `table` that have none (schema 5's migration). */
export function zoneBusySql(table: ZonedTable): string {
  const t = ZONED_TABLES[table];
  // The row's columns qualified: zones has start_ns and end_ns too.
  const r = (sql: string) => sql.replace(/\b(stream_id|pid|tid|start_ns|end_ns)\b/g, 'r.$1');
  return `UPDATE zones SET busy_ns = (SELECT coalesce(sum(${r(t.end)} - r.start_ns), 0) FROM ${table} r
      WHERE r.id BETWEEN zones.first_id AND zones.last_id AND ${r(t.lane)} = zones.lane)
    WHERE table_id = ${t.id} AND busy_ns IS NULL`;
}

/**
 * SQL that fills the shape of the zones of `table` that have none (schema
 * 6): the longest row, the largest gap between consecutive rows in start
 * order (a row's start minus the latest end before it; 0 when they touch
 * or overlap) and, for copies, the rows per copy kind as a JSON object
 * ({"1": 2048, "2": 2048}). A window of the timeline at a resolution
 * coarser than both draws such a zone as one coverage span without reading
 * its rows. Run after zonesFromRowsSql and by schema 6's migration; the
 * native ingest computes the same values as it writes.
 */
export function zoneShapeSql(table: ZonedTable): string {
  const t = ZONED_TABLES[table];
  const r = (sql: string) => sql.replace(/\b(stream_id|pid|tid|start_ns|end_ns|copy_kind)\b/g, 'r.$1');
  const rows = `FROM ${table} r WHERE r.id BETWEEN zones.first_id AND zones.last_id AND ${r(t.lane)} = zones.lane`;
  const copyKinds =
    table === 'memcpys'
      ? `, copy_kind_rows = (SELECT json_group_object(k, n) FROM (SELECT r.copy_kind AS k, count(*) AS n ${rows} GROUP BY r.copy_kind ORDER BY r.copy_kind))`
      : '';
  return `UPDATE zones SET (max_dur_ns, max_gap_ns) = (
      SELECT coalesce(max(e - s), 0), max(0, coalesce(max(s - prev_end), 0)) FROM (
        SELECT r.start_ns AS s, ${r(t.end)} AS e,
               max(${r(t.end)}) OVER (ORDER BY r.start_ns, r.id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_end
        ${rows}))${copyKinds}
    WHERE table_id = ${t.id} AND max_dur_ns IS NULL`;
}
