// The runner's and the frameworks' event waits straight from a recording's
// tables, in SQL: what the dependency view's tests hold its answers to
// (test/analysis/dependencies.test.ts, test/e2e/dependencies.test.ts).
import type { Database } from 'better-sqlite3';

// Every GPU operation with its stream, times and when its launching call
// started and ended (the call with its correlation id in its process; the
// runtime call starts first where a driver call shares the id).
export const OPS_SQL = `
  WITH call AS (SELECT pid, correlation_id AS corr, min(start_ns) AS start, max(end_ns) AS end FROM api_calls GROUP BY pid, correlation_id)
  SELECT t, id, stream, start_ns, end_ns, c.start AS issued, c.end AS call_end FROM (
    SELECT 'kernels' AS t, k.id, k.stream_id AS stream, k.start_ns, k.end_ns, x.pid, k.correlation_id AS corr FROM kernels k JOIN contexts x ON x.id = k.context_id
    UNION ALL SELECT 'memcpys', m.id, m.stream_id, m.start_ns, m.end_ns, x.pid, m.correlation_id FROM memcpys m JOIN contexts x ON x.id = m.context_id
    UNION ALL SELECT 'memsets', m.id, m.stream_id, m.start_ns, m.end_ns, x.pid, m.correlation_id FROM memsets m JOIN contexts x ON x.id = m.context_id
  ) o JOIN call c ON c.pid = o.pid AND c.corr = o.corr`;

/**
 * Per cudaStreamWaitEvent, straight from the tables: the event's last
 * record before the wait call, the last operation issued to the recorded
 * stream before that record (awaited), the first operation issued to the
 * waiting stream after the wait (waiting). Null where the recorded stream
 * had no operation before the record (a wait passed on through a stream
 * without operations: the graph follows it, this query does not).
 */
export function sqlEventWaits(db: Database): { awaited: string | null; awaitedStream: number | null; awaitedIssued: number | null; waiting: string | null }[] {
  return db
    .prepare(
      `WITH op AS MATERIALIZED (${OPS_SQL}),
       call AS MATERIALIZED (SELECT pid, correlation_id AS corr, min(start_ns) AS start FROM api_calls GROUP BY pid, correlation_id),
       rec AS MATERIALIZED (SELECT e.pid, e.event_id, e.stream_id AS stream, c.start FROM cuda_events e JOIN call c ON c.pid = e.pid AND c.corr = e.correlation_id),
       wt AS MATERIALIZED (SELECT s.pid, s.event_id, s.stream_id AS stream, c.start FROM syncs s JOIN call c ON c.pid = s.pid AND c.corr = s.correlation_id WHERE s.sync_type = 2),
       last AS (
         SELECT wt.stream AS wstream, wt.start AS wstart,
           (SELECT max(r.start) FROM rec r WHERE r.pid = wt.pid AND r.event_id = wt.event_id AND r.start < wt.start) AS rstart, wt.pid, wt.event_id FROM wt),
       pair AS (
         SELECT wstream, wstart, rstart, (SELECT r.stream FROM rec r WHERE r.pid = last.pid AND r.event_id = last.event_id AND r.start = last.rstart) AS rstream
         FROM last WHERE rstart IS NOT NULL)
       SELECT (SELECT t || ':' || id FROM op WHERE op.stream = pair.rstream AND op.issued < pair.rstart ORDER BY op.issued DESC LIMIT 1) AS awaited,
              (SELECT issued FROM op WHERE op.stream = pair.rstream AND op.issued < pair.rstart ORDER BY op.issued DESC LIMIT 1) AS awaitedIssued,
              pair.rstream AS awaitedStream,
              (SELECT t || ':' || id FROM op WHERE op.stream = pair.wstream AND op.issued > pair.wstart ORDER BY op.issued LIMIT 1) AS waiting
       FROM pair`,
    )
    .all() as { awaited: string | null; awaitedStream: number | null; awaitedIssued: number | null; waiting: string | null }[];
}

export interface SqlOp {
  t: string;
  id: number;
  stream: number;
  start_ns: number;
  end_ns: number;
  /** Its launching call's start and end. */
  issued: number;
  call_end: number;
}

/** Every GPU operation by `table:id`. */
export function sqlOps(db: Database): Map<string, SqlOp> {
  return new Map((db.prepare(`WITH op AS (${OPS_SQL}) SELECT * FROM op`).all() as SqlOp[]).map((o) => [`${o.t}:${o.id}`, o]));
}

/**
 * docs/ANALYSIS.md's definition, spelled out once more for the tests:
 * when `to`'s stream was otherwise ready (its launch — the call's end, or
 * its own start if earlier — and the end of its stream's previous
 * operation), and how long waiting for `from` held it after that.
 */
export function heldBy(ops: Map<string, SqlOp>, from: SqlOp, to: SqlOp): { ready: number; waitNs: number } {
  let prevEnd = -Infinity;
  for (const o of ops.values()) if (o.stream === to.stream && o.start_ns < to.start_ns) prevEnd = Math.max(prevEnd, o.end_ns);
  const ready = Math.max(Math.min(to.call_end, to.start_ns), prevEnd);
  return { ready, waitNs: Math.max(0, Math.min(from.end_ns, to.start_ns) - ready) };
}
