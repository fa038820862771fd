// How long the functions of the shipped TypeScript are (issue 28): no
// function over LONG_FUNCTION lines in profiler/, app/ and renderer/src, or a
// comment at its head saying why it must be long. A function here is every
// function-like node the TypeScript compiler parses (declarations, methods,
// accessors, constructors, function expressions, arrow functions: a callback
// is measured on its own, and its lines count towards the function around it
// too). Its length is its lines from the first of its signature to its
// closing brace. The comment that excuses one starts with `// Long:` and sits
// among the comments right above the function, or above the statement or
// property that holds it (`const f = () => ...`, `export default function`).
// Tests (`*.test.ts`) and build outputs (dist/, build/) are left out.
//
//   node scripts/function-length.ts      prints every function over the limit, excused or not
// test/structure/function-length.test.ts holds the tree to it.
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { repoRoot } from './check-imports.ts';

export const LONG_FUNCTION = 150;

/** The folders whose functions are held to the limit, relative to the repository root. */
export const CHECKED_FOLDERS = ['profiler', 'app', 'renderer/src'];

export interface LongFunction {
  /** `file: name`, the file relative to the root; a callback named after where it is passed (`f > forEach callback`). */
  key: string;
  lines: number;
  /** The `// Long:` comment's reason, when it has one. */
  reason?: string;
}

function sourceFiles(dir: string, out: string[]): void {
  if (!fs.existsSync(dir)) return;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name === 'build') continue;
    const p = path.join(dir, e.name);
    if (e.isDirectory()) sourceFiles(p, out);
    else if (/\.tsx?$/.test(e.name) && !/\.test\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
  }
}

/** What a reader would call the function: its own name (a class member's after its class), its variable's or property's, or where it is passed. */
function nameOf(node: ts.SignatureDeclaration, file: ts.SourceFile): string {
  const parent = node.parent;
  if (ts.isClassLike(parent)) return `${parent.name?.text ?? '(class)'}.${node.name?.getText(file) ?? 'constructor'}`;
  if (node.name) return node.name.getText(file);
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent)) {
    return parent.name.getText(file);
  }
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) {
    const callee = parent.expression;
    const called = ts.isPropertyAccessExpression(callee) ? callee.name.text : callee.getText(file);
    return `${called} callback`;
  }
  if (ts.isExportAssignment(parent)) return 'default';
  return 'anonymous';
}

/** The nodes whose leading comments may carry the function's `// Long:`: itself and what holds it. */
function heads(node: ts.Node): ts.Node[] {
  const out = [node];
  let p = node.parent;
  // `const f = () => ...` (VariableDeclaration -> List -> Statement); `{ f: () => ... }`; `x = () => ...`.
  while (
    p &&
    (ts.isVariableDeclaration(p) ||
      ts.isVariableDeclarationList(p) ||
      ts.isVariableStatement(p) ||
      ts.isPropertyAssignment(p) ||
      ts.isPropertyDeclaration(p) ||
      ts.isExportAssignment(p) ||
      ts.isParenthesizedExpression(p) ||
      ts.isAsExpression(p) ||
      ts.isSatisfiesExpression(p) ||
      (ts.isBinaryExpression(p) && p.operatorToken.kind === ts.SyntaxKind.EqualsToken) ||
      ts.isExpressionStatement(p))
  ) {
    out.push(p);
    p = p.parent;
  }
  // A callback passed straight to a call that is the whole statement (`useEffect(() => ...)`).
  if (p && (ts.isCallExpression(p) || ts.isNewExpression(p)) && p.parent && ts.isExpressionStatement(p.parent)) {
    out.push(p, p.parent);
  }
  return out;
}

/** The reason of the `// Long:` comment right above the node or what holds it, if any. */
function longReason(node: ts.Node, file: ts.SourceFile): string | undefined {
  const text = file.getFullText();
  for (const head of heads(node)) {
    for (const c of ts.getLeadingCommentRanges(text, head.getFullStart()) ?? []) {
      const comment = text.slice(c.pos, c.end);
      const m = /^\/\/\s*Long:\s*(.*)$/m.exec(comment);
      if (c.kind === ts.SyntaxKind.SingleLineCommentTrivia && m && comment.startsWith('//')) return m[1]!.trim() || '(no reason)';
    }
  }
  return undefined;
}

/** Every function over the limit in one file's text, `file` naming it in the keys. */
export function longFunctionsIn(file: string, text: string, limit = LONG_FUNCTION): LongFunction[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, file.endsWith('.tsx') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const out: LongFunction[] = [];
  const seen = new Map<string, number>();
  const visit = (node: ts.Node, outer: string | undefined): void => {
    let inner = outer;
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const own = nameOf(node, source);
      inner = own.endsWith('callback') || own === 'anonymous' ? `${outer ?? ''}${outer ? ' > ' : ''}${own}` : own;
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = last - first + 1;
      if (lines > limit) {
        // Two callbacks of one name in one function: numbered in source order.
        const base = `${file}: ${inner}`;
        const n = (seen.get(base) ?? 0) + 1;
        seen.set(base, n);
        const reason = longReason(node, source);
        out.push({ key: n === 1 ? base : `${base} #${n}`, lines, ...(reason ? { reason } : {}) });
      }
    }
    ts.forEachChild(node, (child) => visit(child, inner));
  };
  visit(source, undefined);
  return out;
}

/** Every function over the limit in the checked folders under `root`. */
export function longFunctions(root = repoRoot, limit = LONG_FUNCTION): LongFunction[] {
  const files: string[] = [];
  for (const folder of CHECKED_FOLDERS) sourceFiles(path.join(root, folder), files);
  return files.sort().flatMap((f) => longFunctionsIn(path.relative(root, f).split(path.sep).join('/'), fs.readFileSync(f, 'utf8'), limit));
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  for (const f of longFunctions()) console.log(`${String(f.lines).padStart(4)}  ${f.key}${f.reason ? `  (Long: ${f.reason})` : ''}`);
}
