// What a job's start-up reads of the recording (job-scope.ts jobStartup):
// the zones first, then only the rows they cannot settle — the calls that
// could be start-up calls, filtered natively, and the operations of the
// zones that reach into the band where a tenth of the work is done — and
// the names of the calls it read. What it reads depends on what it found,
// so it is handed these reads, not their results.
import { loadRows, type CallColumns, type ColumnPool, type LoadRowsOptions, type OpColumns, type RowRanges } from '../../native/addon.ts';
import type { Db } from '../../store/database.ts';
import { callNames } from './calls.ts';
import { readZones, type Zone } from './zones.ts';

export interface StartupReader {
  /** The zones of these tables (ZONED_TABLES ids). */
  zones(tables: number[]): Zone[];
  /** The calls of these id ranges (flat, sorted, touching ranges joined), in (start, id) order, as `only` filters them. */
  calls(ranges: number[], only: Pick<LoadRowsOptions, 'maxStart' | 'callNames' | 'callMinNs'>): CallColumns;
  /** The operations of these id ranges, of these zones only (lane, first, last per zone), in start order: their kind, start and end. */
  ops(ranges: RowRanges, zones: RowRanges): OpColumns;
  /** The names of these calls (calls.ts callNames). */
  names(calls: CallColumns): Map<number, string>;
}

/** The reads of `db`, whose file is `file`, into `pool`'s columns. */
export function startupReader(db: Db, file: string, pool: ColumnPool): StartupReader {
  return {
    zones: (tables) => readZones(db, tables),
    calls: (apiCalls, only) => loadRows(file, { apiCalls }, only, pool).calls,
    ops: (ranges, zones) => loadRows(file, ranges, { narrow: true, zones, opColumns: ['kind', 'start', 'end'] }, pool).ops,
    names: (calls) => callNames(db, calls),
  };
}
