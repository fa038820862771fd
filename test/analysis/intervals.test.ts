// Interval arithmetic (profiler/analysis/intervals.ts): the length of a union
// of sorted lists walked in place (lengthOfUnion, what the communication
// breakdown asks of every rank) against the union built (unionOfLists).
import { describe, expect, it } from 'vitest';
import { lengthOf, lengthOfUnion, unionOf, unionOfLists, type IntervalList } from '../../profiler/analysis/intervals.ts';
import { allocateOps } from '../../profiler/analysis/trace.ts';

/** A sorted disjoint list as unionOf builds it from random operations (integer ns, some empty, some touching). */
function randomList(n: number, seed: number): IntervalList {
  let x = seed >>> 0;
  const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const ops = allocateOps(n);
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += Math.floor(rnd() * 50);
    ops.start[i] = t;
    ops.end[i] = t + Math.floor(rnd() * 80) - 5; // a few end before they start: left out
  }
  return unionOf(ops, 0);
}

describe('lengthOfUnion', () => {
  it('is the length of the union of the lists, for any lists', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const lists = Array.from({ length: 1 + (seed % 4) }, (_, k) => randomList(200 + 37 * k, seed * 7 + k));
      expect(lengthOfUnion(lists)).toBe(lengthOf(unionOfLists(lists)));
    }
    expect(lengthOfUnion([])).toBe(0);
    expect(lengthOfUnion([Float64Array.of(), Float64Array.of(5, 10)])).toBe(5);
    // Touching and nested.
    expect(lengthOfUnion([Float64Array.of(0, 10, 20, 30), Float64Array.of(10, 20, 25, 26)])).toBe(30);
  });
});
