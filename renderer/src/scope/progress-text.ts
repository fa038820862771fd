// What a panel waiting for an analysis says after its "Diagnosing…" or
// "Loading statistics…": how far the analysis has got (contract/progress.ts
// progressLabel), whose it is when another scope's runs ahead of it, and how
// long the panel has waited. Pure, for the findings panel and the Stats tab.
import { progressLabel } from '../../../profiler/contract/progress.ts';
import { scopeKey, scopeTitle, type Scope } from './scope.ts';
import type { Waiting } from './analysis-progress.ts';

/** What the analyses without a scope compute, in words. */
const UNSCOPED: Record<string, string> = {
  iterations: 'the iterations',
  ranges: 'the NVTX ranges',
  waitSpans: "the timeline's event waits",
  dependencies: "an item's dependencies",
  concurrency: 'the concurrency track',
  sql: 'an SQL query',
};

/** "loading 20.0 M operations and API calls · 3 s", "waiting for the analysis of whole recording (replaying what-if 1 of 2 …) · 9 s", or "" before a second has passed with nothing to say. */
export function progressText(waiting: Waiting | null, scope: Scope): string {
  if (!waiting) return '';
  const seconds = Math.floor((waiting.at - waiting.since) / 1000);
  const elapsed = seconds >= 1 ? `${seconds} s` : '';
  const p = waiting.progress;
  if (!p) return elapsed;
  const ours = p.scope !== null && scopeKey(p.scope) === scopeKey(scope);
  const whose = p.scope ? `the analysis of ${scopeTitle(p.scope).toLowerCase()}` : (UNSCOPED[p.method] ?? p.method);
  const what = ours ? progressLabel(p) : `waiting for ${whose} (${progressLabel(p)})`;
  return elapsed ? `${what} · ${elapsed}` : what;
}
