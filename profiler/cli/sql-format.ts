// How `streamscope sql` prints a result or a failure (sql.ts, and its
// prompt, sql-repl.ts): a table for people, JSON and CSV for programs, and
// a failure as its message with the query's line and a caret beneath.
import { pointAt, sqlValueText, type SqlFailure, type SqlRows, type SqlValue } from '../contract/sql.ts';
import { tableLines } from '../report/table.ts';

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

/** Text is written in pieces of about this many characters; JSON and CSV cut a longer value into such pieces. */
const PIECE_CHARS = 1 << 16;

/**
 * A result as printed, in pieces to write one after another (writeText),
 * never as one string: the rows together, or one value escaped for JSON
 * (a NUL is 6 characters there) or quoted for CSV, can be longer than a
 * string can be (2^29 − 24 characters), which ended `sql --json` with
 * RangeError: Invalid string length (issue 27). Joined, the pieces are
 * what one JSON.stringify (or one join) of the whole would be.
 *
 * JSON: `{ file, columns, rows, truncated, rowLimit, elapsedMs }`, rows as
 * arrays in column order (values as the API sends them: contract/sql.ts
 * SqlValue). CSV: a header line, then a line per row. Table: aligned
 * columns, long cells cut, a last line counting the rows.
 */
export function* resultText(r: SqlRows, format: SqlFormat, file: string, pieceChars = PIECE_CHARS): Generator<string> {
  if (format === 'json') {
    const { columns, rows, truncated, rowLimit, elapsedMs } = r;
    yield `${JSON.stringify({ file, columns }).slice(0, -1)},"rows":[`;
    for (let i = 0; i < rows.length; i++) {
      if (i > 0) yield ',';
      yield* rowText(rows[i]!, pieceChars, '[', ']', ',', (v) => JSON.stringify(v), jsonPieces);
    }
    yield `],${JSON.stringify({ truncated, rowLimit, elapsedMs: Math.round(elapsedMs * 1000) / 1000 }).slice(1)}\n`;
    return;
  }
  if (format === 'csv') {
    yield r.columns.map(csvField).join(',') + '\n';
    for (const row of r.rows) yield* rowText(row, pieceChars, '', '\n', ',', csvField, csvPieces);
    return;
  }
  if (r.rows.length === 0) yield `  ${r.columns.join('  ')}\n  (no rows)\n`;
  const cells = r.rows.map((row) => row.map(tableCell));
  if (cells.length > 0) for (const line of tableLines(r.columns, cells)) yield line + '\n';
  yield `${rowsLine(r)}\n`;
}

/**
 * One row: whole when its values are short (the common case), else value
 * by value, a long text value in pieces of `pieceChars` (`long`).
 */
function* rowText(
  row: SqlValue[],
  pieceChars: number,
  open: string,
  close: string,
  separator: string,
  whole: (v: SqlValue) => string,
  long: (s: string, pieceChars: number) => Generator<string>,
): Generator<string> {
  if (row.reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 0), 0) <= pieceChars) {
    yield open + row.map(whole).join(separator) + close;
    return;
  }
  yield open;
  for (let c = 0; c < row.length; c++) {
    if (c > 0) yield separator;
    const v = row[c]!;
    if (typeof v === 'string' && v.length > pieceChars) yield* long(v, pieceChars);
    else yield whole(v);
  }
  yield close;
}

/** A JSON string in pieces: each piece escaped on its own (what JSON.stringify writes, as no piece splits a surrogate pair). */
function* jsonPieces(s: string, pieceChars: number): Generator<string> {
  yield '"';
  for (const piece of pieces(s, pieceChars)) yield JSON.stringify(piece).slice(1, -1);
  yield '"';
}

/** A CSV field in pieces, quoted as csvField quotes it. */
function* csvPieces(s: string, pieceChars: number): Generator<string> {
  const quoted = /[",\r\n]/.test(s);
  if (quoted) yield '"';
  for (const piece of pieces(s, pieceChars)) yield quoted ? piece.replace(/"/g, '""') : piece;
  if (quoted) yield '"';
}

/**
 * `s` cut every `n` characters, never between the two halves of a
 * surrogate pair: each piece is escaped and encoded as UTF-8 on its own,
 * where half a pair would become an escape or U+FFFD.
 */
function* pieces(s: string, n: number): Generator<string> {
  for (let at = 0; at < s.length;) {
    let end = Math.min(s.length, at + n);
    if (end < s.length && isHighSurrogate(s.charCodeAt(end - 1)) && isLowSurrogate(s.charCodeAt(end))) end += end - 1 > at ? -1 : 1;
    yield s.slice(at, end);
    at = end;
  }
}
const isHighSurrogate = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** Outputs whose 'error' events writeText has taken (once each: the prompt writes many results to one). */
const watched = new WeakSet<NodeJS.WritableStream>();

/**
 * Writes `text` to `out` as it comes, in writes of about PIECE_CHARS
 * characters, the next once the last is taken (backpressure): memory holds
 * one write, not the output. False when the reader went away part way (a
 * closed pipe, `| head`): the rest is not wanted, and that is no failure.
 * Rejects with any other error of the stream.
 */
export async function writeText(out: NodeJS.WritableStream, text: Iterable<string>): Promise<boolean> {
  if (!watched.has(out)) {
    watched.add(out);
    // The error reaches the write's callback below; emitted as an event too, unheard it would end the process.
    out.on('error', () => {});
  }
  let buffered: string[] = [];
  let size = 0;
  const flush = () => {
    const chunk = buffered.join('');
    buffered = [];
    size = 0;
    return new Promise<void>((resolve, reject) => out.write(chunk, (err) => (err ? reject(err) : resolve())));
  };
  try {
    for (const piece of text) {
      buffered.push(piece);
      size += piece.length;
      if (size >= PIECE_CHARS) await flush();
    }
    if (size > 0) await flush();
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EPIPE') return false;
    throw err;
  }
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
