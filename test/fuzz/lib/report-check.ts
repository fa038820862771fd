// One `streamscope report` read of one recording in the sandbox, and what is
// wrong with it (outcome.ts's property for files). A recording of an older
// schema is migrated in place when read (store/database.ts openRecording):
// the one case where the input may change.
import Database from 'better-sqlite3';
import type { ReportInput } from '../handlers/report.ts';
import type { Outcome } from './outcome.ts';
import { fileProblem, sha256 } from './outcome.ts';
import { Sandbox } from './sandbox.ts';
import { latestSchemaVersion } from '../../../profiler/store/migrations/index.ts';

export function reportSandbox(): Sandbox<ReportInput, Outcome> {
  return new Sandbox(new URL('../handlers/report.ts', import.meta.url), { timeoutMs: 30_000 });
}

/** user_version as SQLite reads it, or null where it cannot. */
function userVersion(file: string): number | null {
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      return db.pragma('user_version', { simple: true }) as number;
    } finally {
      db.close();
    }
  } catch {
    return null;
  }
}

export async function reportProblem(sandbox: Sandbox<ReportInput, Outcome>, file: string, whole: boolean): Promise<string | null> {
  const before = sha256(file);
  const version = userVersion(file);
  const answer = await sandbox.run({ file, whole });
  const migrates = version !== null && version < latestSchemaVersion;
  return fileProblem(file, answer, migrates || sha256(file) === before);
}
