// renderTable (report/table.ts), the report's text tables: columns as wide
// as their widest cell, numbers right-aligned, and any number of rows — a
// report of 130 k distinct kernel names once ended with a RangeError (a
// Math.max spread of every cell overflowed the stack; issue 27).
import { describe, expect, it } from 'vitest';
import { renderTable } from '../../profiler/report/table.ts';

describe('renderTable', () => {
  it('pads text left-aligned and numbers right-aligned to the widest cell', () => {
    expect(
      renderTable(
        ['kernel', 'count'],
        [
          ['a', 1],
          ['longer_name', 12345],
        ],
      ).split('\n'),
    ).toEqual(['  kernel       count', '  -----------  -----', '  a                1', '  longer_name  12345']);
  });

  it('renders 300,000 rows', () => {
    const rows = Array.from({ length: 300_000 }, (_, i) => [`kernel_${i}`, i]);
    const lines = renderTable(['kernel', 'count'], rows).split('\n');
    expect(lines).toHaveLength(300_002);
    expect(lines.at(-1)).toBe('  kernel_299999  299999');
  });
});
