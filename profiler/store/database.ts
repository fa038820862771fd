// Creating, opening and migrating recording files (SQLite via better-sqlite3).
//
// A recording is one SQLite file in rollback-journal mode (not WAL), so that
// it stays a single file that can be copied, attached to an issue or opened
// read-only from a shared folder.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { latestSchemaVersion, migrations } from './migrations/index.ts';
import { ensureZones } from './zones.ts';
import { RecordingFileError } from './recording-error.ts';
import { checkRowsAtOpen } from './row-checks.ts';

export type Db = Database.Database;

/** meta key whose value marks a file as a StreamScope recording. */
export const FORMAT_KEY = 'format';
export const FORMAT_VALUE = 'streamscope-recording';

export interface OpenOptions {
  readonly?: boolean;
}

/**
 * Creates a new, empty recording at `file` with the latest schema. Refuses to
 * overwrite an existing file unless `overwrite` is set: a recording is never
 * lost by accident. An empty file is taken as the new recording's: the
 * commands write through a temporary file that output-file.ts creates,
 * empty and exclusively, before SQLite fills it.
 */
export function createRecording(file: string, opts: { overwrite?: boolean } = {}): Db {
  const existing = fs.statSync(file, { throwIfNoEntry: false });
  if (existing && !(existing.isFile() && existing.size === 0)) {
    if (!opts.overwrite) throw new RecordingFileError(file, 'already exists (use --force to overwrite)');
    fs.rmSync(file);
  }
  let db: Db;
  try {
    db = new Database(file);
  } catch (err) {
    throw new RecordingFileError(file, `cannot create: ${(err as Error).message}`, { cause: err });
  }
  try {
    // Large pages for the bulk ingest: 4 M records went in at 1.30 M/s with
    // 64 KiB pages and 0.65 M/s with 4 KiB ones (npm run bench). compact()
    // brings small recordings back to 4 KiB pages afterwards.
    db.pragma('page_size = 65536');
    db.pragma('journal_mode = DELETE');
    migrate(db, file);
    db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run(FORMAT_KEY, FORMAT_VALUE);
  } catch (err) {
    db.close();
    // A file that could not even take the schema (a full disk, a read-only
    // mount) is no recording: removed, and said in one line naming it.
    fs.rmSync(file, { force: true });
    fs.rmSync(`${file}-journal`, { force: true });
    if (err instanceof RecordingFileError) throw err;
    throw new RecordingFileError(file, `cannot create: ${(err as Error).message}`, { cause: err });
  }
  return db;
}

/**
 * Opens an existing recording. Rejects, with a message naming the file:
 * a missing file, a file that is not SQLite, a SQLite file that is not a
 * StreamScope recording, one written by a newer StreamScope, and one that is
 * locked by another writer. Older schemas are migrated in place (each step
 * in its own transaction) unless opened read-only. Opened to be read, its
 * small tables' rows are checked too (row-checks.ts: a row no writer
 * stores refuses the file; the timeline tables' rows are the column
 * loader's to check).
 */
export function openRecording(file: string, opts: OpenOptions = {}): Db {
  if (!fs.existsSync(file)) throw new RecordingFileError(file, 'no such file');
  const stat = fs.statSync(file);
  if (!stat.isFile()) throw new RecordingFileError(file, 'not a regular file');
  if (stat.size === 0) throw new RecordingFileError(file, 'empty file (not a StreamScope recording)');
  let db: Db;
  try {
    db = new Database(file, { readonly: opts.readonly ?? false, fileMustExist: true });
  } catch (err) {
    throw new RecordingFileError(file, `cannot open: ${(err as Error).message}`, { cause: err });
  }
  try {
    checkRecording(db, file);
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version < latestSchemaVersion) {
      if (opts.readonly) {
        // Reading an older recording: migrate it in place once (each step
        // only adds what the newer code reads; nothing recorded is dropped),
        // then read it. A file we may not write is refused with the reason.
        db.close();
        try {
          fs.accessSync(file, fs.constants.W_OK);
        } catch {
          throw new RecordingFileError(
            file,
            `schema version ${version} needs migrating to ${latestSchemaVersion}, and the file is not writable: copy it somewhere writable and open the copy`,
          );
        }
        openRecording(file).close();
        return openRecording(file, opts);
      }
      migrate(db, file);
    }
    if (!opts.readonly) endBulkLoad(db); // a bulk load that did not finish
    if (opts.readonly) checkRowsAtOpen(db, file);
  } catch (err) {
    db.close();
    if (opts.readonly && isInterruptedWrite(err)) {
      undoInterruptedWrite(file);
      return openRecording(file, opts);
    }
    // A page found corrupt, or a lock, while migrating: said about the file
    // as checkRecording says it (fuzzing found them as bare SqliteErrors).
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('SQLITE_')) throw sqliteFileError(file, err);
    throw err;
  }
  return db;
}

