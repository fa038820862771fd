// Work on the legacy default stream serializing other streams.
//
// An operation on the legacy default stream (stream 0 / cudaStreamLegacy)
// waits for all earlier work on the device's blocking streams, and later
// work on those streams waits for it: it is a barrier, whatever the
// program meant. Per-thread default streams and non-blocking streams are
// exempt, so they are not flagged.
import { formatDuration } from '../../time.ts';
import { intersectionLength, unionOfPairs, type IntervalList } from '../intervals.ts';
import { addOp, newEvidence, severityByCost, streamLabel, type Context } from './context.ts';
import type { Finding } from './types.ts';

export function legacyDefaultStream(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  const findings: Finding[] = [];
  // The pair sweep costs a pass over every op: only when legacy-stream work exists.
  let legacyWork = false;
  for (let i = 0; i < ops.length && !legacyWork; i++) legacyWork = ((ctx.streams.get(ops.stream[i]!)?.flags ?? 0) & 1) !== 0;
  if (!legacyWork) return findings;
  for (const pairs of ctx.pairs) {
    const legacy = pairs.streamIds.findIndex((s) => (ctx.streams.get(s)?.flags ?? 0) & 1);
    if (legacy < 0) continue;
    const blocking = pairs.streamIds
      .map((s, k) => ({ s, k }))
      .filter(({ s, k }) => k !== legacy && ((ctx.streams.get(s)?.flags ?? 0) & 6) === 0);
    if (blocking.length === 0) continue; // alone on the device: nothing to serialize with
    // Cost: while legacy work ran, other streams had queued work and could
    // not run; while they ran, legacy work waited. Unions, so that time
    // is counted once however many streams waited at once.
    const othersWaiting = merge(blocking.map(({ k }) => pairs.waiting[k]!));
    const othersRunning = merge(blocking.map(({ k }) => pairs.running[k]!));
    const cost = intersectionLength(othersWaiting, pairs.running[legacy]!) + intersectionLength(pairs.waiting[legacy]!, othersRunning);
    const ev = newEvidence();
    let count = 0;
    const legacyId = pairs.streamIds[legacy]!;
    for (let i = 0; i < ops.length; i++) {
      if (ops.stream[i] === legacyId) {
        addOp(ctx, ev, i);
        count++;
      }
    }
    const label = streamLabel(ctx, legacyId);
    findings.push({
      kind: 'legacy-default-stream',
      severity: cost > 0 ? severityByCost(ctx, cost) : 'info',
      title: `${count} operations on the legacy default stream serialized ${blocking.length} other stream${blocking.length > 1 ? 's' : ''} (${formatDuration(cost)} waiting)`,
      explanation:
        `${label} is the legacy default stream: each operation on it waits until all earlier work on the device's blocking streams has finished, ` +
        `and work issued to those streams afterwards waits for it. Here the other streams had work queued but not running for ${formatDuration(cost)} ` +
        `while default-stream work ran, or the default-stream work waited for them.`,
      fix:
        'Issue this work on the stream of the data it belongs to (pass the stream to the kernel launch / cudaMemcpyAsync), ' +
        'or create the other streams with cudaStreamNonBlocking, or compile with --default-stream per-thread.',
      costNs: cost,
      deviceId: pairs.deviceId,
      pid: ctx.streams.get(legacyId)?.pid ?? null,
      evidence: ev,
    });
  }
  return findings;
}

function merge(lists: IntervalList[]): IntervalList {
  const starts: number[] = [];
  const ends: number[] = [];
  for (const l of lists) for (let k = 0; k < l.length; k += 2) { starts.push(l[k]!); ends.push(l[k + 1]!); }
  return unionOfPairs(starts, ends);
}
