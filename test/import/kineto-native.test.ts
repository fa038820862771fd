// The native Kineto importer (native/addon/src/trace_import.cc) against the
// JavaScript one it replaced: on the real traces, the fuzz corpus and 600
// fuzz recipes (fields of the wrong type, huge numbers, lone surrogates,
// invalid UTF-8, deep nesting, the text cut), the same result and the same
// rows, table by table in rowid order with their storage classes, or the same
// one-line error (test/fixtures/import-golden/kineto.json, kineto-golden.ts).
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { GOLDEN, inputs, outcomeOf, type Outcome } from './kineto-golden.ts';
import { tempDir } from '../helpers/native.ts';

const golden = JSON.parse(fs.readFileSync(GOLDEN, 'utf8')) as Record<string, Outcome>;
const dir = tempDir('kineto-native');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the native Kineto importer against the JavaScript one', () => {
  const all = inputs();
  it('covers every recorded input', () => {
    expect(all.map((i) => i.name).sort()).toEqual(Object.keys(golden).sort());
  });
  for (const input of all) {
    it(input.name, async () => {
      expect(await outcomeOf(input, dir)).toEqual(golden[input.name]);
    });
  }
});
