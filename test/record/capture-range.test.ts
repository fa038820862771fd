// `record --capture-range`: the filter on finished recordings (no GPU
// needed). A copy of a real recording is filtered, and what is left is
// checked against SQL run on the original: the GPU work launched inside the
// capture, the host rows that started inside it, zones that still index
// every row, and `report` agreeing with `report --range` on the original.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import type { IngestProgress } from '../../profiler/native/addon.ts';
import { applyCaptureRange, CAPTURE_TABLES, formatCaptureResult, type CaptureResult } from '../../profiler/record/capture-range.ts';
import { CaptureRangeError, parseCaptureRange, type CaptureRange } from '../../profiler/contract/record-request.ts';
import { finalizeRecording } from '../../profiler/record/finalize.ts';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { openRecording, readMeta } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';
import { zoneRuleProblems, zonesWrittenAndRecomputed } from '../helpers/zones.ts';

const fixtures = path.join(repoRoot, 'test/fixtures/recordings');
const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
function run(args: string[]) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8' });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
beforeAll(() => {
  dir = tempDir('capture');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A writable copy of `file` (fixtures are never written). */
function copyOf(file: string, name: string): string {
  const out = path.join(dir, name);
  fs.copyFileSync(file, out);
  return out;
}

function capture(file: string, range: CaptureRange): CaptureResult {
  const db = openRecording(file);
  try {
    return applyCaptureRange(db, range);
  } finally {
    db.close();
  }
}

function ids(file: string, sql: string): number[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).pluck().all() as number[];
  } finally {
    db.close();
  }
}

const allIds = (file: string, table: string) => ids(file, `SELECT id FROM ${table} ORDER BY id`);

function metaOf(file: string): Map<string, string> {
  const db = new Database(file, { readonly: true });
  try {
    return readMeta(db);
  } finally {
    db.close();
  }
}

/**
 * The rows each table should keep, by SQL on the unfiltered file, given the
 * capture windows as a CTE `w(pid, tid, hostpid, s, e)` (tid NULL: any thread of the
 * process; hostpid NULL: host rows of any process count).
 */
function expectedIds(file: string, windows: string): Record<(typeof CAPTURE_TABLES)[number], number[]> {
  // A launch is inside when its call started in a window of its process (on the window's thread, where one is named).
  const launchInside = `EXISTS (SELECT 1 FROM api_calls a JOIN w ON w.pid = a.pid AND (w.tid IS NULL OR w.tid = a.tid)
      AND a.start_ns >= w.s AND a.start_ns < w.e WHERE a.pid = c.pid AND a.correlation_id = o.correlation_id)`;
  const ops = (table: string) => `WITH ${windows} SELECT o.id FROM ${table} o JOIN contexts c ON c.id = o.context_id WHERE ${launchInside} ORDER BY o.id`;
  // Host rows: inside a window of their process, or of any process where the window says pid NULL.
  const hostWindow = (alias: string) => `(w.hostpid IS NULL OR w.hostpid = ${alias}.pid)`;
  const starts = (table: string) => `WITH ${windows} SELECT x.id FROM ${table} x WHERE EXISTS (SELECT 1 FROM w WHERE ${hostWindow('x')}
      AND x.start_ns >= w.s AND x.start_ns < w.e) ORDER BY x.id`;
  const callKept = (alias: string) => `EXISTS (SELECT 1 FROM api_calls a JOIN w ON ${hostWindow('a')} AND a.start_ns >= w.s AND a.start_ns < w.e
      WHERE a.pid = ${alias}.pid AND a.correlation_id = ${alias}.correlation_id)`;
  return {
    kernels: ids(file, ops('kernels')),
    memcpys: ids(file, ops('memcpys')),
    memsets: ids(file, ops('memsets')),
    api_calls: ids(file, starts('api_calls')),
    syncs: ids(file, starts('syncs')),
    overheads: ids(file, starts('overheads')),
    nvtx_ranges: ids(
      file,
      `WITH ${windows} SELECT r.id FROM nvtx_ranges r WHERE EXISTS (SELECT 1 FROM w WHERE ${hostWindow('r')}
        AND r.start_ns < w.e AND coalesce(r.end_ns, r.start_ns) >= w.s) ORDER BY r.id`,
    ),
    // An event goes with its cudaEventRecord call; one whose call was never recorded stays.
    cuda_events: ids(
      file,
      `WITH ${windows} SELECT e.id FROM cuda_events e WHERE ${callKept('e')}
        OR NOT EXISTS (SELECT 1 FROM api_calls a WHERE a.pid = e.pid AND a.correlation_id = e.correlation_id) ORDER BY e.id`,
    ),
  };
}

