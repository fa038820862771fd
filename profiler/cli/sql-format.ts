// How `streamscope sql` prints a result or a failure (sql.ts, and its
// prompt, sql-repl.ts): a table for people, JSON and CSV for programs, and
// a failure as its message with the query's line and a caret beneath.
import { pointAt, sqlValueText, type SqlFailure, type SqlRows, type SqlValue } from '../contract/sql.ts';
import { renderTable } from '../report/table.ts';

export type SqlFormat = 'table' | 'json' | 'csv';

/** Cells longer than this are cut in a table (JSON and CSV print them whole). */
const TABLE_CELL_CHARS = 80;

function tableCell(v: SqlValue): string | number {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  const line = sqlValueText(v).replace(/\s*\n\s*/g, ' ');
  return line.length > TABLE_CELL_CHARS ? `${line.slice(0, TABLE_CELL_CHARS - 1)}…` : line;
}

/** RFC 4180: a field quoted when it holds a comma, a quote or a line break; NULL as an empty field. */
function csvField(v: SqlValue): string {
  if (v === null) return '';
  const s = sqlValueText(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * A result as printed. JSON: `{ file, columns, rows, truncated, rowLimit,
 * elapsedMs }`, rows as arrays in column order (values as the API sends
 * them: contract/sql.ts SqlValue). CSV: a header line, then a line per row.
 * Table: aligned columns, long cells cut, a last line counting the rows.
 */
export function formatRows(r: SqlRows, format: SqlFormat, file: string): string {
  if (format === 'json') {
    const { columns, rows, truncated, rowLimit, elapsedMs } = r;
    return JSON.stringify({ file, columns, rows, truncated, rowLimit, elapsedMs: Math.round(elapsedMs * 1000) / 1000 }) + '\n';
  }
  if (format === 'csv') return [r.columns.map(csvField), ...r.rows.map((row) => row.map(csvField))].map((l) => l.join(',') + '\n').join('');
  const table = r.rows.length
    ? renderTable(
        r.columns,
        r.rows.map((row) => row.map(tableCell)),
      )
    : `  ${r.columns.join('  ')}\n  (no rows)`;
  return `${table}\n${rowsLine(r)}\n`;
}

/** `(3 rows, 1.2 ms)`, or what the row cap left out. */
export function rowsLine(r: SqlRows): string {
  const n = r.rows.length.toLocaleString('en-US');
  const ms = `${r.elapsedMs < 10 ? r.elapsedMs.toFixed(1) : Math.round(r.elapsedMs)} ms`;
  return r.truncated
    ? `(the first ${n} rows: the query has more; --max-rows raises the cap, or narrow it with WHERE or LIMIT; ${ms})`
    : `(${n} row${r.rows.length === 1 ? '' : 's'}, ${ms})`;
}

/**
 * The failure's message, and where it has a position, the query's line
 * beneath it with a caret under the token (the line cut around it when long).
 */
export function formatFailure(f: SqlFailure, query: string): string {
  const lines = [`streamscope: ${f.message}`];
  if (f.position) {
    const at = pointAt(query, f.position);
    lines.push(`  ${at.text}`, `  ${' '.repeat(at.column)}${'^'.repeat(at.width)}`);
  }
  return lines.join('\n') + '\n';
}
