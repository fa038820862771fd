// How far an analysis has got (analysisProgress): what the findings panel
// and the Stats tab say while they wait — "Diagnosing… loading 10.2 M
// operations", "what-ifs 2 of 3" — rather than nothing for a minute. The
// analysis reports phases (analysis/diagnosis/analyze.ts, diagnose.ts), the analysis
// thread keeps the last one per request (query/analysis-channel.ts), and
// the page polls it. Plain data; no Node imports: the renderer bundles it.
import type { Scope } from './api-schema.ts';
import type { Finding } from './findings.ts';

/**
 * The phases of one analysis, in order:
 *  - starting: begun, no phase told yet (an answer computed already is
 *    answered from here: stats of an analysis kept, say);
 *  - loading: the operations and API calls read from the file (natively, on
 *    every core, in one call: `done` grows while it runs where the analysis
 *    runs in a thread, whose owner reads the loader's shared counter; in a
 *    child process it stays 0 until the load is over);
 *  - selecting: start-up found, the scope's operations picked, the trace
 *    and host calls built from them;
 *  - diagnosing: the rules, `done` of `total` run;
 *  - modelling: the replay's model of the host (which call waited for
 *    what, which thread handed over to which), built once the rules are
 *    done, for the what-ifs (the rules read only which calls are
 *    outermost): `total` API calls; its step carries the rules' findings;
 *  - what-if: the replays of the fixes the findings name, `done` of `total`.
 */
export type AnalysisPhase = 'starting' | 'loading' | 'selecting' | 'diagnosing' | 'modelling' | 'what-if';

/** One step an analysis reports (analysis/diagnosis/analyze.ts AnalyzeOptions.onProgress). */
export interface ProgressStep {
  phase: AnalysisPhase;
  /** Units of the phase done and in all: rows (loading), operations (selecting), calls (modelling), rules, fixes. `total` 0: not counted. */
  done: number;
  total: number;
  /** What the unit is, for the label: the rule running, the fix being replayed. */
  detail?: string;
  /**
   * With the modelling step: the rules' findings before their what-ifs
   * (costs as the rules measure them, worst first). On ten million
   * operations the replays take longer than everything before them, and a
   * page shows these meanwhile; the answer replaces them.
   */
  findings?: Finding[];
}

/** What analysisProgress answers: the analysis of a recording running now, and how far it has got. */
export interface AnalysisProgress extends ProgressStep {
  /** Which answer it computes (findings, stats, scopeInfo, iterations, …) … */
  method: string;
  /** … on which scope (null: a method without one: iterations, ranges, dependencies). */
  scope: Scope | null;
  /** Since it began (ms). */
  elapsedMs: number;
  /** Analyses of this recording waiting behind it on the analysis thread. */
  queued: number;
}

/** "1.2 M", "34.5 k", "512": counts in a line of text. */
export function formatCount(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)} M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)} k`;
  return n.toLocaleString('en-US');
}

/** The step in words: "loading 4.1 M of 10.2 M operations and API calls (40%)", "rule 3 of 13 (15%): host blocking", "replaying what-if 1 of 2 (0%): pageable copies pinned". */
export function progressLabel(p: ProgressStep): string {
  const counted = (what: string) =>
    `${what} ${Math.min(p.done + 1, p.total)} of ${p.total} (${Math.floor((100 * p.done) / Math.max(1, p.total))}%)${p.detail ? `: ${p.detail}` : ''}`;
  switch (p.phase) {
    case 'starting':
      return 'starting';
    case 'loading':
      if (!(p.total > 0)) return 'loading operations and API calls';
      return p.done > 0
        ? `loading ${formatCount(p.done)} of ${formatCount(p.total)} operations and API calls (${Math.floor((100 * p.done) / p.total)}%)`
        : `loading ${formatCount(p.total)} operations and API calls`;
    case 'selecting':
      return `selecting the scope among ${formatCount(p.total)} operations`;
    case 'modelling':
      return `modelling ${formatCount(p.total)} API calls for the replay`;
    case 'diagnosing':
      return counted('rule');
    case 'what-if':
      return counted('replaying what-if');
  }
}
