// The layering of the source folders (scripts/check-imports.ts, whose rules
// the folders' READMEs say in words): no import breaks it except those
// listed as technical debt, and every listed one still exists.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { importBreaks, TECHNICAL_DEBT } from '../../scripts/check-imports.ts';
import { tempDir } from '../helpers/native.ts';

describe('import rules', () => {
  it('the tree breaks none but the listed technical debt, and all the listed debt is real', () => {
    const found = importBreaks();
    expect(found.filter((b) => !(b in TECHNICAL_DEBT))).toEqual([]);
    expect(Object.keys(TECHNICAL_DEBT).filter((b) => !found.includes(b))).toEqual([]);
  });

  it('finds a wrong import, type-only and dynamic ones included, and lets allowed ones pass', () => {
    const root = tempDir('imports');
    const write = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    };
    write('profiler/analysis/a.ts', "import { x } from '../store/database.ts';\nimport type { Y } from '../query/api.ts';\n");
    write('profiler/store/b.ts', "export const b = await import('../report/report.ts');\n");
    write(
      'renderer/src/c.tsx',
      "import type { Scope } from '../../profiler/contract/api.ts';\nimport { openRecording } from '../../profiler/query/session.ts';\n",
    );
    write('app/d.ts', "import { record } from '../profiler/record/recorder.ts';\n");
    // A unit inside another is one of its own: the measures may not reach up into the replay or the diagnosis.
    write('profiler/analysis/e.ts', "import { replay } from './replay/replay.ts';\n");
    write('profiler/analysis/diagnosis/f.ts', "import { replay } from '../replay/replay.ts';\nimport { overlap } from '../overlap.ts';\n");
    write('profiler/record/g.ts', "import { callFamily } from '../cuda/call-families.ts';\nimport { overlap } from '../analysis/overlap.ts';\n");
    expect(importBreaks(root)).toEqual([
      'profiler/analysis/a.ts -> profiler/query/api.ts',
      'profiler/analysis/e.ts -> profiler/analysis/replay/replay.ts',
      'profiler/record/g.ts -> profiler/analysis/overlap.ts',
      'profiler/store/b.ts -> profiler/report/report.ts',
      'renderer/src/c.tsx -> profiler/query/session.ts',
    ]);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
