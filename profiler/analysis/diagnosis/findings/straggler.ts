// One rank reaches the NCCL collectives last, again and again, and every
// other rank sits inside them waiting (issue 13). Which rank, and whether
// it is one rather than chance, is the straggler analysis's
// (analysis/diagnosis/stragglers.ts: the matching and the thresholds); this rule
// only says it as a finding.
//
// Cost: the time the other ranks waited for it, summed over them (GPU
// time, as the communication breakdown adds ranks up). Severity: by the
// mean wait of one other rank against the GPU span, so a 64-rank job is
// not an error for a wait each rank hardly felt.
import { participantName, type Stragglers } from '../../../contract/stragglers.ts';
import { formatDuration, type Ns } from '../../../contract/time.ts';
import type { Finding } from '../../../contract/findings.ts';
import { stragglersOfContext } from '../stragglers.ts';
import { newEvidence, severityInSpan, type Context } from './context.ts';

export function stragglerRank(ctx: Context): Finding[] {
  return stragglerFindings(stragglersOfContext(ctx), ctx.gpuSpan);
}

/** The finding of the stragglers `s`, severity against `gpuSpan` (the scope's: Context.gpuSpan). */
export function stragglerFindings(s: Stragglers, gpuSpan: { start: Ns; end: Ns }): Finding[] {
  const st = s.straggler;
  if (!st) return [];
  const name = participantName(st);
  const others = s.ranks.length - 1;
  // Evidence: every rank's kernel of the worst instances it was last at, which is where to look on the timeline.
  const ev = newEvidence();
  let from = Infinity;
  let to = -Infinity;
  const skews: number[] = [];
  for (const inst of s.worst) {
    const last = inst.ranks[inst.last]!;
    if (last.pid !== st.pid || last.deviceId !== st.deviceId) continue;
    skews.push(inst.skewNs);
    for (const k of inst.ranks) {
      ev.kernels.push(k.kernelId);
      from = Math.min(from, k.startNs);
      to = Math.max(to, k.endNs);
    }
  }
  if (Number.isFinite(from)) ev.window = { start: from, end: to };
  const mine = s.ranks.find((r) => r.pid === st.pid && r.deviceId === st.deviceId)!;
  const skew =
    mine.meanSkewWhenLastNs !== null
      ? `, ${formatDuration(mine.meanSkewWhenLastNs)} after the first on average (at most ${formatDuration(mine.maxSkewWhenLastNs!)})`
      : '';
  return [
    {
      kind: 'straggler-rank',
      severity: severityInSpan(gpuSpan, st.causedWaitNs / Math.max(1, others)),
      title: `${name[0]!.toUpperCase()}${name.slice(1)} arrives last at ${st.lastCount} of ${st.instances} NCCL collectives: the other ${others > 1 ? `${others} ranks` : 'rank'} waited ${formatDuration(st.causedWaitNs)} for it`,
      explanation:
        `Matched across ${s.ranks.length} ranks (the n-th collective of a kind on each rank's stream is the same instance), ${name} started its collective kernel last in ${st.lastCount} of ${st.instances} instances${skew}. ` +
        `A collective cannot finish before its last rank arrives, so the others sat in it for ${formatDuration(st.causedWaitNs)} in total, ${(st.waitShare * 100).toFixed(0)}% of their time in these collectives. ` +
        `Were every rank equally likely to be last, this one would be last that often with probability ${st.chance < 1e-6 ? '< 1e-6' : st.chance.toPrecision(2)}.`,
      fix:
        `Find why ${name} is late: what its host does before each collective (its CUDA API and NVTX rows before the NCCL kernel: data loading, CPU preprocessing, Python work, a synchronize), ` +
        "a slower or throttled GPU (its compute kernels against the other ranks'), or more work in its shard (uneven batches or sequence lengths); balance the work or fix the slow part.",
      costNs: st.causedWaitNs,
      deviceId: st.deviceId,
      pid: st.pid,
      evidence: ev,
    },
  ];
}
