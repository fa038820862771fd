// Sandbox handler of the recording-report target: what `streamscope
// report` reads of one recording (report-path.ts), on the steady state or
// the whole recording.
import { ScopeError } from '../../../profiler/analysis/scope.ts';
import { RecordingFileError } from '../../../profiler/store/recording-error.ts';
import { outcomeOf, type Outcome } from '../lib/outcome.ts';
import { readReport } from './report-path.ts';

export interface ReportInput {
  file: string;
  whole: boolean;
}

export async function handle({ file, whole }: ReportInput): Promise<Outcome> {
  try {
    return { ok: true, notes: readReport(file, whole ? { kind: 'whole' } : { kind: 'steady-state' }) };
  } catch (err) {
    return outcomeOf(err, (e) => e instanceof RecordingFileError || e instanceof ScopeError);
  }
}
