// Opening a recording for the viewer: read-only, through the store's checks
// (missing file, not SQLite, not a StreamScope recording, newer schema,
// locked), plus one the store does not make at open time: a truncated file.
// SQLite opens a file cut short (a copy interrupted, a disk that filled)
// without complaint and only fails with SQLITE_CORRUPT when a query reaches
// a missing page — in the viewer, that would be halfway through drawing.
// And a lock is reported after a second rather than after better-sqlite3's
// five-second busy timeout, which feels like a hang behind a file dialog.
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { openRecording, type Db } from '../store/database.ts';
import { ApiError, apiErrorOf } from './api-error.ts';

/** The SQLite file header (https://www.sqlite.org/fileformat.html#the_database_header). */
const HEADER_BYTES = 100;

/**
 * Bytes the header says the database has, or null when the header's page
 * count is not to be trusted (written by a library older than 3.7.0: the
 * "version-valid-for" number at offset 92 differs from the change counter
 * at offset 24).
 */
function declaredSize(header: Buffer): number | null {
  if (header.length < HEADER_BYTES || header.toString('latin1', 0, 16) !== 'SQLite format 3\0') return null;
  const raw = header.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  const pages = header.readUInt32BE(28);
  if (pages === 0 || header.readUInt32BE(92) !== header.readUInt32BE(24)) return null;
  return pages * pageSize;
}

/** Throws 'corrupt' when the file is shorter than its header says. */
function checkNotTruncated(file: string): void {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return; // openRecording says why it cannot be opened
  }
  try {
    const header = Buffer.alloc(HEADER_BYTES);
    let n: number;
    try {
      n = fs.readSync(fd, header, 0, HEADER_BYTES, 0);
    } catch {
      // A directory opens but does not read (EISDIR): openRecording says
      // what it is. Found by fuzzing: it was an internal error.
      return;
    }
    const want = declaredSize(header.subarray(0, n));
    const size = fs.fstatSync(fd).size;
    if (want !== null && size < want) {
      throw new ApiError(
        'corrupt',
        `${file}: truncated: the file has ${size} bytes, its SQLite header says ${want} (an interrupted copy or a full disk?)`,
        file,
      );
    }
  } finally {
    fs.closeSync(fd);
  }
}

/** How long opening waits for a writer to finish a commit before calling the file locked. */
const LOCK_WAIT_MS = 1000;

/** Throws 'locked' when a writer holds the file; anything else is left to openRecording to diagnose. */
function checkNotLocked(file: string): void {
  let probe: Database.Database;
  try {
    probe = new Database(file, { readonly: true, fileMustExist: true, timeout: LOCK_WAIT_MS });
  } catch {
    return;
  }
  try {
    probe.pragma('schema_version'); // needs the shared lock a writer's commit excludes
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
      throw new ApiError('locked', `${file}: database is locked by another process (is a recording still being written?)`, file);
    }
  } finally {
    probe.close();
  }
}

/** Opens `file` read-only or throws an ApiError naming it, with the code of the cause. */
export function openReadOnly(file: string): Db {
  try {
    checkNotTruncated(file);
    checkNotLocked(file);
    return openRecording(file, { readonly: true });
  } catch (err) {
    throw apiErrorOf(err, file);
  }
}
