// The streams of one rank against the streams of the rank it is paired
// with (compare/ranks.ts), for the per-rank rows of a diff. Stream ids
// (streams.id) differ between files and CUPTI's ids repeat in every
// process, so a stream is only ever matched within its rank's pair, on the
// rank's same GPU: first by CUPTI stream id (a program run twice creates
// its streams in the same order, and CUDA numbers them in that order),
// then what is left by order of first operation; always within one role,
// so that an NCCL stream is never set against a compute stream that
// happens to carry the same id in the other run.
import { commKernelLabels } from '../analysis/communication.ts';
import { gpuOrdinals, OpKind, type Trace } from '../analysis/trace.ts';
import { delta } from './delta.ts';
import type { StreamDiff, StreamSide } from '../contract/diff.ts';
import type { Ns } from '../contract/time.ts';

export type StreamRole = StreamDiff['role'];

/** What one stream did in the scope. */
export interface StreamActivity extends StreamSide {
  pid: number;
  deviceId: number;
  role: StreamRole;
  ops: number;
  /** Union of its operations' intervals. */
  busyNs: Ns;
  firstStartNs: Ns;
  lastEndNs: Ns;
}

/**
 * Every stream with operations in the trace's scope. One pass over the
 * operations (start order): a stream's busy union grows like busyOf's,
 * one open interval per stream.
 */
export function streamActivity(trace: Trace): StreamActivity[] {
  const { ops } = trace;
  const nccl = commKernelLabels(trace);
  const gpu = gpuOrdinals(trace.devices);
  const byId = new Map(trace.streams.map((s) => [s.id, s]));
  const acc = new Map<
    number,
    { ops: number; kernels: number; nccl: number; union: number; open: [number, number]; first: number; last: number; device: number }
  >();
  for (let i = 0; i < ops.length; i++) {
    const s = ops.start[i]!;
    const e = ops.end[i]!;
    if (e < s) continue; // malformed: counts for nothing, as in busyOf
    const id = ops.stream[i]!;
    let a = acc.get(id);
    if (!a) acc.set(id, (a = { ops: 0, kernels: 0, nccl: 0, union: 0, open: [s, e], first: s, last: e, device: ops.device[i]! }));
    else if (s > a.open[1]) {
      a.union += a.open[1] - a.open[0];
      a.open = [s, e];
    } else if (e > a.open[1]) a.open[1] = e;
    a.ops++;
    if (e > a.last) a.last = e;
    if (ops.kind[i] === OpKind.Kernel) {
      a.kernels++;
      if (nccl.has(ops.detail[i]!)) a.nccl++;
    }
  }
  return [...acc].map(([id, a]) => {
    const row = byId.get(id);
    // The device its operations ran on, as the communication breakdown groups them.
    return {
      streamId: id,
      cuptiStreamId: row?.cuptiStreamId ?? id,
      gpu: gpu(a.device),
      pid: row?.pid ?? 0,
      deviceId: a.device,
      role: a.nccl > 0 ? 'communication' : a.kernels > 0 ? 'compute' : 'copy',
      ops: a.ops,
      busyNs: a.union + (a.open[1] - a.open[0]),
      firstStartNs: a.first,
      lastEndNs: a.last,
    };
  });
}

const side = (s: StreamActivity): StreamSide => ({ streamId: s.streamId, cuptiStreamId: s.cuptiStreamId, gpu: s.gpu });

function row(pairedBy: StreamDiff['pairedBy'], x: StreamActivity | null, y: StreamActivity | null): StreamDiff {
  return {
    pairedBy,
    role: (x ?? y)!.role,
    a: x && side(x),
    b: y && side(y),
    ops: delta(x?.ops ?? null, y?.ops ?? null),
    busyNs: delta(x?.busyNs ?? null, y?.busyNs ?? null),
  };
}

/**
 * The streams of one GPU of a rank (A's) against those of the paired
 * rank's corresponding GPU (B's); either list may be empty (the GPU is on
 * one side only). Rows in A's CUPTI stream id order, B's unmatched after.
 */
export function pairStreams(a: StreamActivity[], b: StreamActivity[]): StreamDiff[] {
  const byCupti = (x: StreamActivity, y: StreamActivity) => x.cuptiStreamId - y.cuptiStreamId;
  const byFirst = (x: StreamActivity, y: StreamActivity) => x.firstStartNs - y.firstStartNs || byCupti(x, y);
  const mate = new Map<StreamActivity, { other: StreamActivity; by: 'stream-id' | 'order' }>();
  const taken = new Set<StreamActivity>();
  for (const x of a) {
    const y = b.find((s) => s.cuptiStreamId === x.cuptiStreamId && s.role === x.role);
    if (!y) continue;
    mate.set(x, { other: y, by: 'stream-id' });
    taken.add(y);
  }
  const roles: StreamRole[] = ['communication', 'compute', 'copy'];
  for (const role of roles) {
    const xs = a.filter((s) => s.role === role && !mate.has(s)).sort(byFirst);
    const ys = b.filter((s) => s.role === role && !taken.has(s)).sort(byFirst);
    for (let i = 0; i < Math.min(xs.length, ys.length); i++) {
      mate.set(xs[i]!, { other: ys[i]!, by: 'order' });
      taken.add(ys[i]!);
    }
  }
  return [
    ...[...a].sort(byCupti).map((x) => {
      const m = mate.get(x);
      return row(m?.by ?? null, x, m?.other ?? null);
    }),
    ...b
      .filter((y) => !taken.has(y))
      .sort(byCupti)
      .map((y) => row(null, null, y)),
  ];
}
