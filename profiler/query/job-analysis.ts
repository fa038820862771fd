// The findings of a job opened from its ranks' summaries (job-query.ts):
// those `streamscope report` of the same files gives (job/of-summaries.ts
// analyzeJobOfSummaries: each rank's communication breakdown, the
// stragglers, the serialized collectives, the straggler rank; then each
// rank's own top findings, where its summary holds them), for the
// whole job or each rank's steady state — the scopes a summary holds. Run
// on the analysis thread (analysis-worker.ts, at its lower priority): at
// 1,024 ranks it reads every summary again and combines them, seconds the
// timeline's windows must not wait for. Evidence, pids and GPUs are in the
// job's ids, so the findings panel's links open the ranks' own rows.
import type { Finding } from '../contract/findings.ts';
import type { Scope, ScopeInfo } from '../contract/scope.ts';
import { analyzeJobOfSummaries } from '../job/of-summaries.ts';
import { summarizeFiles } from '../job/summarize.ts';
import { RecordingFileError } from '../store/recording-error.ts';
import { ApiError, apiErrorOf } from './api-error.ts';

interface Answers {
  findings: Finding[];
  scope: ScopeInfo;
}

/** The jobs' analyses by files and scope, the last few (a page asks for the steady state and the whole). */
const kept = new Map<string, Promise<Answers>>();
const KEEP = 4;

/** The findings (or the scope's description) of the job of `files` (in merge order) over `scope`. */
export async function jobAnswer(files: readonly string[], method: 'findings' | 'scopeInfo', scope: Scope): Promise<Finding[] | ScopeInfo> {
  if (scope.kind !== 'whole' && scope.kind !== 'steady-state')
    throw new ApiError(
      'bad-request',
      `a job opened from its ranks' summaries is analysed over the whole job or each rank's steady state (what a summary holds): for ${scope.kind === 'range' ? 'an NVTX range' : 'a window'}, open one rank's file, or the job merged (--job-view merged)`,
      files[0],
    );
  const kind = scope.kind;
  const key = `${kind}\0${files.join('\0')}`;
  let answers = kept.get(key);
  if (!answers) {
    answers = analyse(files, kind);
    // A failure is asked again next time.
    answers.catch(() => kept.delete(key));
  } else kept.delete(key);
  kept.set(key, answers);
  while (kept.size > KEEP) kept.delete(kept.keys().next().value!);
  const a = await answers;
  return method === 'findings' ? a.findings : a.scope;
}

async function analyse(files: readonly string[], kind: 'whole' | 'steady-state'): Promise<Answers> {
  try {
    const results = await summarizeFiles(files, { scopes: [kind] });
    const job = analyzeJobOfSummaries(results.map((r) => r.summaries[kind]!));
    // After the job's own, each rank's top findings where its summary holds them (`summarize --findings`, the
    // recorder's), named by rank, as the job's report lists them: the panel's links open that rank's rows.
    const ranks = job.rankFindings.flatMap((r) => r.findings ?? []);
    return { findings: [...job.analysis.findings, ...ranks], scope: job.analysis.scope };
  } catch (err) {
    throw apiErrorOf(err, err instanceof RecordingFileError ? err.file : files[0]);
  }
}
