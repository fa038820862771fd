// NVTX ranges: the names there are, with how many instances each has and
// the time they cover (the iterations' choice, the Query tab's list); the
// instances of one name; and for a message about a name that is not there,
// the names there are (store/nvtx-ranges.ts reads those two: the recorder's
// capture range reads them too).
import type { RangeName } from '../../contract/iterations.ts';
import type { RangeInstance } from '../../cuda/nvtx-ranges.ts';
import type { Db } from '../../store/database.ts';
import { knownRanges, rangeInstances } from '../../store/nvtx-ranges.ts';

export { rangeInstances };

/** Every name of a closed range, with its instances and their summed time, most time first. */
export function rangeNames(db: Db): RangeName[] {
  return db
    .prepare(
      `SELECT s.value AS name, count(*) AS instances, sum(r.end_ns - r.start_ns) AS totalNs
      FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id WHERE r.end_ns IS NOT NULL
      GROUP BY s.value ORDER BY totalNs DESC, s.value`,
    )
    .all() as RangeName[];
}

/** What a range scope reads (scope.ts), when it is one: the range's instances, and for a name that is not there, the names there are. */
export interface RangeReader {
  /** The closed instances of the range `name`, in start order. */
  instances(name: string): RangeInstance[];
  /** "; its ranges: 'step', 'compute'" (most frequent first), or that there are none. */
  known(): string;
}

/** The NVTX ranges of `db`, read when asked. */
export function rangeReader(db: Db): RangeReader {
  return { instances: (name) => rangeInstances(db, name), known: () => knownRanges(db) };
}
