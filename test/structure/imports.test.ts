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
    // The loader is the analysis's floor below the measures: they read through it, it knows none of them, and the folders above ask the analysis.
    write('profiler/analysis/load/h.ts', "import type { Db } from '../../store/database.ts';\nimport type { Trace } from '../trace.ts';\n");
    write('profiler/analysis/i.ts', "import { readTraceTables } from './load/tables.ts';\n");
    write('profiler/analysis/diagnosis/j.ts', "import { rangeNames } from '../load/ranges.ts';\n");
    write('profiler/report/k.ts', "import { readTraceTables } from '../analysis/load/tables.ts';\n");
    expect(importBreaks(root)).toEqual([
      'profiler/analysis/a.ts -> profiler/query/api.ts',
      'profiler/analysis/e.ts -> profiler/analysis/replay/replay.ts',
      'profiler/analysis/load/h.ts -> profiler/analysis/trace.ts',
      'profiler/record/g.ts -> profiler/analysis/overlap.ts',
      'profiler/report/k.ts -> profiler/analysis/load/tables.ts',
      'profiler/store/b.ts -> profiler/report/report.ts',
      'renderer/src/c.tsx -> profiler/query/session.ts',
    ]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('holds the page (renderer/src) to its floors: base, api, the views, the scope under the panels, stats and compare, the shell on top', () => {
    const root = tempDir('imports-page');
    const write = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    };
    for (const top of ['profiler', 'app']) fs.mkdirSync(path.join(root, top));
    // Allowed: down a floor, or more; the shell on anything; main.tsx on the shell (below); the contract from anywhere.
    write('renderer/src/app/App.tsx', "import { Timeline } from '../timeline/Timeline.tsx';\nimport { StatsView } from '../stats/StatsView.tsx';\n");
    write('renderer/src/compare/Lane.tsx', "import type { Scope } from '../scope/scope.ts';\nimport { Timeline } from '../timeline/Timeline.tsx';\n");
    write('renderer/src/scope/overlays.ts', "import { iterationTrack } from '../timeline/iterations.ts';\nimport { getApi } from '../api/client.ts';\n");
    write(
      'renderer/src/timeline/draw.ts',
      "import { KIND_COLORS } from '../base/colors.ts';\nimport type { ItemRef } from '../../../profiler/contract/api.ts';\n",
    );
    write('renderer/src/api/client.ts', "import type { Ns } from '../../../profiler/contract/time.ts';\n");
    // Breaks: a panel on the shell's URL state (what it needs belongs below it), a view on the shell, siblings,
    // a floor reaching up, base on the API, the page past the contract, main.tsx past the shell.
    write('renderer/src/panels/DetailsPanel.tsx', "import { refKey } from '../app/url-state.ts';\n");
    write('renderer/src/query/use-query.ts', "import type { GoTo } from '../app/use-search.ts';\n");
    write('renderer/src/stats/StatsView.tsx', "import { progressText } from '../panels/progress-text.ts';\n");
    write('renderer/src/compare/CompareView.tsx', "import { StatsView } from '../stats/StatsView.tsx';\n");
    write('renderer/src/scope/scoped-answer.ts', "import { FindingsPanel } from '../panels/FindingsPanel.tsx';\n");
    write(
      'renderer/src/timeline/Timeline.tsx',
      "import type { Scope } from '../scope/scope.ts';\nexport const later = () => import('../query/QueryView.tsx');\n",
    );
    write('renderer/src/base/colors.ts', "import { getApi } from '../api/client.ts';\n");
    write('renderer/src/record/RecordDialog.tsx', "import { recordJobs } from '../../../app/record-jobs.ts';\n");
    write('renderer/src/api/extra.ts', "import { WindowLoader } from '../timeline/window-loader.ts';\n");
    write('renderer/src/main.tsx', "import { App } from './app/App.tsx';\nimport { Timeline } from './timeline/Timeline.tsx';\n");
    expect(importBreaks(root)).toEqual([
      'renderer/src/api/extra.ts -> renderer/src/timeline/window-loader.ts',
      'renderer/src/base/colors.ts -> renderer/src/api/client.ts',
      'renderer/src/compare/CompareView.tsx -> renderer/src/stats/StatsView.tsx',
      'renderer/src/main.tsx -> renderer/src/timeline/Timeline.tsx',
      'renderer/src/panels/DetailsPanel.tsx -> renderer/src/app/url-state.ts',
      'renderer/src/query/use-query.ts -> renderer/src/app/use-search.ts',
      'renderer/src/record/RecordDialog.tsx -> app/record-jobs.ts',
      'renderer/src/scope/scoped-answer.ts -> renderer/src/panels/FindingsPanel.tsx',
      'renderer/src/stats/StatsView.tsx -> renderer/src/panels/progress-text.ts',
      'renderer/src/timeline/Timeline.tsx -> renderer/src/query/QueryView.tsx',
      'renderer/src/timeline/Timeline.tsx -> renderer/src/scope/scope.ts',
    ]);
    fs.rmSync(root, { recursive: true, force: true });
  });
});
