// The NCCL collectives of a recording, per rank, as clock alignment reads
// them (align.ts): each rank's (process and GPU's) collective kernels,
// named by the matching rule shared with the straggler analysis
// (analysis/collective-order.ts: their order on their streams), with their
// end times. Which kernels are NCCL's, and which collective each runs, is
// the communication analysis's one definition (analysis/communication.ts,
// commKernelOf: every naming NCCL has used, mangled or not).
//
// Read by SQL (readCollectives: a scan of the kernels), or numbered from
// kernels a caller has loaded already (collectivesOfKernels: a rank's
// summary holds its NCCL kernels, job/summary.ts) — the same numbering of
// the same rows, without reading the kernels table a second time.
import { COLLECTIVE_CODE, CollectiveNumbering } from '../cuda/collective-order.ts';
import { commKernelOf } from '../cuda/nccl.ts';
import { COLLECTIVES } from '../contract/communication.ts';
import type { Db } from '../store/database.ts';
import type { RankCollectives } from './align.ts';

/** Kernels as columns, in (start, id) order: what the numbering reads of each. */
export interface KernelColumns {
  length: number;
  start: ArrayLike<number>;
  end: ArrayLike<number>;
  stream: ArrayLike<number>;
  device: ArrayLike<number>;
  /** kernels.name_id */
  detail: ArrayLike<number>;
}

/**
 * Each rank's collectives, by `pid:deviceId`: key `s#kind#n` (the n-th
 * collective of that kind on the rank's s-th stream with collectives,
 * streams numbered by their first collective, all from 0) → its end, ns
 * from the recording's origin. Empty when the recording ran none.
 */
export function readCollectives(db: Db): Map<string, RankCollectives> {
  const codes = collectiveCodes(db);
  if (codes.size === 0) return new Map();
  const rows = db
    .prepare(`SELECT stream_id, device_id, name_id, start_ns, end_ns FROM kernels WHERE name_id IN (${[...codes.keys()].join(',')})`)
    .raw()
    .all() as [number, number, number, number, number][];
  // The numbering takes each rank's kernels in start order (a stable sort of rows in id order: then by id).
  rows.sort((a, b) => a[3] - b[3]);
  const kernels: KernelColumns = {
    length: rows.length,
    start: rows.map((r) => r[3]),
    end: rows.map((r) => r[4]),
    stream: rows.map((r) => r[0]),
    device: rows.map((r) => r[1]),
    detail: rows.map((r) => r[2]),
  };
  return numberCollectives(db, codes, kernels);
}

/**
 * readCollectives of a recording whose kernels `kernels` holds, in (start,
 * id) order: every kernel of an NCCL collective's name among them (others
 * are passed over), each with its stored stream, device, start and end.
 */
export function collectivesOfKernels(db: Db, kernels: KernelColumns): Map<string, RankCollectives> {
  const codes = collectiveCodes(db);
  return codes.size === 0 ? new Map() : numberCollectives(db, codes, kernels);
}

/** The collective (COLLECTIVE_CODE) of each NCCL kernel name, by strings id. */
function collectiveCodes(db: Db): Map<number, number> {
  const codes = new Map<number, number>();
  // Every NCCL kernel's name holds 'nccl' (case as written): the few strings that do are read, not every name.
  for (const [id, value] of db.prepare("SELECT id, value FROM strings WHERE instr(value, 'nccl') > 0").raw().all() as [number, string][]) {
    const kind = commKernelOf(value)?.collective;
    if (kind) codes.set(id, COLLECTIVE_CODE.get(kind)!);
  }
  return codes;
}

function numberCollectives(db: Db, codes: Map<number, number>, kernels: KernelColumns): Map<string, RankCollectives> {
  const out = new Map<string, RankCollectives>();
  const streamPid = new Map((db.prepare('SELECT id, pid FROM streams').raw().all() as [number, number][]).map(([id, pid]) => [id, pid]));
  const numbering = new CollectiveNumbering();
  const rankIds = new Map<string, number>();
  for (let i = 0; i < kernels.length; i++) {
    const code = codes.get(kernels.detail[i]!);
    if (code === undefined) continue;
    const stream = kernels.stream[i]!;
    const rank = `${streamPid.get(stream) ?? 0}:${kernels.device[i]!}`;
    let keys = out.get(rank);
    if (!keys) out.set(rank, (keys = new Map()));
    let id = rankIds.get(rank);
    if (id === undefined) rankIds.set(rank, (id = rankIds.size));
    const n = numbering.next(id, stream, code);
    keys.set(`${numbering.stream}#${COLLECTIVES[code]}#${n}`, kernels.end[i]!);
  }
  return out;
}
