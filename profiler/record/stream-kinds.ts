// Stream facts that only the finished recording can tell.
import type { Db } from '../store/database.ts';
import { StreamFlags } from '../store/enums.ts';

/**
 * Flags per-thread default streams (`--default-stream per-thread`,
 * `cudaStreamPerThread`). CUPTI reports them as ordinary streams; what gives
 * them away (checked on an H100 with scripts/device/probes/per_thread_stream.cu):
 * the runtime creates them inside the first per-thread call of a thread — a
 * launch or copy, not cudaStreamCreate* — and the work on them is issued
 * through the per-thread API variants (`*_ptsz`, `*_ptds`). Streams the
 * runtime creates for itself carry no work and stay unflagged.
 * Returns how many streams were flagged.
 */
export function markPerThreadDefaultStreams(db: Db): number {
  const perThreadCall = "(n.value LIKE '%\\_ptsz' ESCAPE '\\' OR n.value LIKE '%\\_ptds' ESCAPE '\\')";
  const issuedPerThread = (table: string) => `SELECT 1 FROM ${table} o
      JOIN api_calls a ON a.pid = streams.pid AND a.correlation_id = o.correlation_id
      JOIN strings n ON n.id = a.name_id
      WHERE o.stream_id = streams.id AND ${perThreadCall}`;
  return db.prepare(`UPDATE streams SET flags = flags | ${StreamFlags.PerThreadDefault}
      WHERE (flags & ${StreamFlags.LegacyDefault}) = 0
        AND created_by_correlation_id IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM api_calls a JOIN strings n ON n.id = a.name_id
                        WHERE a.pid = streams.pid AND a.correlation_id = streams.created_by_correlation_id
                          AND n.value LIKE '%StreamCreate%')
        AND (EXISTS (${issuedPerThread('kernels')}) OR EXISTS (${issuedPerThread('memcpys')})
             OR EXISTS (${issuedPerThread('memsets')}))`).run().changes;
}
