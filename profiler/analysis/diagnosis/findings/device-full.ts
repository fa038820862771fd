// Kernels that fill the device: a kernel whose grid needs more blocks than
// all SMs can hold at once leaves no room for a kernel of another stream,
// so they run one after the other however many streams there are. A limit:
// reported as info, with how long the other streams' kernels waited.
import { formatDuration } from '../../../contract/time.ts';
import { blocksPerSm } from '../../occupancy.ts';
import { OpKind } from '../../trace.ts';
import { addOp, newEvidence, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

export function deviceFull(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  const findings: Finding[] = [];
  for (const [deviceId, dev] of ctx.devices) {
    if (!dev.smCount) continue;
    let waited = 0;
    let count = 0;
    const ev = newEvidence();
    let prev = -1; // the latest-ending kernel so far
    // Columns in locals: the loop calls out (addOp), after which the
    // compiler would reload each one from `ops` on every op.
    const { kind, stream, start, end } = ops;
    const issue = ctx.issue;
    // An indexed loop, not for-of (launch-bound.ts says why).
    const onDevice = ctx.opsOnDevice.get(deviceId) ?? new Int32Array(0);
    for (let j = 0; j < onDevice.length; j++) {
      const i = onDevice[j]!;
      if (kind[i] !== OpKind.Kernel) continue;
      if (prev >= 0 && stream[i] !== stream[prev] && issue[i]! < start[prev]! && start[i]! >= end[prev]! - 1) {
        const capacity = dev.smCount * blocksPerSm(dev, ops.blockThreads[prev]!, ops.registers[prev]!, ops.sharedBytes[prev]!);
        if (ops.blocks[prev]! >= capacity) {
          waited += start[i]! - Math.max(issue[i]!, start[prev]!);
          count++;
          addOp(ctx, ev, prev);
          addOp(ctx, ev, i);
        }
      }
      if (prev < 0 || end[i]! > end[prev]!) prev = i;
    }
    const span = ctx.gpuSpan.end - ctx.gpuSpan.start;
    if (count === 0 || waited < 0.01 * span) continue;
    findings.push({
      kind: 'device-full',
      severity: 'info',
      title: `${count} kernels waited ${formatDuration(waited)} behind kernels that filled all ${dev.smCount} SMs (a limit)`,
      explanation:
        'A kernel whose grid has at least as many blocks as the SMs can hold at once occupies the whole device until its last wave; ' +
        'kernels of other streams start when it drains. More streams cannot make such kernels overlap.',
      fix: '',
      costNs: waited,
      deviceId,
      pid: null,
      evidence: ev,
    });
  }
  return findings;
}
