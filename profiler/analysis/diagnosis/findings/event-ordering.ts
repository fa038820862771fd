// Event waits ordering streams: cudaStreamWaitEvent makes one stream wait
// for work recorded on another. That is how a program says "this depends
// on that", so the waiting is intended: reported as info with the streams
// it orders, never as serialization.
import { addCall, newEvidence, streamLabel, type Context } from './context.ts';
import type { Finding } from '../../../contract/findings.ts';

export function eventOrdering(ctx: Context): Finding[] {
  const byPid = new Map<number, { waits: number; streams: Set<number>; calls: number[] }>();
  for (const w of ctx.host.waits) {
    let g = byPid.get(w.pid);
    if (!g) byPid.set(w.pid, (g = { waits: 0, streams: new Set(), calls: [] }));
    g.waits++;
    if (w.stream !== null) g.streams.add(w.stream);
    if (w.call >= 0) g.calls.push(w.call);
  }
  const findings: Finding[] = [];
  for (const [pid, g] of byPid) {
    const ev = newEvidence();
    for (const k of g.calls) addCall(ctx, ev, k);
    const waiting = [...g.streams].map((s) => streamLabel(ctx, s)).join(', ');
    findings.push({
      kind: 'event-ordering',
      severity: 'info',
      title: `${g.waits} event waits order streams of process ${pid} (intended dependencies)`,
      explanation:
        `cudaStreamWaitEvent made ${waiting || 'streams'} wait for work recorded on other streams. ` +
        `These are dependencies the program asked for, so no time is counted as lost; work that does not depend on them still overlaps.`,
      fix: '',
      costNs: 0,
      deviceId: null,
      pid,
      evidence: ev,
    });
  }
  return findings;
}
