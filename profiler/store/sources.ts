// Where a merged recording's processes came from (schema 9: the sources
// table `streamscope merge` writes, SCHEMA.md "Merged recordings"), read for
// the views: RecordingSummary.job (contract/job.ts). Empty for a recording
// that was never merged.
import type { ClockMethod, JobSource } from '../contract/job.ts';
import type { Db } from './database.ts';

const CLOCKS: readonly ClockMethod[] = ['reference', 'collectives', 'same-host', 'wall-clock'];

/** Every sources row, in id order; a clock this version does not know reads as 'wall-clock' (times as recorded: the cautious reading). */
export function readSources(db: Db): JobSource[] {
  const rows = db
    .prepare(
      `SELECT id, parent_id AS parentId, file, host, clock, shift_ns AS shiftNs, correction_ns AS correctionNs, collectives,
      residual_ns AS residualNs, residual_max_ns AS residualMaxNs FROM sources ORDER BY id`,
    )
    .all() as (Omit<JobSource, 'clock'> & { clock: string })[];
  return rows.map((r) => ({ ...r, clock: (CLOCKS as readonly string[]).includes(r.clock) ? (r.clock as ClockMethod) : 'wall-clock' }));
}

/** Each merged process's source and the pid it had there (processes.source_id, original_pid), by pid; absent for a recording never merged. */
export function readProcessOrigins(db: Db): Map<number, { sourceId: number | null; originalPid: number | null }> {
  const rows = db.prepare('SELECT pid, source_id AS sourceId, original_pid AS originalPid FROM processes WHERE source_id IS NOT NULL').all() as {
    pid: number;
    sourceId: number | null;
    originalPid: number | null;
  }[];
  return new Map(rows.map((r) => [r.pid, { sourceId: r.sourceId, originalPid: r.originalPid }]));
}