/**
 * Whether opening read-only met a hot journal (SQLITE_READONLY_ROLLBACK): a
 * writer was killed inside a transaction (kill -9 of `record`, or of an
 * `ingest` before it wrote through a temporary file), and only a
 * connection that may write can undo its half. Every read-only open
 * refused such a file with "attempt to write a readonly database" (issue 27).
 */
function isInterruptedWrite(err: unknown): boolean {
  const cause = err instanceof RecordingFileError ? err.cause : err;
  return (cause as { code?: unknown } | undefined)?.code === 'SQLITE_READONLY_ROLLBACK';
}

/**
 * Undoes an interrupted write as any writable open would: SQLite plays the
 * journal back on the first read, and the file is as it was after its last
 * commit (the recording the live views saw). Where that cannot be done (the
 * file or its folder is not writable), the file is refused saying so.
 */
function undoInterruptedWrite(file: string): void {
  const journal = `${file}-journal`;
  const refuse = (why: string, cause?: unknown): never => {
    throw new RecordingFileError(
      file,
      `a write to it was interrupted (its rollback journal ${path.basename(journal)} is beside it) and cannot be undone here: ${why}; open it once where it can be written`,
      { cause },
    );
  };
  try {
    const db = new Database(file, { fileMustExist: true });
    try {
      db.prepare('SELECT count(*) FROM sqlite_schema').get();
    } finally {
      db.close();
    }
  } catch (err) {
    refuse((err as Error).message, err);
  }
  if ((fs.statSync(journal, { throwIfNoEntry: false })?.size ?? 0) > 0) refuse('the journal is still there');
}

/** A SQLite error met opening `file`, said about the file. */
function sqliteFileError(file: string, err: unknown): RecordingFileError {
  const e = err as { code?: string; message: string };
  if (e.code === 'SQLITE_NOTADB') return new RecordingFileError(file, 'not a SQLite database (not a StreamScope recording)', { cause: err });
  if (e.code === 'SQLITE_CORRUPT') return new RecordingFileError(file, `database is corrupt or truncated: ${e.message}`, { cause: err });
  if (e.code === 'SQLITE_BUSY' || e.code === 'SQLITE_LOCKED')
    return new RecordingFileError(file, 'database is locked by another process (is a recording still being written?)', { cause: err });
  return new RecordingFileError(file, `cannot read: ${e.message}`, { cause: err });
}

function checkRecording(db: Db, file: string): void {
  let version: number;
  try {
    version = db.pragma('user_version', { simple: true }) as number;
    db.prepare('SELECT count(*) FROM sqlite_schema').get();
  } catch (err) {
    throw sqliteFileError(file, err);
  }
  if (version > latestSchemaVersion) {
    throw new RecordingFileError(
      file,
      `recorded by a newer StreamScope (schema version ${version}; this version reads up to ${latestSchemaVersion}): upgrade StreamScope to open it`,
    );
  }
  let format: { value: string } | undefined;
  try {
    format = db.prepare('SELECT value FROM meta WHERE key = ?').get(FORMAT_KEY) as { value: string } | undefined;
  } catch {
    format = undefined;
  }
  if (format?.value !== FORMAT_VALUE) {
    throw new RecordingFileError(file, 'a SQLite database, but not a StreamScope recording (no StreamScope meta table)');
  }
  checkRowIds(db, file);
}

/**
 * Row ids as the recorder, the importers and merge hand them out: from 1,
 * and below this (68 billion rows: a job merged from many ranks may pass
 * 2^31, no file StreamScope can write passes this).
 */
const MAX_ROW_ID = 2 ** 36 - 1;

/**
 * Every table's `id` within [1, MAX_ROW_ID]. The readers walk id ranges
 * from the lowest id to the highest (the native column loader steps
 * through the span a part at a time), so one row with an id of -2^62,
 * edited in by hand or by a bad tool, hung `report` for ever (found by
 * fuzzing). A lone min() or max() of a rowid is one b-tree descent: this
 * costs microseconds whatever the file's size.
 */
function checkRowIds(db: Db, file: string): void {
  const tables = db
    .prepare(
      "SELECT m.name FROM sqlite_schema m, pragma_table_info(m.name) c WHERE m.type = 'table' AND c.name = 'id' AND c.pk = 1 AND upper(c.type) = 'INTEGER'",
    )
    .pluck()
    .all() as string[];
  for (const table of tables) {
    const q = `"${table.replace(/"/g, '""')}"`;
    for (const end of ['min', 'max']) {
      // As a bigint: an id past 2^53 is named exactly.
      const id = db.prepare(`SELECT ${end}(id) FROM ${q}`).pluck().safeIntegers().get() as bigint | null;
      if (id !== null && !(id >= 1n && id <= BigInt(MAX_ROW_ID))) {
        throw new RecordingFileError(file, `not a StreamScope recording as written: ${table}.id ${id} is not a row id StreamScope writes (1 to ${MAX_ROW_ID})`);
      }
    }
  }
}

