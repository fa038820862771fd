// The prompt of `streamscope sql FILE` (no query given): statements are
// read line by line and run when a `;` ends one (several on a line run in
// turn; what is left at the end of the input runs too); lines starting
// with `.` are the console's own commands. Output as `streamscope sql`
// prints a result (sql-format.ts), failures on stderr with the caret.
//
// History: what was run, one entry a line (a statement's lines joined), in
// a file under StreamScope's cache directory (historyFile), read back into
// readline's history (↑ / ↓) at the next start; the last HISTORY_SIZE
// entries are kept. A history that cannot be read or written is left out
// without a word: it must never stop a query.
//
// Like sqlite3, the banner and the prompts appear only when stdin is a
// terminal (or --interactive): `streamscope sql f.sqlite < queries.sql`
// prints results alone, and exits 1 when any statement failed.
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { SQL_EXAMPLES, SQL_VIEWS } from '../contract/sql.ts';
import { defaultJobCacheDir } from '../merge/job-cache.ts';
import type { SqlConsole } from '../query/sql-console.ts';
import { ALLOWED_PRAGMAS, maskSql } from '../query/sql-guard.ts';
import { formatFailure, resultText, rowsLine, writeText, type SqlFormat } from './sql-format.ts';

const HISTORY_SIZE = 1000;
const PROMPT = 'sql> ';
const CONTINUE = '...> ';

/**
 * The history file: `sql-history` in StreamScope's cache directory, the one
 * whose `jobs/` holds merged jobs ($STREAMSCOPE_CACHE_DIR, else
 * $XDG_CACHE_HOME/streamscope, else ~/.cache/streamscope).
 */
export function defaultSqlHistoryFile(env: NodeJS.ProcessEnv = process.env): string {
  return path.join(path.dirname(defaultJobCacheDir(env)), 'sql-history');
}

export interface ReplOptions {
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  output: NodeJS.WritableStream;
  errors: NodeJS.WritableStream;
  format: SqlFormat;
  timeoutMs: number;
  rowLimit: number;
  /** Banner and prompts (a terminal, or --interactive). */
  interactive: boolean;
  historyFile: string;
}

function readHistory(file: string): string[] {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).slice(-HISTORY_SIZE);
  } catch {
    return [];
  }
}

function appendHistory(file: string, entry: string): void {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.appendFileSync(file, entry + '\n');
    // Trimmed now and then, not on every line: a file twice the size is rewritten with the newest half.
    const lines = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean);
    if (lines.length > 2 * HISTORY_SIZE) fs.writeFileSync(file, lines.slice(-HISTORY_SIZE).join('\n') + '\n');
  } catch {
    // no history then
  }
}

function help(): string {
  const views = SQL_VIEWS.map((v) => `  ${v.name.padEnd(15)} ${v.about}`).join('\n');
  return `Commands:
  .tables            the recording's tables and the console's views
  .schema [NAME]     CREATE statements (of NAME and its indexes)
  .examples          example queries
  .mode table|json|csv   how results are printed
  .help              this text
  .quit              leave (also .exit, Ctrl+D)
A statement runs when a ';' ends it. Read-only: SELECT, WITH, VALUES, EXPLAIN and
PRAGMAs that read (${ALLOWED_PRAGMAS.join(', ')}); one statement at a
time, stopped after its time limit, at most its row cap of rows (--timeout, --max-rows).
Views (times in µs from the recording's start; *_id columns name operations):
${views}
Tables and columns: profiler/store/SCHEMA.md.
`;
}

