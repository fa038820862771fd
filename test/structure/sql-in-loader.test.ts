// SQL stays in the loader (issue 28): the analysis reads a recording through
// its loader, profiler/analysis/load/, whose functions return plain typed
// data (or read when asked, for what needs a read to decide the next); the
// measures, the replay and the diagnosis run over what it read, so that they
// can be tested on arrays and run on a thread that never touches the file.
// So no file of profiler/analysis outside load/ runs SQL (prepares a
// statement, executes one, sets a pragma), writes a statement's text or
// opens the database module; and those that still take the recording (a
// Db) to hand it to the loader — the entry points the callers above the
// analysis hold a file for — are listed, each with why: the list only
// shrinks (an entry fails once its file no longer takes one).
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/check-imports.ts';
import { tempDir } from '../helpers/native.ts';

const ANALYSIS = 'profiler/analysis';
const LOADER = 'profiler/analysis/load/';

/** Files of the analysis outside the loader that take the recording (import store/database.ts), and why. */
const TAKE_A_DB: Record<string, string> = {
  'profiler/analysis/trace.ts': 'loadTrace(db): a file’s trace, for the query service and tests that hold one; the analysis builds its traces with traceOf',
  'profiler/analysis/host.ts': 'loadHost(db): a file’s host model, for the query service and tests that hold one; the analysis builds it with hostOf',
  'profiler/analysis/scope.ts':
    'selectScope(db): for the ranks’ summaries (profiler/job/summary.ts) and tests; the analysis selects with selectScopeWith and a range reader',
  'profiler/analysis/job-scope.ts':
    'jobStartup(db): for the ranks’ summaries and the job analysis; startupOfZones takes the reads (load/startup.ts), not the file',
  'profiler/analysis/diagnosis/analyze.ts':
    'analyze(db): loads, selects the scope and diagnoses in one call: reads through load/, then hands the measures what it read',
  'profiler/analysis/diagnosis/iterations.ts':
    'iterationsOf(db), pickIterationRange(db): read the range’s instances and the tables through load/, then analyse each instance',
  'profiler/analysis/diagnosis/job.ts': 'the job read part by part (PartReader opens the file on each worker thread), each part read through load/',
  'profiler/analysis/diagnosis/whatif-worker.ts':
    'the what-if thread opens the file to analyse the columns it is handed as analyze() does (analyze(db, { columns }): its tables read through load/)',
};

/** Calls that run SQL on a better-sqlite3 database (a statement's .all/.get/.iterate/.run come only from .prepare). */
const SQL_CALLS = new Set(['prepare', 'pragma', 'exec']);
/** A statement's text in a string or template literal. */
const SQL_TEXT = /\b(SELECT|INSERT INTO|INSERT OR|UPDATE \w+ SET|DELETE FROM|PRAGMA|CREATE (TABLE|INDEX|VIEW)|ATTACH DATABASE)\b/;

function sourceFiles(dir: string, out: string[]): string[] {
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sourceFiles(p, out);
    else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name)) out.push(p);
  }
  return out;
}

/** Whether `node` is a regular expression: a literal, `new RegExp(…)`, or a name this file binds to one (RegExp's .exec is no SQL). */
function isRegExp(node: ts.Expression, regexNames: Set<string>): boolean {
  if (ts.isParenthesizedExpression(node)) return isRegExp(node.expression, regexNames);
  if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) return true;
  if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') return true;
  return ts.isIdentifier(node) && regexNames.has(node.text);
}

