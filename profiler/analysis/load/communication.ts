// What the communication breakdown (communication.ts) reads besides the
// loaded columns, all small: each process's rank, local rank, world size and
// host; the ids of the device-to-device copies between two different GPUs;
// NCCL's own NVTX ranges (which call launched each NCCL kernel, with its
// message size). Of a part of a job, only its rows (rows.ts).
import type { Db } from '../../store/database.ts';
import { ZONED_TABLES } from '../../store/zone-tables.ts';
import type { Ns } from '../../contract/time.ts';
import { CopyKind } from '../../cuda/cupti-kinds.ts';
import { NCCL_DOMAIN, NCCL_MESSAGE_SIZE } from '../../cuda/nccl.ts';
import { meetsRanges, rowsWhere, type RowSubset } from './rows.ts';

export interface ProcessFacts {
  pid: number;
  rank: number | null;
  localRank: number | null;
  worldSize: number | null;
  host: string | null;
}

export interface CommunicationInputs {
  processes: Map<number, ProcessFacts>;
  /** memcpys.id of the device-to-device copies between two different GPUs. */
  peerCopyIds: Set<number>;
  /** NCCL's own NVTX ranges (readNcclRanges); none in a recording without them. */
  ncclRanges: NcclRange[];
}

/** Each process's rank, local rank, world size (null when not launched as a rank) and host. */
export function readProcessFacts(db: Db): Map<number, ProcessFacts> {
  // Every recording has the rank columns once open: schema 8 added them, and opening migrates.
  const rows = db.prepare('SELECT pid, rank, local_rank AS localRank, world_size AS worldSize, host FROM processes').all() as ProcessFacts[];
  return new Map(rows.map((r) => [r.pid, r]));
}

/**
 * The ids of device-to-device copies between two different GPUs. Only
 * the blocks of memcpys whose zones count DtoD rows are read (zones'
 * copy_kind_rows; a zone without the count is read).
 */
export function readPeerCopyIds(db: Db, subset?: RowSubset): Set<number> {
  const zones = db.prepare('SELECT first_id, last_id, copy_kind_rows FROM zones WHERE table_id = ? ORDER BY first_id').raw().all(ZONED_TABLES.memcpys.id) as [
    number,
    number,
    string | null,
  ][];
  const ids = new Set<number>();
  const read = db.prepare(
    `SELECT id FROM memcpys WHERE id BETWEEN ? AND ? AND copy_kind = ${CopyKind.DtoD}
      AND src_device_id IS NOT NULL AND dst_device_id IS NOT NULL AND src_device_id <> dst_device_id AND ${rowsWhere(subset, 'memcpys')}`,
  );
  // Adjacent blocks are read as one range.
  let from = -1;
  let to = -1;
  const flush = () => {
    if (from >= 0) for (const id of read.pluck().iterate(from, to) as Iterable<number>) ids.add(id);
  };
  for (const [first, last, kinds] of zones) {
    if (kinds !== null && !kinds.includes(`"${CopyKind.DtoD}":`)) continue;
    if (!meetsRanges(subset, 'memcpys', first, last)) continue;
    if (from >= 0 && first <= to + 1) to = Math.max(to, last);
    else {
      flush();
      from = first;
      to = last;
    }
  }
  flush();
  return ids;
}

/** `subset`: the peer copies and NCCL ranges of only those rows (a part of a job read rank by rank, rows.ts); every process's facts. */
export function readCommunicationInputs(db: Db, subset?: RowSubset): CommunicationInputs {
  return { processes: readProcessFacts(db), peerCopyIds: readPeerCopyIds(db, subset), ncclRanges: readNcclRanges(db, subset) };
}

// ---------------------------------------------------------------------------
// NCCL's NVTX ranges: which call launched an NCCL kernel (communication.ts ncclLaunches)

/** One of NCCL's NVTX ranges: an NCCL API call, on its thread. */
export interface NcclRange {
  /** nvtx_ranges.id */
  id: number;
  pid: number;
  tid: number;
  startNs: Ns;
  endNs: Ns;
  /** The call: ncclAllReduce, ncclGroupEnd, … */
  name: string;
  /** The call's message size in bytes, from its payload; null where it carried none (NCCL before 2.19, recordings before schema 10). */
  bytes: number | null;
}

/** The message size in a payload's JSON: a number (or the digits of one above 2^53), else null. */
function messageBytes(payload: string | null): number | null {
  if (!payload) return null;
  let v: unknown;
  try {
    v = (JSON.parse(payload) as Record<string, unknown>)[NCCL_MESSAGE_SIZE];
  } catch {
    return null; // not JSON: written by something else than the ingest
  }
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return v;
  if (typeof v === 'string' && /^\d+$/.test(v)) return Number(v); // beyond 2^53: near enough for bytes and bandwidth
  return null;
}

/** Every closed NVTX range of NCCL's domain (of `subset`'s rows: rows.ts). */
export function readNcclRanges(db: Db, subset?: RowSubset): NcclRange[] {
  const domain = db.prepare('SELECT id FROM strings WHERE value = ?').pluck().get(NCCL_DOMAIN) as number | undefined;
  if (domain === undefined) return [];
  const rows = db
    .prepare(
      `SELECT r.id, r.pid, r.tid, r.start_ns AS startNs, r.end_ns AS endNs, s.value AS name, r.payload FROM nvtx_ranges r
      JOIN strings s ON s.id = r.name_id WHERE r.domain_id = ? AND r.end_ns IS NOT NULL AND ${rowsWhere(subset, 'nvtx_ranges', 'r')}`,
    )
    .all(domain) as (Omit<NcclRange, 'bytes'> & { payload: string | null })[];
  return rows.map(({ payload, ...r }) => ({ ...r, bytes: messageBytes(payload) }));
}
