// The column cache: a large recording's timeline columns, as the loader
// read and ordered them, kept in a file of their own in the user's cache
// directory, so that the next analysis of the same recording maps them
// (native/addon.ts mapFile) instead of reading the recording again.
//
// Why: the load of 10 M operations wrote 1.1 GB of columns into fresh
// memory, and on a virtual machine a fresh page costs its mapping by the
// host (1.1 – 1.9 µs a 4 KiB page on the development VM): most of the
// load's 0.9 – 1.3 s on two cores, the analysis's largest phase. A cache
// file read once is in the page cache, whose pages need no such mapping;
// mapped, its columns cost a page-table entry per page, and both of the
// analysis's threads map the same pages (whatif-thread.ts hands the
// worker the cache's path, not the columns).
//
// What makes an entry valid: the recording's identity and state as the
// load began and ended (device, inode, size, modification and change
// times, SQLite's change counter and schema cookie, its write-ahead log's
// size and time: recordingKey), the columns' layout and the addon build
// that loaded them (LAYOUT), and the format. Any other state is a miss,
// and the next load writes the entry anew. Entries are written by a
// process's main thread only (a command's analysis; the server's, on
// worker threads, map entries but write none: a stopped thread's columns
// go with it), one at a time, only for recordings of MIN_ROWS rows or
// more, with no write-ahead log pending (a recording still being written
// changes under every load), as soon as the load is done, on a thread of
// the pool and
// around the page cache (the disk's time, while the analysis runs), to a
// temporary file synced and then renamed (a reader sees a whole entry or
// none), and the oldest entries removed beyond the cache's size
// (MAX_BYTES). `streamscope` waits for the writes before it exits
// (base/before-exit.ts). The recording itself is never written.
//
// Environment: STREAMSCOPE_COLUMN_CACHE=off turns it off; the entries are
// in the cache directory's columns/ (base/cache-dir.ts:
// $STREAMSCOPE_CACHE_DIR, else ~/.cache/streamscope);
// STREAMSCOPE_COLUMN_CACHE_MIN_ROWS and STREAMSCOPE_COLUMN_CACHE_MAX_BYTES
// override the two limits.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { addonPath, CALL_COLUMNS, mapFile, OP_COLUMNS, TYPED_ARRAYS, writeFileDirect, type LeftOutRows } from '../../native/addon.ts';
import type { TimelineColumns } from '../../native/columns.ts';
import { finishBeforeExit } from '../../base/before-exit.ts';
import { cacheDir } from '../../base/cache-dir.ts';

/** A recording of fewer operations and calls than this loads in ~0.1 s: not worth a file of its own. */
const MIN_ROWS = 1_000_000;
/** The cache's size at most: the oldest entries removed beyond it. */
const MAX_BYTES = 8 * 2 ** 30;
// Bumped when the entry's own layout changes. What the loader makes of a recording (its checks, its order) is the
// addon's: its build is part of the layout (LAYOUT), so an entry written by another build is a miss.
const FORMAT = 1;
const MAGIC = 'streamscope column cache\n';
/** Where the columns begin, and each column after: a multiple of any page size Linux uses (4 KiB – 64 KiB). */
const ALIGN = 65_536;

/** A cache entry's path and the recording's state it holds (recordingKey). */
export interface CacheEntry {
  entry: string;
  key: string;
}

/** Columns mapped from the cache: `cache` is the entry (what the what-if thread maps in turn). */
export type CachedColumns = TimelineColumns & { cache: CacheEntry };

interface Header {
  format: number;
  layout: string;
  key: string;
  ops: number;
  calls: number;
  leftOut: LeftOutRows | null;
  columns: { table: 'ops' | 'calls'; name: string; offset: number; bytes: number }[];
}

/** The columns' names and types, and the addon build that loaded them (its size and modification time). */
const LAYOUT = (() => {
  const st = fs.statSync(addonPath(), { throwIfNoEntry: false });
  return JSON.stringify({ ops: OP_COLUMNS, calls: CALL_COLUMNS, loader: st ? `${st.size}:${st.mtimeMs}` : null });
})();

function enabled(): boolean {
  return process.env.STREAMSCOPE_COLUMN_CACHE !== 'off';
}

function limit(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return process.env[name] !== undefined && Number.isFinite(v) && v >= 0 ? v : fallback;
}

/** The entry of the recording `file` (by its real path: one entry per recording, whatever the path it was named by). */
export function columnCachePath(file: string): string {
  const name = createHash('sha256').update(fs.realpathSync(file)).digest('hex').slice(0, 32);
  return path.join(cacheDir(), 'columns', `${name}.columns`);
}

