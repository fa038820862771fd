// The NCCL collectives of a recording, per rank, as clock alignment reads
// them (align.ts): each rank's (process and GPU's) collective kernels,
// keyed by their order on its streams, with their end times. Which
// kernels are NCCL's, and which collective each runs, is the
// communication analysis's one definition (analysis/communication.ts,
// commKernelOf: every naming NCCL has used, mangled or not).
import { commKernelOf } from '../analysis/communication.ts';
import type { Db } from '../store/database.ts';
import type { RankCollectives } from './align.ts';

/**
 * Each rank's collectives, by `pid:deviceId`: key `s#kind#n` (the n-th
 * collective of that kind on the rank's s-th stream with collectives,
 * streams numbered by their first collective, all from 0) → its end, ns
 * from the recording's origin. Empty when the recording ran none.
 */
export function readCollectives(db: Db): Map<string, RankCollectives> {
  const out = new Map<string, RankCollectives>();
  const kinds = new Map<number, string>();
  // Every NCCL kernel's name holds 'nccl' (case as written): the few strings that do are read, not every name.
  for (const [id, value] of db.prepare("SELECT id, value FROM strings WHERE instr(value, 'nccl') > 0").raw().all() as [number, string][]) {
    const kind = commKernelOf(value)?.collective;
    if (kind) kinds.set(id, kind);
  }
  if (kinds.size === 0) return out;
  const streamPid = new Map((db.prepare('SELECT id, pid FROM streams').raw().all() as [number, number][]).map(([id, pid]) => [id, pid]));
  const rows = db
    .prepare(`SELECT stream_id, device_id, name_id, start_ns, end_ns FROM kernels WHERE name_id IN (${[...kinds.keys()].join(',')})`)
    .raw()
    .all() as [number, number, number, number, number][];
  // Per rank, per stream, in start order.
  const byRank = new Map<string, Map<number, [number, string, number][]>>();
  for (const [stream, device, name, start, end] of rows) {
    const rank = `${streamPid.get(stream) ?? 0}:${device}`;
    let streams = byRank.get(rank);
    if (!streams) byRank.set(rank, (streams = new Map()));
    let list = streams.get(stream);
    if (!list) streams.set(stream, (list = []));
    list.push([start, kinds.get(name)!, end]);
  }
  for (const [rank, streams] of byRank) {
    const lists = [...streams.values()].map((l) => l.sort((a, b) => a[0] - b[0])).sort((a, b) => a[0]![0] - b[0]![0]);
    const keys: RankCollectives = new Map();
    lists.forEach((list, s) => {
      const nth = new Map<string, number>();
      for (const [, kind, end] of list) {
        const n = nth.get(kind) ?? 0;
        nth.set(kind, n + 1);
        keys.set(`${s}#${kind}#${n}`, end);
      }
    });
    out.set(rank, keys);
  }
  return out;
}
