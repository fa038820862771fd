// Collectives serialized behind the computation (issue 13): groups of NCCL
// collectives that waited for a whole stretch of computation
// (collective-groups.ts) and then ran with nothing computed beside them.
// A data-parallel loop written by hand does this: the backward pass, then
// every all-reduce, then the next step, communication exposed in full.
// The fix is DDP's: each bucket's collective issued as soon as its data is
// ready, on a side stream, hidden behind what is still being computed; the
// what-if (whatif.ts: overlap-collectives) replays the run so.
//
// One finding per process (rank) and GPU. The cost, until the diagnosis
// replaces it by the what-if's saving, is the exposed communication time of
// those groups. Groups of one collective are left alone: issued after all
// of the computation, it is one bucket, and bucketing it is a change of
// the program the replay cannot guess (how to split it).
import { formatDuration, type Ns } from '../../../contract/time.ts';
import { canOverlap, collectiveDependencies, type CollectiveGroup } from '../../replay/collective-groups.ts';
import { commKernelLabels } from '../../communication.ts';
import { intersectionLength, unionOfPairs, type IntervalList } from '../../intervals.ts';
import { OpKind } from '../../trace.ts';
import { addOp, gpuOrdinalName, newEvidence, severityInSpan, streamLabel, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

/** Communication hidden behind computation beyond this share is not "serialized". */
const MAX_HIDDEN_SHARE = 0.5;
/** Exposed time below both of these is not worth a finding. */
const MIN_EXPOSED_NS = 50_000;
const MIN_EXPOSED_SHARE = 0.01;

/** Per device: when compute kernels (not communication) ran. */
function computeBusy(ctx: Context, isComm: Uint8Array): Map<number, IntervalList> {
  const { ops } = ctx.trace;
  const starts = new Map<number, number[]>();
  const ends = new Map<number, number[]>();
  for (let i = 0; i < ops.length; i++) {
    if (ops.kind[i] !== OpKind.Kernel || isComm[i]) continue;
    const d = ops.device[i]!;
    let s = starts.get(d);
    if (!s) {
      starts.set(d, (s = []));
      ends.set(d, []);
    }
    s.push(ops.start[i]!);
    ends.get(d)!.push(ops.end[i]!);
  }
  const busy = new Map<number, IntervalList>();
  for (const [d, s] of starts) busy.set(d, unionOfPairs(s, ends.get(d)!));
  return busy;
}

export function serializedCollectives(ctx: Context): Finding[] {
  return serializedCollectiveFindings(serializedCollectiveCandidates(ctx), ctx.gpuSpan);
}

/**
 * The findings of one process and GPU each, before the test that needs the
 * GPU span (exposed time below MIN_EXPOSED_NS counts only if it is a
 * share of the span that matters) and their severity: a job analysed rank by
 * rank finds them per rank and knows the span only from every rank.
 */
export interface SerializedCollectiveCandidate {
  exposedNs: Ns;
  /** The finding, its severity 'info' until serializedCollectiveFindings sets it. */
  finding: Finding;
}

/** Candidates (see above) and the GPU span (Context.gpuSpan) → the findings. */
export function serializedCollectiveFindings(candidates: SerializedCollectiveCandidate[], gpuSpan: { start: Ns; end: Ns }): Finding[] {
  const span = gpuSpan.end - gpuSpan.start;
  return candidates
    .filter((c) => c.exposedNs >= MIN_EXPOSED_NS || c.exposedNs >= MIN_EXPOSED_SHARE * span)
    .map((c) => ({ ...c.finding, severity: severityInSpan(gpuSpan, c.exposedNs) }));
}

export function serializedCollectiveCandidates(ctx: Context): SerializedCollectiveCandidate[] {
  const { trace, host } = ctx;
  const { ops } = trace;
  const labels = commKernelLabels(trace);
  if (labels.size === 0) return [];
  const { groups, isComm } = collectiveDependencies(trace, host);
  const spread = groups.filter(canOverlap);
  if (spread.length === 0) return [];
  const busy = computeBusy(ctx, isComm);

  const byRank = new Map<
    string,
    { pid: number; device: number; groups: CollectiveGroup[]; commNs: number; hiddenNs: number; collectives: number; kernels: number }
  >();
  for (const g of spread) {
    const key = `${g.pid}:${g.device}`;
    let r = byRank.get(key);
    if (!r) byRank.set(key, (r = { pid: g.pid, device: g.device, groups: [], commNs: 0, hiddenNs: 0, collectives: 0, kernels: 0 }));
    r.groups.push(g);
    r.collectives += g.collectives.length;
    r.kernels += g.segmentKernels.length;
    const compute = busy.get(g.device) ?? new Float64Array(0);
    for (const k of g.collectives) {
      const a = ops.start[k]!;
      const b = ops.end[k]!;
      if (b <= a) continue;
      r.commNs += b - a;
      r.hiddenNs += intersectionLength(Float64Array.of(a, b), compute);
    }
  }

  const candidates: SerializedCollectiveCandidate[] = [];
  for (const r of byRank.values()) {
    const exposedNs = r.commNs - r.hiddenNs;
    if (r.commNs <= 0 || r.hiddenNs / r.commNs > MAX_HIDDEN_SHARE) continue;
    const facts = ctx.processes.get(r.pid);
    const who = facts?.rank != null ? `Rank ${facts.rank} (pid ${r.pid})` : `Process ${r.pid}`;
    const names = new Set(r.groups.flatMap((g) => g.collectives.map((k) => labels.get(ops.detail[k]!)?.collective ?? 'other')));
    const what = names.size === 1 ? `${[...names][0]}s` : 'collectives';
    const ev = newEvidence();
    for (const g of r.groups) for (const k of g.collectives) addOp(ctx, ev, k);
    const first = r.groups[0]!;
    const perGroup = Math.round(r.collectives / r.groups.length);
    const kernelsPerGroup = Math.round(r.kernels / r.groups.length);
    const where = first.sameStream
      ? `on the computation's own ${streamLabel(ctx, ops.stream[first.collectives[0]!]!)}`
      : `on ${streamLabel(ctx, ops.stream[first.collectives[0]!]!)}, after an event wait on the computation's ${streamLabel(ctx, ops.stream[first.gate]!)}`;
    const finding: Finding = {
      kind: 'serialized-collective',
      severity: 'info',
      title: `${who}: ${r.collectives} ${what} on ${gpuOrdinalName(ctx, r.device)} waited for all the computation before them and ran alone (${formatDuration(exposedNs)} exposed)`,
      explanation:
        `${r.groups.length === 1 ? 'One group' : `${r.groups.length} groups`} of about ${perGroup} ${what}, each issued ${where} after the last of about ${kernelsPerGroup} kernels, ` +
        `ran with ${Math.round((100 * r.hiddenNs) / r.commNs)}% of their ${formatDuration(r.commNs)} hidden behind computation. ` +
        `Each waited for all of that computation, though the data of the first of them is usually ready earlier (as gradients are during a backward pass), ` +
        `and what came after them waited for them: the communication ran on the critical path instead of beside the computation.`,
      fix:
        "Issue each bucket's collective as soon as its data is ready, on a side stream: `side.wait_stream(torch.cuda.current_stream())`, then `work = dist.all_reduce(t, async_op=True)` under `with torch.cuda.stream(side):`, and `work.wait()` only where the result is used. " +
        'Or wrap the model in DistributedDataParallel or FSDP, which bucket the gradients and overlap their all-reduce or reduce-scatter with the backward pass.',
      costNs: exposedNs,
      deviceId: r.device,
      pid: r.pid,
      evidence: ev,
      fixId: 'overlap-collectives',
    };
    candidates.push({ exposedNs, finding });
  }
  return candidates;
}
