// `streamscope merge` on real recordings (test/fixtures/recordings: two
// runner recordings, a PyTorch one, the two-GPU H200 one): the merged job
// holds exactly what its inputs held — rows per table, each process's
// operations with their times moved by the input's shift, strings by
// value, a GPU once per uuid — with each input's provenance, valid zones
// and no dangling reference; a merge of a merged recording keeps both
// levels; bad inputs are refused by name and leave nothing behind.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { mergeRecordings, unclassified, type MergeResult } from '../../profiler/merge/merge.ts';
import { MERGE_TABLES } from '../../profiler/merge/tables.ts';
import { parseCaptureRange } from '../../profiler/contract/record-request.ts';
import { applyCaptureRange } from '../../profiler/record/capture-range.ts';
import { createRecording, openRecording } from '../../profiler/store/database.ts';
import { latestSchemaVersion } from '../../profiler/store/migrations/index.ts';
import { RecordingFileError } from '../../profiler/store/recording-error.ts';
import { tempDir } from '../helpers/native.ts';
import { zoneRuleProblems, zonesWrittenAndRecomputed } from '../helpers/zones.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const INPUTS = ['matmul-concurrent', 'normalise-concurrent', 'torch_streams', 'matmul-multi-gpu-h200x2'];

let dir: string;
/** Copies of the fixtures (opening one migrates it in place: the committed files stay as they are). */
const copy = (name: string, as = name) => {
  const to = path.join(dir, `${as}.sqlite`);
  fs.copyFileSync(path.join(fixtures, `${name}.sqlite`), to);
  return to;
};
beforeAll(() => {
  dir = tempDir('merge');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

type Row = Record<string, number | string | null>;
const read = <T = Row>(file: string, sql: string, ...args: unknown[]): T[] => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all(...args) as T[];
  } finally {
    db.close();
  }
};
const count = (file: string, table: string) => read<{ n: number }>(file, `SELECT count(*) AS n FROM ${table}`)[0]!.n;

/** Every GPU operation of process `pid`, in start order: times, stream's CUPTI id, device uuid, name. */
function operationsOf(file: string, pid: number, shift = 0): Row[] {
  return read(
    file,
    `SELECT * FROM (
      SELECT 'kernel' AS kind, k.start_ns - ? AS start, k.end_ns - ? AS "end", k.correlation_id AS corr, s.cupti_stream_id AS stream, d.uuid, n.value AS name
        FROM kernels k JOIN streams s ON s.id = k.stream_id JOIN devices d ON d.id = k.device_id JOIN strings n ON n.id = k.name_id WHERE s.pid = ?
      UNION ALL SELECT 'memcpy', m.start_ns - ?, m.end_ns - ?, m.correlation_id, s.cupti_stream_id, d.uuid, m.bytes
        FROM memcpys m JOIN streams s ON s.id = m.stream_id JOIN devices d ON d.id = m.device_id WHERE s.pid = ?
      UNION ALL SELECT 'memset', m.start_ns - ?, m.end_ns - ?, m.correlation_id, s.cupti_stream_id, d.uuid, m.bytes
        FROM memsets m JOIN streams s ON s.id = m.stream_id JOIN devices d ON d.id = m.device_id WHERE s.pid = ?)
    ORDER BY start, kind, corr`,
    shift,
    shift,
    pid,
    shift,
    shift,
    pid,
    shift,
    shift,
    pid,
  );
}

/** Every API call and NVTX range of process `pid`, in start order, names as text. */
function hostRowsOf(file: string, pid: number, shift = 0): Row[] {
  return read(
    file,
    `SELECT 'api' AS kind, a.start_ns - ? AS start, a.end_ns - ? AS "end", a.tid, a.correlation_id AS corr, n.value AS name
       FROM api_calls a JOIN strings n ON n.id = a.name_id WHERE a.pid = ?
     UNION ALL SELECT 'nvtx', r.start_ns - ?, r.end_ns - ?, r.tid, NULL, n.value FROM nvtx_ranges r JOIN strings n ON n.id = r.name_id WHERE r.pid = ?
     ORDER BY start, kind, corr, name`,
    shift,
    shift,
    pid,
    shift,
    shift,
    pid,
  );
}

