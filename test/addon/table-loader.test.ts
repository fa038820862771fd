// The native column loader (native/addon/src/table_loader.cc) against
// SQLite itself: the same rows, in (start, kind, id) order, on a real H100
// recording — as written, with holes in its rowids, and with rowids so
// sparse that sizing parts by their span would ask for gigabytes — and on
// a generated one of several parts per table.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { generate } from '../../bench/generate-recording.ts';
import { loadTimelineColumns } from '../../profiler/native/addon.ts';
import { tempDir } from '../helpers/native.ts';

const fixture = path.resolve(import.meta.dirname, '../fixtures/recordings/torch_streams.sqlite');
const dir = tempDir('table-loader');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

interface OpRow {
  kind: number;
  id: number;
  start: number;
  end: number;
  stream: number;
  correlation: number;
}

/** What the loader must return, by SQL. */
function expected(file: string): { ops: OpRow[]; calls: { id: number; start: number; nameId: number }[] } {
  const db = new Database(file, { readonly: true });
  try {
    const ops = db
      .prepare(
        `SELECT * FROM (
        SELECT 1 AS kind, id, start_ns AS start, end_ns AS "end", stream_id AS stream, correlation_id AS correlation FROM kernels
        UNION ALL SELECT 2, id, start_ns, end_ns, stream_id, correlation_id FROM memcpys
        UNION ALL SELECT 3, id, start_ns, end_ns, stream_id, correlation_id FROM memsets) ORDER BY start, kind, id`,
      )
      .all() as OpRow[];
    const calls = db.prepare('SELECT id, start_ns AS start, name_id AS nameId FROM api_calls ORDER BY start_ns, id').all() as {
      id: number;
      start: number;
      nameId: number;
    }[];
    return { ops, calls };
  } finally {
    db.close();
  }
}

function loaded(file: string) {
  const { ops, calls } = loadTimelineColumns(file);
  return {
    ops: Array.from({ length: ops.length }, (_, i): OpRow => ({
      kind: ops.kind[i]!,
      id: ops.rowId[i]!,
      start: ops.start[i]!,
      end: ops.end[i]!,
      stream: ops.stream[i]!,
      correlation: ops.correlation[i]!,
    })),
    calls: Array.from({ length: calls.length }, (_, i) => ({ id: calls.rowId[i]!, start: calls.start[i]!, nameId: calls.nameId[i]! })),
  };
}

/** A generated recording of 300 k operations over 16 streams (made once). */
let big: string | null = null;
function bigRecording(): string {
  if (!big) generate((big = path.join(dir, 'big.sqlite')), 300_000, 16);
  return big;
}

