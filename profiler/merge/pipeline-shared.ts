// What the merging thread and its bulk worker (bulk-worker.ts) agree on:
// the tables the worker rewrites, a job, and the shared memory they
// coordinate through (pipeline.ts says how).
import { MERGE_TABLES } from './tables.ts';

/** The tables of rows with their own rowids — the big ones (operations, calls, ranges): what the worker rewrites. */
export const BULK_TABLES = Object.entries(MERGE_TABLES)
  .filter(([, spec]) => spec.how === 'rows' && spec.columns.id === 'rowid')
  .map(([table]) => table);

/**
 * One table of an input's, into a scratch recording (main; the input is
 * attached as src) with the ids it must have in the output. SQLite
 * numbering the rows itself is cheaper than checking each given id: the
 * first row is given its id, the others numbered after it (`numbered`),
 * right when the input's ids have no gaps, which the last id shows; else
 * the rows are written again with their ids given (`given`).
 */
export interface BulkTable {
  table: string;
  numbered: string[];
  given: string;
  /** The last row's id in the output; null: the input has no rows there. */
  lastId: number | null;
}

/** One input's big tables. */
export interface BulkJob {
  /** The input's position in the merge. */
  index: number;
  file: string;
  /** Every table of BULK_TABLES. */
  tables: BulkTable[];
  /** Its string ids → the merged ones, when the statements look them up in temp.merge_strings. */
  strings: [number, number][] | null;
}

/** states[index]: where an input's job stands. */
export const JobState = {
  Pending: 0,
  Failed: -1,
  /** Ready + slot: its rows are in scratch `slot`. */
  Ready: 1,
} as const;

/** The shared memory, as Int32Arrays over these buffers. */
export interface PipelineShared {
  /** Per input: 0 nobody's yet, 1 the worker's, 2 the merging thread's (it takes what nobody started when it gets there). */
  claims: SharedArrayBuffer;
  /** Per input: JobState. */
  states: SharedArrayBuffer;
  /** Per scratch: 1 while it holds rows the merging thread has not copied yet. */
  slots: SharedArrayBuffer;
  /** [0]: 1 when the merge stops (done or failed); [1]: 1 once the worker has ended. */
  control: SharedArrayBuffer;
}
