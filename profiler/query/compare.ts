// The compare view's summary of two open recordings: the same pure diff
// `streamscope diff` prints (profiler/compare/diff.ts), over the analyses
// each RecordingQuery already holds, so a comparison after the findings
// were shown costs no second load.
import { diffRecordings } from '../compare/diff.ts';
import type { DiffSummary } from '../contract/diff.ts';
import { STEADY_STATE, type Scope } from '../contract/scope.ts';
import type { RecordingQuery } from './recording-query.ts';

/** Both on the same scope (the steady state of each, by default). */
export function compareRecordings(base: RecordingQuery, other: RecordingQuery, scope: Scope = STEADY_STATE): DiffSummary {
  return diffRecordings(base.path, base.analysis(scope), other.path, other.analysis(scope));
}
