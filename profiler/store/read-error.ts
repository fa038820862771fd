// A recording that opens can still fail to read: openRecording checks the
// header, the schema version and the meta table, not every page and row
// (that would cost a pass over a file of gigabytes each time). What the
// readers meet later — a corrupt page, a table or column missing, a value
// of the wrong type — surfaces as a SQLite error without the file's name,
// or as an exception deep in the analysis. recordingReadError turns such an
// error into a RecordingFileError naming the file and what is wrong with
// it, looking at the file only once something has failed; an error on a
// file that is as StreamScope writes it is the reader's own bug, and is
// left as it is.
import Database from 'better-sqlite3';
import { migrate } from './database.ts';
import { RecordingFileError } from './recording-error.ts';
import { malformedRowError, NOT_AS_WRITTEN, typeProblem } from './row-checks.ts';

/** SQLite's messages for a file it cannot read (the native addon reports the message alone, no code). */
const CORRUPT = /database disk image is malformed|file is not a database|malformed database schema|disk I\/O error|database or disk is full/;
const LOCKED = /database is locked|database table is locked/;

function sqliteCode(err: unknown): string | null {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_') ? code : null;
}

/**
 * The error `err`, met reading `file` as a recording, said about the file
 * (RecordingFileError, its problem worded as openRecording words the same
 * causes: query/api-error.ts codeOfProblem reads them), or null when the
 * file shows nothing wrong.
 */
export function recordingReadError(file: string, err: unknown): RecordingFileError | null {
  if (err instanceof RecordingFileError) return err;
  // A row the native loader refused (row-checks.ts): it names the row already.
  const row = malformedRowError(err);
  if (row) return row;
  const code = sqliteCode(err) ?? '';
  // The native addon's messages start with the file already.
  const raw = err instanceof Error ? err.message : String(err);
  const detail = raw.startsWith(`${file}: `) ? raw.slice(file.length + 2) : raw;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED' || LOCKED.test(detail)) {
    return new RecordingFileError(file, 'database is locked by another process (is a recording still being written?)', { cause: err });
  }
  if (/^SQLITE_(CORRUPT|NOTADB|IOERR|FULL)/.test(code) || CORRUPT.test(detail)) {
    return new RecordingFileError(file, `database is corrupt or truncated: ${detail}`, { cause: err });
  }
  // SQLite's sum() of stored values past 2^63: the values are no times,
  // counts or sizes a recording holds (a zone of 2^62 rows, found by fuzzing).
  if (/integer overflow/.test(detail)) {
    return new RecordingFileError(file, `not a StreamScope recording as written: its values add up past 2^63 (${detail})`, { cause: err });
  }
  let problem: string | null;
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      problem = contentProblem(db);
    } finally {
      db.close();
    }
  } catch (e) {
    // Looking fails too: the file is what is wrong.
    const message = e instanceof Error ? e.message : String(e);
    problem = `database is corrupt or truncated: ${message}`;
  }
  return problem ? new RecordingFileError(file, problem, { cause: err }) : null;
}

interface Column {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

let expected: Map<string, Column[]> | null = null;

/** The tables and columns of a recording of the latest schema, as the migrations make them. */
function expectedSchema(): Map<string, Column[]> {
  if (!expected) {
    const db = new Database(':memory:');
    try {
      migrate(db, ':memory:');
      expected = schemaOf(db);
    } finally {
      db.close();
    }
  }
  return expected;
}

function schemaOf(db: Database.Database): Map<string, Column[]> {
  const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").pluck().all() as string[];
  return new Map(tables.map((t) => [t, db.prepare('SELECT name, type, "notnull", pk FROM pragma_table_info(?)').all(t) as Column[]]));
}

/**
 * What in an open recording is not as StreamScope writes it — a page
 * SQLite finds corrupt, a table or column missing, a value of the wrong
 * storage class (named by its row: row-checks.ts typeProblem) — or null
 * (ids out of range are refused at open: database.ts checkRowIds). A pass
 * over the whole file: for after a failure, not for every open.
 */
export function contentProblem(db: Database.Database): string | null {
  const check = db.prepare('PRAGMA quick_check(1)').pluck().get() as string;
  if (check !== 'ok') return `database is corrupt or truncated: ${check}`;
  const actual = schemaOf(db);
  const views = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'view'").pluck().all() as string[]);
  for (const [table, columns] of expectedSchema()) {
    const have = actual.get(table);
    if (!have)
      return views.has(table)
        ? `not a StreamScope recording as written: '${table}' is a view, not a table`
        : `not a StreamScope recording as written: it has no table '${table}'`;
    const names = new Set(have.map((c) => c.name));
    const missing = columns.find((c) => !names.has(c.name));
    if (missing) return `${NOT_AS_WRITTEN}: table '${table}' has no column '${missing.name}'`;
    // One pass per table for every column holding what its type does not.
    const problem = typeProblem(db, table);
    if (problem) return `${NOT_AS_WRITTEN}: ${problem}`;
  }
  return null;
}
