// Stepping through paged search matches (search-pages.ts).
import { describe, expect, it } from 'vitest';
import { matchNumber, planStep, type SearchPosition } from './search-pages.ts';

const cursor = (id: number) => ({ startNs: id * 10, table: 'kernels' as const, id });
const at = (page: number, index: number, length: number, total: number): SearchPosition => ({
  page,
  pageSize: 3,
  length,
  index,
  total,
  cursors: [undefined, cursor(3), cursor(6)].slice(0, page + 1),
});

describe('planStep', () => {
  it('steps within a page, and starts at either end', () => {
    expect(planStep(at(0, -1, 3, 8), 1, cursor(3))).toEqual({ kind: 'within', index: 0 });
    expect(planStep(at(0, -1, 3, 3), -1, cursor(3))).toEqual({ kind: 'within', index: 2 });
    expect(planStep(at(0, 1, 3, 8), 1, cursor(3))).toEqual({ kind: 'within', index: 2 });
    expect(planStep(at(1, 1, 3, 8), -1, cursor(6))).toEqual({ kind: 'within', index: 0 });
  });
  it('fetches the next page after the last match, and the previous one by its cursor', () => {
    expect(planStep(at(0, 2, 3, 8), 1, cursor(3))).toEqual({ kind: 'fetch', page: 1, after: cursor(3), index: 'first' });
    expect(planStep(at(1, 2, 3, 8), 1, cursor(6))).toEqual({ kind: 'fetch', page: 2, after: cursor(6), index: 'first' });
    expect(planStep(at(2, 0, 2, 8), -1, cursor(8))).toEqual({ kind: 'fetch', page: 1, after: cursor(3), index: 'last' });
    expect(planStep(at(1, 0, 3, 8), -1, cursor(6))).toEqual({ kind: 'fetch', page: 0, after: undefined, index: 'last' });
  });
  it('wraps from the last match of all to the first', () => {
    expect(planStep(at(2, 1, 2, 8), 1, cursor(8))).toEqual({ kind: 'fetch', page: 0, after: undefined, index: 'first' });
    expect(planStep(at(0, 2, 3, 3), 1, cursor(3))).toEqual({ kind: 'within', index: 0 });
    expect(planStep(at(0, 0, 3, 3), -1, cursor(3))).toEqual({ kind: 'within', index: 2 });
    expect(planStep(at(0, 0, 3, 8), -1, cursor(3))).toEqual({ kind: 'within', index: 0 }); // the last page is unknown
  });
  it('numbers a match among all', () => {
    expect(matchNumber(at(2, 1, 2, 8))).toBe(8);
    expect(matchNumber(at(0, 0, 3, 8))).toBe(1);
  });
});