/**
 * The windows of an NVTX capture, as expectedIds takes them: the closed
 * instances of `name`, each holding what any thread of its process launched
 * and the host rows of its process (docs/ANALYSIS.md, "Scopes": an
 * instance owns what its process does while it is open).
 */
const nvtxWindowsSql = (name: string) => `w(pid, tid, hostpid, s, e) AS (SELECT r.pid, NULL, r.pid, r.start_ns, r.end_ns FROM nvtx_ranges r
    JOIN strings n ON n.id = r.name_id WHERE n.value = '${name}' AND r.end_ns IS NOT NULL)`;

function expectZonesValid(file: string): void {
  expect(zoneRuleProblems(file)).toEqual([]);
  const { written, recomputed } = zonesWrittenAndRecomputed(file, dir);
  expect(written).toEqual(recomputed);
}

describe('--capture-range nvtx:step on a PyTorch recording (torch_prefetch: 12 steps, prefetch and compute inside)', () => {
  const original = path.join(fixtures, 'torch_prefetch.sqlite');
  const steps = nvtxWindowsSql('step');
  let file: string;
  let result: CaptureResult;
  beforeAll(() => {
    file = copyOf(original, 'step.sqlite');
    result = capture(file, { kind: 'nvtx', name: 'step' });
  });

  it('keeps exactly the rows the rule selects, by SQL on the original', () => {
    // No operation without a launch (correlation 0): the SQL rule is the whole rule here.
    expect(ids(original, 'SELECT id FROM kernels WHERE correlation_id = 0 UNION ALL SELECT id FROM memcpys WHERE correlation_id = 0')).toEqual([]);
    const expected = expectedIds(original, steps);
    for (const table of CAPTURE_TABLES) expect(allIds(file, table), table).toEqual(expected[table]);
    // The capture must cut something and keep something, or this proves nothing.
    expect(expected.kernels.length).toBeGreaterThan(0);
    expect(expected.memcpys.length).toBeGreaterThan(0);
    expect(allIds(original, 'memcpys').length).toBeGreaterThan(expected.memcpys.length);
    expect(allIds(original, 'api_calls').length).toBeGreaterThan(expected.api_calls.length);
    expect(result.windows).toBe(12);
    expect(result.neverOccurred).toBeNull();
    for (const table of CAPTURE_TABLES) {
      expect(result.kept[table], table).toBe(expected[table]!.length);
      expect(result.dropped[table], table).toBe(allIds(original, table).length - expected[table]!.length);
    }
  });

  it('leaves zones that index every row that is left (each in one zone of its lane, counts, spans and shapes of its rows)', () => {
    expectZonesValid(file);
  });

  it('records the range and what it left out in meta, and the duration of what is left', () => {
    const db = openRecording(file, { readonly: true });
    try {
      const meta = readMeta(db);
      expect(meta.get('capture_range')).toBe('nvtx:step');
      expect(JSON.parse(meta.get('capture_dropped')!)).toEqual(result.dropped);
      const span = db
        .prepare(
          `SELECT max(e) - min(s) FROM (SELECT start_ns AS s, end_ns AS e FROM api_calls UNION ALL
          SELECT start_ns, end_ns FROM kernels UNION ALL SELECT start_ns, end_ns FROM memcpys UNION ALL SELECT start_ns, end_ns FROM memsets)`,
        )
        .pluck()
        .get() as number;
      expect(Number(meta.get('duration_ns'))).toBe(span);
      expect(span).toBeLessThan(Number(metaOf(original).get('duration_ns')));
      expect(meta.get('notes')).toBeUndefined();
    } finally {
      db.close();
    }
    expect(formatCaptureResult(result)).toMatch(
      /^capture range nvtx:step \(12 instances\): kept 60 kernels, 12 copies, .*; left out 4 copies, .*727 API calls/,
    );
  });

  it('reports the same GPU work as `report --range step` on the whole recording', () => {
    const filtered = run(['report', file, '--whole', '--json']);
    const whole = filtered.code === 0 ? filtered : run(['report', file, '--json']);
    expect(whole.code, whole.stderr).toBe(0);
    const ranged = run(['report', original, '--range', 'step', '--json']);
    if (/unknown option '--range'/i.test(ranged.stderr)) {
      // report --range is another change's; until it lands there is nothing to compare with.
      console.warn('report --range is not there yet: comparison skipped');
      return;
    }
    expect(ranged.code, ranged.stderr).toBe(0);
    const a = JSON.parse(whole.stdout) as { kernels: { count: number }[]; copies: { count: number }[]; overlap: unknown };
    const b = JSON.parse(ranged.stdout) as typeof a;
    const sum = (list: { count: number }[]) => list.reduce((s, x) => s + x.count, 0);
    expect(sum(a.kernels)).toBe(60);
    expect(sum(a.kernels)).toBe(sum(b.kernels));
    expect(sum(a.copies)).toBe(sum(b.copies));
    expect(a.kernels).toEqual(b.kernels);
    expect(a.copies).toEqual(b.copies);
    expect(a.overlap).toEqual(b.overlap);
  });
});