/** The recording's identity and state (see the file's comment); it changes whenever its content may have. */
export function recordingKey(file: string): string {
  const st = fs.statSync(file, { bigint: true });
  const wal = fs.statSync(`${file}-wal`, { bigint: true, throwIfNoEntry: false });
  const head = Buffer.alloc(100);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, head, 0, 100, 0);
  } finally {
    fs.closeSync(fd);
  }
  // SQLite's header: the file change counter (offset 24) and the schema cookie (40).
  const sqlite = `${head.readUInt32BE(24)}.${head.readUInt32BE(40)}`;
  // An empty write-ahead log holds nothing (SQLite makes one as it opens a file in WAL mode, anew each time): as none.
  return [st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs, sqlite, wal && wal.size > 0n ? `${wal.size}.${wal.mtimeNs}` : '-'].join(':');
}

/** The entry's header, or null where it is not one of this format and layout, each column whole. */
function readHeader(fd: number): Header | null {
  const first = Buffer.alloc(MAGIC.length + 11);
  if (fs.readSync(fd, first, 0, first.length, 0) < first.length || first.subarray(0, MAGIC.length).toString('latin1') !== MAGIC) return null;
  const length = Number(first.subarray(MAGIC.length, MAGIC.length + 10).toString('latin1'));
  if (!Number.isInteger(length) || length <= 0 || length > 2 ** 24) return null;
  const json = Buffer.alloc(length);
  if (fs.readSync(fd, json, 0, length, first.length) < length) return null;
  const header = JSON.parse(json.toString('utf8')) as Header;
  if (header.format !== FORMAT || header.layout !== LAYOUT) return null;
  // Every column of both tables once, each as many values as its table has rows.
  const expected = [
    ...Object.entries(OP_COLUMNS).map(([name, type]) => ['ops', name, type] as const),
    ...Object.entries(CALL_COLUMNS).map(([name, type]) => ['calls', name, type] as const),
  ];
  const whole =
    header.columns.length === expected.length &&
    expected.every(([table, name, type], i) => {
      const c = header.columns[i]!;
      return c.table === table && c.name === name && c.bytes === header[table] * TYPED_ARRAYS[type].BYTES_PER_ELEMENT;
    });
  return whole ? header : null;
}

const alignUp = (n: number) => Math.ceil(n / ALIGN) * ALIGN;

/**
 * The recording's columns from its cache entry, mapped; null where there is
 * none for the recording in the state `key` (recordingKey: as it is now),
 * or the cache is off, or this runtime cannot map (Electron). An entry that
 * does not read as one is a miss too.
 */
export function openCachedColumns(file: string, key: string): CachedColumns | null {
  if (!enabled()) return null;
  try {
    return mapEntry({ entry: columnCachePath(file), key });
  } catch {
    // No entry, or the recording cannot be read (the load says why).
    return null;
  }
}

/**
 * The columns of the cache entry `at.entry`, mapped, where it holds the
 * recording in the state `at.key`; else null (and, where it cannot be
 * opened, throws). What the what-if thread maps of the entry the analysing
 * thread found (whatif-worker.ts).
 */
export function mapEntry(at: CacheEntry): CachedColumns | null {
  const fd = fs.openSync(at.entry, 'r');
  let header: Header | null;
  try {
    header = readHeader(fd);
  } catch {
    header = null;
  } finally {
    fs.closeSync(fd);
  }
  if (!header || header.key !== at.key) return null;
  let buffers: ArrayBuffer[] | null;
  try {
    buffers = mapFile(at.entry, header.columns);
  } catch {
    // Shorter than its header says (a copy cut short): a miss, written anew.
    return null;
  }
  if (!buffers) return null;
  const ops: Record<string, unknown> = { length: header.ops };
  const calls: Record<string, unknown> = { length: header.calls };
  const types: Record<string, Record<string, keyof typeof TYPED_ARRAYS>> = { ops: OP_COLUMNS, calls: CALL_COLUMNS };
  header.columns.forEach((c, i) => {
    (c.table === 'ops' ? ops : calls)[c.name] = new TYPED_ARRAYS[types[c.table]![c.name]!](buffers[i]!);
  });
  // Used now: the last the size limit removes.
  const now = new Date();
  try {
    fs.utimesSync(at.entry, now, now);
  } catch {
    // A read-only cache still serves.
  }
  return { ops: ops as unknown as CachedColumns['ops'], calls: calls as unknown as CachedColumns['calls'], leftOut: header.leftOut, cache: at };
}

/**
 * Writes `columns` (the recording's as loaded, whose state as the load
 * began was `keyBefore`) to its cache entry, beginning now, on a thread of
 * the pool, around the page cache (native/addon.ts writeFileDirect: the
 * disk's time, while the analysis runs); see the file's comment for when
 * it does not. The columns must not change until it is done.
 */
