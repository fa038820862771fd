// The Stats tab (StatsResponse) from a loaded and diagnosed recording:
// kernel and copy summaries, per-stream utilization, the stream-pair
// overlap matrix, the overlap factors, communication (per-rank time
// breakdown, collectives) and stragglers (collectives across ranks: skew,
// wait). Everything here is already
// computed by profiler/analysis (the report prints the same numbers); this
// module only reshapes it, so the app and `streamscope report` agree.
import type { Analysis } from '../analysis/diagnosis/analyze.ts';
import { deviceSpans } from '../analysis/diagnosis/findings/context.ts';
import { overlapByDevice } from '../analysis/overlap.ts';
import { streamOverlapByDevice } from '../analysis/stream-overlap.ts';
import { summarizeCopies, summarizeKernels } from '../analysis/summary.ts';
import type { StatsResponse, StreamUtilization } from '../contract/api.ts';
import { streamRowId } from './item-kinds.ts';

/**
 * Kernels listed by name, at most: those with the most time. A recording of
 * 10^6 distinct kernel names answered 169 MB (and the Stats tab cannot show
 * more than a few hundred rows usefully); the rest are summed in
 * StatsResponse.kernelsLeftOut.
 */
export const MAX_STATS_KERNELS = 1000;
/** Streams per device in the stream-pair overlap matrix, at most (the busiest): the matrix grows with their square. */
export const MAX_OVERLAP_STREAMS = 64;

/** The stats of the analysis's scope: every number here counts only the operations in it. */
export function buildStats(analysis: Analysis): StatsResponse {
  // Neither the diagnosis nor its context: the statistics never wait for the rules and their what-ifs, nor for the
  // host model (analyze.ts builds both when first asked).
  const { trace } = analysis;
  const { deviceSpan } = deviceSpans(trace);
  // Longest in total first (summarizeKernels' order).
  const summaries = summarizeKernels(trace);
  const leftOut = summaries.slice(MAX_STATS_KERNELS);
  const kernelsLeftOut = leftOut.length
    ? {
        names: leftOut.length,
        count: leftOut.reduce((n, k) => n + k.count, 0),
        totalNs: leftOut.reduce((n, k) => n + k.total, 0),
        share: leftOut.reduce((n, k) => n + k.share, 0),
      }
    : null;
  const kernels = summaries.slice(0, MAX_STATS_KERNELS).map((k) => ({
    name: k.name,
    demangledName: k.demangledName,
    count: k.count,
    totalNs: k.total,
    meanNs: k.mean,
    minNs: k.min,
    maxNs: k.max,
    share: k.share,
  }));
  const copies = summarizeCopies(trace).map((c) => ({
    direction: c.direction,
    srcKind: c.srcKind,
    dstKind: c.dstKind,
    count: c.count,
    bytes: c.bytes,
    totalNs: c.total,
    gbPerS: c.gigabytesPerSecond ?? 0,
  }));
  // Per stream: busy time (union of its ops) and pairwise overlap, per device.
  // Not the diagnosis's stream pairs: those also compute waits, at a cost
  // that grows with the square of the streams running at once.
  const perDevice = streamOverlapByDevice(trace);
  // A stream's counts are of all its operations: on every device it ran on (a damaged file's stream may run on two).
  const counts = new Map<number, { kernels: number; memcpys: number }>();
  for (const d of perDevice)
    d.streamIds.forEach((id, k) => {
      let c = counts.get(id);
      if (!c) counts.set(id, (c = { kernels: 0, memcpys: 0 }));
      c.kernels += d.kernels[k]!;
      c.memcpys += d.memcpys[k]!;
    });
  const streams: StreamUtilization[] = perDevice.flatMap((d) => {
    const span = deviceSpan.get(d.deviceId);
    const spanNs = span ? span.end - span.start : 0;
    return d.streamIds.map((streamId, k) => {
      const busyNs = d.busyNs[k]!;
      const c = counts.get(streamId);
      return {
        rowId: streamRowId(streamId),
        streamId,
        deviceId: d.deviceId,
        busyNs,
        utilization: spanNs > 0 ? busyNs / spanNs : 0,
        kernels: c?.kernels ?? 0,
        copies: c?.memcpys ?? 0,
      };
    });
  });
  const overlap = perDevice.map((d) => {
    if (d.streamIds.length <= MAX_OVERLAP_STREAMS) return { deviceId: d.deviceId, streamIds: d.streamIds, overlapNs: d.overlapNs, streamsLeftOut: 0 };
    // The busiest streams, in their order in the matrix.
    const kept = d.streamIds
      .map((_, k) => k)
      .sort((a, b) => d.busyNs[b]! - d.busyNs[a]! || a - b)
      .slice(0, MAX_OVERLAP_STREAMS)
      .sort((a, b) => a - b);
    return {
      deviceId: d.deviceId,
      streamIds: kept.map((k) => d.streamIds[k]!),
      overlapNs: kept.map((i) => kept.map((j) => d.overlapNs[i]![j]!)),
      streamsLeftOut: d.streamIds.length - kept.length,
    };
  });
  // A device with no ops of a kind has no factor; the contract wants a
  // number, and 1 (nothing ran at the same time) is the honest one.
  const overlapFactors = overlapByDevice(trace)
    .filter((o) => o.all.count > 0)
    .map((o) => ({
      deviceId: o.deviceId,
      compute: o.compute.overlapFactor ?? 1,
      h2d: o.htod.overlapFactor ?? 1,
      d2h: o.dtoh.overlapFactor ?? 1,
      all: o.all.overlapFactor ?? 1,
    }));
  return { kernels, kernelsLeftOut, copies, streams, overlap, overlapFactors, communication: analysis.communication, stragglers: analysis.stragglers };
}
