// Stream facts that only the finished recording can tell.
import type { Db } from '../store/database.ts';
import { StreamFlags } from '../store/enums.ts';
import { firstRowsOnLane, rowsByCorrelation } from '../store/zones.ts';

/** How many operations per table of a stream are checked for per-thread API calls. */
const OPS_CHECKED = 64;

/**
 * Flags per-thread default streams (`--default-stream per-thread`,
 * `cudaStreamPerThread`). CUPTI reports them as ordinary streams; what gives
 * them away (checked on an H100 with scripts/device/probes/per_thread_stream.cu):
 * the runtime creates them inside the first per-thread call of a thread — a
 * launch or copy, not cudaStreamCreate* — and the work on them is issued
 * through the per-thread API variants (`*_ptsz`, `*_ptds`). Streams the
 * runtime creates for itself carry no work and stay unflagged.
 * Lookups go through the zones (correlation ids have no B-tree index).
 * Returns how many streams were flagged.
 */
export function markPerThreadDefaultStreams(db: Db): number {
  const candidates = db
    .prepare(
      `SELECT id, pid, created_by_correlation_id AS creator FROM streams
      WHERE (flags & ${StreamFlags.LegacyDefault}) = 0 AND created_by_correlation_id IS NOT NULL`,
    )
    .all() as { id: number; pid: number; creator: number }[];
  const nameOf = db.prepare('SELECT value FROM strings WHERE id = ?').pluck();
  const apiNames = (pid: number, corr: number) =>
    rowsByCorrelation<{ name_id: number }>(db, 'api_calls', pid, corr, 't.name_id').map((a) => nameOf.get(a.name_id) as string);
  const perThread = /_pt(sz|ds)$/;
  const flag = db.prepare(`UPDATE streams SET flags = flags | ${StreamFlags.PerThreadDefault} WHERE id = ?`);
  let flagged = 0;
  db.transaction(() => {
    for (const s of candidates) {
      if (apiNames(s.pid, s.creator).some((n) => n.includes('StreamCreate'))) continue;
      const issuedPerThread = (['kernels', 'memcpys', 'memsets'] as const).some((table) =>
        firstRowsOnLane<{ correlation_id: number }>(db, table, s.id, OPS_CHECKED, 't.correlation_id').some((op) =>
          apiNames(s.pid, op.correlation_id).some((n) => perThread.test(n)),
        ),
      );
      if (issuedPerThread) flagged += flag.run(s.id).changes;
    }
  })();
  return flagged;
}
