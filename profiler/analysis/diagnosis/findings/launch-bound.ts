// Launch-bound stretches: kernels shorter than the host needs to launch
// them. The GPU finishes each kernel before the next one arrives and idles
// in between, whatever the streams. Batch the work into fewer, larger
// kernels, or capture the sequence in a CUDA graph (one launch for many).
import { formatDuration } from '../../../contract/time.ts';
import { launchGapsNatively } from '../../../native/addon.ts';
import { addOp, newEvidence, severityByCost, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';
import { OpKind } from '../../trace.ts';

/** Below this many short kernels, launch overhead does not add up to anything. */
const MIN_KERNELS = 50;
/** A short kernel counts where the GPU idled before it, for less than this many launches (a longer gap is something else). */
const GAP_LAUNCHES = 10;
/** The short kernels a finding lists. */
const EVIDENCE_KERNELS = 200;

export function launchBound(ctx: Context): Finding[] {
  const { ops } = ctx.trace;
  const { calls } = ctx.host;
  const findings: Finding[] = [];
  const devices = [...ctx.busy.keys()];
  // Its passes over every op, native (native/addon/src/launch_gaps.cc: ~0.3 s of JavaScript at 10 M kernels).
  const gaps = launchGapsNatively({
    ops: ops.length,
    calls: calls.length,
    kind: ops.kind,
    start: ops.start,
    end: ops.end,
    opCall: ctx.host.opCall,
    callStart: calls.start,
    callEnd: calls.end,
    onDevice: devices.map((d) => ctx.opsOnDevice.get(d)!),
    minKernels: MIN_KERNELS,
    gapFactor: GAP_LAUNCHES,
    evidence: EVIDENCE_KERNELS,
  });
  devices.forEach((deviceId, x) => {
    const g = gaps[x]!;
    if (!('launchNs' in g)) return; // too few kernels or launches to measure
    const { kernels, launchNs: launch, short, idleNs: idle, evidence } = g;
    if (short < MIN_KERNELS || short < kernels / 2) return;
    const ev = newEvidence();
    for (const i of evidence) addOp(ctx, ev, i);
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
  });
  return findings;
}

/** The kernels the forecast samples, evenly spaced in start order. */
const FORECAST_SAMPLES = 4096;

/**
 * Whether the launch-bound rule is likely to name its fix, from a sample of the kernels: at least half of them shorter
 * than the sample's median launch call (what the rule measures of every kernel, ~0.1 s at 10 M; its other condition,
 * the GPU idle before each, left out). For the diagnosis to run the rule first where it will likely name its fix
 * (diagnose.ts runOrder). Of the corpus's 56 recordings (test/fixtures/corpus): true for each of the 12 the rule names
 * its fix in, and for 5 more (kernels that short, back to back: a CUDA graph's).
 */
export function launchBoundLikely(ctx: Context): boolean {
  const { kind, start, end, length: n } = ctx.trace.ops;
  const { opCall, calls } = ctx.host;
  const step = Math.max(1, Math.floor(n / FORECAST_SAMPLES));
  const kernels: number[] = [];
  const launches: number[] = [];
  for (let i = 0; i < n; i += step) {
    const k = opCall[i]!;
    if (kind[i] !== OpKind.Kernel || k < 0) continue;
    kernels.push(end[i]! - start[i]!);
    launches.push(calls.end[k]! - calls.start[k]!);
  }
  if (kernels.length < MIN_KERNELS) return false;
  const launch = launches.sort((a, b) => a - b)[launches.length >> 1]!;
  return kernels.filter((d) => d < launch).length >= kernels.length / 2;
}
