// `streamscope sql FILE ["SELECT …" | -] [--json | --csv] [--timeout T]
// [--max-rows N] [--interactive]`: a query on a recording, printed as a
// table, JSON or CSV; without a query, the interactive prompt
// (sql-repl.ts). The query runs in the SQL console (profiler/query/
// sql-console.ts): read-only, one statement, a time limit, a row cap, with
// the views of SCHEMA.md ("The SQL console's views").
//
// Exit codes: 0 rows printed; 1 the query failed (SQLite's error, refused,
// stopped at its time limit: one line on stderr, the query's line beneath
// it with a caret where the error points); 2 bad usage or a file that is
// not a readable recording.
import { ApiError } from '../query/api-error.ts';
import { SqlConsole } from '../query/sql-console.ts';
import { COMMANDS } from './commands.ts';
import { parseTime } from './scope-args.ts';
import { formatFailure, resultText, rowsLine, writeText, type SqlFormat } from './sql-format.ts';
import { runRepl } from './sql-repl.ts';
import { parseCommand, UsageError } from './usage.ts';

export interface SqlArgs {
  file: string;
  /** The query; '-' reads it from stdin; null opens the prompt. */
  query: string | null;
  format: SqlFormat;
  timeoutMs: number;
  rowLimit: number;
  /** The prompt shows its banner and prompts even when stdin is not a terminal. */
  interactive: boolean;
}

/**
 * The arguments (declared in commands.ts, where --timeout's and --max-rows'
 * defaults are the console's limits); a UsageError where they do not fit. A
 * query may start with a `--` comment: parseCommand takes an argument that
 * is not an option word for an operand.
 */
export function parseSqlArgs(args: string[]): SqlArgs {
  const { values, operands } = parseCommand(COMMANDS.sql, args);
  if (values.json && values.csv) throw new UsageError('give --json or --csv, not both');
  const timeoutMs = Math.round(parseTime(values.timeout!, '--timeout') / 1e6);
  if (!(timeoutMs >= 1 && timeoutMs <= 86_400_000)) throw new UsageError(`--timeout: between 1ms and 24 hours, got '${values.timeout}'`);
  const rowLimit = Number(values['max-rows']);
  if (!Number.isSafeInteger(rowLimit) || rowLimit < 1) throw new UsageError(`--max-rows: a whole number of rows above 0, got '${values['max-rows']}'`);
  return {
    file: operands[0]!,
    query: operands[1] ?? null,
    format: values.json ? 'json' : values.csv ? 'csv' : 'table',
    timeoutMs,
    rowLimit,
    interactive: values.interactive ?? false,
  };
}

/** Opens the console, or ends with the file's problem (exit 2), as every reading command does. */
function openConsole(file: string, stderr: NodeJS.WritableStream): SqlConsole | null {
  try {
    return new SqlConsole(file);
  } catch (err) {
    if (err instanceof ApiError) {
      stderr.write(`streamscope: ${err.message}\n`);
      return null;
    }
    throw err;
  }
}

export interface SqlIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Where the prompt keeps its history (sql-repl.ts historyFile). */
  historyFile: string;
}

export async function cmdSql(args: string[], io: SqlIo): Promise<number> {
  const a = parseSqlArgs(args);
  const sql = openConsole(a.file, io.stderr);
  if (!sql) return 2;
  try {
    if (a.query === null) {
      return await runRepl(sql, {
        input: io.stdin,
        output: io.stdout,
        errors: io.stderr,
        format: a.format,
        timeoutMs: a.timeoutMs,
        rowLimit: a.rowLimit,
        interactive: a.interactive || io.stdin.isTTY === true,
        historyFile: io.historyFile,
      });
    }
    const query = a.query === '-' ? await readAll(io.stdin) : a.query;
    const r = sql.run(query, { timeoutMs: a.timeoutMs, rowLimit: a.rowLimit });
    if (!r.ok) {
      io.stderr.write(formatFailure(r, query));
      return 1;
    }
    await writeText(io.stdout, resultText(r, a.format, a.file));
    if (r.truncated && a.format !== 'table') io.stderr.write(`streamscope: ${rowsLine(r)}\n`);
    return 0;
  } finally {
    sql.close();
  }
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