describe('--capture-range nvtx:train_step on a PyTorch training loop (torch_train_loop: the backward pass launched by the autograd thread)', () => {
  it("keeps what any thread of the process launched inside a step, the autograd thread's backward pass included, as report --range does", () => {
    const original = path.join(fixtures, 'torch_train_loop.sqlite');
    const file = copyOf(original, 'train-step.sqlite');
    const result = capture(file, { kind: 'nvtx', name: 'train_step' });
    expect(result.windows).toBe(24);
    const expected = expectedIds(original, nvtxWindowsSql('train_step'));
    for (const table of CAPTURE_TABLES) expect(allIds(file, table), table).toEqual(expected[table]);
    // Two threads' launches kept: the main thread's forward pass and the autograd thread's backward pass (12 + 18 a step).
    const byThread = ids(
      file,
      `SELECT count(*) FROM (SELECT correlation_id, context_id FROM kernels UNION ALL SELECT correlation_id, context_id FROM memcpys
        UNION ALL SELECT correlation_id, context_id FROM memsets) o JOIN contexts c ON c.id = o.context_id
        JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = o.correlation_id GROUP BY a.tid ORDER BY a.tid`,
    );
    expect(byThread).toEqual([24 * 12, 24 * 18]);
    // What report --range train_step analyses on the whole recording: the same operations, one by one.
    const db = openRecording(original, { readonly: true });
    try {
      const { ops } = analyze(db, { scope: { kind: 'range', name: 'train_step' } }).trace;
      const TABLE = [null, 'kernels', 'memcpys', 'memsets'] as const;
      for (const table of ['kernels', 'memcpys', 'memsets'] as const) {
        const ranged = Array.from({ length: ops.length }, (_, i) => i)
          .filter((i) => TABLE[ops.kind[i]!] === table)
          .map((i) => ops.rowId[i]!);
        expect(
          ranged.sort((a, b) => a - b),
          table,
        ).toEqual(allIds(file, table));
      }
    } finally {
      db.close();
    }
    expectZonesValid(file);
  });
});

