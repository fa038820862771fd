// The column loader's rows by rowid ranges (native/addon/src/table_loader.cc
// loadRows, what the job analysis reads rank by rank with) against the whole
// recording's columns (loadTimelineColumns) on real recordings: the same
// rows in the same order for any ranges, a process's rows by pid, the
// filters (start, zones, calls by name or duration), narrow loads, and one
// pool of arrays reused from load to load.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  ColumnPool,
  loadRows,
  loadSharedTimelineColumns,
  loadTimelineColumns,
  NARROW_OP_COLUMNS,
  OP_COLUMNS,
  type CallColumns,
  type OpColumns,
} from '../../profiler/native/addon.ts';

const fixture = (name: string) => path.resolve(import.meta.dirname, `../fixtures/recordings/${name}.sqlite`);
const file = fixture('nccl-straggler-h200x2');

/** Row i of every column, as one object. */
function rows(c: OpColumns | CallColumns, keep: (i: number) => boolean = () => true, columns?: readonly string[]): Record<string, number>[] {
  const out: Record<string, number>[] = [];
  for (let i = 0; i < c.length; i++) {
    if (!keep(i)) continue;
    const row: Record<string, number> = {};
    for (const [k, v] of Object.entries(c)) if (k !== 'length' && (!columns || columns.includes(k))) row[k] = (v as Float64Array)[i]!;
    out.push(row);
  }
  return out;
}

