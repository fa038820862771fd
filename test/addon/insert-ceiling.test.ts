// The ingest benchmark's ceiling (native/addon/src/insert_ceiling.h): the
// rows a recording made by the ingest holds, stored again through the
// ingest's own statements, settings, batches (Ingest::kBatchRows) and
// final SQL, give a recording with exactly the ingest's rows; a failed
// write fails as the ingest's do, naming the target.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingest, insertCeiling } from '../../profiler/native/addon.ts';
import { decodeHeader } from '../../profiler/record/decoder.ts';
import { beginBulkLoad, createRecording, endBulkLoad, openRecording } from '../../profiler/store/database.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';

let dir: string;
beforeAll(() => {
  dir = tempDir('insert-ceiling');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A fresh recording stored by `store` as the recorder stores one: indexes dropped for the load, built by its final SQL. */
async function recorded(name: string, store: (file: string, finalSql: string[]) => Promise<void>): Promise<string> {
  const file = path.join(dir, `${name}.sqlite`);
  const db = createRecording(file, { overwrite: true });
  const finalSql = beginBulkLoad(db);
  db.close();
  await store(file, finalSql);
  const again = openRecording(file);
  endBulkLoad(again);
  again.close();
  return file;
}

const tables = [
  'strings',
  'processes',
  'threads',
  'devices',
  'contexts',
  'streams',
  'kernels',
  'memcpys',
  'memsets',
  'syncs',
  'api_calls',
  'nvtx_ranges',
  'zones',
];

describe('InsertCeiling', () => {
  it("stores exactly the ingest's rows, tables of more than one batch included", async () => {
    // 150,000 launches: kernels and API calls each more than one batch of 131,072 rows.
    const { stream } = syntheticStream(dir, 'launches', ['--bench-launches', '150000']);
    const header = decodeHeader(new Uint8Array(fs.readFileSync(stream).subarray(0, 64)), stream);
    const source = await recorded('source', async (file, finalSql) => {
      const ingest = new Ingest(file, { originNs: header.origin_ns });
      await ingest.ingestFile(stream, { final: true });
      await ingest.finish({ finalSql });
    });
    const ceiling = insertCeiling(source);
    let stored = 0;
    const target = await recorded('target', async (file, finalSql) => {
      stored = ceiling.insert(file, { finalSql }).rows;
    });
    expect(stored).toBe(ceiling.rows);
    const db = new Database(target, { readonly: true });
    try {
      db.prepare('ATTACH ? AS source').run(source);
      for (const t of tables) {
        const count = (db.prepare(`SELECT count(*) AS n FROM source.${t}`).get() as { n: number }).n;
        const differ = db.prepare(`SELECT count(*) AS n FROM (SELECT * FROM source.${t} EXCEPT SELECT * FROM main.${t})`).get() as { n: number };
        expect(differ.n, t).toBe(0);
        expect((db.prepare(`SELECT count(*) AS n FROM main.${t}`).get() as { n: number }).n, t).toBe(count);
      }
      expect((db.prepare('SELECT count(*) AS n FROM kernels').get() as { n: number }).n).toBeGreaterThan(131072);
      // The final SQL ran: the indexes are there.
      const indexes = (db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL").get() as { n: number }).n;
      expect(indexes).toBeGreaterThan(0);
    } finally {
      db.close();
    }
    // A second insert into the same target: its rows' ids are taken, and the write fails as the ingest's do.
    expect(() => ceiling.insert(target, { finalSql: [] })).toThrow(`${target}: database write failed: UNIQUE constraint failed`);
  });
});