describe('a capture range that never occurred', () => {
  it('keeps nothing, says so in meta notes, and leaves a valid recording', () => {
    const file = copyOf(path.join(fixtures, 'torch_prefetch.sqlite'), 'never.sqlite');
    const result = capture(file, { kind: 'nvtx', name: 'stepp' });
    expect(result.windows).toBe(0);
    expect(result.neverOccurred).toBe(
      "capture range nvtx:stepp never occurred (no closed NVTX range named 'stepp' was recorded; its ranges: 'compute', 'prefetch', 'step'): nothing was kept",
    );
    for (const table of CAPTURE_TABLES) expect(result.kept[table], table).toBe(0);
    for (const table of CAPTURE_TABLES) expect(allIds(file, table), table).toEqual([]);
    const db = openRecording(file, { readonly: true });
    try {
      const meta = readMeta(db);
      expect(JSON.parse(meta.get('notes')!)).toEqual([result.neverOccurred]);
      expect(meta.get('capture_range')).toBe('nvtx:stepp');
      expect(meta.has('duration_ns')).toBe(false);
      expect(db.prepare('SELECT count(*) FROM zones').pluck().get()).toBe(0);
    } finally {
      db.close();
    }
    const report = run(['report', file]);
    expect(report.code, report.stderr).toBe(0);
  });

  it('cuda-profiler-api without a cudaProfilerStart call: nothing kept, the note says why', () => {
    const file = copyOf(path.join(fixtures, 'cupy_streams.sqlite'), 'no-profiler-calls.sqlite');
    const result = capture(file, { kind: 'cuda-profiler-api' });
    expect(result.neverOccurred).toBe(
      'capture range cuda-profiler-api never occurred (no cudaProfilerStart or cuProfilerStart call was recorded): nothing was kept',
    );
    expect(allIds(file, 'kernels')).toEqual([]);
  });
});

describe('a real recording of cudaProfilerStart/Stop and NVTX ranges (profiler-range: scripts/device/probes/profiler_range.cu)', () => {
  const original = path.join(fixtures, 'profiler-range.sqlite');

  it("cuda-profiler-api keeps the work between Start and Stop, a second thread's launches included", () => {
    // From the start of each Start call to the end of the next Stop call of its process; any thread.
    const windows = `w(pid, tid, hostpid, s, e) AS (SELECT a.pid, NULL, a.pid, a.start_ns,
        (SELECT b.end_ns FROM api_calls b JOIN strings t ON t.id = b.name_id
          WHERE t.value = 'cudaProfilerStop' AND b.pid = a.pid AND b.start_ns >= a.start_ns ORDER BY b.start_ns LIMIT 1)
      FROM api_calls a JOIN strings n ON n.id = a.name_id WHERE n.value = 'cudaProfilerStart')`;
    const file = copyOf(original, 'profiler-range-api.sqlite');
    const result = capture(file, { kind: 'cuda-profiler-api' });
    const expected = expectedIds(original, windows);
    for (const table of CAPTURE_TABLES) expect(allIds(file, table), table).toEqual(expected[table]);
    // The probe: 12 kernels in the loops and 2 from the second thread inside; 5 before and 7 after left out.
    expect(result).toMatchObject({ windows: 1, kept: { kernels: 14, memsets: 3 }, dropped: { kernels: 12 } });
    expect(
      ids(
        file,
        `SELECT count(DISTINCT a.tid) FROM kernels k JOIN contexts c ON c.id = k.context_id
        JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id`,
      ),
    ).toEqual([2]);
    expectZonesValid(file);
  });

  it("nvtx:loop keeps the three loops' kernels and memsets", () => {
    const file = copyOf(original, 'profiler-range-loop.sqlite');
    const result = capture(file, { kind: 'nvtx', name: 'loop' });
    const expected = expectedIds(original, nvtxWindowsSql('loop'));
    for (const table of CAPTURE_TABLES) expect(allIds(file, table), table).toEqual(expected[table]);
    expect(result).toMatchObject({ windows: 3, kept: { kernels: 12, memsets: 3 } });
    expectZonesValid(file);
  });
});

