// How long each pair of streams of a device ran at the same time (the
// Stats tab's overlap matrix), and each stream's busy time.
//
// stream-pairs.ts computes the same overlap alongside the waits it needs
// for the diagnosis, crediting every pair of running streams at every
// boundary: O(boundaries × running²), a minute for 10 M operations over 32
// concurrent streams. The overlap alone is cheaper: a stream's ops run one
// at a time, so its busy time is a sorted list of disjoint intervals, and a
// pair's overlap is the length of the intersection of two such lists, one
// merge walk each: O(streams × operations) per device, about a second.
import type { Ns } from '../contract/time.ts';
import { intersectionLength, lengthOf, unionOfPairs, type IntervalList } from './intervals.ts';
import type { Trace } from './trace.ts';

export interface StreamOverlap {
  deviceId: number;
  /** Streams with operations on the device, by id. */
  streamIds: number[];
  /** busyNs[i]: length of the union of stream i's operations. */
  busyNs: Ns[];
  /** overlapNs[i][j]: time both stream i and stream j had an operation running (diagonal 0). */
  overlapNs: Ns[][];
  /** Per stream (same order): when it ran. */
  running: IntervalList[];
}

export function streamOverlapByDevice(trace: Trace): StreamOverlap[] {
  const { ops } = trace;
  // Op indices per device and stream; GpuOps is in start order, so each list is too.
  const byDevice = new Map<number, Map<number, number[]>>();
  for (let i = 0; i < ops.length; i++) {
    let streams = byDevice.get(ops.device[i]!);
    if (!streams) byDevice.set(ops.device[i]!, (streams = new Map()));
    let list = streams.get(ops.stream[i]!);
    if (!list) streams.set(ops.stream[i]!, (list = []));
    list.push(i);
  }
  return [...byDevice]
    .sort((a, b) => a[0] - b[0])
    .map(([deviceId, streams]) => {
      const streamIds = [...streams.keys()].sort((a, b) => a - b);
      const running = streamIds.map((s) => {
        const idx = streams.get(s)!;
        return unionOfPairs(
          Float64Array.from(idx, (i) => ops.start[i]!),
          Float64Array.from(idx, (i) => ops.end[i]!),
        );
      });
      const n = streamIds.length;
      const overlapNs = Array.from({ length: n }, () => new Array<number>(n).fill(0));
      for (let a = 0; a < n; a++) {
        for (let b = a + 1; b < n; b++) {
          const t = intersectionLength(running[a]!, running[b]!);
          overlapNs[a]![b] = t;
          overlapNs[b]![a] = t;
        }
      }
      return { deviceId, streamIds, busyNs: running.map(lengthOf), overlapNs, running };
    });
}
