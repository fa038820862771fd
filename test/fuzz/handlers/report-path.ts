// What `streamscope report FILE --json --iterations` reads from one
// recording, in the order the CLI reads it (profiler/cli/streamscope.ts
// cmdReport): the file opened read-only, its processes, the analysis of the
// steady state, the report built and written both ways, the iterations of
// the range it would pick; an error met reading is said about the file as
// the CLI says it (store/read-error.ts). Returns the scope's notes (rows
// left out: store/row-checks.ts), which the report prints under its scope.
import { iterationsOf, pickIterationRange } from '../../../profiler/analysis/diagnosis/iterations.ts';
import { analyze } from '../../../profiler/analysis/diagnosis/analyze.ts';
import { buildReport, formatIterations, formatReport } from '../../../profiler/report/report.ts';
import { openRecording } from '../../../profiler/store/database.ts';
import { readProcesses } from '../../../profiler/store/ranks.ts';
import { recordingReadError } from '../../../profiler/store/read-error.ts';
import type { Scope } from '../../../profiler/contract/scope.ts';

export function readReport(file: string, scope: Scope = { kind: 'steady-state' }): string[] {
  const db = openRecording(file, { readonly: true });
  try {
    const processes = readProcesses(db);
    const analysis = analyze(db, { scope, file });
    const report = buildReport(file, analysis, processes);
    const name = pickIterationRange(db);
    const iterations = name ? iterationsOf(db, analysis.columns, name, 'picked') : null;
    JSON.stringify({ ...report, iterations });
    formatReport(report);
    formatIterations(iterations);
    return report.scope.notes ?? [];
  } catch (err) {
    throw recordingReadError(file, err) ?? err;
  } finally {
    db.close();
  }
}
