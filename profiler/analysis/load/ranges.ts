// NVTX ranges: the names there are, with how many instances each has and
// the time they cover (the iterations' choice, the Query tab's list); the
// instances of one name; and for a message about a name that is not there,
// the names there are (store/nvtx-ranges.ts reads those two: the recorder's
// capture range reads them too).
import type { RangeName } from '../../contract/iterations.ts';
import { NCCL_DOMAIN } from '../../cuda/nccl.ts';
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

/** A range name as the iterations' automatic choice weighs it. */
export interface RepeatingRange {
  name: string;
  /** The most closed instances one process has: a job's step range repeats on each rank, NCCL's init once per rank. */
  perProcess: number;
  totalNs: number;
  /** Ranges of NCCL's own NVTX domain (its API calls): the user's step range is chosen before them. */
  nccl: boolean;
}

/** Every name of a closed range, most time first, with its instances per process and whether NCCL's domain holds it. */
export function repeatingRanges(db: Db): RepeatingRange[] {
  const rows = db
    .prepare(
      `SELECT name, max(n) AS perProcess, sum(total) AS totalNs, max(nccl) AS nccl FROM (
        SELECT s.value AS name, r.pid, count(*) AS n, sum(r.end_ns - r.start_ns) AS total, coalesce(d.value = ?, 0) AS nccl
        FROM nvtx_ranges r JOIN strings s ON s.id = r.name_id LEFT JOIN strings d ON d.id = r.domain_id
        WHERE r.end_ns IS NOT NULL GROUP BY s.value, r.pid, nccl)
      GROUP BY name ORDER BY totalNs DESC, name`,
    )
    .all(NCCL_DOMAIN) as (Omit<RepeatingRange, 'nccl'> & { nccl: number })[];
  return rows.map((r) => ({ ...r, nccl: r.nccl === 1 }));
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
