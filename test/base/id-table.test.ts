import { describe, expect, it } from 'vitest';
import { IdTable } from '../../profiler/base/id-table.ts';

describe('IdTable', () => {
  it('finds what was set over a dense span, from its smallest id, and `missing` elsewhere', () => {
    const ids = Int32Array.from({ length: 1000 }, (_, i) => 5000 + 2 * i);
    const t = IdTable.of(ids, -7);
    for (const id of ids) t.set(id, id % 97);
    for (const id of ids) expect(t.get(id)).toBe(id % 97);
    for (const id of [-1, 0, 4999, 5001, 6999, 7000, 2 ** 31, Number.MAX_SAFE_INTEGER]) expect(t.get(id)).toBe(-7);
  });

  it('takes ids far apart (a damaged or foreign file) without an array over their span', () => {
    // An array over [1, 2^40] cannot be allocated: this throws unless the table is a Map.
    const ids = [1, 2 ** 40, -(2 ** 35), 2129885542];
    const t = IdTable.of(new Set(ids));
    ids.forEach((id, k) => t.set(id, k));
    ids.forEach((id, k) => expect(t.get(id)).toBe(k));
    expect(t.get(2)).toBe(-1);
  });

  it('reads `missing` for every id when made for none', () => {
    const t = new IdTable(0, 0, 0, 3);
    t.set(0, 9);
    expect(t.get(0)).toBe(3);
    expect(IdTable.of([]).get(1)).toBe(-1);
  });
});
