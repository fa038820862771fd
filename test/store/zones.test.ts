// Zones (the block-range index of the timeline tables, SCHEMA.md "Zones"):
// range and correlation queries through them return exactly what a full
// scan returns, on rows zoned by the native ingest (batched, lane-sorted)
// and on rows zoned by SQL (a recording migrated from schema version 2).
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingest } from '../../profiler/native/addon.ts';
import { decodeHeader } from '../../profiler/record/decoder.ts';
import { beginBulkLoad, createRecording, endBulkLoad, openRecording } from '../../profiler/store/database.ts';
import { ZONED_TABLES, type ZonedTable } from '../../profiler/store/zone-tables.ts';
import { itemsInWindow, rowsByCorrelation } from '../../profiler/store/zones.ts';
import fs from 'node:fs';
import { syntheticStream, tempDir } from '../helpers/native.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const tables = Object.keys(ZONED_TABLES) as ZonedTable[];

// A deterministic generator: the windows are random but reproducible.
function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

function checkRecording(db: Database.Database): { windows: number; lookups: number } {
  let windows = 0;
  let lookups = 0;
  const rnd = lcg(7);
  for (const table of tables) {
    const t = ZONED_TABLES[table];
    // Every row is covered: the zones' row counts per lane are the table's.
    const counted = db.prepare(`SELECT ${t.lane} AS lane, count(*) AS n FROM ${table} GROUP BY lane ORDER BY lane`).all();
    const zoned = db.prepare('SELECT lane, sum(rows) AS n FROM zones WHERE table_id = ? GROUP BY lane ORDER BY lane').all(t.id);
    expect(zoned, table).toEqual(counted);
    const span = db.prepare(`SELECT min(start_ns) AS s, max(${t.end}) AS e FROM ${table}`).get() as { s: number | null; e: number | null };
    if (span.s === null || span.e === null) continue;
    for (const { lane } of counted as { lane: number }[]) {
      for (let i = 0; i < 6; i++) {
        const a = span.s + Math.floor(rnd() * (span.e - span.s + 1));
        const b = i === 0 ? span.e : a + Math.floor(rnd() * (span.e - a + 1) * (i % 2 ? 0.01 : 0.3));
        const got = itemsInWindow<{ id: number }>(db, table, lane, a, b, 't.id').map((r) => r.id);
        const want = db
          .prepare(`SELECT id FROM ${table} WHERE ${t.lane} = ? AND start_ns <= ? AND ${t.end} >= ? ORDER BY start_ns, id`)
          .all(lane, b, a)
          .map((r) => (r as { id: number }).id);
        expect(got, `${table} lane ${lane} [${a}, ${b}]`).toEqual(want);
        windows++;
      }
    }
    if (t.correlation === 'NULL') continue;
    const pidOf = table === 'syncs' || table === 'api_calls' ? 'pid' : '(SELECT pid FROM contexts c WHERE c.id = context_id)';
    const sample = db.prepare(`SELECT id, correlation_id AS corr, ${pidOf} AS pid FROM ${table} ORDER BY random() LIMIT 40`).all() as {
      id: number;
      corr: number;
      pid: number;
    }[];
    for (const s of sample) {
      const want = db
        .prepare(`SELECT id FROM ${table} WHERE correlation_id = ? AND ${pidOf} = ? ORDER BY id`)
        .all(s.corr, s.pid)
        .map((r) => (r as { id: number }).id);
      expect(rowsByCorrelation<{ id: number }>(db, table, s.pid, s.corr, 't.id').map((r) => r.id)).toEqual(want);
      lookups++;
    }
  }
  return { windows, lookups };
}

describe('zones', () => {
  let dir: string;
  let ingested: string;
  beforeAll(async () => {
    dir = tempDir('zones');
    // 30 000 launches over several streams, ingested in three calls as a
    // live recording would be (each call is a batch with its own zones).
    const { stream } = syntheticStream(dir, 'launches', ['--bench-launches', '30000']);
    const bytes = fs.readFileSync(stream);
    const header = decodeHeader(new Uint8Array(bytes.subarray(0, 64)), stream);
    ingested = path.join(dir, 'ingested.sqlite');
    const db = createRecording(ingested);
    const indexSql = beginBulkLoad(db);
    db.close();
    const partial = path.join(dir, 'growing.ssr');
    const ingest = new Ingest(ingested, { originNs: header.origin_ns });
    for (const part of [1 / 3, 2 / 3, 1]) {
      fs.writeFileSync(partial, bytes.subarray(0, Math.floor(bytes.length * part)));
      await ingest.ingestFile(partial, { final: part === 1 });
    }
    await ingest.finish({ finalSql: indexSql });
    const again = openRecording(ingested);
    endBulkLoad(again);
    again.close();
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('native ingest: each zone is one contiguous run of one lane, and queries equal full scans', () => {
    const db = new Database(ingested, { readonly: true });
    try {
      const loose = db.prepare('SELECT count(*) AS n FROM zones WHERE last_id - first_id + 1 != rows').get() as { n: number };
      expect(loose.n).toBe(0);
      expect((db.prepare('SELECT count(*) AS n FROM zones').get() as { n: number }).n).toBeGreaterThan(10);
      const { windows, lookups } = checkRecording(db);
      expect(windows).toBeGreaterThan(20);
      expect(lookups).toBeGreaterThan(40);
    } finally {
      db.close();
    }
  });

  it('SQL-built zones of migrated H100 recordings answer the same as full scans', () => {
    for (const name of ['normalise-concurrent', 'torch_streams', 'multiprocess_cupy', 'normalise-multi-gpu-h200x2']) {
      const db = new Database(path.join(fixtures, `${name}.sqlite`), { readonly: true });
      try {
        const { windows } = checkRecording(db);
        expect(windows, name).toBeGreaterThan(10);
      } finally {
        db.close();
      }
    }
  });

  it('reads zones by key and the table by rowid range (no table scan)', () => {
    const db = new Database(path.join(fixtures, 'normalise-concurrent.sqlite'), { readonly: true });
    try {
      const plan = (sql: string, ...args: number[]) =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as { detail: string }[]).map((r) => r.detail).join(' | ');
      // The shape of the SQL itemsInWindow prepares.
      const sql = `SELECT t.id FROM zones z CROSS JOIN kernels t ON t.id BETWEEN z.first_id AND z.last_id
        WHERE z.table_id = 1 AND z.lane = ? AND z.start_ns <= ? AND z.end_ns >= ?
          AND t.stream_id = ? AND t.start_ns <= ? AND t.end_ns >= ? ORDER BY t.start_ns, t.id`;
      const p = plan(sql, 1, 1000, 0, 1, 1000, 0);
      expect(p).toMatch(/SEARCH z USING PRIMARY KEY \(table_id=\? AND lane=\? AND start_ns<\?\)/);
      expect(p).toMatch(/SEARCH t USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)/);
    } finally {
      db.close();
    }
  });
});
