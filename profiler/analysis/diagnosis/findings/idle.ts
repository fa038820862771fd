// GPU idle gaps and low-utilization windows, each attributed to what the
// host was doing meanwhile. Nsight Systems' gpu_gaps rule reports gaps
// above a fixed threshold (500 ms by default) and gpu_time_util windows
// under 50% utilization; fixed thresholds miss everything in a short run and
// drown long ones, so here both scale with the run: a gap counts from 2% of
// the device's span (at least 20 µs), and the span is cut into 20 windows.
import { formatDuration } from '../../../contract/time.ts';
import { busyWithin, gapsOf } from '../../intervals.ts';
import { addCall, callFamilies, gpuName, nameOfCall, newEvidence, type Context } from './context.ts';
import type { Finding, Severity } from '../../../contract/findings.ts';

const GAP_SHARE = 0.02;
const MIN_GAP_NS = 20_000;
const WINDOWS = 20;
const LOW_UTILIZATION = 0.5;

export function idleGaps(ctx: Context): Finding[] {
  const findings: Finding[] = [];
  for (const [deviceId, busy] of ctx.busy) {
    const span = ctx.deviceSpan.get(deviceId);
    if (!span) continue;
    const length = span.end - span.start;
    const gaps = gapsOf(busy, Math.max(MIN_GAP_NS, GAP_SHARE * length));
    if (gaps.length === 0) continue;
    const total = gaps.reduce((t, g) => t + g.end - g.start, 0);
    // What the host was doing: the API calls in progress during each gap,
    // of the processes that ran work on this GPU (a job's other ranks were
    // not what kept it waiting).
    const pids = processesOn(ctx, deviceId);
    const ev = newEvidence();
    const during = new Map<string, number>();
    for (const g of gaps) {
      const k = callDuring(ctx, (g.start + g.end) / 2, pids);
      // A module load inside the gap: the host was compiling or loading
      // kernels (JIT: Numba, Triton, torch.compile compile at first launch).
      const load = moduleLoadIn(ctx, g.start, g.end, pids);
      const what =
        load >= 0
          ? `compiling/loading kernels (${nameOfCall(ctx, load)} before the next launch)`
          : k >= 0
            ? nameOfCall(ctx, k)
            : 'host code between CUDA calls';
      during.set(what, (during.get(what) ?? 0) + g.end - g.start);
      if (k >= 0) addCall(ctx, ev, k);
      ev.window.start = ev.window.end === 0 ? g.start : Math.min(ev.window.start, g.start);
      ev.window.end = Math.max(ev.window.end, g.end);
    }
    const causes = [...during]
      .sort((a, b) => b[1] - a[1])
      .map(([what, t]) => `${what} ${formatDuration(t)}`)
      .join(', ');
    const share = total / length;
    const severity: Severity = share >= 0.1 ? 'warning' : 'info';
    findings.push({
      kind: 'gpu-idle-gap',
      severity,
      title: `${gpuName(ctx, deviceId)} idle in ${gaps.length} gap${gaps.length > 1 ? 's' : ''} totalling ${formatDuration(total)} (${(share * 100).toFixed(0)}% of its span)`,
      explanation: `Between its first and last operation the GPU did nothing for ${formatDuration(total)}. Meanwhile the host was in: ${causes}.`,
      fix: 'See the findings about those calls; otherwise keep work queued ahead (issue the next chunk before waiting for the previous one).',
      costNs: total,
      deviceId,
      pid: null,
      evidence: ev,
      nsightRule: 'gpu_gaps',
    });
  }
  return findings;
}

export function lowUtilization(ctx: Context): Finding[] {
  const findings: Finding[] = [];
  for (const [deviceId, busy] of ctx.busy) {
    const span = ctx.deviceSpan.get(deviceId);
    if (!span || span.end <= span.start) continue;
    const w = (span.end - span.start) / WINDOWS;
    let low = 0;
    let idle = 0;
    const ev = newEvidence();
    for (let x = 0; x < WINDOWS; x++) {
      const a = span.start + x * w;
      const u = busyWithin(busy, a, a + w) / w;
      if (u < LOW_UTILIZATION) {
        low++;
        idle += w - u * w;
        if (ev.window.end === 0) ev.window = { start: a, end: a + w };
        else ev.window.end = a + w;
      }
    }
    if (low === 0) continue;
    findings.push({
      kind: 'low-utilization',
      severity: low >= WINDOWS / 2 ? 'warning' : 'info',
      title: `${gpuName(ctx, deviceId)} under ${LOW_UTILIZATION * 100}% busy in ${low} of ${WINDOWS} windows of ${formatDuration(w)}`,
      explanation: `In those windows the GPU ran something less than half of the time (${formatDuration(idle)} idle in total).`,
      fix: 'Look at what the host did in those windows (the API rows of the timeline): host-side work between launches, synchronization, or too little work per launch.',
      costNs: idle,
      deviceId,
      pid: null,
      evidence: ev,
      nsightRule: 'gpu_time_util',
    });
  }
  return findings;
}

/**
 * The processes with a stream on `deviceId` (the streams table's), whose
 * calls could have kept it waiting; null (any process's) where the table
 * names none for it.
 */
function processesOn(ctx: Context, deviceId: number): ReadonlySet<number> | null {
  const pids = new Set<number>();
  for (const s of ctx.streams.values()) if (s.deviceId === deviceId) pids.add(s.pid);
  return pids.size > 0 ? pids : null;
}

/** A module/library load call of `pids` (null: any process) that starts inside [from, to], or -1. */
function moduleLoadIn(ctx: Context, from: number, to: number, pids: ReadonlySet<number> | null): number {
  const { calls } = ctx.host;
  let lo = 0;
  let hi = calls.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (calls.start[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  const families = callFamilies(ctx);
  for (let k = lo; k < calls.length && calls.start[k]! <= to; k++)
    if ((!pids || pids.has(calls.pid[k]!)) && families.family(calls.nameId[k]!) === 'module-load') return k;
  return -1;
}

/** The outermost API call of `pids` (null: any process) in progress at time t on any of their threads, or -1 (binary search over start-sorted calls). */
function callDuring(ctx: Context, t: number, pids: ReadonlySet<number> | null): number {
  const { calls } = ctx.host;
  let lo = 0;
  let hi = calls.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (calls.start[mid]! <= t) lo = mid + 1;
    else hi = mid;
  }
  // Calls are short: look back a bounded number for one that spans t.
  let best = -1;
  for (let k = lo - 1; k >= 0 && k >= lo - 256; k--) {
    if (calls.end[k]! >= t && (!pids || pids.has(calls.pid[k]!)) && (best < 0 || calls.start[k]! < calls.start[best]!)) best = k;
  }
  return best;
}