function read<T>(sql: string): T[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

const all = loadTimelineColumns(file);
const max = (table: string) => read<{ n: number }>(`SELECT max(id) AS n FROM ${table}`)[0]!.n;

describe('loadRows: rows by rowid ranges', () => {
  it('every id: the whole recording, row for row, in (start, kind, id) order; reused pool arrays give the same', () => {
    const pool = new ColumnPool();
    const ranges = { kernels: [1, max('kernels')], memcpys: [1, max('memcpys')], memsets: [1, max('memsets')], apiCalls: [1, max('api_calls')] };
    for (let k = 0; k < 2; k++) {
      const got = loadRows(file, ranges, { threads: k + 1 }, pool);
      expect(rows(got.ops)).toEqual(rows(all.ops));
      expect(rows(got.calls)).toEqual(rows(all.calls));
    }
  });

  it("some ranges, and a process's rows by pid: those of the whole recording's columns", () => {
    const kernels = max('kernels');
    const calls = max('api_calls');
    const ranges = { kernels: [1, 100, Math.floor(kernels / 2), kernels], apiCalls: [5, Math.floor(calls / 3)] };
    const inRanges = (id: number, r: number[]) => (id >= r[0]! && id <= r[1]!) || (r.length > 2 && id >= r[2]! && id <= r[3]!);
    const got = loadRows(file, ranges, {}, new ColumnPool());
    expect(rows(got.ops)).toEqual(rows(all.ops, (i) => all.ops.kind[i] === 1 && inRanges(all.ops.rowId[i]!, ranges.kernels)));
    expect(rows(got.calls)).toEqual(rows(all.calls, (i) => inRanges(all.calls.rowId[i]!, ranges.apiCalls)));
    const byPid = loadRows(file, { kernels: [1, kernels], memcpys: [1, max('memcpys')], apiCalls: [1, calls] }, { pids: [883] }, new ColumnPool());
    expect(byPid.ops.length).toBeGreaterThan(0);
    expect(rows(byPid.ops)).toEqual(rows(all.ops, (i) => all.ops.pid[i] === 883 && all.ops.kind[i] !== 3));
    expect(rows(byPid.calls)).toEqual(rows(all.calls, (i) => all.calls.pid[i] === 883));
  });

  it('narrow: the columns the job analysis reads, the others 0', () => {
    const got = loadRows(file, { kernels: [1, max('kernels')], memcpys: [1, max('memcpys')] }, { narrow: true }, new ColumnPool());
    const keep = (i: number) => all.ops.kind[i] !== 3;
    expect(rows(got.ops, undefined, NARROW_OP_COLUMNS)).toEqual(rows(all.ops, keep, NARROW_OP_COLUMNS));
    for (const k of Object.keys(OP_COLUMNS) as (keyof typeof OP_COLUMNS)[]) {
      if (!NARROW_OP_COLUMNS.includes(k))
        expect(
          (got.ops[k] as Float64Array).every((x) => x === 0),
          k,
        ).toBe(true);
    }
  });

  it("narrow on every fixture: each operation's process and device (read from its stream) as the whole columns have them", () => {
    const dir = path.resolve(import.meta.dirname, '../fixtures/recordings');
    for (const name of fs.readdirSync(dir).filter((f) => f.endsWith('.sqlite'))) {
      const f = path.join(dir, name);
      const db = new Database(f, { readonly: true });
      const ids = db.prepare('SELECT (SELECT max(id) FROM kernels) AS k, (SELECT max(id) FROM memcpys) AS c, (SELECT max(id) FROM memsets) AS s').get() as {
        k: number | null;
        c: number | null;
        s: number | null;
      };
      db.close();
      const got = loadRows(f, { kernels: [1, ids.k ?? 0], memcpys: [1, ids.c ?? 0], memsets: [1, ids.s ?? 0] }, { narrow: true }, new ColumnPool());
      const whole = loadTimelineColumns(f).ops;
      expect(rows(got.ops, undefined, NARROW_OP_COLUMNS), name).toEqual(rows(whole, undefined, NARROW_OP_COLUMNS));
    }
  });

  it('filters: rows up to a start, of some zones, calls by name or duration', () => {
    const t = all.ops.start[Math.floor(all.ops.length / 2)]!;
    const kernels = [1, max('kernels')];
    const upTo = loadRows(file, { kernels }, { maxStart: t }, new ColumnPool());
    expect(rows(upTo.ops)).toEqual(rows(all.ops, (i) => all.ops.kind[i] === 1 && all.ops.start[i]! <= t));

    const zones = read<{ lane: number; first: number; last: number }>(
      'SELECT lane, first_id AS first, last_id AS last FROM zones WHERE table_id = 1 ORDER BY first_id LIMIT 3',
    );
    const inZones = loadRows(file, { kernels }, { zones: { kernels: zones.flatMap((z) => [z.lane, z.first, z.last]) } }, new ColumnPool());
    const held = (i: number) =>
      all.ops.kind[i] === 1 && zones.some((z) => all.ops.stream[i] === z.lane && all.ops.rowId[i]! >= z.first && all.ops.rowId[i]! <= z.last);
    expect(inZones.ops.length).toBeGreaterThan(0);
    expect(rows(inZones.ops)).toEqual(rows(all.ops, held));

    const launch = read<{ id: number }>("SELECT id FROM strings WHERE value = 'cudaLaunchKernel'")[0]!.id;
    const named = loadRows(file, { apiCalls: [1, max('api_calls')] }, { callNames: [launch], callMinNs: 1_000_000 }, new ColumnPool());
    const wanted = (i: number) => all.calls.nameId[i] === launch || all.calls.end[i]! - all.calls.start[i]! >= 1_000_000;
    expect(named.calls.length).toBeGreaterThan(100);
    expect(rows(named.calls)).toEqual(rows(all.calls, wanted));
  });
});

describe('loadSharedTimelineColumns: the whole recording into shared memory (the what-if thread reads it)', () => {
  it("the same rows as loadTimelineColumns, in arrays over SharedArrayBuffers, views of the rows' count", () => {
    const shared = loadSharedTimelineColumns(file, { ops: all.ops.length + 5, calls: all.calls.length });
    expect(shared.ops.length).toBe(all.ops.length);
    expect(shared.calls.length).toBe(all.calls.length);
    expect(rows(shared.ops)).toEqual(rows(all.ops));
    expect(rows(shared.calls)).toEqual(rows(all.calls));
    expect(shared.ops.start.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(shared.calls.nameId.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(shared.via).toBe(all.via);
  });

  it('read in place: the rows land in the shared arrays and are put in start order there, the same as loaded apart', () => {
    // The read order is not the start order here (kernels, then copies, then memsets, interleaved in time): the
    // columns are reordered where they were read (table_loader.cc placeInOrder), not only copied in order.
    const kinds = Array.from(all.ops.kind);
    expect(kinds.findIndex((k, i) => i > 0 && k < kinds[i - 1]!)).toBeGreaterThan(0);
    const exact = loadSharedTimelineColumns(file, { ops: all.ops.length, calls: all.calls.length });
    expect(rows(exact.ops)).toEqual(rows(all.ops));
    expect(rows(exact.calls)).toEqual(rows(all.calls));
  });

  it('rowids with gaps (rows deleted): room for the rows but not for the span, read apart and copied in, the same rows', () => {
    const gaps = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'load-rows-')), 'gaps.sqlite');
    fs.copyFileSync(file, gaps);
    const db = new Database(gaps);
    db.exec('PRAGMA foreign_keys = OFF; DELETE FROM kernels WHERE id % 7 = 3; DELETE FROM api_calls WHERE id % 5 = 1');
    db.close();
    try {
      const whole = loadTimelineColumns(gaps);
      expect(whole.ops.length).toBeLessThan(all.ops.length);
      const shared = loadSharedTimelineColumns(gaps, { ops: whole.ops.length, calls: whole.calls.length });
      expect(rows(shared.ops)).toEqual(rows(whole.ops));
      expect(rows(shared.calls)).toEqual(rows(whole.calls));
    } finally {
      fs.rmSync(path.dirname(gaps), { recursive: true, force: true });
    }
  });

  it('room for fewer rows than the file holds: a RangeError naming the column', () => {
    expect(() => loadSharedTimelineColumns(file, { ops: all.ops.length - 1, calls: all.calls.length })).toThrow(/loadTimeline: out\.\w+ is too short/);
  });
});
