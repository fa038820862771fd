// A recording's rows checked when it is read (SCHEMA.md, "Rows a reader
// refuses or leaves out"): a row no StreamScope writer stores — a value of
// the wrong storage class, a time beyond what a recording holds, an id
// naming a row that is not there — refuses the file, with an error naming
// the table, the row and the column; a row whose own values contradict each
// other (an end before its start, a negative size) is left out of what is
// computed from it, and said, how many and the first.
//
// Where each check runs, so that opening stays fast:
// - the operations and API calls (millions of rows): in the native column
//   loader's one pass over them, a few comparisons per row
//   (native/addon/src/row_rules.h), which every analysis makes, and the
//   Chrome-trace export through checkTimelineRows;
// - the small tables every reader reads (devices, contexts, streams,
//   processes, threads, strings, zones, meta, …): here, one scan of each
//   when a recording is opened to be read (openRecording).
import type Database from 'better-sqlite3';
import { checkTimelineRows, type LeftOutRows } from '../native/addon.ts';
import { RecordingFileError } from './recording-error.ts';

/** How every refusal starts: the file is not what a StreamScope writer makes. */
export const NOT_AS_WRITTEN = 'not a StreamScope recording as written';

/** Times a recording holds: within ±(2^53 − 1) ns of its origin (native/addon/src/row_rules.h kMaxTimeNs). */
export const MAX_TIME_NS = Number.MAX_SAFE_INTEGER;

/** The native loader's code for a row it refuses (native/addon/src/addon.cc jsError). */
const MALFORMED_ROW = 'STREAMSCOPE_MALFORMED_ROW';

/** The native column loader's refusal of a row as the file's error; null for any other error. */
export function malformedRowError(err: unknown): RecordingFileError | null {
  const e = err as { code?: unknown; file?: unknown; problem?: unknown } | null;
  if (e?.code !== MALFORMED_ROW || typeof e.file !== 'string' || typeof e.problem !== 'string') return null;
  return new RecordingFileError(e.file, e.problem, { cause: err });
}

/**
 * The column loader's checks of every operation and API call, for a reader
 * that reads those rows its own way (the Chrome-trace export): throws the
 * file's RecordingFileError for a row refused; returns the rows it leaves
 * out (keptRowSql leaves out the same), or null.
 */
export function checkTimeline(file: string): LeftOutRows | null {
  try {
    return checkTimelineRows(file);
  } catch (err) {
    throw malformedRowError(err) ?? err;
  }
}

/** SQL true for a row of `table` (aliased `alias`) that the column loader keeps: not left out (native/addon/src/row_rules.h). */
export function keptRowSql(table: 'kernels' | 'memcpys' | 'memsets' | 'api_calls', alias: string): string {
  const kept = `${alias}.end_ns >= ${alias}.start_ns`;
  return table === 'memcpys' || table === 'memsets' ? `${kept} AND ${alias}.bytes >= 0` : kept;
}

/** The sentence an analysis (ScopeInfo.notes) and the export say about rows left out. */
export function leftOutNote(left: LeftOutRows): string {
  const rows = left.rows === 1 ? '1 row' : `${left.rows.toLocaleString('en-US')} rows`;
  return `${rows} left out as not possible (an end before its start, or a negative size), the first: ${left.first}`;
}

/**
 * The tables checked at every open for reading, one scan each: the small
 * ones every reader reads whole or by id, a row per device, context,
 * stream, process, thread, name or zone (a few thousand; strings ~100 k at
 * most in practice, ~15 ms). Not the timeline tables, whose rows may be
 * millions (a scan costs ~0.45 µs a row: 0.45 s for a million NVTX
 * ranges): the operations and API calls are the native loader's to check;
 * the synchronizations, event records and NVTX ranges the analysis reads
 * are checked in its own passes over them (oddColumnSql).
 */
const CHECKED_AT_OPEN = [
  'meta',
  'devices',
  'contexts',
  'streams',
  'processes',
  'threads',
  'process_env',
  'strings',
  'zones',
  'sources',
  'source_rows',
  'dropped_records',
  'collector_errors',
];

