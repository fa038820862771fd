// Spread arguments of data-sized arrays (issue 27: `report` died on 130 k
// kernel names in Math.max(...widths)): the lint rule in eslint.config.js
// refuses every spread into Math.max/min, push/unshift/splice/concat and
// String.fromCharCode in the shipped code (profiler/, renderer/, app/), and
// the tree has none (`npm run lint` checks the tree; this checks the rule).
import path from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';

const eslint = new ESLint({ cwd: repoRoot });
const flagged = async (file: string, code: string) => {
  const [result] = await eslint.lintText(code, { filePath: path.join(repoRoot, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.line);
};

describe('spread arguments', () => {
  it('are refused where an array may grow with the recording', async () => {
    const code = [
      'export function f(xs: number[], out: number[], b: Uint8Array): unknown[] {',
      '  const most = Math.max(...xs);', // 2
      '  const least = Math.min(0, ...xs);', // 3
      '  out.push(...xs);', // 4
      '  out.unshift(1, ...xs);', // 5
      '  const s = String.fromCharCode(...b);', // 6
      '  const m = Math.max.apply(null, xs);', // 7
      '  const ok = xs.reduce((a, x) => Math.max(a, x), 0) + Math.max(xs[0]!, xs[1]!);',
      '  const copy = [...xs, ...out];',
      '  return [most, least, s, m, ok, copy];',
      '}',
      '',
    ].join('\n');
    for (const file of ['profiler/analysis/x.ts', 'renderer/src/x.tsx', 'app/x.ts']) {
      expect(await flagged(file, code), file).toEqual([2, 3, 4, 5, 6, 7]);
    }
  }, 30_000);
});
