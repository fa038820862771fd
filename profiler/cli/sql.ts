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
import { SQL_ROW_LIMIT, SQL_TIME_LIMIT_MS } from '../contract/sql.ts';
import { ApiError } from '../query/api-error.ts';
import { SqlConsole } from '../query/sql-console.ts';
import { parseTime } from './scope-args.ts';
import { formatFailure, formatRows, rowsLine, type SqlFormat } from './sql-format.ts';
import { runRepl } from './sql-repl.ts';

export const SQL_USAGE = 'usage: streamscope sql FILE ["SELECT …" | -] [--json | --csv] [--timeout 5s] [--max-rows N] [--interactive]';

export class SqlUsageError extends Error {}

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
 * The arguments. Not node:util's parseArgs: a query may start with a `--`
 * comment, which it would take for an option; here only the options below
 * are options, and anything else that is not a word such as `--jsn` is a
 * positional (after `--`, everything is).
 */
export function parseSqlArgs(args: string[]): SqlArgs {
  const values: { json?: boolean; csv?: boolean; interactive?: boolean; timeout?: string; 'max-rows'?: string } = {};
  const positionals: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const [name, inline] =
      arg.startsWith('--') && arg.includes('=') && !/\s/.test(arg) ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    if (arg === '--') {
      positionals.push(...args.slice(i + 1));
      break;
    } else if (name === '--json' || name === '--csv' || name === '--interactive') {
      values[name.slice(2) as 'json' | 'csv' | 'interactive'] = true;
    } else if (name === '--timeout' || name === '--max-rows') {
      const value = inline ?? args[++i];
      if (value === undefined) throw new SqlUsageError(`${name} needs a value\n${SQL_USAGE}`);
      values[name.slice(2) as 'timeout' | 'max-rows'] = value;
    } else if (/^--?[A-Za-z][\w-]*(=\S*)?$/.test(arg)) {
      throw new SqlUsageError(`unknown option '${arg}'\n${SQL_USAGE}`);
    } else {
      positionals.push(arg);
    }
  }
  if (positionals.length < 1 || positionals.length > 2) throw new SqlUsageError(SQL_USAGE);
  if (values.json && values.csv) throw new SqlUsageError('give --json or --csv, not both');
  let timeoutMs = SQL_TIME_LIMIT_MS;
  if (values.timeout !== undefined) {
    let ns: number;
    try {
      ns = parseTime(values.timeout, '--timeout');
    } catch (err) {
      throw new SqlUsageError((err as Error).message);
    }
    timeoutMs = Math.round(ns / 1e6);
    if (!(timeoutMs >= 1 && timeoutMs <= 86_400_000)) throw new SqlUsageError(`--timeout: between 1ms and 24 hours, got '${values.timeout}'`);
  }
  let rowLimit = SQL_ROW_LIMIT;
  if (values['max-rows'] !== undefined) {
    rowLimit = Number(values['max-rows']);
    if (!Number.isSafeInteger(rowLimit) || rowLimit < 1) throw new SqlUsageError(`--max-rows: a whole number of rows above 0, got '${values['max-rows']}'`);
  }
  return {
    file: positionals[0]!,
    query: positionals[1] ?? null,
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
  let a: SqlArgs;
  try {
    a = parseSqlArgs(args);
  } catch (err) {
    if (!(err instanceof SqlUsageError)) throw err;
    io.stderr.write(`streamscope: ${err.message}\n`);
    return 2;
  }
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
    io.stdout.write(formatRows(r, a.format, a.file));
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
