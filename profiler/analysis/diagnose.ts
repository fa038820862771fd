// The diagnosis: every rule over one loaded recording, findings sorted by
// what they cost. Pure: a Trace and its Host in, findings out (the CLI, the
// report and the app's findings panel all call this).
import { buildContext, severityByCost, type Context } from './findings/context.ts';
import { estimate, fixForFamily, FIX_LABEL, type Estimate, type Fix } from './whatif.ts';
import { blockingCopies } from './findings/blocking-copies.ts';
import { copyEngineQueue } from './findings/copy-engine.ts';
import { legacyDefaultStream } from './findings/default-stream.ts';
import { deviceFull } from './findings/device-full.ts';
import { eventOrdering } from './findings/event-ordering.ts';
import { hostBlocking } from './findings/host-blocking.ts';
import { idleGaps, lowUtilization } from './findings/idle.ts';
import { launchBound } from './findings/launch-bound.ts';
import { singleStream } from './findings/single-stream.ts';
import { SEVERITY_RANK, type Finding } from '../contract/findings.ts';
import type { Host } from './host.ts';
import type { Trace } from './trace.ts';

export type Rule = (ctx: Context) => Finding[];

/** Every rule, causes first, then limits and intended behaviour. */
export const RULES: readonly Rule[] = [
  legacyDefaultStream,
  blockingCopies,
  hostBlocking,
  singleStream,
  launchBound,
  idleGaps,
  lowUtilization,
  copyEngineQueue,
  deviceFull,
  eventOrdering,
];

export interface Diagnosis {
  findings: Finding[];
  context: Context;
}

/** Which what-if fix removes the cause a finding names (a host-blocking call: by the family of its calls). */
function fixFor(f: Finding): Fix | null {
  if (f.kind === 'legacy-default-stream') return 'move-default-stream';
  if (f.kind === 'pageable-async-copy') return 'pin-pageable';
  if (f.kind === 'host-blocking-call' && f.callFamily) return fixForFamily(f.callFamily);
  return null;
}

export function diagnose(trace: Trace, host: Host): Diagnosis {
  const context = buildContext(trace, host);
  const findings = RULES.flatMap((rule) => rule(context));
  // The replay's estimate for each cause it can remove; where there is one,
  // it is the finding's cost (the time the run would save), since it counts
  // what the rule's own measure cannot: the overlap the cause prevented.
  const estimates = new Map<Fix, Estimate | null>();
  for (const f of findings) {
    const fix = fixFor(f);
    if (!fix) continue;
    if (!estimates.has(fix)) estimates.set(fix, estimate(context, fix));
    const e = estimates.get(fix);
    if (!e) continue;
    f.whatIf = { fix: FIX_LABEL[fix], measuredNs: e.measuredNs, predictedNs: e.predictedNs, savedNs: e.savedNs };
    f.costNs = e.savedNs;
    f.severity = severityByCost(context, f.costNs);
  }
  findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.costNs - a.costNs);
  return { findings, context };
}