/** Applies every migration above the file's user_version, each in a transaction. */
export function migrate(db: Db, file: string): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latestSchemaVersion) {
    throw new RecordingFileError(file, `recorded by a newer StreamScope (schema version ${current}); upgrade StreamScope to open it`);
  }
  for (const m of migrations) {
    if (m.version <= current) continue;
    try {
      db.transaction(() => {
        db.exec(m.sql);
        m.run?.(db);
        db.pragma(`user_version = ${m.version}`);
      })();
    } catch (err) {
      // SQLite's own errors keep their codes (locked, corrupt, a full disk:
      // callers tell those apart), except SQLITE_ERROR: a step that does not
      // apply (a table it adds is there already, one it changes is not) says
      // the file's schema is not the one its user_version claims, which is
      // the file's problem, said about it (fuzzing found it as a bare
      // SqliteError). Anything else (the native addon missing for 0007) is
      // said about the file too. Either way the step rolled back.
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && code !== 'SQLITE_ERROR') throw err;
      throw new RecordingFileError(file, `cannot migrate to schema version ${m.version}: ${(err as Error).message}`, { cause: err });
    }
  }
}

/** meta key holding the DDL of indexes dropped for a bulk load. */
const PENDING_INDEXES_KEY = 'pending_indexes';

/**
 * Drops the recording's secondary indexes before a bulk load. Maintaining
 * them row by row costs more than the rows themselves (measured on 4 M
 * records: 4.3 s with indexes, 1.6 s without + 1.1–1.4 s to build them
 * after). Their DDL is kept in meta until endBulkLoad, so a load that dies
 * halfway still gets them back the next time the file is opened writable.
 */
export function beginBulkLoad(db: Db): string[] {
  const indexes = db.prepare("SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL").all() as { name: string; sql: string }[];
  const ddl = indexes.map((i) => i.sql.replace(/^CREATE INDEX /i, 'CREATE INDEX IF NOT EXISTS '));
  if (indexes.length === 0) return ddl;
  db.transaction(() => {
    writeMeta(db, { [PENDING_INDEXES_KEY]: JSON.stringify(ddl) });
    for (const i of indexes) db.exec(`DROP INDEX "${i.name.replace(/"/g, '""')}"`);
  })();
  return ddl;
}

/**
 * Builds whatever indexes beginBulkLoad dropped that are still missing
 * (normally the native ingest built them already, while its page cache was
 * warm) and clears the pending mark.
 */
export function endBulkLoad(db: Db): void {
  // Rows a SQL writer (importer, generator) added without zones get theirs.
  if (!db.readonly) db.transaction(() => ensureZones(db))();
  const pending = db.prepare('SELECT value FROM meta WHERE key = ?').get(PENDING_INDEXES_KEY) as { value: string } | undefined;
  if (!pending) return;
  db.pragma('threads = 2');
  db.transaction(() => {
    for (const sql of JSON.parse(pending.value) as string[]) db.exec(sql);
    db.prepare('DELETE FROM meta WHERE key = ?').run(PENDING_INDEXES_KEY);
  })();
}

/**
 * With 64 KiB pages even an empty recording takes ~2 MiB (a page per table
 * and index). A finished recording below `threshold` is rebuilt with 4 KiB
 * pages (VACUUM: seconds for hundreds of MB, milliseconds for small files),
 * so that small recordings stay small to share and to keep as fixtures.
 */
export function compact(db: Db, file: string, threshold = 64 * 2 ** 20): void {
  const size = fs.statSync(file).size;
  if (size >= threshold || (db.pragma('page_size', { simple: true }) as number) <= 4096) return;
  db.pragma('page_size = 4096');
  db.exec('VACUUM');
}

/** meta `duration_ns`: from the first to the last recorded API call or GPU operation (null: none). */
export function recordedDurationNs(db: Db): number | null {
  const span = db
    .prepare(
      `SELECT min(s) AS s, max(e) AS e FROM (
      SELECT min(start_ns) AS s, max(end_ns) AS e FROM api_calls UNION ALL
      SELECT min(start_ns), max(end_ns) FROM kernels UNION ALL
      SELECT min(start_ns), max(end_ns) FROM memcpys UNION ALL
      SELECT min(start_ns), max(end_ns) FROM memsets)`,
    )
    .get() as { s: number | null; e: number | null };
  return span.s !== null && span.e !== null ? span.e - span.s : null;
}

export function readMeta(db: Db): Map<string, string> {
  const rows = db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[];
  return new Map(rows.map((r) => [r.key, r.value]));
}

export function writeMeta(db: Db, entries: Record<string, string | number | bigint | boolean | null | undefined>): void {
  const upsert = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
  db.transaction(() => {
    for (const [key, value] of Object.entries(entries)) {
      if (value === undefined || value === null) continue;
      upsert.run(key, typeof value === 'boolean' ? (value ? '1' : '0') : String(value));
    }
  })();
}
