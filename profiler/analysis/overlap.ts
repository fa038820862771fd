// Busy time and overlap of GPU operations.
//
// overlap factor = (sum of the busy time of every operation) / (length of
// the union of their intervals). 1.0 means the operations never ran at the
// same time; 2.0 means on average two ran at once while any ran. It is
// computed per device for compute (kernels), each copy direction, and all
// operations together.
import type { Ns } from '../contract/time.ts';
import type { IntervalList } from './intervals.ts';
import { deviceUnionsNatively, type NativeBusy } from '../native/addon.ts';
import type { GpuOps, Trace } from './trace.ts';

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
 * otherwise pass over its 64 M operations once per group. Kept (`room`
 * given: at most one interval per operation), the union's intervals are
 * written as they close, as unionOf (intervals.ts) writes them: the pass
 * that measures a union also builds it.
 */
export class BusyUnion {
  #count = 0;
  #sum = 0;
  #union = 0;
  #curStart = 0;
  #curEnd = -Infinity;
  /** The closed intervals, when kept: [s0, e0, s1, e1, ...] in #list[0 .. #n). */
  #list: Float64Array | null;
  #n = 0;

  /**
   * `room`: keep the union, with room for this many intervals (the
   * operations to be added: an array grown by doubling as they come cost a
   * third of a second in copies and fresh pages at 10 M operations).
   */
  constructor(room?: number) {
    this.#list = room === undefined ? null : new Float64Array(2 * room + 2);
  }

  add(s: Ns, e: Ns): void {
    if (e < s) return; // a malformed interval counts for nothing rather than negative time
    this.#count++;
    this.#sum += e - s;
    if (s > this.#curEnd) {
      if (this.#curEnd > this.#curStart) this.#close();
      this.#curStart = s;
      this.#curEnd = e;
    } else if (e > this.#curEnd) {
      this.#curEnd = e;
    }
  }

  #close(): void {
    this.#union += this.#curEnd - this.#curStart;
    if (this.#list) {
      this.#room();
      this.#list[this.#n++] = this.#curStart;
      this.#list[this.#n++] = this.#curEnd;
    }
  }

  /** Room in #list for one more interval: more than `room` intervals were added (grown by doubling). */
  #room(): void {
    if (this.#n + 2 <= this.#list!.length) return;
    const grown = new Float64Array(this.#list!.length * 2);
    grown.set(this.#list!);
    this.#list = grown;
  }

  busy(): Busy {
    const union = this.#union + (this.#curEnd > this.#curStart ? this.#curEnd - this.#curStart : 0);
    return { count: this.#count, sum: this.#sum, union, overlapFactor: union > 0 ? this.#sum / union : null };
  }

  /** The union's intervals, the open one last (a kept union: `new BusyUnion(room)`); asked once every interval is added. */
  intervals(): IntervalList {
    if (!this.#list) throw new Error('BusyUnion.intervals: the union was not kept (new BusyUnion(room))');
    let n = this.#n;
    if (this.#curEnd > this.#curStart) {
      // Written after the closed ones, not closed itself: busy() says the same after as before.
      this.#room();
      this.#list[n++] = this.#curStart;
      this.#list[n++] = this.#curEnd;
    }
    // Mostly all of it is used (operations rarely overlap): kept rather than copied, as unionOf (intervals.ts) does.
    return n >= this.#list.length / 2 ? this.#list.subarray(0, n) : this.#list.slice(0, n);
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

/** A device's busy time (overlap factors: DeviceOverlap) and the union of its operations (the diagnosis's Context.busy). */
export interface DeviceUnions extends Omit<DeviceOverlap, 'deviceId'> {
  /** When any of its operations ran. */
  union: IntervalList;
  /** Its operations, malformed ones (end before start) too: all.count leaves those out. */
  operations: number;
  /** The process whose operations ran on it; null where several did. */
  pid: number | null;
}

const deviceUnionsOf = new WeakMap<Trace, Map<number, DeviceUnions>>();

/**
 * Each device's busy time and union of operations, by device in the order
 * their first operation comes: one pass over the operations, once per
 * trace. The diagnosis's context (every analysis: its busy unions and
 * spans), the overlap factors (the Stats tab, the report, the iterations)
 * each passed over every operation for a union of their own: 0.4 s of the
 * Stats tab's tables at 10 M operations (issue 30).
 */
export function deviceUnions(trace: Trace): Map<number, DeviceUnions> {
  let found = deviceUnionsOf.get(trace);
  if (!found) deviceUnionsOf.set(trace, (found = measureDevices(trace.ops)));
  return found;
}

function measureDevices(ops: GpuOps): Map<number, DeviceUnions> {
  // One pass over every op, native (native/addon/src/device_unions.cc: ~0.2 s of JavaScript at 10 M operations, on the
  // analysing thread before any rule runs); the same steps as BusyUnion's.
  const measured = deviceUnionsNatively({ ops: ops.length, device: ops.device, pid: ops.pid, category: ops.category, start: ops.start, end: ops.end });
  const busy = (b: NativeBusy): Busy => ({ ...b, overlapFactor: b.union > 0 ? b.sum / b.union : null });
  return new Map(
    measured.map((d) => [
      d.deviceId,
      {
        compute: busy(d.compute),
        htod: busy(d.htod),
        dtoh: busy(d.dtoh),
        all: busy(d.all),
        // Mostly all of it is used (operations rarely overlap): kept rather than copied, as BusyUnion.intervals does.
        union: d.length >= d.union.length / 2 ? d.union.subarray(0, d.length) : d.union.slice(0, d.length),
        operations: d.operations,
        pid: d.pid,
      },
    ]),
  );
}

/** Every device's overlap, in device id order, devices without operations too. */
export function overlapByDevice(trace: Trace): DeviceOverlap[] {
  const busy = deviceUnions(trace);
  const none = () => new BusyUnion().busy();
  const ids = new Set([...trace.devices.map((d) => d.id), ...busy.keys()]);
  return [...ids]
    .sort((a, b) => a - b)
    .map((deviceId) => {
      const b = busy.get(deviceId);
      return b
        ? { deviceId, compute: b.compute, htod: b.htod, dtoh: b.dtoh, all: b.all }
        : { deviceId, compute: none(), htod: none(), dtoh: none(), all: none() };
    });
}
