// The timeline columns: every operation and API call of a recording, read
// natively (native/addon.ts loadTimelineColumns), with the loading phase's
// progress told as it goes; a large recording's from its column cache
// entry where one holds it as it is (column-cache.ts), else cached there.
import { loadSharedTimelineColumns, loadTimelineColumns } from '../../native/addon.ts';
import type { TimelineColumns } from '../../native/columns.ts';
import type { ProgressStep } from '../../contract/progress.ts';
import type { Db } from '../../store/database.ts';
import { ZONED_TABLES } from '../../store/zone-tables.ts';
import { cacheColumns, openCachedColumns, recordingKey } from './column-cache.ts';
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
  // The recording's state, read once: what a cache entry must hold, and what a new one is written for.
  const key = (() => {
    try {
      return recordingKey(db.name);
    } catch {
      return null;
    }
  })();
  // A large recording's columns as an earlier load left them, mapped (column-cache.ts); its own pages, not shared memory:
  // the what-if thread maps the same entry.
  const cached = key === null ? null : openCachedColumns(db.name, key);
  if (cached) {
    const rows = cached.ops.length + cached.calls.length;
    const rowsRead = new Int32Array(new SharedArrayBuffer(4));
    rowsRead[0] = Math.min(rows, 2 ** 31 - 1);
    const step: LoadingStep = { phase: 'loading', done: rows, total: rows, rowsRead };
    onProgress?.(step);
    return cached;
  }
  const load = (options: { progress?: Int32Array }) => (shared ? loadSharedTimelineColumns(db.name, shared, options) : loadTimelineColumns(db.name, options));
  const loaded = (columns: TimelineColumns) => {
    if (key !== null) cacheColumns(db.name, key, columns);
    return columns;
  };
  if (!onProgress) return loaded(load({}));
  const rows = zoneRows(db, [ZONED_TABLES.kernels.id, ZONED_TABLES.memcpys.id, ZONED_TABLES.memsets.id, ZONED_TABLES.api_calls.id]);
  const rowsRead = new Int32Array(new SharedArrayBuffer(4));
  const step: LoadingStep = { phase: 'loading', done: 0, total: rows, rowsRead };
  onProgress(step);
  return loaded(load({ progress: rowsRead }));
}

/** How many operations and calls the recording holds at most: room for loadColumns's `shared`. */
export { timelineRows } from '../../store/row-bounds.ts';