// The real recording above has one process and one Start/Stop interval.
// For what it lacks — several intervals in a process, a Start with no Stop,
// a Stop before any Start, runtime and driver calls nested, processes whose
// intervals overlap in time — these tests insert the calls, as the collector
// stores them, into the API calls of real multi-process and multi-thread
// recordings, and check the intervals they make against SQL.
describe('--capture-range cuda-profiler-api (profiler calls inserted into real recordings)', () => {
  let nextCorrelation = 4_000_000_000;
  /** Inserts one API call named `name` (stored names: runtime without version suffix, driver as exported). */
  function insertCall(db: Database.Database, pid: number, tid: number, name: string, start: number, end: number): void {
    db.prepare('INSERT OR IGNORE INTO strings (value) VALUES (?)').run(name);
    const nameId = db.prepare('SELECT id FROM strings WHERE value = ?').pluck().get(name) as number;
    db.prepare(
      `INSERT INTO api_calls (start_ns, end_ns, pid, tid, domain, cbid, name_id, correlation_id, return_value)
        VALUES (?, ?, ?, ?, ?, 0, ?, ?, 0)`,
    ).run(start, end, pid, tid, name.startsWith('cuda') ? 1 : 2, nameId, nextCorrelation++);
  }
  /** Start of the `n`-th (from 0) kernel launch call of process `pid`. */
  function launchStart(file: string, pid: number, n: number): number {
    return ids(
      file,
      `SELECT a.start_ns FROM kernels k JOIN contexts c ON c.id = k.context_id
        JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id WHERE c.pid = ${pid} ORDER BY a.start_ns`,
    )[n]!;
  }

  it("per process: from each Start (runtime and nested driver call) to the end of the next Stop, or to the process's end", () => {
    // multiprocess_cupy: a parent (839) and two workers (841, 842) whose runs overlap in time.
    const original = copyOf(path.join(fixtures, 'multiprocess_cupy.sqlite'), 'mp-original.sqlite');
    const db = new Database(original);
    const tidOf = (pid: number) => db.prepare('SELECT tid FROM api_calls WHERE pid = ? LIMIT 1').pluck().get(pid) as number;
    const windows: [number, number, number][] = [];
    // 841: two Start/Stop pairs, each with a driver call inside the runtime one (a program using both APIs): one window each.
    for (const [from, to] of [
      [0, 30],
      [60, 80],
    ] as const) {
      const s = launchStart(original, 841, from) - 1000;
      const t = launchStart(original, 841, to) - 1000;
      insertCall(db, 841, tidOf(841), 'cudaProfilerStart', s, s + 300);
      insertCall(db, 841, tidOf(841), 'cuProfilerStart', s + 100, s + 200);
      insertCall(db, 841, tidOf(841), 'cudaProfilerStop', t, t + 300);
      insertCall(db, 841, tidOf(841), 'cuProfilerStop', t + 100, t + 200);
      windows.push([841, s, t + 300]);
    }
    // 842: Start with no Stop: to the end of the process. A Stop before it ends nothing.
    const s842 = launchStart(original, 842, 40) - 1000;
    insertCall(db, 842, tidOf(842), 'cuProfilerStop', s842 - 5000, s842 - 4900);
    insertCall(db, 842, tidOf(842), 'cuProfilerStart', s842, s842 + 100);
    windows.push([842, s842, Number.MAX_SAFE_INTEGER]);
    // 839 calls neither: none of its activity is kept.
    db.close();
    openRecording(original).close(); // zones for the inserted calls, as any SQL writer gets them

    const file = copyOf(original, 'mp-captured.sqlite');
    const result = capture(file, { kind: 'cuda-profiler-api' });
    expect(result.windows).toBe(3);
    const cte = `w(pid, tid, hostpid, s, e) AS (VALUES ${windows.map(([pid, s, e]) => `(${pid}, NULL, ${pid}, ${s}, ${e})`).join(', ')})`;
    const expected = expectedIds(original, cte);
    for (const table of CAPTURE_TABLES) expect(allIds(file, table), table).toEqual(expected[table]);
    // 30 + 20 launches of 841, 61 of 842 (from its 41st on), none of 839.
    expect(expected.kernels.length).toBe(111);
    expect(ids(file, 'SELECT DISTINCT c.pid FROM kernels k JOIN contexts c ON c.id = k.context_id ORDER BY 1')).toEqual([841, 842]);
    expect(ids(file, "SELECT count(*) FROM api_calls a JOIN strings s ON s.id = a.name_id WHERE s.value LIKE 'cu%Profiler%'")).toEqual([9]);
    // Per process: 842's calls during 841's windows are not 841's capture.
    const crossing = ids(
      original,
      `WITH ${cte} SELECT a.id FROM api_calls a JOIN w ON w.pid = 841 AND a.start_ns >= w.s AND a.start_ns < w.e WHERE a.pid = 842 AND a.start_ns < ${s842}`,
    );
    expect(crossing.length).toBeGreaterThan(0);
    expect(allIds(file, 'api_calls')).not.toContain(crossing[0]);
    expectZonesValid(file);
  });

  it('any thread of the process: launches on other threads than the Start and Stop calls count', () => {
    // per-thread-default-stream: threads 456 and 455 launch at 128.5 ms and 134 ms, 454 at 262 ms.
    const original = copyOf(path.join(fixtures, 'per-thread-default-stream.sqlite'), 'ptds-original.sqlite');
    const db = new Database(original);
    const pid = db.prepare('SELECT pid FROM api_calls LIMIT 1').pluck().get() as number;
    insertCall(db, pid, 456, 'cudaProfilerStart', 120_000_000, 120_000_500);
    insertCall(db, pid, 454, 'cudaProfilerStop', 200_000_000, 200_000_500);
    db.close();
    openRecording(original).close();
    const file = copyOf(original, 'ptds-captured.sqlite');
    expect(capture(file, { kind: 'cuda-profiler-api' }).windows).toBe(1);
    const launchers = ids(
      file,
      `SELECT a.tid FROM kernels k JOIN contexts c ON c.id = k.context_id
        JOIN api_calls a ON a.pid = c.pid AND a.correlation_id = k.correlation_id ORDER BY a.tid`,
    );
    expect(launchers).toEqual([455, 456]);
    const cte = `w(pid, tid, hostpid, s, e) AS (VALUES (${pid}, NULL, ${pid}, 120000000, 200000500))`;
    const expected = expectedIds(original, cte);
    for (const table of CAPTURE_TABLES) expect(allIds(file, table), table).toEqual(expected[table]);
    expectZonesValid(file);
  });
});

