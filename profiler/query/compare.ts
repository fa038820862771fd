// The compare view's summary of two open recordings: the same pure diff
// `streamscope diff` prints (profiler/compare/diff.ts), over the analyses
// each RecordingQuery already holds, so a comparison after the findings
// were shown costs no second load.
import { diffRecordings, type DiffSummary } from '../compare/diff.ts';
import type { RecordingQuery } from './recording-query.ts';

export function compareRecordings(base: RecordingQuery, other: RecordingQuery): DiffSummary {
  return diffRecordings(base.path, base.analysis(), other.path, other.analysis());
}
