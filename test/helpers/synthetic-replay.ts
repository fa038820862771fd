// A synthetic recording of n GPU operations for the replay (profiler/analysis/replay/replay.ts) at scale:
// test/analysis/replay.test.ts checks its result, bench/responsiveness.ts times it.
import type { Host } from '../../profiler/analysis/host.ts';
import { allocateOps, OpCategory, OpKind, type Trace } from '../../profiler/analysis/trace.ts';
import { H100 } from './devices.ts';

/** n ops round-robin over `streams` blocking streams, one async call each (copy, kernel, copy), a device sync every `syncEvery` ops. */
export function syntheticReplay(n: number, streams: number, syncEvery: number): { trace: Trace; host: Host } {
  const ops = allocateOps(n);
  const m = n + Math.floor(n / syncEvery);
  const calls = {
    length: m,
    rowId: new Float64Array(m),
    start: new Float64Array(m),
    end: new Float64Array(m),
    pid: new Int32Array(m).fill(1),
    tid: new Int32Array(m).fill(1),
    nameId: new Int32Array(m),
    correlation: new Uint32Array(m),
    domain: new Uint8Array(m).fill(1),
  };
  const opCall = new Int32Array(n);
  const last = new Float64Array(streams);
  let t = 0;
  let k = 0;
  for (let i = 0; i < n; i++) {
    const s = i % streams;
    const kernel = i % 3 === 1;
    calls.start[k] = t;
    calls.end[k] = t + 3000;
    calls.nameId[k] = kernel ? 1 : 2;
    calls.correlation[k] = k + 1;
    calls.rowId[k] = k + 1;
    ops.kind[i] = kernel ? OpKind.Kernel : OpKind.Memcpy;
    ops.category[i] = kernel ? OpCategory.Compute : i % 3 === 0 ? OpCategory.HtoD : OpCategory.DtoH;
    ops.detail[i] = kernel ? 5 : i % 3 === 0 ? 2 * 16 + 3 : 3 * 16 + 2;
    const st = Math.max(t + 5000, last[s]!);
    ops.start[i] = st;
    ops.end[i] = st + 4000;
    last[s] = st + 4000;
    ops.stream[i] = s + 1;
    ops.device[i] = 1;
    ops.pid[i] = 1;
    ops.isAsync[i] = 1;
    ops.correlation[i] = k + 1;
    ops.bytes[i] = 1 << 20;
    ops.blocks[i] = kernel ? 100 : 0;
    ops.blockThreads[i] = 256;
    ops.registers[i] = 32;
    opCall[i] = k++;
    t += 3500;
    if ((i + 1) % syncEvery === 0) {
      let e = 0;
      for (let x = 0; x < streams; x++) e = Math.max(e, last[x]!);
      calls.start[k] = t;
      calls.end[k] = Math.max(t, e) + 2000;
      calls.nameId[k] = 3;
      calls.correlation[k] = k + 1;
      calls.rowId[k] = k + 1;
      t = calls.end[k]!;
      k++;
    }
  }
  const trace: Trace = {
    meta: new Map(),
    devices: [{ ...H100 }],
    ops,
    strings: new Map(),
    demangled: new Map(),
    span: { start: 0, end: t },
    streams: Array.from({ length: streams }, (_, s) => ({ id: s + 1, pid: 1, contextId: 1, deviceId: 1, cuptiStreamId: s + 10, flags: 0, priority: 0 })),
  };
  const host: Host = {
    calls,
    opCall,
    events: [],
    waits: [],
    callOf: (_p, c) => c - 1,
    names: new Map([
      [1, 'cudaLaunchKernel'],
      [2, 'cudaMemcpyAsync'],
      [3, 'cudaDeviceSynchronize'],
    ]),
    threads: new Map([['1:1', Int32Array.from({ length: m }, (_, x) => x)]]),
  };
  return { trace, host };
}
