// The minimap from the zones (profiler/query/overview.ts) and zone busy time
// (schema 5) on real H100 recordings: the busy time spread over buckets adds
// up to the operations' durations; a recording of schema 4 gets its zones'
// busy time on open, equal to its rows'.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { latestSchemaVersion } from '../../profiler/store/migrations/index.ts';
import { tempDir } from '../helpers/native.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);
const dir = tempDir('overview');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function busyByDevice(file: string): Map<number, { kernels: number; copies: number; other: number }> {
  const db = new Database(file, { readonly: true });
  try {
    const m = new Map<number, { kernels: number; copies: number; other: number }>();
    for (const [table, key] of [
      ['kernels', 'kernels'],
      ['memcpys', 'copies'],
      ['memsets', 'other'],
    ] as const) {
      for (const r of db
        .prepare(`SELECT s.device_id AS d, sum(t.end_ns - t.start_ns) AS b FROM ${table} t JOIN streams s ON s.id = t.stream_id GROUP BY 1`)
        .all() as { d: number; b: number }[]) {
        if (!m.has(r.d)) m.set(r.d, { kernels: 0, copies: 0, other: 0 });
        m.get(r.d)![key] += r.b;
      }
    }
    return m;
  } finally {
    db.close();
  }
}

describe('overview from zones', () => {
  for (const name of ['normalise-concurrent', 'matmul-multi-gpu-h200x2', 'torch_streams']) {
    it(`${name}: per device, the buckets add up to the operations' busy time`, () => {
      const q = new RecordingQuery('t', fixture(name));
      try {
        const o = q.overview(500);
        const want = busyByDevice(fixture(name));
        expect(o.devices.map((d) => d.deviceId).sort()).toEqual([...want.keys()].sort());
        for (const d of o.devices) {
          const sum = (a: number[]) => a.reduce((x, y) => x + y, 0) * o.bucketNs;
          expect(sum(d.kernels)).toBeCloseTo(want.get(d.deviceId)!.kernels, -1);
          expect(sum(d.copies)).toBeCloseTo(want.get(d.deviceId)!.copies, -1);
          expect(sum(d.other)).toBeCloseTo(want.get(d.deviceId)!.other, -1);
        }
        // Summary busy time per stream, from the same zones: equal to the rows' sums.
        const db = new Database(fixture(name), { readonly: true });
        for (const st of q.summary().streams) {
          const b = db
            .prepare(
              `SELECT (SELECT coalesce(sum(end_ns - start_ns), 0) FROM kernels WHERE stream_id = @s) + (SELECT coalesce(sum(end_ns - start_ns), 0) FROM memcpys WHERE stream_id = @s)
              + (SELECT coalesce(sum(end_ns - start_ns), 0) FROM memsets WHERE stream_id = @s) AS b`,
            )
            .get({ s: st.id }) as { b: number };
          expect(st.busyNs).toBe(b.b);
        }
        db.close();
      } finally {
        q.close();
      }
    });
  }

  it("a recording of schema 4 gets its zones' busy time (and shape) when opened, equal to its rows'", () => {
    const file = path.join(dir, 'v4.sqlite');
    fs.copyFileSync(fixture('cupy_streams'), file);
    const old = new Database(file);
    const shape = 'SELECT table_id, first_id, max_dur_ns, max_gap_ns, copy_kind_rows FROM zones ORDER BY table_id, first_id';
    const shapes = old.prepare(shape).all();
    old.exec(
      'ALTER TABLE zones DROP COLUMN busy_ns; ALTER TABLE zones DROP COLUMN max_dur_ns; ALTER TABLE zones DROP COLUMN max_gap_ns; ALTER TABLE zones DROP COLUMN copy_kind_rows; ALTER TABLE strings DROP COLUMN demangled;' +
        ' DROP TABLE process_env; ALTER TABLE processes DROP COLUMN rank; ALTER TABLE processes DROP COLUMN local_rank; ALTER TABLE processes DROP COLUMN world_size; ALTER TABLE processes DROP COLUMN rank_variable;' +
        ' DROP TABLE sources; DROP TABLE source_rows; ALTER TABLE processes DROP COLUMN source_id; ALTER TABLE processes DROP COLUMN original_pid;' +
        ' ALTER TABLE nvtx_ranges DROP COLUMN payload; DROP TABLE IF EXISTS cpu_ops',
    );
    old.pragma('user_version = 4');
    old.close();
    const db = openRecording(file, { readonly: true });
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
      // Schema 6's zone shapes come back as they were.
      expect(db.prepare(shape).all()).toEqual(shapes);
      const zones = db.prepare('SELECT table_id AS t, lane, first_id AS a, last_id AS b, busy_ns AS busy FROM zones WHERE table_id = 1').all() as {
        lane: number;
        a: number;
        b: number;
        busy: number;
      }[];
      expect(zones.length).toBeGreaterThan(0);
      for (const z of zones) {
        const want = db.prepare('SELECT sum(end_ns - start_ns) AS s FROM kernels WHERE id BETWEEN ? AND ? AND stream_id = ?').get(z.a, z.b, z.lane) as {
          s: number;
        };
        expect(z.busy).toBe(want.s);
      }
    } finally {
      db.close();
    }
  });
});
