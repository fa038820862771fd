// The host model's latency samples (native/addon/src/latency_samples.cc) on
// ops few enough to check by hand: one op per latency, each sampled where
// one thing alone decided its start, and ops the pass must not sample.
// Every real recording among the fixtures goes through it in the replay
// tests (test/analysis/replay-identity.test.ts pins their results).
import { describe, expect, it } from 'vitest';
import { latencySamplesNatively, type LatencySamplesInputs } from '../../profiler/native/addon.ts';
import { OpCategory, OpKind } from '../../profiler/analysis/trace.ts';

const K = OpKind.Kernel;
const C = OpKind.Memcpy;
const H = OpCategory.HtoD;
const X = OpCategory.Compute;

/**
 * On one device with a copy engine per direction, in start order:
 *  0. a kernel launched by a call that returned 500 ns before it began, nothing before it on its stream: launch;
 *  1. an HtoD copy 2 µs after its call, the engine free: launch;
 *  2. an HtoD copy of another stream, issued while copy 1 ran and started 2 µs after it: engine;
 *  3. the next HtoD copy of that stream, after copy 2 (its stream's and its engine's): chain;
 *  4. a kernel of that stream, 6 µs after copy 3 it depended on: dependency;
 *  5. a kernel whose call waited for it (a synchronous launch): not sampled;
 *  6. a kernel of no call: not sampled.
 */
function inputs(samples: number): LatencySamplesInputs {
  return {
    ops: 7,
    calls: 6,
    devices: 1,
    samples,
    clearNs: 1_000,
    withinNs: 100_000,
    kind: Uint8Array.of(K, C, C, C, K, K, K),
    category: Uint8Array.of(X, H, H, H, X, X, X),
    start: Float64Array.of(10_500, 22_000, 42_000, 51_400, 66_000, 70_000, 80_000),
    end: Float64Array.of(11_000, 40_000, 50_000, 60_000, 70_000, 75_000, 85_000),
    stream: Int32Array.of(1, 2, 3, 3, 3, 1, 1),
    devOf: new Int32Array(7),
    opCall: Int32Array.of(0, 1, 2, 3, 4, 5, -1),
    depEnd: Float64Array.of(0, 0, 0, 50_000, 60_000, 11_000, 75_000),
    callEnd: Float64Array.of(10_000, 20_000, 21_000, 23_000, 24_000, 76_000),
    waitsOwn: Uint8Array.of(0, 0, 0, 0, 0, 1),
    sharedEngine: Uint8Array.of(0),
  };
}

describe('latency samples natively', () => {
  it('samples each op where one thing alone decided its start, by device × kind or engine', () => {
    const s = latencySamplesNatively(inputs(10));
    expect(s.launch).toEqual([[], [500], [2_000], []]); // by kind: kernel 1, copy 2
    expect(s.engine).toEqual([[2_000], []]); // HtoD engine
    expect(s.chain).toEqual([[1_400], []]);
    expect(s.dependency).toEqual([[], [6_000], [], []]);
    // Every sampled op's lag after its call, whatever decided its start.
    expect(s.all).toEqual([[500, 2_000, 21_000, 28_400, 42_000]]);
  });

  it('keeps the first samples of each list only', () => {
    expect(latencySamplesNatively(inputs(1)).all).toEqual([[500]]);
  });

  it('refuses a device or call index out of range and a kind it does not know, by name', () => {
    expect(() => latencySamplesNatively({ ...inputs(10), devOf: Int32Array.of(0, 0, 1, 0, 0, 0, 0) })).toThrow(
      /latencySamples: devOf\[2\] = 1 is outside 0\.\.0/,
    );
    expect(() => latencySamplesNatively({ ...inputs(10), opCall: Int32Array.of(0, 1, 2, 3, 4, 6, -1) })).toThrow(
      /latencySamples: opCall\[5\] = 6 is outside -1\.\.5/,
    );
    expect(() => latencySamplesNatively({ ...inputs(10), kind: Uint8Array.of(K, C, C, C, 9, K, K) })).toThrow(/latencySamples: kind\[4\] = 9 is no op kind/);
  });
});
