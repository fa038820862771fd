// The import-json fuzz target's generator (test/fuzz/lib/json-trace.ts):
// the file made of a recipe is the same each time, whatever recipes came
// before it, and a recipe's mutations never write into values they share
// with others — the fixture's own, or fast-check's constants, handed out
// shared (seed 543302795 set a device to an array that, written into,
// came to hold that device, and the writer recursed without end).
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
  it('a device set to a list that holds it is written, and the list is left as it was', () => {
    const shared = [{ name: 'A' }, { name: 'B' }];
    const bytes = materialize(
      recipe([
        { key: 'deviceProperties', change: { op: 'set', value: shared } },
        { device: 0, key: 'name', change: { op: 'set', value: shared } },
      ]),
    );
    expect(shared).toEqual([{ name: 'A' }, { name: 'B' }]);
    const written = JSON.parse(bytes.toString('utf8')) as { deviceProperties: { name: unknown }[] };
    expect(written.deviceProperties[0]!.name).toEqual([{ name: 'A' }, { name: 'B' }]);
  });

  it('the same recipe, the same bytes: a device mutation leaves the fixture’s devices as they were', () => {
    const r = recipe([{ device: 0, key: 'name', change: { op: 'twice', value: 'x' } }]);
    const first = materialize(r);
    expect(materialize(r).equals(first)).toBe(true);
    expect(materialize(recipe([])).toString('utf8')).not.toContain('"x"');
  });
});
