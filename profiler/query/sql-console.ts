// The SQL console over one recording: the SQL a user types, run where it
// cannot change anything or run away — `streamscope sql` (profiler/cli/sql.ts)
// and the API's sql() (the app's Query tab, browser mode) both end here.
//
// Read-only, in layers, each with its own message:
// - the file is opened on a connection of its own with SQLITE_OPEN_READONLY
//   (openReadOnly: the store's checks, the same messages as everywhere), and
//   `PRAGMA query_only` is set before every query;
// - the text is checked before SQLite prepares it (sql-guard.ts: a PRAGMA
//   acts while it is prepared): queries only, one statement, PRAGMAs that read;
// - what passes must be a statement SQLite calls read-only (stmt.readonly:
//   catches `WITH … DELETE`) that returns rows.
// A query runs under a time limit (the SQLite extension in the native addon,
// native/addon/src/sql_time_limit.cc, interrupts it from a watchdog thread:
// better-sqlite3 cannot stop a statement, and its thread cannot be
// terminated while SQLite runs) and keeps at most `rowLimit` rows, saying
// when there were more. The connection has the console's TEMP views
// (sql-views.ts).
//
// Synchronous, like better-sqlite3: a caller that must stay responsive (the
// server, the app's query worker) calls it on a thread of its own
// (analysis-thread.ts), where a query holds up nothing but the next query.
import { constants } from 'node:buffer';
import type { Database, Statement } from 'better-sqlite3';
import { SQL_ROW_LIMIT, SQL_TIME_LIMIT_MS, sqlItemColumns, type SqlAnswer, type SqlFailure, type SqlValue } from '../contract/sql.ts';
import { sqlTimeLimitExtension } from '../native/addon.ts';
import { apiErrorOf } from './api-error.ts';
import { openReadOnly } from './open-read-only.ts';
import { errorPosition, maskSql, refusalOf } from './sql-guard.ts';
import { sqlViewsDdl } from './sql-views.ts';

export interface SqlOptions {
  /** Stop the query after this long (ms); SQL_TIME_LIMIT_MS by default. */
  timeoutMs?: number;
  /** Keep at most this many rows; SQL_ROW_LIMIT by default. */
  rowLimit?: number;
}

/** A table or view of the console's connection (`.tables`). */
export interface SqlTable {
  name: string;
  type: 'table' | 'view';
  /** The console's own TEMP views (sql-views.ts), not in the file. */
  temporary: boolean;
}

export class SqlConsole {
  /** The recording, as given: every message starts with it. */
  readonly file: string;
  readonly #db: Database;
  readonly #arm: Statement<[number], number>;
  readonly #clear: Statement<[number], number>;

  /** Opens `file` read-only; throws an ApiError naming it (not-found, not-a-recording, locked, …). */
  constructor(file: string) {
    this.file = file;
    const db = openReadOnly(file);
    try {
      const { file: extension, entryPoint } = sqlTimeLimitExtension();
      // better-sqlite3 takes the entry point as a second argument (its types name only the first).
      (db as unknown as { loadExtension(file: string, entryPoint: string): void }).loadExtension(extension, entryPoint);
      db.exec(sqlViewsDdl());
      db.pragma('query_only = 1');
      this.#arm = db.prepare<[number], number>('SELECT streamscope_time_limit(?)').pluck();
      this.#clear = db.prepare<[number], number>('SELECT streamscope_time_limit_clear(?)').pluck();
    } catch (err) {
      db.close();
      throw apiErrorOf(err, file);
    }
    this.#db = db;
  }

  close(): void {
    this.#db.close();
  }

