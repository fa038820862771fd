// Launch-bound stretches: kernels shorter than the host needs to launch
// them. The GPU finishes each kernel before the next one arrives and idles
// in between, whatever the streams. Batch the work into fewer, larger
// kernels, or capture the sequence in a CUDA graph (one launch for many).
import { formatDuration } from '../../../contract/time.ts';
import { medianInPlace } from '../../select.ts';
import { OpKind } from '../../trace.ts';
import { addOp, newEvidence, severityByCost, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

/** Below this many short kernels, launch overhead does not add up to anything. */
const MIN_KERNELS = 50;

export function launchBound(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  const { calls } = ctx.host;
  const findings: Finding[] = [];
  // Columns in locals: the loops call out (addOp), after which the compiler
  // would reload each one from `ops` on every op.
  const { kind, start, end } = ops;
  const opCall = ctx.host.opCall;
  // Launch costs of one device's kernels at a time. Room for every op: only
  // the pages written are ever touched.
  const launchCost = new Float64Array(ops.length);
  // A call that launched several kernels (a cudaGraphLaunch: every node's
  // kernel has its correlation id) cost each of them its share: a graph's
  // 40 kernels are not each 38 µs "launches".
  const launched = new Int32Array(calls.length);
  for (let i = 0; i < ops.length; i++) if (kind[i] === OpKind.Kernel && opCall[i]! >= 0) launched[opCall[i]!]!++;
  for (const [deviceId] of ctx.busy) {
    const onDevice = ctx.opsOnDevice.get(deviceId)!;
    // Launch cost: the median time the host spent in the launching call.
    let kernels = 0;
    let n = 0;
    // Indexed loops, not for-of: at 10 M ops each for-of pass over the
    // device's Int32Array took ~0.22 s, an indexed one ~0.13 s.
    for (let j = 0; j < onDevice.length; j++) {
      const i = onDevice[j]!;
      if (kind[i] !== OpKind.Kernel) continue;
      kernels++;
      const k = opCall[i]!;
      if (k >= 0) launchCost[n++] = (calls.end[k]! - calls.start[k]!) / launched[k]!;
    }
    if (kernels < MIN_KERNELS || n < MIN_KERNELS) continue;
    const launch = medianInPlace(launchCost.subarray(0, n));
    // Idle time right before a short kernel: the GPU was waiting for it to be launched.
    let idle = 0;
    let short = 0;
    let last = -Infinity; // end of the latest op on the device so far
    const ev = newEvidence();
    for (let j = 0; j < onDevice.length; j++) {
      const i = onDevice[j]!;
      if (kind[i] === OpKind.Kernel) {
        const d = end[i]! - start[i]!;
        const gap = start[i]! - last;
        if (d < launch && gap > 0 && gap < 10 * launch) {
          short++;
          idle += gap;
          if (short <= 200) addOp(ctx, ev, i);
        }
      }
      last = Math.max(last, end[i]!);
    }
    if (short < MIN_KERNELS || short < kernels / 2) continue;
    findings.push({
      kind: 'launch-bound',
      severity: severityByCost(ctx, idle),
      title: `${short} kernels were shorter than their launch (${formatDuration(launch)}): the GPU idled ${formatDuration(idle)} between them`,
      explanation:
        `Each launch call took the host about ${formatDuration(launch)}, longer than the kernels it launched ran, so the GPU finished each kernel ` +
        'before the next was issued. More streams do not help: the host is the bottleneck.',
      fix: 'Fuse small kernels or give each more work; capture repeated sequences in a CUDA graph (torch.cuda.graphs / cudaGraphLaunch) so one launch issues many kernels.',
      costNs: idle,
      deviceId,
      pid: null,
      evidence: ev,
      fixId: 'cuda-graph',
    });
  }
  return findings;
}
