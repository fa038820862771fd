// Schema version 5: the busy time of each zone (the sum of its rows'
// durations: on a stream, where operations run one at a time, its busy
// time).
//
// Summaries (per-stream busy time and share of the device) and the overview
// of the whole recording read it from the zones — a few thousand rows —
// instead of summing ten million operations when a recording opens.
// Recordings of earlier versions get it here, from their rows.
import { ZONED_TABLES, zoneBusySql, type ZonedTable } from '../zone-tables.ts';

export const version = 5;

export const sql = /* sql */ `
ALTER TABLE zones ADD COLUMN busy_ns INTEGER; -- sum of the zone's rows' durations
${(Object.keys(ZONED_TABLES) as ZonedTable[]).map((t) => zoneBusySql(t) + ';').join('\n')}
`;