describe('native column loader', () => {
  it('returns every operation and call of a recording, in (start, kind, id) order', () => {
    const want = expected(fixture);
    expect(want.ops.length).toBeGreaterThan(50);
    expect(loaded(fixture)).toEqual(want);
  });

  it('holes and sparse rowids: the same rows, nothing invented', () => {
    const file = path.join(dir, 'holes.sqlite');
    fs.copyFileSync(fixture, file);
    const db = new Database(file);
    db.exec('DELETE FROM kernels WHERE id % 3 = 0; DELETE FROM api_calls WHERE id % 5 = 1');
    // One kernel and one call with ids billions past the rest.
    db.exec(`INSERT INTO kernels SELECT 4000000000, start_ns + 7, end_ns + 7, device_id, context_id, stream_id, correlation_id, name_id, grid_x, grid_y, grid_z,
        block_x, block_y, block_z, registers_per_thread, static_shared_bytes, dynamic_shared_bytes, local_memory_per_thread, launch_type, is_device_launched,
        graph_id, graph_node_id, cluster_x, cluster_y, cluster_z, channel_id FROM kernels LIMIT 1`);
    db.exec(
      'INSERT INTO api_calls SELECT 5000000000, start_ns + 3, end_ns + 3, pid, tid, domain, cbid, name_id, correlation_id, return_value FROM api_calls LIMIT 1',
    );
    db.close();
    const want = expected(file);
    const got = loaded(file);
    expect(got.ops.length).toBe(want.ops.length);
    expect(got).toEqual(want);
    expect(got.ops.some((o) => o.id === 4_000_000_000)).toBe(true);
  });

  it('several parts per table, starts full of ties, with and without zones: the same rows in the same order', () => {
    // 300 k operations and as many calls: two or more 256 k-row parts per
    // table, and (on two or more cores) a radix sort cut into slices, whose
    // ties must keep the read order (kind, then id).
    const file = path.join(dir, 'ties.sqlite');
    fs.copyFileSync(bigRecording(), file);
    const db = new Database(file);
    // Times before the origin stay as they are: rounded towards 0, they would start after they end (left out).
    for (const t of ['kernels', 'memcpys', 'api_calls']) db.exec(`UPDATE ${t} SET start_ns = start_ns - start_ns % 1000000 WHERE start_ns >= 0`);
    db.close();
    const want = expected(file);
    expect(want.ops.length).toBeGreaterThan(2 ** 18);
    expect(new Set(want.ops.map((o) => o.start)).size).toBeLessThan(want.ops.length / 10);
    expect(loaded(file)).toEqual(want);
    // Without zones the loader cannot trust rowid spans as counts, and counts each part.
    const bare = new Database(file);
    bare.exec('DELETE FROM zones');
    bare.close();
    expect(loaded(file)).toEqual(want);
  });

  it('tables written as a few sorted runs, overlapping in time, with ties across runs: merged into the same order', () => {
    // A table written nearly in time order is a few sorted runs (CUPTI's
    // buffers completing out of order); the loader merges those runs
    // instead of radix sorting. Here each table's later rows are moved back
    // in time, into the middle of its earlier ones, and every time rounded
    // to the millisecond: ties within and across runs, which must keep the
    // read order (kind, then id) as the radix sort does.
    const file = path.join(dir, 'runs.sqlite');
    fs.copyFileSync(bigRecording(), file);
    const db = new Database(file);
    for (const [t, step] of [
      ['kernels', 997],
      ['memcpys', 1_993],
      ['memsets', 2_999],
      ['api_calls', 991],
    ] as const) {
      const [lo, hi] = db.prepare(`SELECT min(id), max(id) FROM ${t}`).raw().get() as [number, number];
      // In id order, one run; then the later thirds moved back by a third of the span each: three runs.
      db.prepare(`UPDATE ${t} SET end_ns = end_ns - start_ns + (id - ?) * ?, start_ns = (id - ?) * ?`).run(lo, step, lo, step);
      const back = Math.floor(((hi - lo) * step) / 3);
      for (const from of [lo + (hi - lo) / 3, lo + (2 * (hi - lo)) / 3])
        db.prepare(`UPDATE ${t} SET start_ns = start_ns - ?, end_ns = end_ns - ? WHERE id > ?`).run(back, back, Math.floor(from));
      db.exec(`UPDATE ${t} SET end_ns = end_ns - start_ns % 1000000, start_ns = start_ns - start_ns % 1000000`);
    }
    db.close();
    const want = expected(file);
    const descents = (xs: { start: number; id: number }[]) => xs.filter((x, i) => i > 0 && x.id > xs[i - 1]!.id && x.start < xs[i - 1]!.start).length;
    const inTable = (kind: number) => want.ops.filter((o) => o.kind === kind).sort((a, b) => a.id - b.id);
    // A few runs per table, each run long: the merge's case, not the radix sort's.
    expect(descents(inTable(1))).toBe(2);
    expect(descents([...want.calls].sort((a, b) => a.id - b.id))).toBeGreaterThan(0);
    expect(new Set(want.ops.map((o) => o.start)).size).toBeLessThan(want.ops.length / 10);
    expect(loaded(file)).toEqual(want);
  });

  it('a table written zone by zone, the streams in turn: its many runs merged as a few chains, ties across them in read order', () => {
    // The native ingest writes a lane's rows a zone at a time, the lanes' zones in turn: each zone is a run, and a
    // lane's zones one after another are in order (the loader gathers them into one chain before it merges). Here the
    // kernels are blocks of 1,000 rows, 4 lanes in turn, each lane's blocks later and later, the lanes overlapping in
    // time, every start rounded to 0.1 ms: ~240 runs in 4 chains, with ties within and across chains.
    const file = path.join(dir, 'zones.sqlite');
    fs.copyFileSync(bigRecording(), file);
    const db = new Database(file);
    const [lo] = db.prepare('SELECT min(id) FROM kernels').raw().get() as [number];
    // Row j of the table: block j / 1000, its lane the block's turn of 4, its place in its lane the rows of the lane's
    // blocks before it.
    const at = '((((id - @lo) / 1000) % 4) * 333 + (((id - @lo) / 4000) * 1000 + (id - @lo) % 1000) * 997) / 100000 * 100000';
    db.prepare(`UPDATE kernels SET start_ns = ${at}, end_ns = ${at} + 500`).run({ lo: BigInt(lo) });
    db.close();
    const want = expected(file);
    const kernels = want.ops.filter((o) => o.kind === 1).sort((a, b) => a.id - b.id);
    const descents = kernels.filter((x, i) => i > 0 && x.start < kernels[i - 1]!.start).length;
    expect(descents).toBeGreaterThan(100);
    expect(new Set(kernels.map((o) => o.start)).size).toBeLessThan(kernels.length / 10);
    expect(loaded(file)).toEqual(want);
  });

  it('a worker thread stopped while the addon loads a recording for it does not take the process down', () => {
    // A child process, so that an abort (an uncaught C++ exception) fails this test, not the run.
    const file = bigRecording();
    // The worker loads the columns over and over: stopped at any moment, it is almost surely inside the addon.
    const loader = path.resolve(import.meta.dirname, '../../profiler/native/addon.ts'); // what the analysis thread loads with
    const script = `
      import { Worker } from 'node:worker_threads';
      const body = 'import { loadTimelineColumns } from ' + ${JSON.stringify(JSON.stringify(pathToFileURL(loader).href))} + '; for (;;) loadTimelineColumns(' + ${JSON.stringify(JSON.stringify(file))} + ');';
      for (const ms of [300, 450, 600]) {
        const w = new Worker(new URL('data:text/javascript,' + encodeURIComponent(body)));
        w.on('error', (e) => { console.error('worker failed:', e.message); process.exit(3); });
        await new Promise((r) => setTimeout(r, ms));
        await w.terminate();
      }
      console.log('alive');`;
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 60_000 });
    expect(r.stderr).not.toContain('terminate called');
    expect(r.stdout.trim()).toBe('alive');
    expect(r.status).toBe(0);
  }, 90_000);
});
