// The native ingest (the Node addon, as the recorder runs it) on the
// streams that once broke it under the fuzzer (native/fuzz, the inputs
// kept in test/fixtures/fuzz/ingest/, README beside them): each is stored
// or rejected naming the file, never crashes the process; and what each
// fix promises, on the rows: a time beyond 2^53 ns of the origin is a
// corrupt record (the records before it kept), a zone whose durations sum
// past 2^63 saturates, a 64-bit field of 2^63 is not taken for NULL, a
// String id far beyond the others still names its string.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ingest } from '../../profiler/native/addon.ts';
import { createRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const kept = path.resolve(import.meta.dirname, '../fixtures/fuzz/ingest');
// The origin the fuzz target rebases onto (native/fuzz/ingest_fuzzer.cc): the crafted inputs' headers use it.
const originNs = 1763800000000000000n;

let dir: string;
beforeAll(() => {
  dir = tempDir('ingest-hostile');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function ingest(input: string): Promise<{ file: string; error: string | null }> {
  const file = path.join(dir, `${path.basename(input)}.sqlite`);
  createRecording(file, { overwrite: true }).close();
  const session = new Ingest(file, { originNs });
  let error: string | null = null;
  try {
    await session.ingestFile(input, { final: true });
  } catch (err) {
    error = (err as Error).message;
  }
  await session.finish();
  return { file, error };
}

function query<T>(file: string, sql: string): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).safeIntegers().all() as T[];
  } finally {
    db.close();
  }
}

describe('ingest: the streams the fuzzer kept', () => {
  it('stores or rejects each, naming the file, without crashing', async () => {
    const inputs = fs.readdirSync(kept).filter((f) => f !== 'README.md');
    expect(inputs.length).toBeGreaterThan(0);
    for (const f of inputs) {
      const { error } = await ingest(path.join(kept, f));
      if (error !== null) expect(error, f).toContain(path.join(kept, f));
    }
  });

  it('a time beyond 2^53 ns of the origin is a corrupt record at its byte', async () => {
    const input = path.join(kept, 'time-rebase-overflow.ssr');
    const { file, error } = await ingest(input);
    // Its start or its end, whichever the compiler rebased first: both are 2^63 - 5 or so before the origin.
    expect(error).toMatch(/: corrupt record at byte 64: ApiCall time -92233720368547757\d\d ns is more than 2\^53 ns from the recording's origin$/);
    expect(error!.startsWith(`${input}: `)).toBe(true);
    expect(query(file, 'SELECT count(*) AS n FROM api_calls')).toEqual([{ n: 0n }]);
  });

  it("a zone whose rows' durations sum past 2^63 keeps every row and saturates its busy time", async () => {
    const { file, error } = await ingest(path.join(kept, 'zone-busy-overflow.ssr'));
    expect(error).toBeNull();
    expect(query(file, 'SELECT count(*) AS n FROM api_calls')).toEqual([{ n: 1040n }]);
    expect(query(file, 'SELECT rows, busy_ns FROM zones WHERE table_id = (SELECT DISTINCT table_id FROM zones)')).toEqual([
      { rows: 1040n, busy_ns: 2n ** 63n - 1n },
    ]);
  });

  it("a 64-bit field of 2^63 is stored as SQLite's INT64_MIN, not as NULL", async () => {
    // A copy's bytes (NOT NULL: the whole call was refused) and a kernel's graph node (nullable: silently lost).
    const { file, error } = await ingest(path.join(kept, 'uint64-2-63.ssr'));
    expect(error).toBeNull();
    expect(query(file, 'SELECT bytes FROM memcpys')).toEqual([{ bytes: -(2n ** 63n) }]);
    expect(query(file, 'SELECT graph_id, graph_node_id FROM kernels')).toEqual([{ graph_id: 5n, graph_node_id: -(2n ** 63n) }]);
  });

  it('a String id far beyond the others (0xFFFFFFFF) still names its string', async () => {
    const { file, error } = await ingest(path.join(kept, 'string-id-wraps.ssr'));
    expect(error).toBeNull();
    expect(query(file, 'SELECT s.value FROM api_calls a JOIN strings s ON s.id = a.name_id')).toEqual([{ value: 'a' }]);
  });
});
