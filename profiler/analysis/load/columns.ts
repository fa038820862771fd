// The timeline columns: every operation and API call of a recording, read
// natively (native/addon.ts loadTimelineColumns), with the loading phase's
// progress told as it goes.
import { loadTimelineColumns } from '../../native/addon.ts';
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
 */
export function loadColumns(db: Db, onProgress?: (step: ProgressStep) => void): TimelineColumns {
  if (!onProgress) return loadTimelineColumns(db.name);
  const rows = zoneRows(db, [ZONED_TABLES.kernels.id, ZONED_TABLES.memcpys.id, ZONED_TABLES.memsets.id, ZONED_TABLES.api_calls.id]);
  const rowsRead = new Int32Array(new SharedArrayBuffer(4));
  const step: LoadingStep = { phase: 'loading', done: 0, total: rows, rowsRead };
  onProgress(step);
  return loadTimelineColumns(db.name, { progress: rowsRead });
}
