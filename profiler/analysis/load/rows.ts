// Some of a recording's rows: those of one part of a job analysed rank by
// rank (diagnosis/job.ts). A merged job's source fills one run of ids per
// table (source_rows), so its rows are id ranges; in a recording that was
// not merged, a process's rows lie among the others', and are its by pid.
//
// The small tables the loader reads by SQL besides the loaded columns
// (CUDA event records, stream waits: calls.ts; NCCL's NVTX ranges, peer
// copies: communication.ts) take this as a WHERE condition.

/** The tables read by SQL for a part, and the timeline tables the column loader reads by ranges. */
export type SubsetTable = 'kernels' | 'memcpys' | 'memsets' | 'api_calls' | 'cuda_events' | 'syncs' | 'nvtx_ranges';

export type RowSubset =
  /** Inclusive id ranges per table, flat [lo, hi, lo, hi, …]; a table left out has none. */
  | { ranges: Partial<Record<SubsetTable, number[]>> }
  /** Every row of these processes. */
  | { pids: number[] };

/** Tables whose rows name their process themselves; the others through their context. */
const HAS_PID: Partial<Record<SubsetTable, true>> = { api_calls: true, cuda_events: true, syncs: true, nvtx_ranges: true };

/**
 * SQL condition selecting the subset's rows of `table` (columns qualified
 * with `alias`, if given); 'TRUE' for no subset. Numbers only, so written
 * into the SQL.
 */
export function rowsWhere(subset: RowSubset | undefined, table: SubsetTable, alias = ''): string {
  if (!subset) return 'TRUE';
  const col = (c: string) => (alias ? `${alias}.${c}` : c);
  const ints = (xs: number[]) => xs.map((x) => String(Math.trunc(x))).join(', ');
  if ('pids' in subset) {
    if (subset.pids.length === 0) return 'FALSE';
    return HAS_PID[table] ? `${col('pid')} IN (${ints(subset.pids)})` : `${col('context_id')} IN (SELECT id FROM contexts WHERE pid IN (${ints(subset.pids)}))`;
  }
  const r = subset.ranges[table] ?? [];
  if (r.length < 2) return 'FALSE';
  const terms: string[] = [];
  for (let k = 0; k + 1 < r.length; k += 2) terms.push(`${col('id')} BETWEEN ${Math.trunc(r[k]!)} AND ${Math.trunc(r[k + 1]!)}`);
  return `(${terms.join(' OR ')})`;
}

/** Whether an id range [first, last] meets the subset's ranges of a table (always, for a subset by pid or none). */
export function meetsRanges(subset: RowSubset | undefined, table: SubsetTable, first: number, last: number): boolean {
  if (!subset || 'pids' in subset) return true;
  const r = subset.ranges[table] ?? [];
  for (let k = 0; k + 1 < r.length; k += 2) if (first <= r[k + 1]! && last >= r[k]!) return true;
  return false;
}
