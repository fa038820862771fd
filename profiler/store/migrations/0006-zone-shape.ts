// Schema version 6: the shape of each zone — its longest row, the largest
// gap between its rows, and (copies) its rows per copy kind.
//
// A whole-recording view of ten million operations used to read every row
// to merge sub-pixel work into coverage (7.4 s on the 2-core development
// machine). When a zone's rows are all shorter than a pixel and no gap
// between them is as wide as one, they merge into one span from the zone's
// start to its end, whatever the rows say: the window answers it from the
// zone alone (profiler/query/recording-query.ts). Recordings of earlier
// versions get the shape here, from their rows.
import { ZONED_TABLES, zoneShapeSql, type ZonedTable } from '../zone-tables.ts';

export const version = 6;

export const sql = /* sql */ `
ALTER TABLE zones ADD COLUMN max_dur_ns INTEGER; -- longest row (end − start)
ALTER TABLE zones ADD COLUMN max_gap_ns INTEGER; -- widest gap between consecutive rows in start order, ≥ 0
ALTER TABLE zones ADD COLUMN copy_kind_rows TEXT; -- memcpys: JSON {copy_kind: rows}; NULL for other tables
${(Object.keys(ZONED_TABLES) as ZonedTable[]).map((t) => zoneShapeSql(t) + ';').join('\n')}
`;
