// No function over 150 lines in the shipped code (profiler/, app/,
// renderer/src; issue 28), or a `// Long:` comment at its head saying why it
// must be long (scripts/function-length.ts measures them). Functions another
// change is splitting now are listed as debt, each with why it is still
// long; an entry fails once its function is no longer long, so that the
// list only shrinks.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LONG_FUNCTION, longFunctions } from '../../scripts/function-length.ts';
import { tempDir } from '../helpers/native.ts';

/** `file: function` (as scripts/function-length.ts names them) → why it is still over the limit. */
const LISTED_DEBT: Record<string, string> = {};

describe('function length', () => {
  it(`no function over ${LONG_FUNCTION} lines without a // Long: comment saying why, but the listed debt; all the listed debt is still long`, () => {
    const found = longFunctions();
    const unexcused = found.filter((f) => f.reason === undefined && !(f.key in LISTED_DEBT)).map((f) => `${f.key} (${f.lines} lines)`);
    expect(unexcused).toEqual([]);
    const stillLong = new Set(found.filter((f) => f.reason === undefined).map((f) => f.key));
    expect(Object.keys(LISTED_DEBT).filter((key) => !stillLong.has(key))).toEqual([]);
  });

  it('finds a long function in a file of its own, and accepts one whose head says why it is long', () => {
    const root = tempDir('function-length');
    const write = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    };
    /** `n` lines of statements: with its signature and closing brace, a function of n + 2 lines. */
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  total += ${i};`).join('\n');
    const fn = (name: string, lines: number) => `export function ${name}(): number {\n  let total = 0;\n${body(lines - 4)}\n  return total;\n}\n`;
    // Over the limit by one, and at it.
    write('profiler/a.ts', fn('tooLong', LONG_FUNCTION + 1) + fn('atTheLimit', LONG_FUNCTION));
    // The same with its reason, under a JSDoc comment; a comment that does not start with `Long:` excuses nothing.
    write(
      'profiler/b.ts',
      `/** What it does. */\n// Long: one case per line, read as a table.\n${fn('excused', 200)}\n// Long enough.\n${fn('notExcused', 200)}`,
    );
    // An arrow function: its reason above its variable's statement.
    write(
      'app/c.ts',
      `// Long: every message of the channel, one case each.\nexport const handler = async (): Promise<number> => {\n  let total = 0;\n${body(160)}\n  return total;\n};\n`,
    );
    // A method, named after its class; a callback, after where it is passed, inside the component it belongs to.
    write(
      'renderer/src/d.tsx',
      `export class Walk {\n  run(): number {\n    let total = 0;\n${body(155)}\n    return total;\n  }\n}\n` +
        `export function View(): null {\n  let total = 0;\n  useEffect(() => {\n${body(152)}\n  });\n  return null;\n}\n`,
    );
    // Tests and other folders are not held to it.
    write('profiler/e.test.ts', fn('longTest', 300));
    write('bench/f.ts', fn('longBench', 300));
    expect(longFunctions(root)).toEqual([
      { key: 'app/c.ts: handler', lines: 164, reason: 'every message of the channel, one case each.' },
      { key: 'profiler/a.ts: tooLong', lines: LONG_FUNCTION + 1 },
      { key: 'profiler/b.ts: excused', lines: 200, reason: 'one case per line, read as a table.' },
      { key: 'profiler/b.ts: notExcused', lines: 200 },
      { key: 'renderer/src/d.tsx: Walk.run', lines: 159 },
      { key: 'renderer/src/d.tsx: View', lines: 158 },
      { key: 'renderer/src/d.tsx: View > useEffect callback', lines: 154 },
    ]);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
