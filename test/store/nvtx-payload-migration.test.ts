// Migration 0010 (nvtx_ranges.payload) on a recording made before it: the
// column comes, NULL in every row (nothing was recorded to fill it), and
// every range stays as it was.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { openRecording } from '../../profiler/store/database.ts';
import { latestSchemaVersion } from '../../profiler/store/migrations/index.ts';
import { tempDir } from '../helpers/native.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const dir = tempDir('nvtx-payload-migration');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('migration 0010 on a recording of schema 9', () => {
  it('adds nvtx_ranges.payload, NULL everywhere, and changes no range', () => {
    const file = path.join(dir, 'v9.sqlite');
    // A real NCCL recording: its ncclAllReduce ranges were recorded before payloads were.
    fs.copyFileSync(path.join(repo, 'test/fixtures/recordings/nccl-1gpu-serial.sqlite'), file);
    const old = new Database(file);
    // Schema 11's addition (0011-cpu-ops.ts) goes first.
    if ((old.pragma('user_version', { simple: true }) as number) >= 11) old.exec('DROP TABLE cpu_ops');
    if ((old.pragma('user_version', { simple: true }) as number) >= 10) old.exec('ALTER TABLE nvtx_ranges DROP COLUMN payload');
    old.pragma('user_version = 9');
    const before = old.prepare('SELECT * FROM nvtx_ranges ORDER BY id').all();
    old.close();
    expect(before.length).toBeGreaterThan(50);
    const db = openRecording(file);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
      const after = db.prepare('SELECT * FROM nvtx_ranges ORDER BY id').all() as Record<string, unknown>[];
      expect(after.map(({ payload, ...rest }) => ({ rest, payload }))).toEqual(before.map((rest) => ({ rest, payload: null })));
    } finally {
      db.close();
    }
  });
});