describe('a failure of the filter loses nothing', () => {
  /** A recording whose overheads refuse to be deleted: the filter fails after it deleted API calls. */
  function failingCopy(name: string): string {
    const file = copyOf(path.join(fixtures, 'torch_prefetch.sqlite'), name);
    const db = new Database(file);
    db.exec("CREATE TRIGGER refuse BEFORE DELETE ON overheads BEGIN SELECT RAISE(ABORT, 'overheads are read-only here'); END");
    db.close();
    return file;
  }
  const snapshot = (file: string) => {
    const db = new Database(file, { readonly: true });
    try {
      return {
        rows: Object.fromEntries(CAPTURE_TABLES.map((t) => [t, allIds(file, t)])),
        zones: db.prepare('SELECT * FROM zones ORDER BY table_id, lane, first_id').all(),
      };
    } finally {
      db.close();
    }
  };

  it('applyCaptureRange throws and leaves every row, zone and meta key as it was', () => {
    const file = failingCopy('fails.sqlite');
    const before = snapshot(file);
    const metaBefore = metaOf(file);
    expect(() => capture(file, { kind: 'nvtx', name: 'step' })).toThrow(/overheads are read-only here/);
    expect(snapshot(file)).toEqual(before);
    expect(metaOf(file)).toEqual(metaBefore);
    expectZonesValid(file);
  });

  it('the end of a recording keeps everything and says the capture failed (and a working capture there)', () => {
    const progress = (pid: number) => ({
      files: new Map([[`${pid}.ssr`, { pid, complete: true, truncated: null, lastKind: 'End', lastFlush: null } as unknown as IngestProgress]]),
      records: 1,
      originNs: null,
      originWallNs: null,
    });
    const file = failingCopy('finalize-fails.sqlite');
    const before = snapshot(file);
    const failed = finalizeRecording(file, progress(1163), { code: 0, signal: null, pid: 1163 }, 1000, null, { kind: 'nvtx', name: 'step' });
    expect(failed.complete).toBe(true);
    expect(failed.capture).toEqual({ spec: 'nvtx:step', result: null, error: 'overheads are read-only here' });
    expect(snapshot(file)).toEqual(before);
    const meta = metaOf(file);
    expect(JSON.parse(meta.get('notes')!)).toEqual([
      '--capture-range nvtx:step could not be applied (overheads are read-only here): the recording holds everything recorded',
    ]);
    expect(meta.has('capture_range')).toBe(false);

    const good = copyOf(path.join(fixtures, 'torch_prefetch.sqlite'), 'finalize-works.sqlite');
    const done = finalizeRecording(good, progress(1163), { code: 0, signal: null, pid: 1163 }, 1000, null, { kind: 'nvtx', name: 'step' });
    expect(done.capture?.error).toBeNull();
    expect(done.capture?.result?.kept.kernels).toBe(60);
    expect(metaOf(good).get('capture_range')).toBe('nvtx:step');
    expectZonesValid(good);
  });
});