export function cacheColumns(file: string, keyBefore: string, columns: TimelineColumns): void {
  // On the main thread only: the write reads the columns from another thread until it is done, and a worker thread's
  // arrays go with it when it is stopped (the server's analyses, which map entries but leave writing them to commands).
  if (!isMainThread || !enabled() || columns.ops.length + columns.calls.length < limit('STREAMSCOPE_COLUMN_CACHE_MIN_ROWS', MIN_ROWS)) return;
  let entry: string;
  try {
    // Changed while it was read, or a write-ahead log still to fold in (a recording being written): not cached.
    if (recordingKey(file) !== keyBefore || (fs.statSync(`${file}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) return;
    entry = columnCachePath(file);
  } catch {
    return;
  }
  // One write of an entry at a time (a process that analyses a recording in several scopes loads it for each).
  if (writing.has(entry)) return;
  writing.add(entry);
  const failed = (err: unknown) => {
    process.stderr.write(`streamscope: the column cache entry ${entry} was not written: ${err instanceof Error ? err.message : String(err)}\n`);
  };
  try {
    finishBeforeExit(
      writeEntry(entry, keyBefore, columns)
        .catch(failed)
        .finally(() => writing.delete(entry)),
    );
  } catch (err) {
    failed(err);
    writing.delete(entry);
  }
}

/** The entries this process is writing. */
const writing = new Set<string>();

/** The entry written to a temporary file, synced, then renamed to its place; the cache kept within its size. */
async function writeEntry(entry: string, key: string, columns: TimelineColumns): Promise<void> {
  const list: { table: 'ops' | 'calls'; name: string; array: ArrayBufferView }[] = [];
  for (const table of ['ops', 'calls'] as const) {
    const group = columns[table] as unknown as Record<string, unknown>;
    for (const name of Object.keys(table === 'ops' ? OP_COLUMNS : CALL_COLUMNS)) list.push({ table, name, array: group[name] as ArrayBufferView });
  }
  const header: Header = {
    format: FORMAT,
    layout: LAYOUT,
    key,
    ops: columns.ops.length,
    calls: columns.calls.length,
    leftOut: columns.leftOut ?? null,
    columns: [],
  };
  // The offsets depend on the header's length, and the header holds them: sized with room for the offsets' digits.
  const probe = Buffer.byteLength(JSON.stringify({ ...header, columns: list.map((c) => ({ table: c.table, name: c.name, offset: 1e15, bytes: 1e15 })) }));
  let at = alignUp(MAGIC.length + 11 + probe);
  for (const c of list) {
    header.columns.push({ table: c.table, name: c.name, offset: at, bytes: c.array.byteLength });
    at = alignUp(at + c.array.byteLength);
  }
  const max = limit('STREAMSCOPE_COLUMN_CACHE_MAX_BYTES', MAX_BYTES);
  // Larger than the whole cache: not kept.
  if (at > max) return;
  const json = JSON.stringify(header);
  const head = Buffer.from(`${MAGIC}${String(Buffer.byteLength(json)).padStart(10, '0')}\n${json}`, 'utf8');
  fs.mkdirSync(path.dirname(entry), { recursive: true });
  const temporary = `${entry}.${process.pid}.${Date.now()}.partial`;
  try {
    // Begun at once (its thread copies the columns and waits on the disk): the header first, each column at its offset.
    await writeFileDirect(temporary, [{ data: head, offset: 0 }, ...list.map((c, i) => ({ data: c.array, offset: header.columns[i]!.offset }))], at);
    await makeRoom(path.dirname(entry), at, max);
    await fs.promises.rename(temporary, entry);
  } catch (err) {
    await fs.promises.rm(temporary, { force: true });
    throw err;
  }
}

/**
 * Removes the oldest entries (by when last used) until `bytes` more fit in
 * the cache's size, and partial files a write that did not finish left
 * an hour or more ago.
 */
async function makeRoom(dir: string, bytes: number, max: number): Promise<void> {
  const entries: { file: string; size: number; used: number }[] = [];
  for (const name of await fs.promises.readdir(dir)) {
    const file = path.join(dir, name);
    const st = await fs.promises.stat(file).catch(() => null);
    if (!st?.isFile()) continue;
    if (name.endsWith('.partial')) {
      if (Date.now() - st.mtimeMs > 3_600_000) await fs.promises.rm(file, { force: true });
    } else if (name.endsWith('.columns')) entries.push({ file, size: st.size, used: st.mtimeMs });
  }
  entries.sort((a, b) => a.used - b.used);
  let total = entries.reduce((s, e) => s + e.size, 0);
  for (const e of entries) {
    if (total + bytes <= max) break;
    await fs.promises.rm(e.file, { force: true });
    total -= e.size;
  }
}
