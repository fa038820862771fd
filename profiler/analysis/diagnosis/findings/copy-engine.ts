// Same-direction copies queued on one copy engine: a device has one engine
// per direction in practice, so two HtoD copies on different streams run
// one after the other even when both were issued. A limit of the hardware,
// not a bug: reported as info, so that time spent waiting for the engine is
// not mistaken for a missing overlap.
import { formatDuration } from '../../../contract/time.ts';
import { OpCategory, OpKind } from '../../trace.ts';
import { addOp, newEvidence, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

/** A copy starting this soon after another ended on the same engine was waiting for it. */
const BACK_TO_BACK_NS = 5_000;

export function copyEngineQueue(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  const findings: Finding[] = [];
  const { kind } = ops;
  for (const [deviceId] of ctx.busy) {
    const onDevice = ctx.opsOnDevice.get(deviceId)!;
    // The device's copies, found in one pass over its ops and then walked
    // once per direction: two passes over every op of the device, kernels
    // and all, took ~0.2 s at 10 M operations (156 k of them copies).
    const copyOps: number[] = [];
    for (let j = 0; j < onDevice.length; j++) if (kind[onDevice[j]!] === OpKind.Memcpy) copyOps.push(onDevice[j]!);
    for (const [category, label] of [
      [OpCategory.HtoD, 'host-to-device'],
      [OpCategory.DtoH, 'device-to-host'],
    ] as const) {
      let lastEnd = -Infinity;
      let lastStream = -1;
      let lastStart = 0;
      let waited = 0;
      let count = 0;
      const ev = newEvidence();
      for (const i of copyOps) {
        if (ops.category[i] !== category) continue;
        const s = ops.start[i]!;
        if (ops.stream[i] !== lastStream && ctx.issue[i]! < lastEnd && s >= lastEnd - 1 && s - lastEnd < BACK_TO_BACK_NS) {
          waited += s - Math.max(ctx.issue[i]!, lastStart);
          count++;
          addOp(ctx, ev, i);
        }
        if (ops.end[i]! > lastEnd) {
          lastEnd = ops.end[i]!;
          lastStream = ops.stream[i]!;
          lastStart = s;
        }
      }
      const span = ctx.gpuSpan.end - ctx.gpuSpan.start;
      if (count === 0 || waited < 0.01 * span) continue;
      findings.push({
        kind: 'copy-engine-queue',
        severity: 'info',
        title: `${count} ${label} copies waited ${formatDuration(waited)} for the copy engine (a hardware limit)`,
        explanation:
          `Copies of one direction share one copy engine, so copies issued on different streams ran back to back. ` +
          `They overlap kernels and copies of the other direction, not each other: this is the expected limit, not a serialization bug.`,
        fix: '',
        costNs: waited,
        deviceId,
        pid: null,
        evidence: ev,
      });
    }
  }
  return findings;
}
