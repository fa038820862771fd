// Interval arithmetic (profiler/analysis/intervals.ts) and the measure the
// communication breakdown takes instead of it (communication.ts RoleBusy):
// unions' lengths measured as the operations come (overlap.ts BusyUnion),
// the time two roles overlapped as |a| + |b| − |a ∪ b|, against the lists
// built and walked (unionOf, intersectionLength, unionOfLists).
import { describe, expect, it } from 'vitest';
import { intersectionLength, lengthOf, unionOf, unionOfLists } from '../../profiler/analysis/intervals.ts';
import { BusyUnion } from '../../profiler/analysis/overlap.ts';
import { allocateOps, type GpuOps } from '../../profiler/analysis/trace.ts';

/** Random operations in start order (integer ns, some empty, some touching, a few ending before they start), each of role 0 or 1 (device 0 or 1). */
function randomOps(n: number, seed: number): GpuOps {
  let x = seed >>> 0;
  const rnd = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  const ops = allocateOps(n);
  let t = 0;
  for (let i = 0; i < n; i++) {
    t += Math.floor(rnd() * 50);
    ops.start[i] = t;
    ops.end[i] = t + Math.floor(rnd() * 80) - 5;
    ops.device[i] = rnd() < 0.5 ? 0 : 1;
  }
  return ops;
}

describe('unions measured as the operations come', () => {
  it('give the lengths, and the overlap, of the unions built', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const ops = randomOps(200 + 37 * (seed % 5), seed);
      const [a, b, either] = [new BusyUnion(), new BusyUnion(), new BusyUnion()];
      for (let i = 0; i < ops.length; i++) {
        (ops.device[i] === 0 ? a : b).add(ops.start[i]!, ops.end[i]!);
        either.add(ops.start[i]!, ops.end[i]!);
      }
      const [listA, listB] = [unionOf(ops, 0), unionOf(ops, 1)];
      expect(a.busy().union).toBe(lengthOf(listA));
      expect(b.busy().union).toBe(lengthOf(listB));
      expect(either.busy().union).toBe(lengthOf(unionOfLists([listA, listB])));
      expect(a.busy().union + b.busy().union - either.busy().union).toBe(intersectionLength(listA, listB));
    }
  });
});