/** What `file` (relative to `root`) does of SQL: `file:line: what`. */
function sqlOf(root: string, rel: string): string[] {
  const text = fs.readFileSync(path.join(root, rel), 'utf8');
  const file = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true, rel.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: string[] = [];
  const at = (node: ts.Node, what: string) => found.push(`${rel}:${file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1}: ${what}`);
  const regexNames = new Set<string>();
  const bindings = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer && isRegExp(node.initializer, new Set()))
      regexNames.add(node.name.text);
    ts.forEachChild(node, bindings);
  };
  bindings(file);
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const { name, expression } = node.expression;
      if (SQL_CALLS.has(name.text) && !(name.text === 'exec' && isRegExp(expression, regexNames))) at(node, `.${name.text}(`);
    }
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      if (node.moduleSpecifier.text === 'better-sqlite3' || node.moduleSpecifier.text === 'node:sqlite') at(node, `imports ${node.moduleSpecifier.text}`);
    }
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (SQL_TEXT.test(node.text)) at(node, 'SQL text');
    } else if (ts.isTemplateExpression(node)) {
      if (SQL_TEXT.test([node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' '))) at(node, 'SQL text');
      node.templateSpans.forEach((s) => visit(s.expression));
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** Every file of the analysis outside the loader, relative to `root`. */
function analysisFiles(root: string): string[] {
  return sourceFiles(path.join(root, ANALYSIS), [])
    .map((f) => path.relative(root, f).split(path.sep).join('/'))
    .filter((rel) => !rel.startsWith(LOADER))
    .sort();
}

/** What the analysis outside its loader does of SQL: `file:line: what`, in file order. */
function sqlOutsideLoader(root = repoRoot): string[] {
  return analysisFiles(root).flatMap((rel) => sqlOf(root, rel));
}

/** The files of the analysis outside its loader that import the database module (take a Db). */
function takingADb(root = repoRoot): string[] {
  const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+'([^']*\/store\/database\.ts)'/;
  return analysisFiles(root).filter((rel) => IMPORT.test(fs.readFileSync(path.join(root, rel), 'utf8')));
}

describe('SQL stays in the loader', () => {
  it('no file of profiler/analysis outside load/ runs SQL, writes its text or opens the database module', () => {
    expect(sqlOutsideLoader()).toEqual([]);
  });

  it('the files outside load/ that take a Db are the listed ones, and each listed one still does', () => {
    const found = takingADb();
    expect(found.filter((f) => !(f in TAKE_A_DB))).toEqual([]);
    expect(Object.keys(TAKE_A_DB).filter((f) => !found.includes(f))).toEqual([]);
  });

  it('finds statements prepared, executed and pragmas, their text and the database module outside load/, and lets the loader and regular expressions pass', () => {
    const root = tempDir('sql-in-loader');
    const write = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    };
    write('profiler/analysis/a.ts', "// SELECT in a comment is no statement\nexport const n = (db: Db) => db.prepare('SELECT count(*) FROM kernels').get();\n");
    write('profiler/analysis/replay/b.ts', "export const v = (db: Db) =>\n  db\n    .pragma('user_version', { simple: true });\n");
    write(
      'profiler/analysis/diagnosis/c.ts',
      [
        'const RANGE = /^(.*)#(\\d+)$/;',
        'export const a = (db: Db, text: string) => {',
        '  db.exec(text);',
        '  return [/^x/.exec(text), RANGE.exec(text), new RegExp(text).exec(text), (/y/g).exec(text)];',
        '};',
        '',
      ].join('\n'),
    );
    write('profiler/analysis/d.ts', "export const q = (table: string) => `SELECT id FROM ${table} WHERE ${'TRUE'}`;\nexport const s = 'select the scope';\n");
    write('profiler/analysis/e.ts', "import Database from 'better-sqlite3';\nimport type { Db } from '../store/database.ts';\nexport const D = Database;\n");
    write(
      'profiler/analysis/load/f.ts',
      "import type { Db } from '../../store/database.ts';\nexport const f = (db: Db) => db.prepare('SELECT 1').pluck().get();\n",
    );
    write('profiler/analysis/g.test.ts', "export const g = (db: Db) => db.prepare('SELECT 1').get();\n");
    expect(sqlOutsideLoader(root)).toEqual([
      'profiler/analysis/a.ts:2: .prepare(',
      'profiler/analysis/a.ts:2: SQL text',
      'profiler/analysis/d.ts:1: SQL text',
      'profiler/analysis/diagnosis/c.ts:3: .exec(',
      'profiler/analysis/e.ts:1: imports better-sqlite3',
      'profiler/analysis/replay/b.ts:2: .pragma(',
    ]);
    expect(takingADb(root)).toEqual(['profiler/analysis/e.ts']);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
