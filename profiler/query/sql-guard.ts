// The SQL a user types into the console (`streamscope sql`, the Query tab),
// read before SQLite sees it: whether the console runs it, and where an
// error SQLite reports points in it.
//
// Why the text is checked before it is prepared: SQLite carries out many
// PRAGMAs while it *prepares* them, not when they run — preparing `PRAGMA
// query_only = 0` lifts query_only at once (checked in
// test/query/sql-console.test.ts), so asking SQLite whether a statement is
// read-only (better-sqlite3's stmt.readonly) comes too late for those, and
// says "read-only" for ATTACH, transactions and every PRAGMA anyway. What is
// refused is decided here from the leading keyword; what passes is then
// held to stmt.readonly (a WITH … DELETE), and the connection itself is
// read-only (sql-console.ts).
//
// The scanner knows just enough SQLite lexis to not be fooled: comments
// (`--`, `/* */`), string literals ('…'), quoted identifiers ("…", `…`,
// […]), and the `;` between statements.

/** Statements the console runs: queries. */
const QUERY_KEYWORDS = new Set(['SELECT', 'WITH', 'VALUES', 'EXPLAIN', 'PRAGMA']);

/**
 * PRAGMAs that only read, and may be given an argument that names what to
 * read (`PRAGMA table_info(kernels)`); every other PRAGMA is refused, and
 * these with `=` (which sets). The table-valued forms (`SELECT * FROM
 * pragma_table_info('kernels')`) are queries, allowed anyway: SQLite offers
 * them only for PRAGMAs without side effects, and takes no value to set.
 */
const READ_PRAGMAS_WITH_ARGUMENT = new Set([
  'table_info',
  'table_xinfo',
  'table_list',
  'index_list',
  'index_info',
  'index_xinfo',
  'foreign_key_list',
  'foreign_key_check',
  'integrity_check',
  'quick_check',
]);
/** PRAGMAs that read a setting or a list: without an argument (with one, many of them set). */
const READ_PRAGMAS = new Set([
  ...READ_PRAGMAS_WITH_ARGUMENT,
  'user_version',
  'schema_version',
  'application_id',
  'page_size',
  'page_count',
  'freelist_count',
  'encoding',
  'compile_options',
  'database_list',
  'collation_list',
  'function_list',
  'module_list',
  'pragma_list',
]);

/** The pragmas the console runs, for its messages and `.help`. */
export const ALLOWED_PRAGMAS: readonly string[] = [...READ_PRAGMAS].sort();

/**
 * `sql` with comments, string literals and the insides of quoted
 * identifiers blanked out (same length, so offsets still hold): what is
 * left are keywords, names, numbers and punctuation, a `;` only where it
 * ends a statement. With `keepIdentifiers`, quoted identifiers stay (an
 * error message names them).
 */
export function maskSql(sql: string, keepIdentifiers = false): string {
  const out = sql.split('');
  const blank = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (out[i] !== '\n') out[i] = ' ';
  };
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i);
      const to = end < 0 ? sql.length : end;
      blank(i, to);
      i = to;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      const to = end < 0 ? sql.length : end + 2;
      blank(i, to);
      i = to;
    } else if (c === "'") {
      // '' inside a literal is a quote, not its end.
      let j = i + 1;
      while (j < sql.length && !(sql[j] === "'" && sql[j + 1] !== "'")) j += sql[j] === "'" ? 2 : 1;
      blank(i + 1, Math.min(j, sql.length));
      i = j + 1;
    } else if (c === '"' || c === '`' || c === '[') {
      // A quoted identifier may hold ';' and '--'; in "…" and `…` a doubled quote is one, […] has no escape.
      let j = i + 1;
      if (c === '[') j = sql.indexOf(']', j) < 0 ? sql.length : sql.indexOf(']', j);
      else while (j < sql.length && !(sql[j] === c && sql[j + 1] !== c)) j += sql[j] === c ? 2 : 1;
      if (!keepIdentifiers) blank(i + 1, Math.min(j, sql.length));
      i = j + 1;
    } else {
      i++;
    }
  }
  return out.join('');
}

const isNameChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_$]/u.test(c);