  /** Runs one query: its rows, or why there are none (SqlFailure). Never throws for anything about the query. */
  run(sql: string, opts: SqlOptions = {}): SqlAnswer {
    const timeoutMs = opts.timeoutMs ?? SQL_TIME_LIMIT_MS;
    const rowLimit = opts.rowLimit ?? SQL_ROW_LIMIT;
    const refused = refusalOf(sql);
    if (refused) return this.#failure('refused', refused.reason, refused.position);
    this.#db.pragma('query_only = 1');
    let stmt: Statement<unknown[], unknown[]>;
    try {
      stmt = this.#db.prepare<unknown[], unknown[]>(sql);
    } catch (err) {
      return this.#sqliteFailure(err, sql);
    }
    if (!stmt.readonly) {
      const write = /\b(insert|update|delete|replace|create|drop|alter)\b/i.exec(maskSql(sql));
      return this.#failure(
        'refused',
        `${write ? write[1]!.toUpperCase() : 'this statement'} is refused: the statement writes, and the SQL console only reads`,
        write ? { start: write.index, end: write.index + write[1]!.length } : null,
      );
    }
    if (!stmt.reader) return this.#failure('refused', 'the statement returns no rows: the SQL console runs queries', null);
    stmt.raw(true).safeIntegers(true);
    const columns = stmt.columns().map((c) => c.name);
    const rows: SqlValue[][] = [];
    let truncated = false;
    let error: unknown = null;
    let tooLarge: { column: number; bytes: number } | null = null;
    const t0 = performance.now();
    const token = this.#arm.get(timeoutMs)!;
    let fired: boolean;
    try {
      // for…of closes the iterator on break: the statement is reset before the limit is cleared.
      reading: for (const row of stmt.iterate()) {
        if (rows.length === rowLimit) {
          truncated = true;
          break;
        }
        const values: SqlValue[] = [];
        for (const v of row) {
          if (v instanceof Uint8Array && blobLiteralLength(v.length) > MAX_STRING_LENGTH) {
            tooLarge = { column: values.length, bytes: v.length };
            break reading;
          }
          values.push(sqlValue(v));
        }
        rows.push(values);
      }
    } catch (err) {
      error = err;
    } finally {
      fired = this.#clear.get(token) === 1;
    }
    const elapsedMs = performance.now() - t0;
    // Said about the value, by its row and column, as the message of a query that failed: no row of it is sent.
    const where = (column: number | null) => `row ${(rows.length + 1).toLocaleString('en-US')}${column === null ? '' : `, column '${columns[column]}'`}`;
    if (tooLarge) {
      const { column, bytes } = tooLarge;
      return this.#failure(
        'error',
        `${where(column)}: a BLOB of ${bytes.toLocaleString('en-US')} bytes is too large to show: as x'…' hex it is ` +
          `${blobLiteralLength(bytes).toLocaleString('en-US')} characters, over the ${MAX_STRING_LENGTH.toLocaleString('en-US')} a string can hold ` +
          `— select a part of it, e.g. substr(${columns[column]}, 1, 1000000), or its length(${columns[column]})`,
        null,
      );
    }
    if (error) {
      if (fired && (error as { code?: string }).code === 'SQLITE_INTERRUPT') {
        return this.#failure(
          'timeout',
          `the query ran longer than ${seconds(timeoutMs)} and was stopped (its time limit): narrow it with WHERE or LIMIT` +
            ' (a recursive CTE needs a condition that ends it), or give it longer (streamscope sql --timeout)',
          null,
        );
      }
      if ((error as { code?: string }).code === 'SQLITE_TOOBIG') {
        // SQLite's limit on a value here is the longest string JavaScript can hold (better-sqlite3 sets it so).
        return this.#failure(
          'error',
          `${where(null)}: a value is over ${MAX_STRING_LENGTH.toLocaleString('en-US')} bytes, the most SQLite hands over here (string or blob too big)` +
            ' — select a part of it with substr(), or its length()',
          null,
        );
      }
      return this.#sqliteFailure(error, sql);
    }
    return { ok: true, columns, rows, truncated, rowLimit, elapsedMs, items: sqlItemColumns(columns) };
  }

  /** The tables of the recording and the console's views, by name (`.tables`). */
  tables(): SqlTable[] {
    const rows = this.#db
      .prepare(
        `SELECT name, type, 0 AS temporary FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%'
         UNION ALL SELECT name, type, 1 FROM sqlite_temp_schema WHERE type IN ('table', 'view')
         ORDER BY temporary, name`,
      )
      .all() as { name: string; type: 'table' | 'view'; temporary: number }[];
    return rows.map((r) => ({ name: r.name, type: r.type, temporary: r.temporary === 1 }));
  }

  /**
   * The CREATE statements of `name` and its indexes, or of everything
   * without a name (`.schema`); the console's views as what they are,
   * TEMP views (SQLite keeps them without the word).
   */
  schema(name?: string): string[] {
    const where = name === undefined ? `name NOT LIKE 'sqlite_%'` : `(name = @name COLLATE NOCASE OR tbl_name = @name COLLATE NOCASE)`;
    const stmt = this.#db.prepare(
      `SELECT sql, temporary FROM (SELECT sql, name, tbl_name, type, 0 AS temporary FROM sqlite_schema
                                  UNION ALL SELECT sql, name, tbl_name, type, 1 FROM sqlite_temp_schema)
       WHERE sql IS NOT NULL AND ${where} ORDER BY temporary, type = 'index', name`,
    );
    const rows = (name === undefined ? stmt.all() : stmt.all({ name })) as { sql: string; temporary: number }[];
    return rows.map((r) => (r.temporary ? r.sql.replace(/^CREATE (TABLE|VIEW)/i, 'CREATE TEMP $1') : r.sql));
  }

  #failure(problem: SqlFailure['problem'], reason: string, position: SqlFailure['position']): SqlFailure {
    return { ok: false, problem, message: `${this.file}: ${reason}`, position };
  }

  /** SQLite's own error (or better-sqlite3's, about the statement): its message, pointed at where it names something. */
  #sqliteFailure(err: unknown, sql: string): SqlFailure {
    const e = err as { code?: unknown; message?: unknown };
    // A file problem met while reading (locked by a writer, truncated) is not the query's: said as everywhere else.
    if (typeof e.code === 'string' && /^SQLITE_(BUSY|LOCKED|CORRUPT|NOTADB|IOERR)/.test(e.code)) throw apiErrorOf(err, this.file);
    const message = typeof e.message === 'string' ? e.message : String(err);
    return this.#failure('error', message, errorPosition(sql, message));
  }
}

/** The characters of a BLOB as sqlValue writes it, `x'…'`: two a byte. */
const blobLiteralLength = (bytes: number) => 2 * bytes + 3;

/** A value as the API sends it (contract/sql.ts SqlValue). */
function sqlValue(v: unknown): SqlValue {
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return `x'${Buffer.from(v).toString('hex')}'`;
  return v as string | number | null;
}

/** The longest string V8 can make (2^29 − 24 characters on 64-bit). */
const MAX_STRING_LENGTH = constants.MAX_STRING_LENGTH;

const seconds = (ms: number) => (ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`);
