// A merge writes the big tables (operations, calls, ranges) as SQLite pages
// of its own, on all cores (native/addon/src/page_merge.cc): the file must
// be one SQLite reads as sound (integrity_check over the pages as written,
// not rebuilt by VACUUM) and the SQL merge's (`pages: false`), equal in
// every row: the same ids, times, pids, strings, devices, zones and
// provenance. Checked on the cases where the plan (plan.ts) does more than
// add offsets: real recordings of different programs (strings and devices
// merged by value), ranks that share a pid (renumbered), kernel names
// interned in another order per rank (strings moved), an input with gaps in
// its ids (a capture range), a merge of merged recordings (sources of
// sources), and tables of one row and of thousands of leaf pages.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateRanks } from '../../bench/generate-ranks.ts';
import { parseCaptureRange } from '../../profiler/contract/record-request.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { applyCaptureRange } from '../../profiler/record/capture-range.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');

let dir: string;
beforeAll(() => {
  dir = tempDir('merge-parallel');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Copies of fixtures (opening one migrates it in place: the committed files stay as they are). */
const copies = (names: string[], tag: string) =>
  names.map((name) => {
    const to = path.join(dir, `${tag}-${name}.sqlite`);
    fs.copyFileSync(path.join(fixtures, `${name}.sqlite`), to);
    return to;
  });

/** Every table's rows in rowid order (key order for WITHOUT ROWID), hashed, with their count. */
function digest(file: string): Record<string, string> {
  const db = new Database(file, { readonly: true });
  try {
    const out: Record<string, string> = {};
    for (const t of db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all() as string[]) {
      const withoutRowid = /WITHOUT ROWID/i.test(db.prepare('SELECT sql FROM sqlite_schema WHERE name = ?').pluck().get(t) as string);
      const h = crypto.createHash('sha256');
      let n = 0;
      for (const row of db
        .prepare(`SELECT * FROM "${t}"${withoutRowid ? '' : ' ORDER BY rowid'}`)
        .raw()
        .iterate()) {
        h.update(JSON.stringify(row));
        n++;
      }
      out[t] = `${n} rows ${h.digest('hex').slice(0, 16)}`;
    }
    out.integrity = String(db.pragma('integrity_check', { simple: true }));
    out.foreignKeys = JSON.stringify(db.pragma('foreign_key_check'));
    return out;
  } finally {
    db.close();
  }
}

/** Merges `inputs` in SQL and as pages; expects the same recording, and the pages to be sound as written. */
function mergedAlike(inputs: string[], name: string): string {
  const one = path.join(dir, `${name}-sql.sqlite`);
  const two = path.join(dir, `${name}-pages.sqlite`);
  expect(mergeRecordings(inputs, one, { pages: false }).bigTables).toBe('sql');
  const r = mergeRecordings(inputs, two, { compact: false });
  expect([r.bigTables, r.sqlBecause]).toEqual(['pages', null]);
  const pages = digest(two);
  expect(pages.integrity).toBe('ok');
  expect(pages).toEqual(digest(one));
  // Nothing left beside the output: no scratch recording, no partial file.
  expect(fs.readdirSync(dir).filter((f) => f.includes('.writing'))).toEqual([]);
  return one;
}

describe('a merge written as pages is the merge in SQL', () => {
  it('real recordings of different programs and GPUs', () => {
    mergedAlike(
      copies(['matmul-concurrent', 'normalise-concurrent', 'torch_streams', 'matmul-multi-gpu-h200x2', 'torchrun-node', 'torchrun-rank'], 'real'),
      'real',
    );
  });

  it('ranks with one pid and kernel names interned in another order each', () => {
    const ranks = generateRanks(path.join(dir, 'ranks'), 6, 3000, 4).map((r) => r.file);
    mergedAlike(ranks, 'ranks');
  });

  it('an input with gaps in its ids', () => {
    const [first, captured, last] = copies(['matmul-serial', 'nvtx_nvtx', 'transpose-serial'], 'gaps');
    const db = openRecording(captured!);
    applyCaptureRange(db, parseCaptureRange('nvtx:ss_nvtx_main'));
    db.close();
    mergedAlike([first!, captured!, last!], 'gaps');
  });

  it('a merge of merged recordings', () => {
    const a = mergedAlike(copies(['matmul-serial', 'transpose-serial', 'numba_streams'], 'lower-a'), 'lower-a');
    const b = mergedAlike(copies(['normalise-serial', 'cupy_streams'], 'lower-b'), 'lower-b');
    mergedAlike([a, b, ...copies(['matmul-events'], 'upper')], 'upper');
  });
});