/** Ids of one table that must name a row of another (a NULL names none and is fine where the column allows it). */
const REFERENCES: { table: string; column: string; to: string }[] = [
  { table: 'contexts', column: 'device_id', to: 'devices' },
  { table: 'streams', column: 'context_id', to: 'contexts' },
  { table: 'streams', column: 'device_id', to: 'devices' },
];

/**
 * Throws the file's RecordingFileError for the first row of the small
 * tables (CHECKED_AT_OPEN) that no StreamScope writer stores: a value of
 * the wrong storage class, a zone's time beyond MAX_TIME_NS, a reference
 * to a row that is not there. One scan per table, on `db` as opened.
 */
export function checkRowsAtOpen(db: Database.Database, file: string): void {
  const tables = new Set(db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").pluck().all() as string[]);
  const refuse = (problem: string | null) => {
    if (problem) throw new RecordingFileError(file, `${NOT_AS_WRITTEN}: ${problem}`);
  };
  for (const table of CHECKED_AT_OPEN) if (tables.has(table)) refuse(typeProblem(db, table));
  if (tables.has('zones')) {
    const zone = db
      .prepare(
        `SELECT table_id, lane, first_id, CASE WHEN start_ns BETWEEN -${MAX_TIME_NS} AND ${MAX_TIME_NS} THEN 'end_ns' ELSE 'start_ns' END, start_ns, end_ns
        FROM zones WHERE NOT (start_ns BETWEEN -${MAX_TIME_NS} AND ${MAX_TIME_NS} AND end_ns BETWEEN -${MAX_TIME_NS} AND ${MAX_TIME_NS}) LIMIT 1`,
      )
      .raw()
      .safeIntegers()
      .get() as [bigint, bigint, bigint, string, bigint, bigint] | undefined;
    if (zone) {
      const [tableId, lane, first, column, start, end] = zone;
      refuse(
        `zones row (table_id ${tableId}, lane ${lane}, first_id ${first}): ${column} ${column === 'start_ns' ? start : end} is beyond the ±2^53 ns (104 days) from its origin that a recording's times hold`,
      );
    }
  }
  for (const r of REFERENCES) {
    if (!tables.has(r.table) || !tables.has(r.to)) continue;
    const row = db
      .prepare(
        `SELECT t.id, t.${r.column} FROM ${r.table} t WHERE t.${r.column} IS NOT NULL AND NOT EXISTS (SELECT 1 FROM ${r.to} x WHERE x.id = t.${r.column}) LIMIT 1`,
      )
      .raw()
      .safeIntegers()
      .get() as [bigint, bigint] | undefined;
    if (row) refuse(`${r.table} row ${row[0]}: ${r.column} ${row[1]} names no row of ${r.to}`);
  }
}

/** A column a reader reads as an integer: NULL only where `nullable`; a time (`time`) within MAX_TIME_NS. */
export interface IntegerColumn {
  name: string;
  nullable?: boolean;
  time?: boolean;
}

/**
 * A result column `odd` for a reader's own pass over a table: NULL for a
 * row whose `columns` hold what a recording stores there, else the name of
 * the first that does not (refuseOddRow says it). The check costs the pass
 * a comparison or two per value, on values SQLite has decoded already.
 */
export function oddColumnSql(columns: IntegerColumn[], alias = ''): string {
  const cases = columns.map((c) => {
    const v = `${alias ? `${alias}.` : ''}${quote(c.name)}`;
    const type = `typeof(${v}) != 'integer'${c.nullable ? ` AND ${v} IS NOT NULL` : ''}`;
    const range = c.time ? ` OR ${v} NOT BETWEEN -${MAX_TIME_NS} AND ${MAX_TIME_NS}` : '';
    return `WHEN (${type})${range} THEN '${c.name}'`;
  });
  return `CASE ${cases.join(' ')} END AS odd`;
}

/** Throws the file's RecordingFileError for row `id` of `table`, whose `column` oddColumnSql named: what it holds, as checkRowsAtOpen says it. */
export function refuseOddRow(db: Database.Database, file: string, table: string, id: number, column: string): never {
  const value = (
    db
      .prepare(`SELECT ${quote(column)} FROM ${quote(table)} WHERE id = ?`)
      .raw()
      .safeIntegers()
      .get(id) as unknown[] | undefined
  )?.[0];
  const problem =
    typeof value === 'bigint'
      ? `${column} ${value} is beyond the ±2^53 ns (104 days) from its origin that a recording's times hold`
      : `${column} holds ${describe(value ?? null)}, not an integer`;
  throw new RecordingFileError(file, `${NOT_AS_WRITTEN}: ${table} row ${id}: ${problem}`);
}

interface Column {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** The storage classes a column of this declared type holds in a recording StreamScope wrote (null aside); null: any. */
export function classesOf(type: string): string[] | null {
  const t = type.toUpperCase();
  if (t.includes('INT')) return ['integer'];
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return ['real', 'integer'];
  if (t.includes('TEXT') || t.includes('CHAR')) return ['text'];
  return null;
}

/**
 * The first value of `table` of a storage class its column does not hold
 * (by the column's declared type, NULL where it is NOT NULL), said as
 * "kernels row 3: start_ns holds the text 'abc', not an integer"; null when
 * none. The row is named by its rowid, or by its key in a WITHOUT ROWID
 * table. One scan of the table.
 */
export function typeProblem(db: Database.Database, table: string): string | null {
  const columns = db.prepare('SELECT name, type, "notnull", pk FROM pragma_table_info(?)').all(table) as Column[];
  const tests = columns.flatMap((c) => {
    const classes = classesOf(c.type);
    const allowed = [...(classes ?? []), ...(c.notnull ? [] : ['null'])];
    if (classes) return [{ column: c, test: `typeof(${quote(c.name)}) NOT IN (${allowed.map((a) => `'${a}'`).join(', ')})` }];
    return c.notnull ? [{ column: c, test: `${quote(c.name)} IS NULL` }] : [];
  });
  if (tests.length === 0) return null;
  const withoutRowid = (db.prepare('SELECT wr FROM pragma_table_list WHERE name = ?').pluck().get(table) as number | undefined) === 1;
  const key = withoutRowid ? columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk) : null;
  const row = db
    .prepare(
      `SELECT ${key ? key.map((c) => quote(c.name)).join(', ') : 'rowid'}, ${tests.map((t, i) => `${t.test} AS b${i}`).join(', ')},
        ${columns.map((c) => quote(c.name)).join(', ')}
      FROM ${quote(table)} WHERE ${tests.map((t) => t.test).join(' OR ')} LIMIT 1`,
    )
    .raw()
    .safeIntegers()
    .get() as unknown[] | undefined;
  if (!row) return null;
  const keys = key ? key.length : 1;
  const i = tests.findIndex((_, k) => row[keys + k] === 1n);
  const c = tests[i]!.column;
  const value = row[keys + tests.length + columns.indexOf(c)];
  const want = classesOf(c.type)?.[0];
  const name = key ? `(${key.map((k, j) => `${k.name} ${typeof row[j] === 'string' ? `'${row[j]}'` : describe(row[j])}`).join(', ')})` : String(row[0]);
  return `${table} row ${name}: ${c.name} holds ${describe(value)}, not ${want === 'integer' ? 'an integer' : want ? `a ${want}` : 'a value'}`;
}

/** A stored value, read with safeIntegers (an integer is a bigint, a number is a REAL), as a message quotes it (a text's first 40 characters). */
export function describe(v: unknown): string {
  if (v === null) return 'NULL';
  if (Buffer.isBuffer(v)) return `a blob of ${v.length} bytes`;
  if (typeof v === 'string') return `the text '${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`;
  if (typeof v === 'number') return `the real ${v}`;
  return String(v);
}
