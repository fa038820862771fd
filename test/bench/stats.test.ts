// The benchmarks' summaries (bench/stats.ts): the collector-overhead ratio
// is judged against 1.05, so its estimator and interval must be right on
// data shaped like the real runs (two clusters, drifting rounds).
import { describe, expect, it } from 'vitest';
import { median, pairedAdded, pairedAddedRatio, trimmedMean } from '../../bench/stats.ts';

describe('bench statistics', () => {
  it('median of odd and even counts', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
  });

  it('trimmed mean drops a tenth at each end', () => {
    const xs = [100, 1, 2, 3, 4, 5, 6, 7, 8, -100];
    expect(trimmedMean(xs)).toBe(4.5);
    expect(trimmedMean(xs, 0)).toBe(3.6);
  });

  it('a known ratio is found, its interval holds it, and drifts between rounds cancel', () => {
    // 40 rounds; each round's clock drifts (+0..4 µs to all three modes alike);
    // mode a adds 2 µs, mode b 2.2 µs (ratio 1.1), each ± a cluster jump of 1 µs.
    const base: number[] = [];
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < 40; i++) {
      const drift = (i * 7) % 5;
      base.push(4 + drift);
      a.push(4 + drift + 2 + (i % 2 ? 0.5 : -0.5));
      b.push(4 + drift + 2.2 + (i % 3 ? 0.5 : -0.5));
    }
    const est = pairedAddedRatio(base, a, b);
    expect(est.aAdded).toBeCloseTo(2, 1);
    expect(est.ratio).toBeGreaterThan(1.05);
    expect(est.ratio).toBeLessThan(1.2);
    expect(est.low).toBeLessThanOrEqual(est.ratio);
    expect(est.high).toBeGreaterThanOrEqual(est.ratio);
    expect(est.high - est.low).toBeLessThan(0.3);
    // Seeded: the same runs give the same interval.
    expect(pairedAddedRatio(base, a, b)).toEqual(est);
  });

  it('what a mode adds with nothing to divide by: an interval that holds 0 for a mode that adds nothing', () => {
    const base = Array.from({ length: 30 }, (_, i) => 3000 + ((i * 37) % 11) * 30);
    const same = base.map((b, i) => b + (i % 2 ? 150 : -150));
    const more = base.map((b, i) => b + 300 + (i % 2 ? 150 : -150));
    const none = pairedAdded(base, same);
    expect(none.low).toBeLessThan(0);
    expect(none.high).toBeGreaterThan(0);
    const some = pairedAdded(base, more);
    expect(some.added).toBeCloseTo(300, 0);
    expect(some.low).toBeGreaterThan(150);
    expect(some.high).toBeLessThan(450);
  });
});
