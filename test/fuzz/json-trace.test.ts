// The import-json fuzz target's generator (test/fuzz/lib/json-trace.ts):
// a device mutation writes into the device list it finds, which may be a
// value fast-check hands out shared (its constants), so a list can come to
// hold the device that holds it (seed 543302795: the writer recursed
// without end, a red fuzz pass). Such a file is written, the value inside
// itself as null; and the same recipe, the same bytes.
import { describe, expect, it } from 'vitest';
import { materialize, type JsonRecipe } from './lib/json-trace.ts';

const recipe = (header: JsonRecipe['header']): JsonRecipe => ({
  fixture: 0,
  window: { start: 0, length: 4 },
  metadata: false,
  bareArray: false,
  header,
  events: [],
  text: [],
  format: null,
});

describe('the import-json target’s files', () => {
  it('a device set to the list that holds it is written, the list inside itself as null', () => {
    const list = [{ name: 'A' }, { name: 'B' }];
    const bytes = materialize(
      recipe([
        { key: 'deviceProperties', change: { op: 'set', value: list } },
        { device: 0, key: 'name', change: { op: 'set', value: list } },
      ]),
    );
    const written = JSON.parse(bytes.toString('utf8')) as { deviceProperties: { name: unknown }[] };
    expect(written.deviceProperties).toEqual([{ name: null }, { name: 'B' }]);
  });

  it('the same recipe, the same bytes', () => {
    const r = recipe([{ device: 0, key: 'name', change: { op: 'twice', value: 'x' } }]);
    expect(materialize(r).equals(materialize(r))).toBe(true);
  });
});
