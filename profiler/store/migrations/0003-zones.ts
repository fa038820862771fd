// Schema version 3: block-range zones replace the B-tree indexes on
// (stream, start), (thread, start) and correlation ids.
//
// Building those indexes took longer than ingesting the rows (4 M records:
// 1.8–2.2 s of rows, 2.3 s of indexes). The native ingest writes each
// batch grouped by lane and sorted by start, so a lane's rows are
// contiguous rowid runs; one `zones` row per run (at most 4096 rows) gives
// its lane, rowid range, time span and correlation range. A window query
// reads the zones of a lane that overlap the window, then rowid ranges of
// the table (primary-key lookups); a correlation lookup scans zones, not
// rows. Zones are derived data: recordings of version 2 get theirs here,
// from their rows in stored order (SCHEMA.md, "Zones").
import { ZONED_TABLES, zonesFromRowsSql, type ZonedTable } from '../zone-tables.ts';

export const version = 3;

const zoneRows = (Object.keys(ZONED_TABLES) as ZonedTable[]).map((t) => zonesFromRowsSql(t, 3).replace('@after', '0') + ';').join('\n');

export const sql = /* sql */ `
CREATE TABLE zones (
  table_id        INTEGER NOT NULL, -- 1 kernels, 2 memcpys, 3 memsets, 4 syncs, 5 api_calls, 6 nvtx_ranges
  lane            INTEGER NOT NULL, -- streams.id (syncs without a stream: 0), or pid * 4194304 + tid
  start_ns        INTEGER NOT NULL, -- earliest start of the zone's rows
  first_id        INTEGER NOT NULL, -- rowid range of the zone in its table
  last_id         INTEGER NOT NULL,
  end_ns          INTEGER NOT NULL, -- latest end (NVTX markers: their start)
  rows            INTEGER NOT NULL, -- rows of the lane in [first_id, last_id]
  min_correlation INTEGER,
  max_correlation INTEGER,
  PRIMARY KEY (table_id, lane, start_ns, first_id)
) WITHOUT ROWID;

DROP INDEX IF EXISTS kernels_stream_start;
DROP INDEX IF EXISTS kernels_correlation;
DROP INDEX IF EXISTS memcpys_stream_start;
DROP INDEX IF EXISTS memcpys_correlation;
DROP INDEX IF EXISTS memsets_stream_start;
DROP INDEX IF EXISTS memsets_correlation;
DROP INDEX IF EXISTS syncs_start;
DROP INDEX IF EXISTS syncs_correlation;
DROP INDEX IF EXISTS api_calls_thread_start;
DROP INDEX IF EXISTS api_calls_correlation;
DROP INDEX IF EXISTS nvtx_ranges_thread_start;
-- A bulk load of version 2 that never finished listed the dropped indexes.
DELETE FROM meta WHERE key = 'pending_indexes';
CREATE INDEX IF NOT EXISTS cuda_events_correlation ON cuda_events (correlation_id);

${zoneRows}
`;
