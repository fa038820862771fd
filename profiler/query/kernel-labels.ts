// The labels of a recording's kernels for the views that show one kernel
// at a time (the timeline's boxes and tooltips): readableNames over every
// kernel name the recording has, so that a box reads as that kernel's row
// of a table would — the four vectorized_elementwise_kernel of a PyTorch
// run told apart by their functors — and the same wherever it is in time,
// not by what the window happens to hold.
import type { Database } from 'better-sqlite3';
import { readableNames, type StoredName } from '../contract/names.ts';

/**
 * Kernel names labelled over the recording, at most: labelling costs
 * 10–50 µs a name (10^6 names took 16–60 s, in the served recording's first
 * window, on the thread that answers every window). A recording with more
 * distinct kernel names gets none: the timeline draws each kernel by its
 * short name (contract/names.ts shortName), the Stats tab and the details
 * are as before.
 */
export const MAX_LABELLED_KERNELS = 50_000;

/**
 * Each kernel name's label, by strings id. One pass over the kernels'
 * name ids (no index has them): a caller keeps the answer for as long as
 * the recording does not grow. Empty past `most` distinct names.
 */
export function kernelLabels(db: Database, most = MAX_LABELLED_KERNELS): Map<number, string> {
  const distinct = (db.prepare('SELECT count(DISTINCT name_id) FROM kernels').pluck().get() as number) ?? 0;
  if (distinct > most) return new Map();
  const rows = db
    .prepare('SELECT s.id, s.value AS name, s.demangled AS demangledName FROM strings s WHERE s.id IN (SELECT DISTINCT name_id FROM kernels)')
    .all() as ({ id: number } & StoredName)[];
  const labels = readableNames(rows);
  return new Map(rows.map((r) => [r.id, labels.get(r.name)!]));
}
