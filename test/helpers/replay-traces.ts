// Hand-built traces for the replay's unit tests (test/analysis/replay-parts,
// serialized-collective): a few operations of one process whose issue
// order, streams, event records and waits a test spells out, on one H100.
// They test the model's arithmetic; real recordings test the model.
import type { Host } from '../../profiler/analysis/host.ts';
import { allocateOps, OpCategory, OpKind, type Trace } from '../../profiler/analysis/trace.ts';
import { H100 } from './devices.ts';

/** CUPTI's name for NCCL 2.19+'s float all-reduce kernel (mangled, as recorded). */
export const NCCL_KERNEL = '_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE';

export interface OpSpec {
  kind: 'kernel' | 'HtoD' | 'DtoH';
  stream: number;
  /** Kernels: blocks of 1024 threads (an H100 holds 2 per SM, 264 in all). */
  blocks?: number;
  /** Kernels: an NCCL all-reduce (named NCCL_KERNEL) instead of a compute kernel. */
  nccl?: boolean;
  /** Duration (ns); default 5 µs. */
  ns?: number;
}

/**
 * Ops issued in this order, 10 µs apart, each by its own call, each
 * running for its `ns` (default 5 µs) from 3 µs after its call, or from when
 * the op before it on its stream ended (a stream runs its work in order, and
 * the replay takes an op still running when the next on its stream began for
 * a record whose end is off: replay-host.ts deviceWork); streams:
 * id → flags, all in one context.
 */
export function build(
  streams: Record<number, number>,
  specs: OpSpec[],
  events: { after: number; eventId: number; stream: number; wait: boolean }[] = [],
): { trace: Trace; host: Host } {
  const n = specs.length;
  const calls = {
    length: n,
    rowId: new Float64Array(n),
    start: new Float64Array(n),
    end: new Float64Array(n),
    pid: new Int32Array(n).fill(1),
    tid: new Int32Array(n).fill(1),
    nameId: new Int32Array(n),
    correlation: new Uint32Array(n),
    domain: new Uint8Array(n).fill(1),
  };
  const ops = allocateOps(n);
  const streamEnd = new Map<number, number>();
  specs.forEach((s, i) => {
    const kernel = s.kind === 'kernel';
    calls.rowId[i] = i + 1;
    calls.start[i] = i * 10_000;
    calls.end[i] = i * 10_000 + 1_000;
    calls.nameId[i] = kernel ? 1 : 2;
    calls.correlation[i] = i + 1;
    ops.kind[i] = kernel ? OpKind.Kernel : OpKind.Memcpy;
    ops.category[i] = kernel ? OpCategory.Compute : s.kind === 'HtoD' ? OpCategory.HtoD : OpCategory.DtoH;
    ops.detail[i] = kernel ? (s.nccl ? 3 : 1) : s.kind === 'HtoD' ? 2 * 16 + 3 : 3 * 16 + 2; // pinned host memory
    ops.start[i] = Math.max(i * 10_000 + 3_000, streamEnd.get(s.stream) ?? -Infinity);
    ops.end[i] = ops.start[i]! + (s.ns ?? 5_000);
    streamEnd.set(s.stream, ops.end[i]!);
    ops.stream[i] = s.stream;
    ops.device[i] = 1;
    ops.pid[i] = 1;
    ops.correlation[i] = i + 1;
    ops.isAsync[i] = 1;
    ops.blocks[i] = kernel ? (s.blocks ?? 10) : 0;
    ops.blockThreads[i] = kernel ? 1024 : 0;
    ops.registers[i] = kernel ? 32 : 0;
  });
  // An event record or wait is made by the call after op `after`'s, before that call issues its op.
  const host: Host = {
    calls,
    opCall: Int32Array.from({ length: n }, (_, i) => i),
    threads: new Map([['1:1', Int32Array.from({ length: n }, (_, i) => i)]]),
    names: new Map([
      [1, 'cudaLaunchKernel'],
      [2, 'cudaMemcpyAsync'],
    ]),
    events: events.filter((e) => !e.wait).map((e) => ({ pid: 1, eventId: e.eventId, stream: e.stream, call: e.after + 1, correlation: e.after + 2 })),
    waits: events
      .filter((e) => e.wait)
      .map((e) => ({ pid: 1, eventId: e.eventId, stream: e.stream, call: e.after + 1, correlation: e.after + 2, start: calls.start[e.after + 1]! })),
    callOf: (_pid, c) => c - 1,
  };
  const trace: Trace = {
    meta: new Map(),
    ops,
    strings: new Map([[3, NCCL_KERNEL]]),
    demangled: new Map(),
    span: { start: 0, end: n * 10_000 },
    devices: [{ ...H100 }],
    streams: Object.entries(streams).map(([id, flags]) => ({
      id: Number(id),
      pid: 1,
      contextId: 1,
      deviceId: 1,
      cuptiStreamId: Number(id),
      flags,
      priority: 0,
    })),
  };
  return { trace, host };
}
