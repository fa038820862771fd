// Per-stream, per-kernel and per-copy-kind summaries of a loaded trace.
import type { StreamKind } from '../contract/api.ts';
import { streamKind } from '../contract/streams.ts';
import type { Ns } from '../contract/time.ts';
import { BusyUnion, type Busy } from './overlap.ts';
import { STREAM_FLAG_NAMES } from '../store/enums.ts';
import { OP_CATEGORY_NAMES, OpKind, type Trace } from './trace.ts';
import { MEMORY_KIND_NAMES } from '../cuda/cupti-kinds.ts';

export interface StreamSummary {
  streamId: number;
  cuptiStreamId: number;
  pid: number;
  deviceId: number | null;
  /** Its flags' names (store/enums.ts STREAM_FLAG_NAMES), as stored. */
  flags: string[];
  /** What those flags make it, worded as the timeline labels it (contract/streams.ts). */
  kind: StreamKind;
  priority: number | null;
  kernels: number;
  memcpys: number;
  memsets: number;
  busy: Busy;
  /** busy.union over the device's busy union (all ops): the stream's share of the time the device did anything. */
  shareOfDeviceBusy: number | null;
}

export function streamFlagNames(flags: number): string[] {
  return STREAM_FLAG_NAMES.filter(([bit]) => (flags & bit) !== 0).map(([, name]) => name);
}

export function summarizeStreams(trace: Trace, deviceBusy: Map<number, Ns>): StreamSummary[] {
  const { ops } = trace;
  // One pass: each stream's counts by kind and its busy union.
  const counts = new Map<number, [number, number, number]>();
  const unions = new Map<number, BusyUnion>();
  for (let i = 0; i < ops.length; i++) {
    const stream = ops.stream[i]!;
    let c = counts.get(stream);
    if (!c) counts.set(stream, (c = [0, 0, 0]));
    c[ops.kind[i]! - 1]!++;
    let u = unions.get(stream);
    if (!u) unions.set(stream, (u = new BusyUnion()));
    u.add(ops.start[i]!, ops.end[i]!);
  }
  return trace.streams.map((s) => {
    const [kernels, memcpys, memsets] = counts.get(s.id) ?? [0, 0, 0];
    const busy = (unions.get(s.id) ?? new BusyUnion()).busy();
    const deviceUnion = s.deviceId !== null ? (deviceBusy.get(s.deviceId) ?? 0) : 0;
    return {
      streamId: s.id,
      cuptiStreamId: s.cuptiStreamId,
      pid: s.pid,
      deviceId: s.deviceId,
      flags: streamFlagNames(s.flags),
      kind: streamKind(s.flags),
      priority: s.priority,
      kernels,
      memcpys,
      memsets,
      busy,
      shareOfDeviceBusy: deviceUnion > 0 ? busy.union / deviceUnion : null,
    };
  });
}

export interface KernelSummary {
  /** As stored: mangled for C++ kernels. */
  name: string;
  /** The demangled C++ declaration (strings.demangled), null when the name is not a mangled one. */
  demangledName: string | null;
  count: number;
  total: Ns;
  mean: Ns;
  min: Ns;
  max: Ns;
  /** total over the total time of all kernels. */
  share: number;
}

export function summarizeKernels(trace: Trace): KernelSummary[] {
  const { ops } = trace;
  const byName = new Map<number, { count: number; total: number; min: number; max: number }>();
  let all = 0;
  for (let i = 0; i < ops.length; i++) {
    if (ops.kind[i] !== OpKind.Kernel) continue;
    const d = ops.end[i]! - ops.start[i]!;
    all += d;
    const k = byName.get(ops.detail[i]!);
    if (k) {
      k.count++;
      k.total += d;
      if (d < k.min) k.min = d;
      if (d > k.max) k.max = d;
    } else {
      byName.set(ops.detail[i]!, { count: 1, total: d, min: d, max: d });
    }
  }
  return [...byName.entries()]
    .map(([nameId, k]) => ({
      name: trace.strings.get(nameId) ?? `<string ${nameId}>`,
      demangledName: trace.demangled.get(nameId) ?? null,
      count: k.count,
      total: k.total,
      mean: k.total / k.count,
      min: k.min,
      max: k.max,
      share: all > 0 ? k.total / all : 0,
    }))
    .sort((a, b) => b.total - a.total);
}

export interface CopySummary {
  /** 'HtoD', 'DtoH', 'DtoD', 'PtoP', 'HtoH', 'memset', 'other'. */
  direction: string;
  srcKind: string;
  dstKind: string;
  count: number;
  bytes: number;
  total: Ns;
  /** bytes / total time: GB/s (1e9 bytes per second). */
  gigabytesPerSecond: number | null;
}

export function summarizeCopies(trace: Trace): CopySummary[] {
  const { ops } = trace;
  const groups = new Map<string, CopySummary>();
  for (let i = 0; i < ops.length; i++) {
    const kind = ops.kind[i]!;
    if (kind === OpKind.Kernel) continue;
    const direction = OP_CATEGORY_NAMES[ops.category[i]!]!;
    let srcKind: string;
    let dstKind: string;
    if (kind === OpKind.Memcpy) {
      srcKind = MEMORY_KIND_NAMES[ops.detail[i]! >> 4] ?? 'unknown';
      dstKind = MEMORY_KIND_NAMES[ops.detail[i]! & 15] ?? 'unknown';
    } else {
      srcKind = '-';
      dstKind = MEMORY_KIND_NAMES[ops.detail[i]!] ?? 'unknown';
    }
    const key = `${direction}|${srcKind}|${dstKind}`;
    let g = groups.get(key);
    if (!g) {
      g = { direction, srcKind, dstKind, count: 0, bytes: 0, total: 0, gigabytesPerSecond: null };
      groups.set(key, g);
    }
    g.count++;
    g.bytes += ops.bytes[i]!;
    g.total += ops.end[i]! - ops.start[i]!;
  }
  const order = (d: string) => OP_CATEGORY_NAMES.indexOf(d as (typeof OP_CATEGORY_NAMES)[number]);
  return [...groups.values()]
    .map((g) => ({ ...g, gigabytesPerSecond: g.total > 0 ? g.bytes / g.total : null }))
    .sort((a, b) => order(a.direction) - order(b.direction) || b.bytes - a.bytes);
}