/** Runs the prompt until the input ends or .quit; the exit code (1: not interactive and a statement failed). */
export function runRepl(sql: SqlConsole, o: ReplOptions): Promise<number> {
  let format = o.format;
  let failed = false;
  let buffer = '';
  const rl = readline.createInterface({
    input: o.input,
    output: o.interactive ? o.output : undefined,
    terminal: o.interactive && o.input.isTTY === true,
    history: readHistory(o.historyFile).reverse(),
    historySize: HISTORY_SIZE,
    removeHistoryDuplicates: true,
  });
  const say = (text: string) => o.output.write(text);
  /** .quit, the input's end, or the output closed: no more lines are handled. */
  let quit = false;
  let outputClosed = false;
  const prompt = () => {
    if (!o.interactive) return;
    rl.setPrompt(buffer ? CONTINUE : PROMPT);
    rl.prompt();
  };

  const runStatement = async (statement: string) => {
    appendHistory(o.historyFile, statement.replace(/\s*\n\s*/g, ' ').trim());
    const r = sql.run(statement, { timeoutMs: o.timeoutMs, rowLimit: o.rowLimit });
    if (!r.ok) {
      failed = true;
      o.errors.write(formatFailure(r, statement));
      return;
    }
    if (!(await writeText(o.output, resultText(r, format, sql.file)))) {
      // The reader went away (`| head`): nothing more is wanted.
      quit = outputClosed = true;
      rl.close();
      return;
    }
    if (r.truncated && format !== 'table') o.errors.write(`streamscope: ${rowsLine(r)}\n`);
  };

  /** A dot command; false for .quit. */
  const command = (line: string): boolean => {
    appendHistory(o.historyFile, line);
    const [name, ...args] = line.split(/\s+/);
    switch (name) {
      case '.quit':
      case '.exit':
        return false;
      case '.help':
        say(help());
        break;
      case '.tables':
        for (const t of sql.tables()) say(`${t.name}${t.temporary ? '  (view of the console)' : t.type === 'view' ? '  (view)' : ''}\n`);
        break;
      case '.schema': {
        const statements = sql.schema(args[0]);
        if (args[0] && statements.length === 0) {
          failed = true;
          o.errors.write(`streamscope: ${sql.file}: no table or view named '${args[0]}' (.tables lists them)\n`);
        }
        for (const s of statements) say(`${s};\n`);
        break;
      }
      case '.examples':
        for (const e of SQL_EXAMPLES) say(`-- ${e.title}\n${e.sql}\n\n`);
        break;
      case '.mode':
        if (args[0] === 'table' || args[0] === 'json' || args[0] === 'csv') format = args[0];
        else {
          failed = true;
          o.errors.write(`streamscope: .mode table, json or csv (now ${format})\n`);
        }
        break;
      default:
        failed = true;
        o.errors.write(`streamscope: unknown command '${name}' (.help lists them)\n`);
    }
    return true;
  };

  /** Runs each statement the buffer completes (a ';' outside strings and comments), keeps the rest. */
  const runComplete = async () => {
    for (;;) {
      const end = maskSql(buffer).indexOf(';');
      if (end < 0) return;
      const statement = buffer.slice(0, end + 1);
      buffer = buffer.slice(end + 1).replace(/^[ \t]*\n?/, '');
      if (/\S/.test(maskSql(statement).slice(0, -1))) await runStatement(statement);
      if (quit) return;
    }
  };
  /** Nothing but blanks and comments left: no statement is being continued. */
  const dropEmpty = () => {
    if (!/\S/.test(maskSql(buffer))) buffer = '';
  };

  return new Promise((resolve, reject) => {
    // Lines are handled one after another, each once the previous one's rows are written (writeText waits for the output).
    // One that fails (the output closed) ends the prompt with its error; the lines after it are dropped.
    let handled = Promise.resolve();
    let broken = false;
    const then = (step: () => void | Promise<void>) => {
      handled = handled
        .then(() => (broken ? undefined : step()))
        .catch((err: unknown) => {
          broken = true;
          rl.close();
          reject(err as Error);
        });
    };
    if (o.interactive) say(`StreamScope SQL console on ${sql.file} (read-only). .help for help, .quit to leave.\n`);
    rl.on('line', (line) =>
      then(async () => {
        if (quit) return;
        if (!buffer && line.trim().startsWith('.')) {
          if (!command(line.trim())) {
            quit = true;
            rl.close();
            return;
          }
        } else if (buffer || line.trim()) {
          buffer += (buffer ? '\n' : '') + line;
          await runComplete();
          dropEmpty();
        }
        prompt();
      }),
    );
    rl.on('close', () =>
      then(async () => {
        // The input ended inside a statement: it runs as it is (SQLite says if it is incomplete).
        if (!quit && /\S/.test(maskSql(buffer))) await runStatement(buffer);
        if (o.interactive && !outputClosed) say('\n');
        resolve(failed && !o.interactive ? 1 : 0);
      }),
    );
    prompt();
  });
}
