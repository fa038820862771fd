// The launch-bound rule's passes (native/addon/src/launch_gaps.cc) on
// kernels few enough to check by hand: the median launch (a graph launch
// shared out among its kernels), the short kernels the GPU idled before,
// the gaps too long to count. The fixtures' launch-bound findings go
// through it in test/analysis/early-findings.test.ts and the corpus.
import { describe, expect, it } from 'vitest';
import { launchGapsNatively, type LaunchGapsInputs } from '../../profiler/native/addon.ts';
import { OpKind } from '../../profiler/analysis/trace.ts';

const K = OpKind.Kernel;

/**
 * One device. Calls 0–3 launch one kernel each and take 10 µs; call 4 (a graph launch) takes 20 µs and launches two
 * kernels (10 µs each, as shared out). Kernels, 2 µs each: 0 at 0; 1 starts 8 µs after 0 ended; 2 20 µs after 1; 3
 * 200 µs after 2 (past 10 launches: something else held the GPU); the graph's 4 and 5 after 3, 5 µs and 0 µs apart.
 */
function inputs(minKernels: number): LaunchGapsInputs {
  const us = 1_000;
  return {
    ops: 6,
    calls: 5,
    kind: Uint8Array.of(K, K, K, K, K, K),
    start: Float64Array.of(0, 10 * us, 32 * us, 234 * us, 241 * us, 243 * us),
    end: Float64Array.of(2 * us, 12 * us, 34 * us, 236 * us, 243 * us, 245 * us),
    opCall: Int32Array.of(0, 1, 2, 3, 4, 4),
    callStart: Float64Array.of(0, 10 * us, 20 * us, 30 * us, 40 * us),
    callEnd: Float64Array.of(10 * us, 20 * us, 30 * us, 40 * us, 60 * us),
    onDevice: [Int32Array.of(0, 1, 2, 3, 4, 5)],
    minKernels,
    gapFactor: 10,
    evidence: 2,
  };
}

describe('launch gaps natively', () => {
  it('takes the median launch, a graph’s shared out, and sums the short gaps before short kernels', () => {
    const [d] = launchGapsNatively(inputs(3));
    expect(d).toEqual({
      kernels: 6,
      launches: 6,
      launchNs: 10_000, // six launches of 10 µs (the graph's 20 µs over its two kernels)
      short: 3, // kernels 1 (8 µs gap), 2 (20 µs) and 4 (5 µs); 0 has no gap, 3's is past 100 µs, 5 none
      idleNs: 8_000 + 20_000 + 5_000,
      evidence: [1, 2], // the first two
    });
  });

  it('takes the upper median of launches of every kind of duration: few values, many, fractions, a graph’s shares', () => {
    // Kernel k launched by call k (call k of a graph launch: two kernels), durations from a fixed generator; the
    // median as a sort gives it, the element at n / 2.
    let seed = 7;
    const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    for (const duration of [() => 3_000 + 1_000 * Math.floor(rnd() * 3), () => 1_000 + rnd() * 199_000, () => Math.floor(rnd() * 8) / 3]) {
      const calls = 20_000;
      const kernelsOf = (k: number) => (k % 97 === 0 ? 2 : 1);
      const opCall = Int32Array.from(Array.from({ length: calls }, (_, k) => k).flatMap((k) => (kernelsOf(k) === 2 ? [k, k] : [k])));
      const n = opCall.length;
      const callStart = Float64Array.from({ length: calls }, (_, k) => k * 1_000_000);
      const callEnd = callStart.map((s) => s + duration());
      const [d] = launchGapsNatively({
        ops: n,
        calls,
        kind: new Uint8Array(n).fill(K),
        start: Float64Array.from(opCall, (k) => callEnd[k]! + 10),
        end: Float64Array.from(opCall, (k) => callEnd[k]! + 20),
        opCall,
        callStart,
        callEnd,
        onDevice: [Int32Array.from({ length: n }, (_, i) => i)],
        minKernels: 3,
        gapFactor: 10,
        evidence: 0,
      });
      const costs = Array.from(opCall, (k) => (callEnd[k]! - callStart[k]!) / kernelsOf(k)).sort((a, b) => a - b);
      expect(d).toHaveProperty('launchNs', costs[n >> 1]);
    }
  });

  it('measures nothing where the kernels are too few', () => {
    expect(launchGapsNatively(inputs(7))).toEqual([{ kernels: 6, launches: 6 }]);
  });

  it('refuses an op index out of range and a list that is not an Int32Array, by name', () => {
    expect(() => launchGapsNatively({ ...inputs(3), onDevice: [Int32Array.of(0, 6)] })).toThrow(/launchGaps: onDevice\[1\] = 6 is outside 0\.\.5/);
    expect(() => launchGapsNatively({ ...inputs(3), onDevice: [Float64Array.of(0) as never] })).toThrow(/launchGaps: onDevice\[0\] is not an Int32Array/);
  });
});
