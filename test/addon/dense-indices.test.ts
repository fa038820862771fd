// The host model's dense indexes (native/addon/src/dense_indices.cc;
// profiler/analysis/replay/replay-host.ts denseIndices) on ops few enough
// to check by hand, with what no fixture has: devices and streams the
// tables lack (numbered after the tables' own, in order of first sight,
// ids past the lookup table's range and negative ones too), a stream
// without a context (one context per process and device). The fixtures'
// host models go through it in test/analysis/replay-identity.test.ts.
import { describe, expect, it } from 'vitest';
import { denseIndicesNatively, type DenseIndicesInputs } from '../../profiler/native/addon.ts';

const FAR = 1 << 23; // past the 2^22 ids a lookup table holds: hashed

/** Devices 5 and 7 in the table; streams 10 (context 100) and 11 (no context). Ops (device, stream, pid) below. */
function inputs(): DenseIndicesInputs {
  const ops: [number, number, number][] = [
    [5, 10, 1],
    [7, 11, 1],
    [9, 12, 2],
    [5, 12, 3],
    [-3, FAR, 2],
    [7, 10, 1],
    [-3, FAR, 2],
  ];
  const n = ops.length;
  return {
    ops: n,
    device: Int32Array.from(ops, (o) => o[0]),
    stream: Int32Array.from(ops, (o) => o[1]),
    pid: Int32Array.from(ops, (o) => o[2]),
    tableDevices: Float64Array.of(5, 7),
    tableDeviceIndex: Float64Array.of(0, 1),
    tableStreams: Float64Array.of(10, 11),
    tableStreamContext: Float64Array.of(100, NaN),
    devOf: new Int32Array(n),
    streamOfOp: new Int32Array(n),
    ctxOfOp: new Int32Array(n),
  };
}

describe('the host model’s dense indexes, natively', () => {
  it('numbers the tables’ devices and streams first, then those only ops name, and a context per process and device where a stream has none', () => {
    const r = inputs();
    const found = denseIndicesNatively(r);
    expect([...r.devOf]).toEqual([0, 1, 2, 0, 3, 1, 3]);
    expect([...r.streamOfOp]).toEqual([0, 1, 2, 2, 3, 0, 3]);
    // Stream 12's context is its first op's (pid 2 on device 9): its second op, of pid 3 on device 5, is in it too.
    expect([...r.ctxOfOp]).toEqual([0, 1, 2, 2, 3, 0, 3]);
    expect(found).toEqual({
      devices: [9, -3],
      streams: [12, FAR],
      streamPids: [2, 2],
      // Stream 10's own; then 1e9 + pid × 1024 + dense device: (1, 1), (2, 2), (2, 3).
      contexts: [100, 1e9 + 1024 + 1, 1e9 + 2048 + 2, 1e9 + 2048 + 3],
      contextPids: [1, 1, 2, 2],
    });
  });

  it('refuses tables whose columns disagree in length, by name', () => {
    const r = inputs();
    r.tableStreamContext = Float64Array.of(100);
    expect(() => denseIndicesNatively(r)).toThrow(/denseIndices: tableStreamContext/);
  });
});
