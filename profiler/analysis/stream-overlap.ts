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
// Cheaper still where the device's streams never ran at once: their busy
// times then add up to the device's (overlap.ts deviceUnions, the union the
// analysis built already), every pair's overlap is 0, and no list is built.
import type { Ns } from '../contract/time.ts';
import { IdTable } from '../base/id-table.ts';
import { intersectionLength, type IntervalList } from './intervals.ts';
import { BusyUnion, deviceUnions } from './overlap.ts';
import { OpKind, type Trace } from './trace.ts';

export interface StreamOverlap {
  deviceId: number;
  /** Streams with operations on the device, by id. */
  streamIds: number[];
  /** busyNs[i]: length of the union of stream i's operations. */
  busyNs: Ns[];
  /** overlapNs[i][j]: time both stream i and stream j had an operation running (diagonal 0). */
  overlapNs: Ns[][];
  /** Per stream (same order): its kernels and its copies on the device (the Stats tab's stream rows count them). */
  kernels: number[];
  memcpys: number[];
}

export function streamOverlapByDevice(trace: Trace): StreamOverlap[] {
  const { ops } = trace;
  const n = ops.length;
  // Each op's stream (a stream runs on one device), looked up in an IdTable
  // (Maps and arrays grown a push at a time cost seconds at 10 M operations);
  // each stream's busy time measured as its ops come (GpuOps is in start
  // order, so each stream's ops are), its ops counted by kind.
  const first = IdTable.of(ops.stream.subarray(0, n), -1);
  // A stream's ops on another device than its first (a damaged or hand-made file): groups of their own, by a Map.
  const other = new Map<string, number>();
  const streamOf: number[] = [];
  const deviceOf: number[] = [];
  const unions: BusyUnion[] = [];
  const sizes: number[] = [];
  const kernels: number[] = [];
  const memcpys: number[] = [];
  const groupOf = new Int32Array(n);
  const add = (stream: number, device: number) => {
    streamOf.push(stream);
    deviceOf.push(device);
    unions.push(new BusyUnion());
    sizes.push(0);
    kernels.push(0);
    memcpys.push(0);
    return streamOf.length - 1;
  };
  for (let i = 0; i < n; i++) {
    const stream = ops.stream[i]!;
    const device = ops.device[i]!;
    let g = first.get(stream);
    if (g < 0) first.set(stream, (g = add(stream, device)));
    else if (deviceOf[g] !== device) {
      const key = `${stream}:${device}`;
      g = other.get(key) ?? -1;
      if (g < 0) other.set(key, (g = add(stream, device)));
    }
    groupOf[i] = g;
    sizes[g]!++;
    unions[g]!.add(ops.start[i]!, ops.end[i]!);
    const kind = ops.kind[i];
    if (kind === OpKind.Kernel) kernels[g]!++;
    else if (kind === OpKind.Memcpy) memcpys[g]!++;
  }
  const byDevice = new Map<number, number[]>();
  for (let g = 0; g < streamOf.length; g++) {
    const list = byDevice.get(deviceOf[g]!);
    if (list) list.push(g);
    else byDevice.set(deviceOf[g]!, [g]);
  }
  const devices = deviceUnions(trace);
  const out = [...byDevice]
    .sort((a, b) => a[0] - b[0])
    .map(([deviceId, groups]) => {
      groups.sort((a, b) => streamOf[a]! - streamOf[b]!);
      const m = groups.length;
      return {
        deviceId,
        groups,
        streamIds: groups.map((g) => streamOf[g]!),
        busyNs: groups.map((g) => unions[g]!.busy().union),
        overlapNs: Array.from({ length: m }, () => new Array<number>(m).fill(0)),
        kernels: groups.map((g) => kernels[g]!),
        memcpys: groups.map((g) => memcpys[g]!),
      };
    });
  // Times are whole nanoseconds: the sums are exact, and a device's streams' add up to its busy time only where no two ran at once.
  const overlapping = out.filter((d) => d.busyNs.reduce((t, b) => t + b, 0) > devices.get(d.deviceId)!.all.union);
  const running = streamUnions(
    ops,
    groupOf,
    overlapping.flatMap((d) => d.groups),
    sizes,
  );
  for (const d of overlapping) {
    const lists = d.groups.map((g) => running.get(g)!);
    for (let a = 0; a < lists.length; a++) {
      for (let b = a + 1; b < lists.length; b++) {
        const t = intersectionLength(lists[a]!, lists[b]!);
        d.overlapNs[a]![b] = t;
        d.overlapNs[b]![a] = t;
      }
    }
  }
  return out.map(({ groups: _, ...d }) => d);
}

/** The unions of `groups`' ops (groupOf[i]: op i's group; sizes[g]: group g's ops), by group: one pass over the ops for all of them. */
function streamUnions(ops: Trace['ops'], groupOf: Int32Array, groups: number[], sizes: number[]): Map<number, IntervalList> {
  if (groups.length === 0) return new Map();
  const unions: (BusyUnion | undefined)[] = new Array(sizes.length);
  for (const g of groups) unions[g] = new BusyUnion(sizes[g]!);
  for (let i = 0; i < groupOf.length; i++) unions[groupOf[i]!]?.add(ops.start[i]!, ops.end[i]!);
  return new Map(groups.map((g) => [g, unions[g]!.intervals()]));
}
