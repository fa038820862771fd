// The order findings are listed in: worst first — by severity, then by
// cost — and, within one severity, symptoms after their causes. Two rules
// measure the GPU's idle time without naming what kept it idle (idle.ts:
// gaps, windows under half busy); others find a cause and charge it the GPU idle time that followed
// (a synchronize, a read of a value, a synchronous copy, launches longer than
// their kernels). Ranked by cost alone, a symptom measured across a whole
// window outranked the cause that made it whenever its windows crossed a
// threshold: the same program recorded twice on an H200 (the corpus's
// torch-synchronize-in-loop, round 2) led with "GPU 0 under 50% busy in 11
// of 20 windows" (63 ms idle, no fix) above the cudaDeviceSynchronize that
// the GPU idled 96 ms after, where the first recording (8 of 20 windows,
// so an info) led with the synchronize. Within one severity, a symptom now
// follows the causes that are charged most of its idle time, and says so.
// Its severity is its own: `check --fail-on` gates on it as before.
import { formatDuration } from '../../../contract/time.ts';
import { SEVERITY_RANK, type Finding, type FindingKind } from '../../../contract/findings.ts';

/** Findings that measure GPU idle time and name no cause of it (they have no fix of their own). */
const SYMPTOMS: ReadonlySet<FindingKind> = new Set(['low-utilization', 'gpu-idle-gap']);

/** Causes whose rule measure (ruleCostNs, or costNs before a what-if replaced it) is the GPU idle time charged to them. */
const IDLE_CAUSES: ReadonlySet<FindingKind> = new Set(['host-blocking-call', 'blocking-readback', 'sync-copy', 'sync-memset', 'launch-bound']);

/** A symptom is explained where its device's causes are charged at least this share of its idle time. */
const EXPLAINED_SHARE = 0.5;

/** The GPU idle a cause's rule charged it with. */
const chargedIdle = (f: Finding) => f.ruleCostNs ?? f.costNs;

/**
 * `findings` worst first (in place: severity, then cost; equal ones keep
 * their order), then symptoms after their causes (symptomsAfterCauses). The
 * diagnosis's list, its early list, and each range instance's share of it.
 */
export function rankFindings(findings: Finding[], say = false): Finding[] {
  return symptomsAfterCauses(
    findings.sort((a, b) => SEVERITY_RANK[b.severity] - SEVERITY_RANK[a.severity] || b.costNs - a.costNs),
    say,
  );
}

/**
 * `findings` (sorted worst first) with each explained symptom moved after
 * the last of its device's idle causes of the same severity that it
 * outranked. With `say`, an explained symptom's explanation also names the
 * idle time charged to those causes (once: the diagnosis's final list), and
 * says they are listed before it where they all are (a cause of a lower
 * severity stays below a symptom of a higher one).
 */
function symptomsAfterCauses(findings: Finding[], say: boolean): Finding[] {
  const out = [...findings];
  for (const symptom of findings) {
    if (!SYMPTOMS.has(symptom.kind) || symptom.deviceId === null || !(symptom.costNs > 0)) continue;
    const causes = out.filter((f) => IDLE_CAUSES.has(f.kind) && f.deviceId === symptom.deviceId);
    const charged = causes.reduce((sum, f) => sum + chargedIdle(f), 0);
    if (charged < EXPLAINED_SHARE * symptom.costNs) continue;
    const at = out.indexOf(symptom);
    const last = out.findLastIndex((f, k) => k > at && f.severity === symptom.severity && causes.includes(f));
    if (last >= 0) {
      // Out of its place, then back in right after that cause (now one place earlier).
      out.splice(at, 1);
      out.splice(last, 0, symptom);
    }
    if (say) {
      const before = causes.every((c) => out.indexOf(c) < out.indexOf(symptom));
      const kinds = [...new Set(causes.map((f) => f.kind))].join(', ');
      symptom.explanation += ` The causes found on this GPU${before ? ', listed before it,' : ''} are charged ${formatDuration(charged)} of GPU idle time (${kinds}).`;
    }
  }
  return out;
}
