// The diagnosis: every rule over one loaded recording, findings sorted by
// what they cost. Pure: a Trace and its Host in, findings out (the CLI, the
// report and the app's findings panel all call this).
import { buildContext, nameItsRank, severityByCost, type Context } from './findings/context.ts';
import { fixLabel } from '../replay/whatif.ts';
import { estimatesHere, type EstimateAnswer, type Estimator } from './whatif-thread.ts';
import { hostModel } from '../replay/replay-host.ts';
import { blockingCopies } from './findings/blocking-copies.ts';
import { blockingReadbacks } from './findings/readback.ts';
import { copyEngineQueue } from './findings/copy-engine.ts';
import { legacyDefaultStream } from './findings/default-stream.ts';
import { deviceFull } from './findings/device-full.ts';
import { eventOrdering } from './findings/event-ordering.ts';
import { hostBlocking } from './findings/host-blocking.ts';
import { idleGaps, lowUtilization } from './findings/idle.ts';
import { launchBound, launchBoundLikely } from './findings/launch-bound.ts';
import { serializedCollectives } from './findings/serialized-collective.ts';
import { singleStream } from './findings/single-stream.ts';
import { rankFindings } from './findings/ranking.ts';
import { stragglerRank } from './findings/straggler.ts';
import type { Finding, FixId } from '../../contract/findings.ts';
import type { ProcessFacts } from '../communication.ts';
import type { Host } from '../host.ts';
import type { ReplayResult } from '../replay/replay.ts';
import type { Trace } from '../trace.ts';
import type { ProgressStep } from '../../contract/progress.ts';

export type Rule = (ctx: Context) => Finding[];

/** Every rule, causes first, then limits and intended behaviour. */
export const RULES: readonly Rule[] = [
  legacyDefaultStream,
  blockingCopies,
  blockingReadbacks,
  hostBlocking,
  singleStream,
  serializedCollectives,
  launchBound,
  idleGaps,
  lowUtilization,
  stragglerRank,
  copyEngineQueue,
  deviceFull,
  eventOrdering,
];

/** A rule as progress names it: its function's name in words (blockingCopies → "blocking copies"). */
function ruleName(rule: Rule): string {
  return rule.name.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
}

/** Below this many operations the order the rules run in costs nothing worth a forecast. */
const REORDER_MIN_OPS = 1 << 16;

/**
 * The order the rules run in; their findings are listed in RULES's order whatever it is. The first fix a rule names
 * starts the what-if thread's replay, which the diagnosis waits for at millions of operations, and the analysing
 * thread maps the replay's pages as it names it (whatif-thread.ts): where a sample of the kernels says the
 * launch-bound rule will name its fix (launchBoundLikely), that rule runs first. At 10 M launches its fix was named
 * ~0.2 s sooner, the pages mapped before the what-if thread began its replay rather than while it did: the bench's
 * analysis 2.23 → 2.17 s (medians of 6 pairs, alternated with the rules in their listed order).
 */
export function runOrder(context: Context): readonly Rule[] {
  return context.trace.ops.length >= REORDER_MIN_OPS && launchBoundLikely(context) ? [launchBound, ...RULES.filter((r) => r !== launchBound)] : RULES;
}

export interface Diagnosis {
  findings: Finding[];
  context: Context;
}

/**
 * `processes`: the recording's process facts (readProcessFacts), for the
 * rules across ranks; none without them. `replays`: where given, filled
 * with the replay of each fix estimated (attribution.ts shares a range's
 * findings out by them, without replaying the fixes again). `onProgress`:
 * told as each rule and each fix's replay begins (contract/progress.ts).
 * `estimator`: where the fixes' estimates are made (whatif-thread.ts: on a
 * second thread, each begun as soon as a rule names its fix); default,
 * here, once the rules are done. Closed before the diagnosis returns.
 */
export function diagnose(
  trace: Trace,
  host: Host,
  processes?: Map<number, ProcessFacts>,
  replays?: Map<FixId, ReplayResult>,
  onProgress?: (step: ProgressStep) => void,
  /** buildContext of the same trace, host and processes, where the caller has it (analyze.ts). */
  context: Context = buildContext(trace, host, processes),
  estimator: Estimator = estimatesHere(trace, host, replays),
): Diagnosis {
  try {
    return estimateFindings(trace, host, context, estimator, ruleFindings(context, estimator, onProgress), onProgress);
  } finally {
    estimator.close();
  }
}

/** What a StagedDiagnosis is made of, each asked when first needed. */
export interface StagedParts {
  trace: Trace;
  host: () => Host;
  context: () => Context;
  estimator: () => Estimator;
  onProgress?: (step: ProgressStep) => void;
}

/**
 * One diagnosis made in two halves (ruleFindings, then estimateFindings) with one estimator, made when first needed
 * and closed once the second half is done or the first fails: analyze.ts's, whose caller may begin it early (report
 * runs the rules before its summaries, the fixes' what-ifs replaying on a second thread meanwhile).
 */