describe('parseCaptureRange and the record command', () => {
  it('accepts nvtx:NAME and cuda-profiler-api', () => {
    expect(parseCaptureRange('nvtx:step')).toEqual({ kind: 'nvtx', name: 'step' });
    expect(parseCaptureRange('nvtx:train:epoch')).toEqual({ kind: 'nvtx', name: 'train:epoch' });
    expect(parseCaptureRange('cuda-profiler-api')).toEqual({ kind: 'cuda-profiler-api' });
  });

  it('refuses anything else, saying what is accepted', () => {
    for (const bad of ['foo', 'nvtx:', 'nvtx: ', 'nvtx', 'cudaProfilerApi', '']) {
      expect(() => parseCaptureRange(bad), bad).toThrow(CaptureRangeError);
      expect(() => parseCaptureRange(bad), bad).toThrow(/nvtx:NAME .* or cuda-profiler-api/);
    }
  });

  it('record refuses a malformed range with exit code 2 before the target starts', () => {
    const marker = path.join(dir, 'target-ran');
    const touch = [process.execPath, '-e', `require('fs').writeFileSync(${JSON.stringify(marker)}, '')`];
    for (const [spec, message] of [
      ['foo', /--capture-range 'foo': expected nvtx:NAME/],
      ['nvtx:', /give the NVTX range's name after 'nvtx:'/],
    ] as const) {
      const out = path.join(dir, `refused-${spec.replace(/\W/g, '')}.sqlite`);
      const r = run(['record', '-o', out, '--capture-range', spec, '--', ...touch]);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain('cuda-profiler-api');
      expect(fs.existsSync(out)).toBe(false);
    }
    const w = run(['record', '-o', path.join(dir, 'w.sqlite'), '--capture-range', 'nvtx:', '--workload', 'normalise', '--scenario', 'concurrent']);
    expect(w.code).toBe(2);
    expect(fs.existsSync(marker)).toBe(false);
  });

  it('the help names the option', () => {
    expect(run(['record', '--help']).stdout).toContain('--capture-range nvtx:NAME|cuda-profiler-api');
  });
});
