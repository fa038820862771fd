// Edge cases of the busy-time arithmetic on hand-built intervals. The
// scenario expectations on real H100 recordings live in
// test/analysis/recordings.test.ts.
import { describe, expect, it } from 'vitest';
import { unionOf } from '../../profiler/analysis/intervals.ts';
import { BusyUnion, busyOf, deviceUnions } from '../../profiler/analysis/overlap.ts';
import { allocateOps, type GpuOps, type Trace } from '../../profiler/analysis/trace.ts';

function ops(intervals: [number, number][]): GpuOps {
  const sorted = [...intervals].sort((a, b) => a[0] - b[0]);
  const n = sorted.length;
  const o = allocateOps(n);
  o.kind.fill(1);
  sorted.forEach(([s, e], i) => {
    o.rowId[i] = i + 1;
    o.start[i] = s;
    o.end[i] = e;
  });
  return o;
}

const all = () => true;

describe('busyOf', () => {
  it('gives factor 1 for back-to-back work', () => {
    const b = busyOf(
      ops([
        [0, 10],
        [10, 20],
        [20, 35],
      ]),
      all,
    );
    expect(b).toEqual({ count: 3, sum: 35, union: 35, overlapFactor: 1 });
  });

  it('counts idle gaps out of the union', () => {
    const b = busyOf(
      ops([
        [0, 10],
        [50, 60],
      ]),
      all,
    );
    expect(b.union).toBe(20);
    expect(b.overlapFactor).toBe(1);
  });

  it('gives factor 2 for two fully overlapping operations', () => {
    const b = busyOf(
      ops([
        [0, 100],
        [0, 100],
      ]),
      all,
    );
    expect(b.overlapFactor).toBe(2);
  });

  it('handles nesting and partial overlap', () => {
    // [0,100] contains [10,20]; [90,150] overlaps its end: union = 150, sum = 100 + 10 + 60.
    const b = busyOf(
      ops([
        [0, 100],
        [10, 20],
        [90, 150],
      ]),
      all,
    );
    expect(b.union).toBe(150);
    expect(b.sum).toBe(170);
    expect(b.overlapFactor).toBeCloseTo(170 / 150, 12);
  });

  it('returns null factor when nothing ran, and ignores reversed intervals', () => {
    expect(busyOf(ops([]), all).overlapFactor).toBeNull();
    const b = busyOf(
      ops([
        [5, 3],
        [10, 20],
      ]),
      all,
    );
    expect(b.count).toBe(1);
    expect(b.sum).toBe(10);
  });

  it('filters with the accept predicate', () => {
    const o = ops([
      [0, 10],
      [0, 10],
      [0, 10],
    ]);
    expect(busyOf(o, (i) => i !== 1).overlapFactor).toBe(2);
  });
});

describe('kept unions', () => {
  // Touching, nested, zero-length and reversed intervals, on two devices.
  const o = ops([
    [0, 10],
    [10, 20],
    [15, 18],
    [30, 30],
    [30, 40],
    [45, 45],
    [50, 48],
    [60, 70],
    [65, 90],
    [100, 110],
  ]);
  o.device.forEach((_, i) => (o.device[i] = i % 3 === 0 ? 1 : 0));

  it('BusyUnion writes the union unionOf builds, past its room too', () => {
    for (const room of [0, 1, 20]) {
      const u = new BusyUnion(room);
      for (let i = 0; i < o.length; i++) u.add(o.start[i]!, o.end[i]!);
      const whole = allocateOps(o.length);
      whole.start.set(o.start);
      whole.end.set(o.end);
      expect(Array.from(u.intervals())).toEqual(Array.from(unionOf(whole, 0)));
      expect(u.busy().union).toBe(20 + 10 + 30 + 10);
    }
  });

  it("deviceUnions: each device's union as unionOf builds it, devices in the order they first come", () => {
    const busy = deviceUnions({ ops: o, devices: [] } as unknown as Trace);
    expect([...busy.keys()]).toEqual([1, 0]);
    for (const [d, b] of busy) {
      expect(Array.from(b.union)).toEqual(Array.from(unionOf(o, d)));
      expect(b.operations).toBe(Array.from(o.device).filter((x) => x === d).length);
    }
  });
});
