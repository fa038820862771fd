// The column loader's columns have one definition,
// native/addon/src/timeline_columns.h: the C++ structs, the loops over every
// column and the JS objects are expanded from it. TypeScript cannot read a
// C++ header, so profiler/native/addon.ts spells the lists out (OP_COLUMNS,
// CALL_COLUMNS) and derives OpColumns and CallColumns from them. A column
// added, renamed or given another type on one side only fails here, by name.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CALL_COLUMNS, loadTimelineColumns, nativeVocabulary, OP_COLUMNS } from '../../profiler/native/addon.ts';

const fixture = path.resolve(import.meta.dirname, '../fixtures/recordings/torch_streams.sqlite');

/** name → 'Float64Array' etc., and length → 'number', of a loaded result. */
function shape(columns: object): Record<string, string> {
  return Object.fromEntries(Object.entries(columns).map(([k, v]: [string, unknown]) => [k, k === 'length' ? typeof v : (v as object).constructor.name]));
}

describe('timeline columns: timeline_columns.h and profiler/native/addon.ts', () => {
  it('the addon lists the same op and call columns, with the same typed arrays, as addon.ts declares', () => {
    const { timelineColumns } = nativeVocabulary();
    expect(timelineColumns.ops).toEqual(OP_COLUMNS);
    expect(timelineColumns.calls).toEqual(CALL_COLUMNS);
  });

  it('a loaded recording has exactly those columns', () => {
    const { ops, calls } = loadTimelineColumns(fixture);
    expect(ops.length).toBeGreaterThan(0);
    expect(shape(ops)).toEqual({ length: 'number', ...OP_COLUMNS });
    expect(shape(calls)).toEqual({ length: 'number', ...CALL_COLUMNS });
  });
});
