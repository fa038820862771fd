// The NCCL collectives of a recording, per rank, as clock alignment reads
// them (align.ts): each rank's (process and GPU's) collective kernels,
// named by the matching rule shared with the straggler analysis
// (analysis/collective-order.ts: their order on their streams), with their
// end times. Which kernels are NCCL's, and which collective each runs, is
// the communication analysis's one definition (analysis/communication.ts,
// commKernelOf: every naming NCCL has used, mangled or not).
import { COLLECTIVE_CODE, CollectiveNumbering } from '../cuda/collective-order.ts';
import { commKernelOf } from '../cuda/nccl.ts';
import { COLLECTIVES } from '../contract/communication.ts';
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
  const codes = new Map<number, number>();
  // Every NCCL kernel's name holds 'nccl' (case as written): the few strings that do are read, not every name.
  for (const [id, value] of db.prepare("SELECT id, value FROM strings WHERE instr(value, 'nccl') > 0").raw().all() as [number, string][]) {
    const kind = commKernelOf(value)?.collective;
    if (kind) codes.set(id, COLLECTIVE_CODE.get(kind)!);
  }
  if (codes.size === 0) return out;
  const streamPid = new Map((db.prepare('SELECT id, pid FROM streams').raw().all() as [number, number][]).map(([id, pid]) => [id, pid]));
  const rows = db
    .prepare(`SELECT stream_id, device_id, name_id, start_ns, end_ns FROM kernels WHERE name_id IN (${[...codes.keys()].join(',')})`)
    .raw()
    .all() as [number, number, number, number, number][];
  // The numbering takes each rank's kernels in start order.
  rows.sort((a, b) => a[3] - b[3]);
  const numbering = new CollectiveNumbering();
  const rankIds = new Map<string, number>();
  for (const [stream, device, name, , end] of rows) {
    const rank = `${streamPid.get(stream) ?? 0}:${device}`;
    let keys = out.get(rank);
    if (!keys) out.set(rank, (keys = new Map()));
    let id = rankIds.get(rank);
    if (id === undefined) rankIds.set(rank, (id = rankIds.size));
    const code = codes.get(name)!;
    const n = numbering.next(id, stream, code);
    keys.set(`${numbering.stream}#${COLLECTIVES[code]}#${n}`, end);
  }
  return out;
}
