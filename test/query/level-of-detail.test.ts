// Level of detail of one row: what merges, what stays an item, and the bound.
import { describe, expect, it } from 'vitest';
import { nestingDepths, RowBuilder } from '../../profiler/query/level-of-detail.ts';

const ref = (id: number) => ({ table: 'nvtx_ranges' as const, id });

describe('RowBuilder', () => {
  it('items of a pixel or more stay items; shorter ones closer than a pixel merge, coloured by the majority', () => {
    const b = new RowBuilder(10);
    expect(b.item({ table: 'kernels', id: 1 }, 'kernel', 0, 10, 7)).toBe(true);
    b.item({ table: 'memcpys', id: 2 }, 'memcpy-h2d', 20, 22, 0);
    b.item({ table: 'kernels', id: 3 }, 'kernel', 25, 27, 0);
    b.item({ table: 'kernels', id: 4 }, 'kernel', 36, 38, 0); // 9 ns after the last: merges
    b.item({ table: 'kernels', id: 5 }, 'kernel', 48, 49, 0); // 10 ns after: a new span
    expect(b.items.map((i) => i.ref.id)).toEqual([1]);
    expect(b.coverage()).toEqual([
      { startNs: 20, endNs: 38, count: 3, kind: 'kernel' },
      { startNs: 48, endNs: 49, count: 1, kind: 'kernel' },
    ]);
  });

  it('spans merge per depth, so alternating nesting levels stay bounded by pixels', () => {
    const b = new RowBuilder(100);
    // 10 000 tiny ranges alternating between depth 1 and 2 inside 10 000 ns: 100 pixels.
    for (let i = 0; i < 10_000; i++) b.cover('nvtx', i, i + 0.5, 1, 1 + (i % 2));
    const spans = b.coverage();
    expect(spans).toHaveLength(2);
    expect(spans.map((s) => s.count)).toEqual([5000, 5000]);
  });

  it('a zero resolution is one ns per pixel; a zero-length item is still drawn', () => {
    const b = new RowBuilder(0);
    expect(b.resolutionNs).toBe(1);
    b.item(ref(1), 'nvtx', 5, 5, 0, 0);
    expect(b.coverage()).toEqual([{ startNs: 5, endNs: 6, count: 1, kind: 'nvtx', depth: 0 }]);
  });
});

describe('nestingDepths', () => {
  it('counts the ranges still open at each start', () => {
    const ranges = [
      { start: 0, end: 100 },
      { start: 10, end: 50 },
      { start: 20, end: 30 },
      { start: 30, end: 40 },
      { start: 60, end: 70 },
      { start: 200, end: 210 },
    ];
    expect(nestingDepths(ranges)).toEqual([0, 1, 2, 2, 1, 0]);
  });
});
