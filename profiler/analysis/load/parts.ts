// What a job's parts are made of (diagnosis/job.ts planJob): the processes
// with a CUDA context and their devices, each process's source in a merged
// recording and the id runs each source fills, and in a recording that was
// not merged each stream's process (its rows then found by their zones:
// zones.ts readZoneIds).
import type { Db } from '../../store/database.ts';

/** How many processes of the recording have a CUDA context (the ranks of a job). */
export function gpuProcessCount(db: Db): number {
  return db.prepare('SELECT count(DISTINCT pid) FROM contexts').pluck().get() as number;
}

/** Each CUDA context's process and device. */
export function readContexts(db: Db): { pid: number; device: number | null }[] {
  return db.prepare('SELECT pid, device_id AS device FROM contexts').all() as { pid: number; device: number | null }[];
}

/** Each process's source (processes.source_id: the input of merge it came from; null in a recording that was not merged). */
export function readProcessSources(db: Db): Map<number, number | null> {
  return new Map(
    (db.prepare('SELECT pid, source_id AS source FROM processes').all() as { pid: number; source: number | null }[]).map((r) => [r.pid, r.source]),
  );
}

/** A run of ids a merged recording's source fills in one table (source_rows). */
export interface SourceRows {
  source: number;
  t: string;
  first: number;
  last: number;
}

/** Every run of ids of every source, in id order. */
export function readSourceRows(db: Db): SourceRows[] {
  return db.prepare('SELECT source_id AS source, table_name AS t, first_id AS first, last_id AS last FROM source_rows ORDER BY first_id').all() as SourceRows[];
}

/** Each stream's process, by streams.id. */
export function readStreamPids(db: Db): Map<number, number> {
  return new Map((db.prepare('SELECT id, pid FROM streams').all() as { id: number; pid: number }[]).map((s) => [s.id, s.pid]));
}
