// The timeline columns: every operation and API call of a recording, read
// natively (native/addon.ts loadTimelineColumns), with the loading phase's
// progress told as it goes.
import { loadSharedTimelineColumns, loadTimelineColumns } from '../../native/addon.ts';
import type { TimelineColumns } from '../../native/columns.ts';
import type { ProgressStep } from '../../contract/progress.ts';
import type { Db } from '../../store/database.ts';
import { ZONED_TABLES } from '../../store/zone-tables.ts';
import { zoneRows } from './zones.ts';

/**
 * The loading step as loadColumns tells it: `rowsRead` is the native
 * loader's counter of rows read so far, shared memory it adds to while this
 * thread is blocked in the load — whoever holds the step (the analysis
 * thread's owner, analysis-channel.ts) reads it for `done` then.
 */
export interface LoadingStep extends ProgressStep {
  phase: 'loading';
  rowsRead: Int32Array;
}

/**
 * The recording's operations and API calls (loadTimelineColumns), the
 * loading phase told first with how many rows it reads — from the zones,
 * without reading a row — and a counter the loader adds its rows to.
 * `shared`: room for at least as many rows as the file holds (timelineRows),
 * the columns then in shared memory (loadSharedTimelineColumns: another
 * thread can read them, diagnosis/whatif-thread.ts).
 */
export function loadColumns(db: Db, onProgress?: (step: ProgressStep) => void, shared?: { ops: number; calls: number }): TimelineColumns {
  const load = (options: { progress?: Int32Array }) => (shared ? loadSharedTimelineColumns(db.name, shared, options) : loadTimelineColumns(db.name, options));
  if (!onProgress) return load({});
  const rows = zoneRows(db, [ZONED_TABLES.kernels.id, ZONED_TABLES.memcpys.id, ZONED_TABLES.memsets.id, ZONED_TABLES.api_calls.id]);
  const rowsRead = new Int32Array(new SharedArrayBuffer(4));
  const step: LoadingStep = { phase: 'loading', done: 0, total: rows, rowsRead };
  onProgress(step);
  return load({ progress: rowsRead });
}

/** How many operations and calls the recording holds at most: room for loadColumns's `shared`. */
export { timelineRows } from '../../store/row-bounds.ts';