export class StagedDiagnosis {
  #estimator: Estimator | null = null;
  #ruled: Finding[] | null = null;
  #done: Diagnosis | null = null;
  readonly #of: StagedParts;

  constructor(of: StagedParts) {
    this.#of = of;
  }

  /** The rules' findings, their fixes begun. */
  begin(): Finding[] {
    if (this.#ruled) return this.#ruled;
    const context = this.#of.context();
    const estimator = (this.#estimator ??= this.#of.estimator());
    try {
      return (this.#ruled = ruleFindings(context, estimator, this.#of.onProgress));
    } catch (err) {
      estimator.close();
      throw err;
    }
  }

  /** The whole diagnosis, its what-ifs waited for. */
  finish(): Diagnosis {
    if (this.#done) return this.#done;
    const findings = this.begin();
    const estimator = this.#estimator!;
    try {
      return (this.#done = estimateFindings(this.#of.trace, this.#of.host(), this.#of.context(), estimator, findings, this.#of.onProgress));
    } finally {
      estimator.close();
    }
  }
}

/**
 * The diagnosis's first half: every rule's findings, in RULES's order, each fix named begun with `estimator` (on a
 * second thread, the what-ifs then replay while the caller does other work: analyze.ts beginDiagnosis), the rules run
 * in `order` (runOrder). estimateFindings is the rest.
 */
export function ruleFindings(
  context: Context,
  estimator: Estimator,
  onProgress?: (step: ProgressStep) => void,
  order: readonly Rule[] = runOrder(context),
): Finding[] {
  // The rules first: the host model is the what-ifs' (the rules read only which call is outermost:
  // replay-host.ts outerCalls), and on ten million calls it takes ~1 s the findings need not wait for.
  const got = new Map<Rule, Finding[]>();
  order.forEach((rule, k) => {
    onProgress?.({ phase: 'diagnosing', done: k, total: RULES.length, detail: ruleName(rule) });
    const found = rule(context);
    for (const f of found) {
      nameItsRank(context, f);
      // Begun now where a second thread makes them, while the rules after this one run.
      if (f.fixId) estimator.start(f.fixId);
    }
    got.set(rule, found);
  });
  return RULES.flatMap((r) => got.get(r)!);
}

/** The diagnosis's second half: the what-ifs of the fixes `findings` (ruleFindings's) name, each finding's cost by its fix's estimate, ranked. */
export function estimateFindings(
  trace: Trace,
  host: Host,
  context: Context,
  estimator: Estimator,
  findings: Finding[],
  onProgress?: (step: ProgressStep) => void,
): Diagnosis {
  const fixes = new Set(findings.flatMap((f) => (f.fixId ? [f.fixId] : [])));
  // What the rules found, told before the replays, worst first: a copy (the estimates below change the findings in place,
  // and the answer's order among equal costs stays the rules' order).
  // Told with the model's step: built here rather than by the first replay, so that progress names it.
  if (fixes.size > 0) {
    onProgress?.({ phase: 'modelling', done: 0, total: host.calls.length, findings: rankFindings(structuredClone(findings)) });
    if (estimator.modelsHere) hostModel(trace, host);
  }
  // The replay's estimate of the fix each finding names (its fixId, set by
  // the rule); where there is one, it is the finding's cost (the time the
  // run would save), since it counts what the rule's own measure cannot:
  // the overlap the cause prevented.
  const estimates = new Map<FixId, EstimateAnswer>();
  // One estimate per fix, whatever the number of findings naming it (every rank's, every thread's): each says so.
  const sharing = (fix: FixId) => findings.reduce((n, f) => n + (f.fixId === fix ? 1 : 0), 0);
  for (const f of findings) {
    const fix = f.fixId;
    if (!fix) continue;
    if (!estimates.has(fix)) {
      onProgress?.({ phase: 'what-if', done: estimates.size, total: fixes.size, detail: fixLabel(fix) });
      estimates.set(fix, estimator.result(fix));
    }
    const r = estimates.get(fix)!;
    if ('unavailable' in r) {
      // Said, not shown as a saving of 0: the finding keeps its own measure of the cost.
      f.whatIfUnavailable = r.unavailable;
      continue;
    }
    const e = r.estimate;
    f.whatIf = {
      fix: fixLabel(fix),
      measuredNs: e.measuredNs,
      predictedNs: e.predictedNs,
      savedNs: e.savedNs,
      ...(sharing(fix) > 1 ? { findings: sharing(fix) } : {}),
    };
    f.ruleCostNs = f.costNs;
    f.costNs = e.savedNs;
    f.severity = severityByCost(context, f.costNs);
  }
  // Worst first, symptoms after their causes, saying so (findings/ranking.ts).
  return { findings: rankFindings(findings, true), context };
}
