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
 * Busy time of intervals given in start order: their count, the sum of
 * their lengths and the length of their union, one open interval kept.
 * One per group (a device, a stream) lets a single pass over the
 * operations serve every group: a job of 64 GPUs and 512 streams would
 * otherwise pass over its 64 M operations once per group.
 */
export class BusyUnion {
  #count = 0;
  #sum = 0;
  #union = 0;
  #curStart = 0;
  #curEnd = -Infinity;

  add(s: Ns, e: Ns): void {
    if (e < s) return; // a malformed interval counts for nothing rather than negative time
    this.#count++;
    this.#sum += e - s;
    if (s > this.#curEnd) {
      if (this.#curEnd > this.#curStart) this.#union += this.#curEnd - this.#curStart;
      this.#curStart = s;
      this.#curEnd = e;
    } else if (e > this.#curEnd) {
      this.#curEnd = e;
    }
  }

  busy(): Busy {
    const union = this.#union + (this.#curEnd > this.#curStart ? this.#curEnd - this.#curStart : 0);
    return { count: this.#count, sum: this.#sum, union, overlapFactor: union > 0 ? this.#sum / union : null };
  }
}

/**
 * Busy time of the ops selected by `accept`, which must be visited in start
 * order (GpuOps is sorted by start). One pass, O(n).
 */
export function busyOf(ops: GpuOps, accept: (i: number) => boolean): Busy {
  const u = new BusyUnion();
  for (let i = 0; i < ops.length; i++) if (accept(i)) u.add(ops.start[i]!, ops.end[i]!);
  return u.busy();
}

export interface DeviceOverlap {
  deviceId: number;
  compute: Busy;
  htod: Busy;
  dtoh: Busy;
  /** Every operation on the device: kernels, copies of all directions, memsets. */
  all: Busy;
}

/** Every device's overlap, in device id order: one pass over the operations. */
export function overlapByDevice(trace: Trace): DeviceOverlap[] {
  const { ops } = trace;
  const unions = new Map<number, { compute: BusyUnion; htod: BusyUnion; dtoh: BusyUnion; all: BusyUnion }>();
  const of = (deviceId: number) => {
    let u = unions.get(deviceId);
    if (!u) unions.set(deviceId, (u = { compute: new BusyUnion(), htod: new BusyUnion(), dtoh: new BusyUnion(), all: new BusyUnion() }));
    return u;
  };
  for (const d of trace.devices) of(d.id);
  for (let i = 0; i < ops.length; i++) {
    const u = of(ops.device[i]!);
    const s = ops.start[i]!;
    const e = ops.end[i]!;
    const category = ops.category[i];
    if (category === OpCategory.Compute) u.compute.add(s, e);
    else if (category === OpCategory.HtoD) u.htod.add(s, e);
    else if (category === OpCategory.DtoH) u.dtoh.add(s, e);
    u.all.add(s, e);
  }
  return [...unions]
    .sort(([a], [b]) => a - b)
    .map(([deviceId, u]) => ({ deviceId, compute: u.compute.busy(), htod: u.htod.busy(), dtoh: u.dtoh.busy(), all: u.all.busy() }));
}
