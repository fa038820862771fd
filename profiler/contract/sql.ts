// The SQL console — `streamscope sql` and the app's Query tab — as the data
// side and the views agree on it: what a query answers, which result
// columns name an operation the timeline can show, the limits, and the
// example queries both offer. Types, constants and pure functions only
// (the renderer bundles this file).
//
// How a query is run (read-only connection, refusals, time limit, row cap)
// is profiler/query/sql-console.ts; the views it adds to every recording
// (kernel_view, copy_view, …) are profiler/query/sql-views.ts, documented in
// profiler/store/SCHEMA.md ("The SQL console's views").
import type { ItemTable } from './items.ts';

/** A query is stopped after this long unless the caller gives another limit. */
export const SQL_TIME_LIMIT_MS = 5_000;
/** The longest limit the API accepts (the CLI takes any: `--timeout`). */
export const SQL_MAX_TIME_LIMIT_MS = 60_000;
/** Rows a result holds unless the caller asks for fewer; the most the API sends (the CLI's `--max-rows` takes more). */
export const SQL_ROW_LIMIT = 10_000;
/** The longest query text the API accepts (characters). */
export const SQL_MAX_QUERY_LENGTH = 100_000;

/**
 * A value as it crosses to the views: SQLite's NULL, TEXT and REAL as
 * themselves, an INTEGER as a number while exact in a double (|v| < 2^53)
 * and as its decimal digits beyond (meta's origins, communicator hashes), a
 * BLOB as `x'…'` hex, as SQLite writes a blob literal.
 */
export type SqlValue = string | number | null;

/**
 * Which result columns name an operation: a column named `<item>_id` holds
 * ids of that table (`kernel_id` → kernels.id), and each of its values is a
 * link to the operation on the timeline. The views name their id columns so
 * (`SELECT kernel_id, … FROM kernel_view`); a query of the tables themselves
 * says it with an alias: `SELECT id AS kernel_id FROM kernels`.
 */
export const SQL_ITEM_COLUMNS: Record<ItemTable, string> = {
  kernels: 'kernel_id',
  memcpys: 'memcpy_id',
  memsets: 'memset_id',
  syncs: 'sync_id',
  api_calls: 'api_call_id',
  nvtx_ranges: 'nvtx_range_id',
};

/**
 * The views every query can use (created by profiler/query/sql-views.ts on
 * the console's connection, documented in SCHEMA.md), in the order they
 * are created: operation_view is made of the first three.
 */
export const SQL_VIEWS = [
  { name: 'kernel_view', about: 'kernels: name (demangled), pid, GPU, stream (CUPTI id) and its kind, times in µs, launch shape' },
  { name: 'copy_view', about: 'memory copies: kind (HtoD, …), source and destination memory (pageable, pinned, device, …), bytes, GB/s' },
  { name: 'memset_view', about: 'memsets: bytes, value, memory kind, stream, times' },
  { name: 'sync_view', about: 'synchronizations: type (event synchronize, stream wait event, …), stream, event, times' },
  { name: 'api_view', about: 'CUDA runtime and driver calls: name, pid, thread, domain, times, correlation id, return value' },
  { name: 'nvtx_view', about: 'NVTX ranges and marks: name, domain, thread, times, payload (JSON: NCCL puts its message size there)' },
  { name: 'operation_view', about: 'every GPU operation (kernel, memcpy, memset) on its stream, one id column set per row' },
] as const;
export type SqlViewName = (typeof SQL_VIEWS)[number]['name'];

/** A result column that names an operation: its index among the columns, and the table of its ids. */
export interface SqlItemColumn {
  column: number;
  table: ItemTable;
}

/** The columns of a result that name operations (SQL_ITEM_COLUMNS), matched without regard to case. */
export function sqlItemColumns(columns: readonly string[]): SqlItemColumn[] {
  const tables = new Map(Object.entries(SQL_ITEM_COLUMNS).map(([table, column]) => [column, table as ItemTable]));
  const out: SqlItemColumn[] = [];
  columns.forEach((name, column) => {
    const table = tables.get(name.toLowerCase());
    if (table) out.push({ column, table });
  });
  return out;
}

/** A query's rows. */
export interface SqlRows {
  ok: true;
  columns: string[];
  rows: SqlValue[][];
  /** The query had more rows than `rowLimit`: `rows` holds the first rowLimit of them. */
  truncated: boolean;
  rowLimit: number;
  /** From the start of the statement to its last row read (ms). */
  elapsedMs: number;
  /** The columns that name operations (sqlItemColumns). */
  items: SqlItemColumn[];
}

/**
 * A query that gave no rows, and why:
 * - 'error': SQLite's error, preparing or running it (a syntax error, an unknown table or column);
 * - 'refused': a statement the console does not run (anything that writes, ATTACH, a PRAGMA that
 *   sets something, more than one statement, no statement);
 * - 'timeout': it ran past its time limit and was stopped.
 */