/** Why the console will not run `sql` (one line, without the file), and where that is in it; null when it may be prepared. */
export function refusalOf(sql: string): { reason: string; position: { start: number; end: number } | null } | null {
  const masked = maskSql(sql);
  const first = /\S/.exec(masked);
  if (!first) return { reason: 'no statement to run (the query is empty or only comments)', position: null };
  // One statement: after the first ';' outside strings, comments and quotes, nothing but more of them.
  const semicolon = masked.indexOf(';');
  if (semicolon >= 0) {
    const rest = /[^\s;]/.exec(masked.slice(semicolon));
    if (rest) {
      const start = semicolon + rest.index;
      return { reason: 'more than one statement: the console runs one query at a time', position: { start, end: start + tokenLength(masked, start) } };
    }
  }
  let at = first.index;
  let keyword = wordAt(masked, at);
  // EXPLAIN [QUERY PLAN] X is prepared as X is (a PRAGMA acts while it is prepared): X is what is checked.
  if (keyword.toUpperCase() === 'EXPLAIN') {
    const m = /^EXPLAIN\s+(QUERY\s+PLAN\s+)?/i.exec(masked.slice(at));
    at += m ? m[0].length : keyword.length;
    keyword = wordAt(masked, at);
  }
  const upper = keyword.toUpperCase();
  const position = { start: at, end: at + Math.max(keyword.length, 1) };
  if (!QUERY_KEYWORDS.has(upper)) {
    const what = keyword ? upper : `'${masked[at] ?? ''}'`;
    const why =
      upper === 'ATTACH' || upper === 'DETACH'
        ? 'the console reads this recording and nothing else'
        : ['BEGIN', 'COMMIT', 'END', 'ROLLBACK', 'SAVEPOINT', 'RELEASE'].includes(upper)
          ? 'each query runs on its own (a transaction left open would keep a recording being written from committing)'
          : 'the SQL console only reads: it runs SELECT, WITH, VALUES, EXPLAIN and PRAGMAs that read';
    return { reason: `${what} is refused: ${why}`, position };
  }
  if (upper === 'PRAGMA') {
    // PRAGMA [schema.]name [= value | (argument)]
    const m = /^PRAGMA\s+(?:([\p{L}\p{N}_$]+)\s*\.\s*)?([\p{L}\p{N}_$]+)\s*([=(])?/diu.exec(masked.slice(at));
    const name = (m?.[2] ?? '').toLowerCase();
    const nameAt = m?.indices?.[2] ? at + m.indices[2][0] : at;
    const where = { start: nameAt, end: nameAt + Math.max(name.length, 1) };
    const allowed = 'the SQL console runs only the PRAGMAs that read (table_info, index_list, user_version, …: `.help` lists them)';
    if (!READ_PRAGMAS.has(name)) return { reason: `PRAGMA ${name || '(no name)'} is refused: ${allowed}`, position: where };
    if (m?.[3] === '=') return { reason: `PRAGMA ${name} = … is refused: it sets a value, and ${allowed}`, position: where };
    if (m?.[3] === '(' && !READ_PRAGMAS_WITH_ARGUMENT.has(name))
      return { reason: `PRAGMA ${name}(…) is refused: it sets a value, and ${allowed}`, position: where };
  }
  return null;
}

function wordAt(masked: string, at: number): string {
  let end = at;
  while (isNameChar(masked[end])) end++;
  return masked.slice(at, end);
}

function tokenLength(masked: string, at: number): number {
  const word = wordAt(masked, at);
  return Math.max(word.length, 1);
}

/**
 * What SQLite's error message names, as it appears in the query: `near
 * "FROMM": syntax error` → FROMM, `no such column: k.nme` → k.nme (or
 * nme), `no such table: kernel`, `no such function: sums`, …
 */
const NAMED_IN_MESSAGE: RegExp[] = [
  /near "((?:[^"]|"")*)": syntax error/,
  /unrecognized token: "((?:[^"]|"")*)"/,
  /no such (?:table|column|function|collation sequence|module|window): (.+)$/,
  /ambiguous column name: (.+)$/,
  /misuse of (?:aggregate|window) function:? (\w+)\(\)/,
  /wrong number of arguments to function (\w+)\(\)/,
];

/**
 * Where in `sql` the error `message` points: the token it names, found
 * outside comments and string literals, matched without regard to case
 * and as a whole word (the first place it occurs); the end of the text for
 * `incomplete input`; null when the message names nothing found.
 */
export function errorPosition(sql: string, message: string): { start: number; end: number } | null {
  if (/incomplete input/.test(message)) {
    const end = sql.trimEnd().length;
    return { start: end, end };
  }
  const masked = maskSql(sql, true).toLowerCase();
  for (const re of NAMED_IN_MESSAGE) {
    const m = re.exec(message);
    if (!m) continue;
    const token = m[1]!.replace(/""/g, '"').trim();
    // A qualified name (main.kernels, k.nme) may be written with quotes or spaces: try it whole, then its last part.
    for (const candidate of token.includes('.') ? [token, token.slice(token.lastIndexOf('.') + 1)] : [token]) {
      const at = findToken(masked, candidate.toLowerCase());
      if (at >= 0) return { start: at, end: at + candidate.length };
    }
    return null;
  }
  return null;
}

function findToken(masked: string, token: string): number {
  if (!token) return -1;
  const wordy = isNameChar(token[0]) && isNameChar(token[token.length - 1]);
  for (let at = masked.indexOf(token); at >= 0; at = masked.indexOf(token, at + 1)) {
    if (!wordy || (!isNameChar(masked[at - 1]) && !isNameChar(masked[at + token.length]))) return at;
  }
  return -1;
}
