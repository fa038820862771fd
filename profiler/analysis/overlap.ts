// Busy time and overlap of GPU operations.
//
// overlap factor = (sum of the busy time of every operation) / (length of
// the union of their intervals). 1.0 means the operations never ran at the
// same time; 2.0 means on average two ran at once while any ran. It is
// computed per device for compute (kernels), each copy direction, and all
// operations together.
import type { Ns } from '../contract/time.ts';
import { OpCategory, type GpuOps, type Trace } from './trace.ts';

export interface Busy {
  /** Operations counted. */
  count: number;
  /** Sum of operation durations. */
  sum: Ns;
  /** Length of the union of operation intervals (time anything ran). */
  union: Ns;
  /** sum / union; null when nothing ran. */
  overlapFactor: number | null;
}

/**
 * Busy time of the ops selected by `accept`, which must be visited in start
 * order (GpuOps is sorted by start). One pass, O(n).
 */
export function busyOf(ops: GpuOps, accept: (i: number) => boolean): Busy {
  let count = 0;
  let sum = 0;
  let union = 0;
  let curStart = 0;
  let curEnd = -Infinity;
  for (let i = 0; i < ops.length; i++) {
    if (!accept(i)) continue;
    const s = ops.start[i]!;
    const e = ops.end[i]!;
    if (e < s) continue; // a malformed interval counts for nothing rather than negative time
    count++;
    sum += e - s;
    if (s > curEnd) {
      if (curEnd > curStart) union += curEnd - curStart;
      curStart = s;
      curEnd = e;
    } else if (e > curEnd) {
      curEnd = e;
    }
  }
  if (curEnd > curStart) union += curEnd - curStart;
  return { count, sum, union, overlapFactor: union > 0 ? sum / union : null };
}

export interface DeviceOverlap {
  deviceId: number;
  compute: Busy;
  htod: Busy;
  dtoh: Busy;
  /** Every operation on the device: kernels, copies of all directions, memsets. */
  all: Busy;
}

export function overlapByDevice(trace: Trace): DeviceOverlap[] {
  const { ops } = trace;
  const deviceIds = new Set<number>(trace.devices.map((d) => d.id));
  for (let i = 0; i < ops.length; i++) deviceIds.add(ops.device[i]!);
  return [...deviceIds]
    .sort((a, b) => a - b)
    .map((deviceId) => {
      const onDevice = (i: number) => ops.device[i] === deviceId;
      return {
        deviceId,
        compute: busyOf(ops, (i) => onDevice(i) && ops.category[i] === OpCategory.Compute),
        htod: busyOf(ops, (i) => onDevice(i) && ops.category[i] === OpCategory.HtoD),
        dtoh: busyOf(ops, (i) => onDevice(i) && ops.category[i] === OpCategory.DtoH),
        all: busyOf(ops, onDevice),
      };
    });
}
