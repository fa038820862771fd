// Who is writing a recording now. A recorder (or `streamscope ingest`)
// marks the file when it creates it and clears the mark as the very last
// write of a finished recording (profiler/record/finalize.ts), so a reader
// can tell a recording that is still growing — worth following — from one
// that is done, or one whose recorder died halfway (the mark stays, its
// process is gone: an incomplete recording, as before).
//
// The mark is the writer's pid and host (meta `writer_pid`, `writer_host`;
// SCHEMA.md). A reader on another host cannot ask whether that process
// lives, and SQLite's locks are not to be trusted across hosts (network
// file systems), so only a reader on the writer's host follows a recording
// as it grows.
import os from 'node:os';
import type { Db } from './database.ts';
import { writeMeta } from './database.ts';

export const WRITER_PID_KEY = 'writer_pid';
export const WRITER_HOST_KEY = 'writer_host';

export interface Writer {
  pid: number;
  host: string;
}

/** Marks the recording as being written by this process. */
export function markWriting(db: Db): void {
  writeMeta(db, { [WRITER_PID_KEY]: process.pid, [WRITER_HOST_KEY]: os.hostname() });
}

/** The recording is finished (or abandoned on purpose): nobody writes it any more. */
export function clearWriting(db: Db): void {
  db.prepare('DELETE FROM meta WHERE key IN (?, ?)').run(WRITER_PID_KEY, WRITER_HOST_KEY);
}

/** The writer a recording's meta names, or null when none is marked. */
export function writerOf(meta: ReadonlyMap<string, string> | Readonly<Record<string, string>>): Writer | null {
  const get = (k: string) => (meta instanceof Map ? meta.get(k) : (meta as Record<string, string>)[k]);
  const pid = Number(get(WRITER_PID_KEY));
  const host = get(WRITER_HOST_KEY);
  return Number.isSafeInteger(pid) && pid > 0 && host ? { pid, host } : null;
}

/**
 * Whether `writer` is a process that runs now on this host. EPERM: it runs
 * under another user (it exists); ESRCH: gone. A pid reused since the
 * writer died would read as alive: the reader then waits for data that
 * never comes, and says so no worse than a slow target would.
 */
export function writerAlive(writer: Writer): boolean {
  if (writer.host !== os.hostname()) return false;
  try {
    process.kill(writer.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
