// The column cache (profiler/analysis/load/column-cache.ts): a large
// recording's columns kept in a file of their own after its first load and
// mapped by the next; a miss whenever the recording may have changed or the
// entry is not whole. Real recordings, copied to a directory of the test's
// own with the cache there and its size threshold lowered to 0 (an entry
// is otherwise written from a million rows up).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { estimatesHere } from '../../profiler/analysis/diagnosis/whatif-thread.ts';
import { handedThread } from './handed-thread.ts';
import { loadColumns } from '../../profiler/analysis/load/columns.ts';
import { columnCachePath, mapEntry, openCachedColumns, recordingKey } from '../../profiler/analysis/load/column-cache.ts';
import { exitWorkFinished } from '../../profiler/base/before-exit.ts';
import type { TimelineColumns } from '../../profiler/native/columns.ts';
import { openRecording } from '../../profiler/store/database.ts';

const recordings = path.resolve(import.meta.dirname, '../fixtures/recordings');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'column-cache-'));
const ENV = ['STREAMSCOPE_CACHE_DIR', 'STREAMSCOPE_COLUMN_CACHE', 'STREAMSCOPE_COLUMN_CACHE_MIN_ROWS', 'STREAMSCOPE_COLUMN_CACHE_MAX_BYTES'];
const saved = Object.fromEntries(ENV.map((k) => [k, process.env[k]]));

let n = 0;
/** A copy of a fixture recording, a file of this test's own. */
function copyOf(name: string): string {
  const file = path.join(dir, `${n++}-${name}`);
  fs.copyFileSync(path.join(recordings, name), file);
  return file;
}

/** loadColumns of `file`, as analyze() calls it; the cache's writes finished after. */
async function load(file: string): Promise<TimelineColumns> {
  const db = openRecording(file, { readonly: true });
  try {
    return loadColumns(db);
  } finally {
    db.close();
    await exitWorkFinished();
  }
}

/** Every column of both tables as plain arrays, and the rows left out. */
function contents(c: TimelineColumns): unknown {
  const table = (t: object) => Object.fromEntries(Object.entries(t).map(([k, v]) => [k, ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v]));
  return { ops: table(c.ops), calls: table(c.calls), leftOut: c.leftOut ?? null };
}