describe('merge of real recordings', () => {
  let inputs: string[];
  let job: string;
  let result: MergeResult;
  beforeAll(() => {
    inputs = INPUTS.map((n) => copy(n));
    // Opened once, as merge opens them (older fixtures are migrated in place), so that counts compare like with like.
    for (const f of inputs) openRecording(f, { readonly: true }).close();
    job = path.join(dir, 'job.sqlite');
    result = mergeRecordings(inputs, job);
  });

  it('holds every row of every input, strings by value and each GPU once', () => {
    for (const [table, spec] of Object.entries(MERGE_TABLES)) {
      if (spec.how !== 'rows') continue;
      expect(count(job, table), table).toBe(inputs.reduce((s, f) => s + count(f, table), 0));
    }
    const values = new Set(inputs.flatMap((f) => read<{ value: string }>(f, 'SELECT value FROM strings').map((r) => r.value)));
    expect(read<{ value: string }>(job, 'SELECT value FROM strings ORDER BY value').map((r) => r.value)).toEqual([...values].sort());
    const uuids = new Set(inputs.flatMap((f) => read<{ uuid: string }>(f, 'SELECT uuid FROM devices').map((r) => r.uuid)));
    expect(count(job, 'devices')).toBe(uuids.size);
    expect(result.devices).toBe(uuids.size);
    // Three of them ran on one H100 (one uuid), the fourth on two H200s: five devices recorded, three GPUs.
    expect(inputs.reduce((s, f) => s + count(f, 'devices'), 0)).toBe(5);
    expect(uuids.size).toBe(3);
    expect(read(job, 'PRAGMA foreign_key_check')).toEqual([]);
    expect(read<{ integrity_check: string }>(job, 'PRAGMA integrity_check')[0]!.integrity_check).toBe('ok');
  });

  it("keeps each process's operations, calls and ranges, times moved by its input's shift", () => {
    for (const [i, f] of inputs.entries()) {
      const src = result.sources[i]!;
      for (const { pid } of read<{ pid: number }>(f, 'SELECT pid FROM processes')) {
        const to = src.renumbered.find((r) => r.originalPid === pid)?.pid ?? pid;
        const ops = operationsOf(f, pid);
        expect(ops.length, `${f} pid ${pid}`).toBeGreaterThan(0);
        expect(operationsOf(job, to, src.shiftNs), `${f} pid ${pid}`).toEqual(ops);
        expect(hostRowsOf(job, to, src.shiftNs), `${f} pid ${pid}`).toEqual(hostRowsOf(f, pid));
      }
    }
    // The inputs are one after another on one clock: shifts are the differences of their origins.
    const origins = inputs.map((f) => BigInt(read<{ value: string }>(f, "SELECT value FROM meta WHERE key = 'origin_ns'")[0]!.value));
    const merged = BigInt(read<{ value: string }>(job, "SELECT value FROM meta WHERE key = 'origin_ns'")[0]!.value);
    expect(result.sources.map((s) => BigInt(s.shiftNs))).toEqual(origins.map((o) => o - merged));
    expect(Math.min(...result.sources.map((s) => s.shiftNs))).toBe(0);
  });

  it('says where every row came from: a source per input with its meta, rowid ranges, processes', () => {
    const sources = read(job, 'SELECT * FROM sources ORDER BY id');
    expect(sources).toHaveLength(inputs.length);
    for (const [i, s] of sources.entries()) {
      expect(s.parent_id).toBeNull();
      expect(s.file).toBe(path.resolve(inputs[i]!));
      const meta = JSON.parse(s.meta as string) as Record<string, string>;
      expect(meta.origin_ns).toBe(read<{ value: string }>(inputs[i]!, "SELECT value FROM meta WHERE key = 'origin_ns'")[0]!.value);
      expect(meta.command).toBe(read<{ value: string }>(inputs[i]!, "SELECT value FROM meta WHERE key = 'command'")[0]!.value);
      expect(s.shift_ns).toBe(result.sources[i]!.shiftNs);
      // No collectives in these: all on their recorded clock (one host name, 'vm', for all four machines).
      expect(s.clock).toBe(i === 0 ? 'reference' : 'wall-clock');
      expect(s.residual_ns).toBeNull();
    }
    // Each input's rows are one run of ids per table, in input order, covering the table.
    for (const table of ['contexts', 'streams', 'kernels', 'memcpys', 'syncs', 'api_calls', 'nvtx_ranges', 'overheads']) {
      const ranges = read<{ source_id: number; first_id: number; last_id: number; rows: number }>(
        job,
        'SELECT source_id, first_id, last_id, rows FROM source_rows WHERE table_name = ? ORDER BY first_id',
        table,
      );
      let next = 1;
      for (const r of ranges) {
        expect(r.first_id, table).toBe(next);
        expect(r.rows).toBe(r.last_id - r.first_id + 1); // these inputs have no gaps in their ids
        expect(r.rows).toBe(count(inputs[r.source_id - 1]!, table));
        next = r.last_id + 1;
      }
      expect(next - 1, table).toBe(count(job, table));
    }
    const bySource = read<{ source_id: number; n: number }>(job, 'SELECT source_id, count(*) AS n FROM processes GROUP BY source_id ORDER BY source_id');
    expect(bySource).toEqual(inputs.map((f, i) => ({ source_id: i + 1, n: count(f, 'processes') })));
  });

  it('has valid zones: every row in one zone of its lane, the zones as the SQL zoner computes them', () => {
    expect(zoneRuleProblems(job)).toEqual([]);
    const { written, recomputed } = zonesWrittenAndRecomputed(job, dir);
    expect(written).toEqual(recomputed);
    expect(count(job, 'zones')).toBe(inputs.reduce((s, f) => s + count(f, 'zones'), 0));
  });

  it('opens and analyses like any recording; its meta sums up the inputs', () => {
    const db = openRecording(job, { readonly: true });
    try {
      const a = analyze(db, { scope: { kind: 'whole' } });
      expect(a.trace.devices.length).toBe(result.devices);
      const meta = Object.fromEntries(read<{ key: string; value: string }>(job, 'SELECT key, value FROM meta').map((r) => [r.key, r.value]));
      expect(meta.source).toBe('streamscope-merge');
      expect(meta.complete).toBe('1');
      expect(meta.host).toBe('vm');
      expect(meta.command).toMatch(/and 3 other commands/);
      expect(Number(meta.duration_ns)).toBeGreaterThan(0);
      expect(db.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
    } finally {
      db.close();
    }
  });
});

describe('ranks', () => {
  it("keep each process's rank and launcher variables (the torchrun fixtures: a recorder per node and one per rank)", () => {
    const node = copy('torchrun-node');
    const rank = copy('torchrun-rank');
    const job = path.join(dir, 'torchrun-job.sqlite');
    const r = mergeRecordings([node, rank], job);
    const ranks = (f: string, pid: number) => read(f, 'SELECT rank, local_rank, world_size, rank_variable, command, host FROM processes WHERE pid = ?', pid)[0];
    const env = (f: string, pid: number) => read(f, 'SELECT name, value FROM process_env WHERE pid = ? ORDER BY name', pid);
    for (const [i, f] of [node, rank].entries()) {
      for (const { pid } of read<{ pid: number }>(f, 'SELECT pid FROM processes')) {
        const to = r.sources[i]!.renumbered.find((x) => x.originalPid === pid)?.pid ?? pid;
        expect(ranks(job, to), `${f} pid ${pid}`).toEqual(ranks(f, pid));
        expect(env(job, to), `${f} pid ${pid}`).toEqual(env(f, pid));
      }
    }
    expect(count(job, 'process_env')).toBe(count(node, 'process_env') + count(rank, 'process_env'));
    expect(zoneRuleProblems(job)).toEqual([]);
  });
});

describe('pids', () => {
  it('that collide stay distinct processes: renumbered, with the original kept', () => {
    // The same program recorded twice on "two hosts": a copy of a recording given another host and origin.
    const a = copy('normalise-serial', 'host-a');
    const b = copy('normalise-serial', 'host-b');
    const db = new Database(b);
    db.prepare("UPDATE meta SET value = 'other-host' WHERE key = 'host'").run();
    db.prepare("UPDATE meta SET value = CAST(CAST(value AS INTEGER) + 5000000000 AS TEXT) WHERE key = 'origin_ns'").run();
    db.close();
    const job = path.join(dir, 'pids.sqlite');
    const r = mergeRecordings([a, b], job);
    const pid = read<{ pid: number }>(a, 'SELECT pid FROM processes')[0]!.pid;
    expect(r.sources[0]!.renumbered).toEqual([]);
    expect(r.sources[1]!.renumbered).toHaveLength(1);
    const renumbered = r.sources[1]!.renumbered[0]!;
    expect(renumbered.originalPid).toBe(pid);
    expect(renumbered.pid).toBeLessThan(4194304);
    expect(read(job, 'SELECT pid, original_pid, source_id FROM processes ORDER BY source_id')).toEqual([
      { pid, original_pid: null, source_id: 1 },
      { pid: renumbered.pid, original_pid: pid, source_id: 2 },
    ]);
    expect(r.sources[1]!.shiftNs - r.sources[0]!.shiftNs).toBe(5_000_000_000);
    expect(hostRowsOf(job, renumbered.pid, r.sources[1]!.shiftNs)).toEqual(hostRowsOf(b, pid));
    expect(operationsOf(job, renumbered.pid, r.sources[1]!.shiftNs)).toEqual(operationsOf(b, pid));
    // Thread lanes of the zones follow the new pid.
    expect(zoneRuleProblems(job)).toEqual([]);
    expect(r.notes.join('\n')).toContain(`pid ${pid} of ${b} (host other-host) is pid ${renumbered.pid} here`);
  });
});

describe('an input with gaps in its ids (a capture range kept part of it)', () => {
  it('lands with its gaps, its zones still its rows', () => {
    const captured = copy('nvtx_nvtx', 'captured');
    const db = openRecording(captured);
    const result = applyCaptureRange(db, parseCaptureRange('nvtx:ss_nvtx_main'));
    db.close();
    expect(result.dropped.api_calls).toBeGreaterThan(0);
    const ids = read<{ a: number; b: number; n: number }>(captured, 'SELECT min(id) AS a, max(id) AS b, count(*) AS n FROM api_calls')[0]!;
    expect(ids.n).toBeLessThan(ids.b - ids.a + 1);
    const first = copy('matmul-serial', 'before-captured');
    const job = path.join(dir, 'captured-job.sqlite');
    const r = mergeRecordings([first, captured], job);
    const pid = read<{ pid: number }>(captured, 'SELECT pid FROM processes')[0]!.pid;
    const here = r.sources[1]!.renumbered.find((x) => x.originalPid === pid)?.pid ?? pid;
    expect(hostRowsOf(job, here, r.sources[1]!.shiftNs)).toEqual(hostRowsOf(captured, pid));
    expect(operationsOf(job, here, r.sources[1]!.shiftNs)).toEqual(operationsOf(captured, pid));
    const range = read<{ first_id: number; last_id: number; rows: number }>(
      job,
      "SELECT first_id, last_id, rows FROM source_rows WHERE source_id = 2 AND table_name = 'api_calls'",
    )[0]!;
    expect(range).toEqual({ first_id: count(first, 'api_calls') + 1, last_id: count(first, 'api_calls') + ids.b - ids.a + 1, rows: ids.n });
    expect(zoneRuleProblems(job)).toEqual([]);
  });
});

describe('a merge of merged recordings', () => {
  it('keeps both levels of provenance, shifts composed, processes pointing at the recordings they were recorded in', () => {
    const a = copy('matmul-serial', 'n-a');
    const b = copy('transpose-serial', 'n-b');
    const c = copy('numba_streams', 'n-c');
    const inner = path.join(dir, 'inner.sqlite');
    const first = mergeRecordings([a, b], inner);
    const outer = path.join(dir, 'outer.sqlite');
    const second = mergeRecordings([c, inner], outer);
    const sources = read(outer, 'SELECT id, parent_id, file, clock, shift_ns FROM sources ORDER BY id');
    expect(sources.map((s) => [s.id, s.parent_id, s.file])).toEqual([
      [1, null, path.resolve(c)],
      [2, null, path.resolve(inner)],
      [3, 2, path.resolve(a)],
      [4, 2, path.resolve(b)],
    ]);
    const innerShift = second.sources[1]!.shiftNs;
    expect(sources[2]!.shift_ns).toBe(first.sources[0]!.shiftNs + innerShift);
    expect(sources[3]!.shift_ns).toBe(first.sources[1]!.shiftNs + innerShift);
    // Processes point at the recording they were recorded in, never at the merged one.
    const procs = read<{ pid: number; source_id: number }>(outer, 'SELECT pid, source_id FROM processes ORDER BY source_id');
    expect(procs.map((p) => p.source_id)).toEqual([1, 3, 4]);
    // Each original recording's operations, moved by its composed shift.
    for (const [file, s] of [
      [a, sources[2]!],
      [b, sources[3]!],
      [c, sources[0]!],
    ] as const) {
      const pid = read<{ pid: number }>(file, 'SELECT pid FROM processes')[0]!.pid;
      const here = procs.find((p) => p.source_id === s.id)!.pid;
      expect(operationsOf(outer, here, s.shift_ns as number)).toEqual(operationsOf(file, pid));
    }
    // The inner recordings' rowid ranges, moved with the merged one's rows, lie inside its own.
    const ranges = read<{ source_id: number; first_id: number; last_id: number }>(
      outer,
      "SELECT source_id, first_id, last_id FROM source_rows WHERE table_name = 'api_calls' ORDER BY source_id",
    );
    expect(ranges.map((r) => r.source_id)).toEqual([1, 2, 3, 4]);
    expect(ranges[2]!.first_id).toBe(ranges[1]!.first_id);
    expect(ranges[3]!.last_id).toBe(ranges[1]!.last_id);
    expect(ranges[3]!.first_id).toBe(ranges[2]!.last_id + 1);
    expect(zoneRuleProblems(outer)).toEqual([]);
  });

  it('refuses a recording given again inside a merged one', () => {
    const a = copy('matmul-serial', 'again-a');
    const b = copy('transpose-serial', 'again-b');
    const m = path.join(dir, 'again-m.sqlite');
    mergeRecordings([a, b], m);
    expect(() => mergeRecordings([m, a], path.join(dir, 'again-out.sqlite'))).toThrow(/again-a\.sqlite: holds the same recording as .*again-m\.sqlite/);
  });
});

describe('bad inputs: the file and the problem named, nothing written', () => {
  const out = () => path.join(dir, 'bad-out.sqlite');
  const leftovers = () => fs.readdirSync(dir).filter((f) => f.startsWith('.bad-out') || f === 'bad-out.sqlite');

  function refused(inputs: string[], message: RegExp): void {
    let err: unknown;
    try {
      mergeRecordings(inputs, out());
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RecordingFileError);
    expect((err as Error).message).toMatch(message);
    expect(leftovers()).toEqual([]);
  }

  it('not a recording', () => {
    const text = path.join(dir, 'notes.sqlite');
    fs.writeFileSync(text, 'these are notes, not a recording\n'.repeat(100));
    refused([copy('matmul-serial', 'ok-1'), text], /notes\.sqlite: not a SQLite database/);
    const plain = path.join(dir, 'plain.sqlite');
    new Database(plain).exec('CREATE TABLE t (x)');
    refused([copy('matmul-serial', 'ok-2'), plain], /plain\.sqlite: a SQLite database, but not a StreamScope recording/);
  });

  it('a newer schema', () => {
    const newer = copy('matmul-serial', 'newer');
    const db = new Database(newer);
    db.pragma(`user_version = ${latestSchemaVersion + 1}`);
    db.close();
    refused([copy('transpose-serial', 'ok-3'), newer], /newer\.sqlite: recorded by a newer StreamScope/);
  });

  it('locked by a writer', () => {
    const locked = copy('matmul-serial', 'locked');
    const writer = new Database(locked);
    writer.exec('BEGIN EXCLUSIVE');
    try {
      refused([copy('transpose-serial', 'ok-4'), locked], /locked\.sqlite: database is locked/);
    } finally {
      writer.exec('ROLLBACK');
      writer.close();
    }
  });

  it('the same file twice, or the same recording twice', () => {
    const a = copy('matmul-serial', 'twice');
    refused([a, a], /twice\.sqlite: given twice/);
    const link = path.join(dir, 'twice-link.sqlite');
    fs.symlinkSync(a, link);
    refused([a, link], /twice-link\.sqlite: given twice \(also as .*twice\.sqlite\)/);
    const same = copy('matmul-serial', 'twice-copy');
    refused([a, same], /twice-copy\.sqlite: holds the same recording as .*twice\.sqlite/);
  });

  it('an input that fails halfway through the copy', () => {
    // Readable and a recording, but a table is gone: found only when its rows are copied, after the first input's.
    const broken = copy('transpose-serial', 'broken');
    const db = new Database(broken);
    db.exec('DROP TABLE overheads');
    db.close();
    refused([copy('matmul-serial', 'ok-5'), broken], /broken\.sqlite: cannot merge: no such table: src\.overheads/);
  });

  it('an existing output without --force; the output among the inputs', () => {
    const a = copy('matmul-serial', 'exists-a');
    const b = copy('transpose-serial', 'exists-b');
    const target = path.join(dir, 'exists.sqlite');
    fs.writeFileSync(target, 'keep me');
    expect(() => mergeRecordings([a, b], target)).toThrow(/exists\.sqlite: already exists \(use --force to overwrite\)/);
    expect(fs.readFileSync(target, 'utf8')).toBe('keep me');
    mergeRecordings([a, b], target, { overwrite: true });
    expect(count(target, 'processes')).toBe(2);
    expect(() => mergeRecordings([a, b], a, { overwrite: true })).toThrow(
      /exists-a\.sqlite: is also an input: write to another file \(--force never replaces an input\)/,
    );
  });
});

describe('the merge knows every column', () => {
  it('every table and column of the latest schema has a role in profiler/merge/tables.ts, and nothing else is listed', () => {
    const file = path.join(dir, 'schema.sqlite');
    const db = createRecording(file);
    try {
      expect(unclassified(db)).toEqual([]);
      const tables = db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").pluck().all() as string[];
      expect(Object.keys(MERGE_TABLES).sort()).toEqual(tables);
      for (const t of tables) {
        const columns = db.prepare('SELECT name FROM pragma_table_info(?) ORDER BY name').pluck().all(t) as string[];
        expect(Object.keys(MERGE_TABLES[t]!.columns).sort(), t).toEqual(columns);
        // A time anywhere is a role, not a value to copy (zones' durations and the wall clock aside).
        for (const c of columns.filter((c) => c.endsWith('_ns'))) {
          const role = MERGE_TABLES[t]!.columns[c];
          const durations = ['busy_ns', 'max_dur_ns', 'max_gap_ns', 'origin_wall_ns', 'shift_ns', 'correction_ns', 'residual_ns', 'residual_max_ns'];
          expect(role === 'time' || durations.includes(c), `${t}.${c}`).toBe(true);
        }
      }
    } finally {
      db.close();
    }
  });
});
