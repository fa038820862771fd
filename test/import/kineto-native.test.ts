// The native Kineto importer (native/addon/src/trace_import.cc) against the
// recorded behaviour of the JavaScript one it replaced (rewritten once since,
// kineto-golden.ts says when and what changed): on the real traces, the fuzz
// corpus and 600 fuzz recipes (fields of the wrong type, huge numbers, lone
// surrogates, invalid UTF-8, deep nesting, the text cut), the same result and
// the same rows, table by table in rowid order with their storage classes, or
// the same one-line error (test/fixtures/import-golden/kineto.json), through
// both of its paths: simdjson, and JSON.parse for every event (the path of an
// event simdjson refuses, which no real trace takes otherwise); and the
// generic Chrome importer, which reads through the same scan, likewise
// (chrome.json).
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { CHROME_GOLDEN, GOLDEN, inputs, outcomeOf, type Outcome } from './kineto-golden.ts';
import { tempDir } from '../helpers/native.ts';

const golden = JSON.parse(fs.readFileSync(GOLDEN, 'utf8')) as Record<string, Outcome>;
const chromeGolden = JSON.parse(fs.readFileSync(CHROME_GOLDEN, 'utf8')) as Record<string, Outcome>;
const dir = tempDir('kineto-native');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
// Made once: materialize() is not pure (a header entry it does not copy is mutated), so a second list would differ
// from the one the golden files were written from.
const all = inputs();

describe('the native Kineto importer against the JavaScript one', () => {
  it('covers every recorded input', () => {
    expect(all.map((i) => i.name).sort()).toEqual(Object.keys(golden).sort());
  });
  for (const input of all) {
    it(input.name, async () => {
      expect(await outcomeOf(input, dir)).toEqual(golden[input.name]);
      expect(await outcomeOf(input, dir, 'kineto', { parseAllInJs: true })).toEqual(golden[input.name]);
    });
  }
});

// The generic Chrome importer maps in JavaScript but reads through the same native scan (it had a JavaScript one).
describe('the generic Chrome importer through the native scan against its JavaScript reader', () => {
  for (const input of all) {
    it(input.name, async () => {
      expect(await outcomeOf(input, dir, 'chrome')).toEqual(chromeGolden[input.name]);
    });
  }
});