export interface SqlFailure {
  ok: false;
  problem: 'error' | 'refused' | 'timeout';
  /** One line naming the file and the problem: `run.sqlite: no such column: nme`. */
  message: string;
  /**
   * Where in the query text the problem is, when SQLite's message names a
   * token found there (`near "FROMM"`, `no such column: nme`), as offsets
   * [start, end) into the query string; the end of the text for
   * `incomplete input`; null when the message points nowhere.
   */
  position: { start: number; end: number } | null;
}

export type SqlAnswer = SqlRows | SqlFailure;

/**
 * A value as text for people (the Query tab, `streamscope sql`'s table and
 * CSV): NULL as `NULL`, numbers with at most 15 significant digits, as
 * SQLite's shell prints them (no 0.30000000000000004), text as it is.
 */
export function sqlValueText(v: SqlValue): string {
  if (v === null) return 'NULL';
  if (typeof v === 'number') return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(15)));
  return v;
}

/**
 * The line of `query` a failure's position is on, for showing it with a
 * caret beneath (`streamscope sql`, the Query tab): its number (from 1),
 * its text (cut to `maxWidth` characters around the position, `…` where
 * cut), and the caret's column and width in that text.
 */
export function pointAt(
  query: string,
  position: { start: number; end: number },
  maxWidth = 120,
): { lineNumber: number; text: string; column: number; width: number } {
  const lineStart = query.lastIndexOf('\n', position.start - 1) + 1;
  const lineEnd = query.indexOf('\n', position.start);
  let text = query.slice(lineStart, lineEnd < 0 ? query.length : lineEnd);
  let column = position.start - lineStart;
  const width = Math.max(1, Math.min(position.end, lineStart + text.length) - position.start);
  if (text.length > maxWidth) {
    const from = Math.max(0, Math.min(column - Math.floor(maxWidth / 3), text.length - maxWidth));
    text = (from > 0 ? '…' : '') + text.slice(from, from + maxWidth);
    column = column - from + (from > 0 ? 1 : 0);
  }
  const lineNumber = query.slice(0, lineStart).split('\n').length;
  return { lineNumber, text, column, width };
}

/** Example queries, offered by the Query tab and `streamscope sql`'s `.examples`; each runs on every recording. */
export interface SqlExample {
  title: string;
  sql: string;
}

export const SQL_EXAMPLES: readonly SqlExample[] = [
  {
    title: 'Top kernels by total time',
    sql: `-- Each kernel by name: launches, total and mean time; kernel_id is its first launch (a link)
SELECT name, count(*) AS launches, round(sum(duration_us), 1) AS total_us,
       round(avg(duration_us), 2) AS mean_us, min(kernel_id) AS kernel_id
FROM kernel_view
GROUP BY name
ORDER BY sum(duration_us) DESC
LIMIT 20;`,
  },
  {
    title: 'Copies from pageable memory',
    sql: `-- Copies to or from pageable host memory: staged through a pinned buffer, never async
SELECT memcpy_id, kind, src_kind, dst_kind, bytes, round(duration_us, 1) AS duration_us,
       round(gb_per_s, 2) AS gb_per_s, is_async, gpu, stream
FROM copy_view
WHERE src_kind = 'pageable' OR dst_kind = 'pageable'
ORDER BY duration_us DESC
LIMIT 100;`,
  },
  {
    title: "Each stream's busy time",
    sql: `-- Per stream: its operations' time (they run one at a time) and the share of its span it was busy
SELECT gpu, stream, stream_kind, pid, count(*) AS operations, round(sum(duration_us), 1) AS busy_us,
       round(100 * sum(duration_us) / (max(end_us) - min(start_us)), 1) AS busy_percent
FROM operation_view
GROUP BY stream_id
ORDER BY busy_us DESC;`,
  },
  {
    title: 'NCCL collectives with their message sizes',
    sql: `-- NCCL's calls (NVTX ranges of domain NCCL) with the size NCCL attached as a payload,
-- and the kernels each launched (on the same thread, inside the call)
SELECT r.nvtx_range_id, r.name AS call, r.pid,
       json_extract(r.payload, '$."Message size [bytes]"') AS bytes,
       json_extract(r.payload, '$."Reduction operation"') AS reduction,
       k.kernel_id, k.name AS kernel, round(k.duration_us, 1) AS kernel_us
FROM nvtx_view r
JOIN api_view a ON a.pid = r.pid AND a.tid = r.tid AND a.start_ns >= r.start_ns AND a.start_ns < r.end_ns
JOIN kernel_view k ON k.pid = a.pid AND k.correlation_id = a.correlation_id
WHERE r.domain = 'NCCL' AND r.payload IS NOT NULL
ORDER BY r.start_ns
LIMIT 500;`,
  },
  {
    title: 'Longest synchronizing calls',
    sql: `-- CUDA calls that make the host wait for the GPU, longest first
SELECT api_call_id, name, pid, tid, round(duration_us, 1) AS duration_us, start_us
FROM api_view
WHERE name LIKE '%Synchronize%' OR (name LIKE 'cudaMemcpy%' AND name NOT LIKE '%Async%')
ORDER BY duration_us DESC
LIMIT 50;`,
  },
];