beforeEach(() => {
  process.env.STREAMSCOPE_CACHE_DIR = path.join(dir, 'cache');
  process.env.STREAMSCOPE_COLUMN_CACHE_MIN_ROWS = '0';
  delete process.env.STREAMSCOPE_COLUMN_CACHE;
  delete process.env.STREAMSCOPE_COLUMN_CACHE_MAX_BYTES;
});
afterEach(() => {
  for (const k of ENV)
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('the column cache', () => {
  it('maps, on the second load, the columns the first one read: the same values, row for row', async () => {
    const file = copyOf('torch_train_loop.sqlite');
    const first = await load(file);
    expect(first.cache).toBeUndefined();
    expect(fs.existsSync(columnCachePath(file))).toBe(true);
    const second = await load(file);
    expect(second.cache).toEqual({ entry: columnCachePath(file), key: recordingKey(file) });
    expect(second.ops.length).toBe(first.ops.length);
    expect(contents(second)).toEqual(contents(first));
    // The entry's own pages: not a copy in this process's memory, not shared memory either.
    expect(second.ops.start.buffer).not.toBeInstanceOf(SharedArrayBuffer);
  });

  it('misses once the recording changed (a row added), and holds the new state after the next load', async () => {
    const file = copyOf('torch_train_loop.sqlite');
    const before = await load(file);
    const db = new Database(file);
    // The last call again, a nanosecond later.
    const columns = (db.prepare('SELECT name FROM pragma_table_info(?) WHERE name != ?').pluck().all('api_calls', 'id') as string[]).join(', ');
    const shifted = columns.replace('start_ns', 'start_ns + 1').replace('end_ns', 'end_ns + 1');
    db.prepare(`INSERT INTO api_calls (${columns}) SELECT ${shifted} FROM api_calls ORDER BY id DESC LIMIT 1`).run();
    db.close();
    expect(openCachedColumns(file, recordingKey(file))).toBeNull();
    const after = await load(file);
    expect(after.cache).toBeUndefined();
    expect(after.calls.length).toBe(before.calls.length + 1);
    const again = await load(file);
    expect(again.cache?.key).toBe(recordingKey(file));
    expect(contents(again)).toEqual(contents(after));
  });

  it('misses on an entry cut short or not one at all, and writes it anew', async () => {
    const file = copyOf('nccl-straggler-h200x2.sqlite');
    const whole = await load(file);
    const entry = columnCachePath(file);
    fs.truncateSync(entry, Math.floor(fs.statSync(entry).size / 2));
    expect(openCachedColumns(file, recordingKey(file))).toBeNull();
    expect(contents(await load(file))).toEqual(contents(whole));
    expect(openCachedColumns(file, recordingKey(file))).not.toBeNull();
    fs.writeFileSync(entry, 'streamscope column cache\n0000000009\n{"format":');
    expect(openCachedColumns(file, recordingKey(file))).toBeNull();
    // An entry that holds another state of the recording: refused by its key, where the worker maps it.
    await load(file);
    expect(mapEntry({ entry, key: 'another state' })).toBeNull();
    // A header whose row count is not its columns' (one row fewer, the same length): refused.
    const bytes = fs.readFileSync(entry);
    const head = bytes.subarray(0, 65_536).toString('latin1');
    const count = /"ops":(\d+),/.exec(head)!;
    expect(count[1]).toBe('1946');
    bytes.write(`"ops":1945,`, count.index, 'latin1');
    fs.writeFileSync(entry, bytes);
    expect(openCachedColumns(file, recordingKey(file))).toBeNull();
  });

  it('writes nothing when turned off, for a recording below its size, or one with a write-ahead log to fold in', async () => {
    const off = copyOf('torch_train_loop.sqlite');
    process.env.STREAMSCOPE_COLUMN_CACHE = 'off';
    await load(off);
    expect(fs.existsSync(columnCachePath(off))).toBe(false);
    delete process.env.STREAMSCOPE_COLUMN_CACHE;

    const small = copyOf('torch_train_loop.sqlite');
    process.env.STREAMSCOPE_COLUMN_CACHE_MIN_ROWS = '1000000000';
    await load(small);
    expect(fs.existsSync(columnCachePath(small))).toBe(false);
    process.env.STREAMSCOPE_COLUMN_CACHE_MIN_ROWS = '0';

    const writing = copyOf('torch_train_loop.sqlite');
    fs.writeFileSync(`${writing}-wal`, Buffer.alloc(4096, 1));
    try {
      await load(writing);
      expect(fs.existsSync(columnCachePath(writing))).toBe(false);
    } finally {
      fs.rmSync(`${writing}-wal`);
    }
  });

  it('hits for a recording in WAL mode, whose empty log SQLite makes anew as it opens it', async () => {
    const file = copyOf('torch_train_loop.sqlite');
    const db = new Database(file);
    expect(db.pragma('journal_mode = WAL', { simple: true })).toBe('wal');
    db.close();
    const first = await load(file);
    const reader = new Database(file, { readonly: true });
    try {
      // Open, the log is there (empty): the entry still holds the recording.
      reader.prepare('SELECT count(*) FROM kernels').get();
      const again = await load(file);
      expect(again.cache).toBeDefined();
      expect(contents(again)).toEqual(contents(first));
    } finally {
      reader.close();
    }
  });

  it("writes no entry from a worker thread (a server's analysis), but a worker maps one the main thread wrote", async () => {
    const file = copyOf('torch_train_loop.sqlite');
    const inWorker = () =>
      new Promise<{ ops: number; cached: boolean }>((resolve, reject) => {
        const w = new Worker(new URL('./column-cache-load-worker.ts', import.meta.url), { workerData: { file } });
        w.once('message', resolve);
        w.once('error', reject);
      });
    const first = await inWorker();
    expect(first.ops).toBeGreaterThan(0);
    expect(first.cached).toBe(false);
    expect(fs.existsSync(columnCachePath(file))).toBe(false);
    await load(file);
    expect(fs.existsSync(columnCachePath(file))).toBe(true);
    expect((await inWorker()).cached).toBe(true);
  });

  it('keeps within its size: the entries used longest ago go first', async () => {
    const [a, b] = [copyOf('torch_train_loop.sqlite'), copyOf('torch_train_loop.sqlite')];
    await load(a);
    const size = fs.statSync(columnCachePath(a)).size;
    process.env.STREAMSCOPE_COLUMN_CACHE_MAX_BYTES = String(Math.floor(size * 1.5));
    await load(b);
    expect(fs.existsSync(columnCachePath(a))).toBe(false);
    expect(fs.existsSync(columnCachePath(b))).toBe(true);
  });

  it("gives an analysis the same findings and estimates, both threads' columns mapped from it", async () => {
    const file = copyOf('torch_train_loop.sqlite');
    const findings = async () => {
      const db = openRecording(file, { readonly: true });
      try {
        const a = analyze(db, { whatIfThread: { minRows: 0 } });
        return {
          cached: a.trace.ops.length > 0 && openCachedColumns(file, recordingKey(file)) !== null,
          findings: JSON.parse(JSON.stringify(a.diagnosis.findings)) as unknown,
        };
      } finally {
        db.close();
        await exitWorkFinished();
      }
    };
    process.env.STREAMSCOPE_COLUMN_CACHE = 'off';
    const plain = await findings();
    delete process.env.STREAMSCOPE_COLUMN_CACHE;
    await findings(); // writes the entry
    const mapped = await findings();
    expect(mapped.cached).toBe(true);
    expect((plain.findings as { costNs?: number }[]).some((f) => f.costNs !== undefined)).toBe(true);
    expect(mapped.findings).toEqual(plain.findings);
  });

  it('hands the what-if thread the entry, which its worker maps: the estimates its own, the same as made here', async () => {
    const file = copyOf('torch_train_loop.sqlite');
    await load(file);
    const columns = await load(file);
    expect(columns.cache).toBeDefined();
    const { thread, analysed } = handedThread(file, columns);
    try {
      const fixes = [...new Set(analysed().diagnosis.findings.flatMap((f) => (f.fixId ? [f.fixId] : [])))];
      expect(fixes.length).toBeGreaterThan(0);
      for (const fix of fixes) thread.start(fix);
      const here = estimatesHere(analysed().trace, analysed().host);
      for (const fix of fixes) expect(thread.result(fix)).toEqual(here.result(fix));
      expect(thread.failure).toBeNull();
      expect(thread.estimatedBy().worker.length).toBeGreaterThan(0);
    } finally {
      thread.close();
    }
  });
});
