// Reading NVTX range instances from a recording: those of one name, and
// the names there are (for a message about a name that is not). What an
// instance owns is cuda/nvtx-ranges.ts's.
import type { RangeInstance } from '../cuda/nvtx-ranges.ts';
import type { Db } from './database.ts';
import { oddColumnSql, refuseOddRow } from './row-checks.ts';

/** The closed instances of the NVTX range `name`, in start order. */
export function rangeInstances(db: Db, name: string): RangeInstance[] {
  const columns = [{ name: 'pid' }, { name: 'tid' }, { name: 'start_ns', time: true }, { name: 'end_ns', time: true }];
  const rows = db
    .prepare(
      `SELECT r.id, r.pid, r.tid, r.start_ns AS startNs, r.end_ns AS endNs, ${oddColumnSql(columns, 'r')} FROM nvtx_ranges r
      JOIN strings s ON s.id = r.name_id WHERE s.value = ? AND r.end_ns IS NOT NULL ORDER BY r.start_ns, r.id`,
    )
    .all(name) as (RangeInstance & { id: number; odd: string | null })[];
  // Checked in the same pass (store/row-checks.ts): a row no writer stores refuses the file.
  return rows.map(({ id, odd, ...r }) => (odd === null ? r : refuseOddRow(db, db.name, 'nvtx_ranges', id, odd)));
}

/** For a message about a range name that is not there: "; its ranges: 'step', 'compute'" (closed ranges, most frequent first), or that there are none. */
export function knownRanges(db: Db): string {
  const names = db
    .prepare(
      `SELECT s.value FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id
      WHERE r.end_ns IS NOT NULL GROUP BY s.value ORDER BY count(*) DESC, s.value LIMIT 8`,
    )
    .pluck()
    .all() as string[];
  return names.length ? `; its ranges: ${names.map((n) => `'${n}'`).join(', ')}` : '; it has no NVTX ranges';
}
