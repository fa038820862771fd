// Work on the legacy default stream serializing other streams.
//
// An operation on the legacy default stream (stream 0 / cudaStreamLegacy)
// waits for all earlier work on the device's blocking streams, and later
// work on those streams waits for it: it is a barrier, whatever the
// program meant. Per-thread default streams and non-blocking streams are
// exempt, so they are not flagged.
import { formatDuration } from '../../../contract/time.ts';
import { intersect, lengthOf, subtract, unionOf, unionOfLists, unionOfPairs, type IntervalList } from '../../intervals.ts';
import { IdTable } from '../../../base/id-table.ts';
import { addOp, newEvidence, severityByCost, streamLabel, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';
import { StreamFlags } from '../../../store/enums.ts';

export function legacyDefaultStream(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  const findings: Finding[] = [];
  // The pair sweep costs a pass over every op: only when legacy-stream work exists.
  const legacyIds = [...ctx.streams.values()].filter((s) => s.flags & StreamFlags.LegacyDefault).map((s) => s.id);
  if (legacyIds.length === 0) return findings;
  const isLegacy = IdTable.of(legacyIds, 0);
  for (const id of legacyIds) isLegacy.set(id, 1);
  let legacyWork = false;
  for (let i = 0; i < ops.length && !legacyWork; i++) legacyWork = isLegacy.get(ops.stream[i]!) === 1;
  if (!legacyWork) return findings;
  for (const pairs of ctx.pairs) {
    const legacy = pairs.streamIds.findIndex((s) => (ctx.streams.get(s)?.flags ?? 0) & StreamFlags.LegacyDefault);
    if (legacy < 0) continue;
    const blocking = pairs.streamIds
      .map((s, k) => ({ s, k }))
      .filter(({ s, k }) => k !== legacy && ((ctx.streams.get(s)?.flags ?? 0) & (StreamFlags.NonBlocking | StreamFlags.PerThreadDefault)) === 0);
    if (blocking.length === 0) continue; // alone on the device: nothing to serialize with
    // Cost: time a legacy operation ran while another stream had work
    // queued whose engine (SMs, or the copy engine of its direction) sat
    // idle: that work was held back by the barrier alone. Work waiting for a
    // busy engine would have waited anyway, and is not counted.
    const legacyRunning = pairs.running[legacy]!;
    const blockedIds = new Set(blocking.map(({ s }) => s));
    const held: IntervalList[] = [];
    for (const category of new Set(Array.from(ops.category))) {
      const starts: number[] = [];
      const ends: number[] = [];
      for (let i = 0; i < ops.length; i++) {
        if (ops.device[i] !== pairs.deviceId || ops.category[i] !== category || !blockedIds.has(ops.stream[i]!)) continue;
        if (ctx.issue[i]! < ops.start[i]!) {
          starts.push(ctx.issue[i]!);
          ends.push(ops.start[i]!);
        }
      }
      if (starts.length === 0) continue;
      const engineBusy = unionOf(ops, pairs.deviceId, category);
      const engineIdle = subtract(Float64Array.of(ctx.gpuSpan.start, ctx.gpuSpan.end), engineBusy);
      held.push(intersect(intersect(unionOfPairs(starts, ends), engineIdle), legacyRunning));
    }
    const cost = lengthOf(unionOfLists(held));
    if (cost <= 0) continue; // nothing was held back: the legacy stream's work cost no concurrency
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
      severity: severityByCost(ctx, cost),
      title: `${count} operations on the legacy default stream held back work on ${blocking.length} other stream${blocking.length > 1 ? 's' : ''} (${formatDuration(cost)} with its engine idle)`,
      explanation:
        `${label} is the legacy default stream: each operation on it waits until all earlier work on the device's blocking streams has finished, ` +
        `and work issued to those streams afterwards waits for it. Here, while default-stream work ran, other streams had work queued for ` +
        `${formatDuration(cost)} whose engine was free: it waited for the barrier alone.`,
      fix:
        'Issue this work on the stream of the data it belongs to (pass the stream to the kernel launch / cudaMemcpyAsync), ' +
        'or create the other streams with cudaStreamNonBlocking, or compile with --default-stream per-thread.',
      costNs: cost,
      deviceId: pairs.deviceId,
      pid: ctx.streams.get(legacyId)?.pid ?? null,
      evidence: ev,
      fixId: 'move-default-stream',
    });
  }
  return findings;
}
