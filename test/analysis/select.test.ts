// Selection without sorting (profiler/analysis/select.ts) against a sort,
// on the inputs that break naive quickselects: sorted, reversed, constant,
// few distinct values, and random.
import { describe, expect, it } from 'vitest';
import { kthSmallest } from '../../profiler/analysis/select.ts';

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const inputs: Record<string, (n: number) => Float64Array> = {
  random: (n) => {
    const r = lcg(7);
    return Float64Array.from({ length: n }, () => r() * 1e6);
  },
  sorted: (n) => Float64Array.from({ length: n }, (_, i) => i),
  reversed: (n) => Float64Array.from({ length: n }, (_, i) => n - i),
  constant: (n) => new Float64Array(n).fill(1500),
  'few distinct': (n) => {
    const r = lcg(3);
    return Float64Array.from({ length: n }, () => Math.floor(r() * 4) * 100);
  },
  'organ pipe': (n) => Float64Array.from({ length: n }, (_, i) => Math.min(i, n - i)),
};

describe('kthSmallest', () => {
  for (const [name, make] of Object.entries(inputs)) {
    it(`${name}: every rank matches a sort`, () => {
      for (const n of [1, 2, 3, 10, 101, 1000]) {
        const sorted = make(n).sort();
        for (const k of new Set([0, 1, n >> 1, n - 2, n - 1].filter((k) => k >= 0 && k < n))) {
          expect(kthSmallest(make(n), k), `n=${n} k=${k}`).toBe(sorted[k]);
        }
      }
    });
  }

  it('a rank outside the array is an error, not a wrong answer', () => {
    expect(() => kthSmallest(new Float64Array(3), 3)).toThrow(RangeError);
    expect(() => kthSmallest(new Float64Array(0), 0)).toThrow(RangeError);
  });
});
