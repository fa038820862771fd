// Nsight Systems SQLite export (`nsys export --type sqlite`) → StreamScope
// recording. Tables read: CUPTI_ACTIVITY_KIND_{KERNEL, MEMCPY, MEMSET,
// RUNTIME, SYNCHRONIZATION}, NVTX_EVENTS, StringIds, TARGET_INFO_GPU,
// TARGET_INFO_CUDA_STREAM / _NULL_STREAM, PROCESSES. Times are already
// nanoseconds from the session start.
//
// Two enums differ from CUPTI's: Nsight's memory kinds start at 0 for
// pageable (CUPTI: 1), so they shift by one; copy kinds are CUPTI's.
// globalPid / globalTid pack the pid in bits 24..47 and the tid in 0..23.
import Database from 'better-sqlite3';
import type { ImportResult } from './kineto.ts';
import { TraceFormatError } from './json-events.ts';
import { RecordingWriter } from './recording-writer.ts';

const pidOf = (global: number) => Math.floor(global / 2 ** 24) % 2 ** 24;
const tidOf = (global: number) => global % 2 ** 24;
/** Nsight memory kind → CUPTI memory kind (0 pageable → 1, ...; 7 unknown → 0). */
const memoryKind = (k: number | null | undefined) => (k === null || k === undefined || k < 0 || k > 6 ? 0 : k + 1);
/** NVTX_EVENTS.eventType: ranges (push/pop, start/end) and marks. */
const NVTX_RANGE = new Set([59, 60, 70, 71]);
const NVTX_MARK = new Set([34]);

export async function importNsys(file: string, out: string, opts: { overwrite?: boolean } = {}): Promise<ImportResult> {
  let src: Database.Database | null = null;
  try {
    src = new Database(file, { readonly: true, fileMustExist: true });
    src.prepare('SELECT count(*) FROM sqlite_schema').get();
  } catch (err) {
    src?.close();
    throw new TraceFormatError(file, `cannot open as SQLite: ${(err as Error).message}`);
  }
  try {
    return importFrom(src, file, out, opts);
  } finally {
    src.close();
  }
}

/**
 * The export's rows and values as the importer may use them. Any SQLite
 * error reading it (a table or column missing, a page corrupt) and any
 * value of the wrong type where a number belongs say so about the file,
 * naming the table and column: found by fuzzing, they were SqliteErrors
 * naming nothing, or a TypeError, half-way through writing.
 */
function exportReader(src: Database.Database, file: string) {
  const fail = (problem: string): never => {
    throw new TraceFormatError(file, problem);
  };
  return {
    rows<T = Record<string, unknown>>(table: string, sql: string): T[] {
      try {
        return src.prepare(sql).all() as T[];
      } catch (err) {
        return fail(`cannot read ${table}: ${(err as Error).message}`);
      }
    },
    /** An integer column's value. */
    int(table: string, row: Record<string, unknown>, column: string): number {
      const v = row[column];
      return typeof v === 'number' && Number.isSafeInteger(v) ? v : fail(`${table}.${column} holds ${describe(v)}, not an integer`);
    },
    /** An integer column that may be NULL. */
    optInt(table: string, row: Record<string, unknown>, column: string): number | null {
      return row[column] === null || row[column] === undefined ? null : this.int(table, row, column);
    },
  };
}

function describe(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (Buffer.isBuffer(v)) return `a blob of ${v.length} bytes`;
  if (typeof v === 'string') return `the text '${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`;
  return String(v);
}

/** A fact (a GPU's size, a name): the value when of the right type, else unknown. */
const factInt = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) ? v : null);
const factText = (v: unknown) => (typeof v === 'string' ? v : null);

function importFrom(src: Database.Database, file: string, out: string, opts: { overwrite?: boolean }): ImportResult {
  const read = exportReader(src, file);
  const tables = tablesOf(read, file);
  const nsys: NsysExport = { read, has: (t) => tables.has(t), str: stringsOf(read, file) };
  const writer = new RecordingWriter(out, { overwrite: opts.overwrite, originNs: 0, inputs: [file] });
  try {
    importDevices(nsys, writer);
    importStreamFacts(nsys, writer);
    importProcesses(nsys, writer);
    importKernels(nsys, writer);
    importCopies(nsys, writer);
    importMemsets(nsys, writer);
    importApiCalls(nsys, writer);
    const skipped = importNvtx(nsys, writer);
    // Async or not is not stored per copy in this export: the API call says.
    writer.markAsyncByApiName();
    finish(nsys, writer, file);
    return { format: 'nsys', counts: writer.counts, skipped };
  } catch (err) {
    writer.abandon();
    throw err;
  }
}

type ExportReader = ReturnType<typeof exportReader>;

/** The export being imported: its reader, which tables it has, a StringIds id's text ('' for none, `#id` for one it lacks). */
interface NsysExport {
  read: ExportReader;
  has(table: string): boolean;
  str(id: number | null): string;
}

/** The export's tables; refused when it lacks those every Nsight Systems export has. */
function tablesOf(read: ExportReader, file: string): Set<string> {
  const tables = new Set(read.rows<{ name: string }>('sqlite_schema', "SELECT name FROM sqlite_schema WHERE type = 'table'").map((t) => t.name));
  if (!tables.has('StringIds') || !tables.has('CUPTI_ACTIVITY_KIND_KERNEL')) {
    throw new TraceFormatError(file, 'not an Nsight Systems SQLite export (no StringIds / CUPTI_ACTIVITY_KIND_KERNEL tables)');
  }
  return tables;
}

function stringsOf(read: ExportReader, file: string): NsysExport['str'] {
  const strings = new Map<number, string>();
  for (const r of read.rows('StringIds', 'SELECT id, value FROM StringIds')) {
    const id = read.int('StringIds', r, 'id');
    if (typeof r.value !== 'string') throw new TraceFormatError(file, `StringIds.value holds ${describe(r.value)}, not text`);
    strings.set(id, r.value);
  }
  return (id) => (id === null ? '' : (strings.get(id) ?? `#${id}`));
}

function importDevices({ read, has }: NsysExport, writer: RecordingWriter): void {
  if (!has('TARGET_INFO_GPU')) return;
  for (const g of read.rows('TARGET_INFO_GPU', 'SELECT * FROM TARGET_INFO_GPU')) {
    const warps = factInt(g.maxWarpsPerSm);
    writer.device(read.int('TARGET_INFO_GPU', g, 'id'), {
      name: factText(g.name),
      uuid: typeof g.uuid === 'string' && g.uuid ? `GPU-${g.uuid}` : null,
      ccMajor: factInt(g.computeMajor),
      ccMinor: factInt(g.computeMinor),
      smCount: factInt(g.smCount),
      totalMemoryBytes: factInt(g.totalMemory),
      maxRegistersPerSm: factInt(g.maxRegistersPerSm),
      maxSharedMemoryPerSm: factInt(g.maxShmemPerSm),
      maxThreadsPerSm: warps !== null ? warps * (factInt(g.threadsPerWarp) ?? 32) : null,
    });
  }
}

/** Stream facts: the null (legacy default) stream of each context, priorities. */
function importStreamFacts({ read, has }: NsysExport, writer: RecordingWriter): void {
  if (has('TARGET_INFO_CUDA_NULL_STREAM')) {
    const t = 'TARGET_INFO_CUDA_NULL_STREAM';
    for (const s of read.rows(t, `SELECT streamId, processId, deviceId, contextId FROM ${t}`)) {
      writer.streamFacts(read.int(t, s, 'deviceId'), read.int(t, s, 'contextId'), read.int(t, s, 'streamId'), read.int(t, s, 'processId'), { flags: 1 });
    }
  }
  if (has('TARGET_INFO_CUDA_STREAM')) {
    const t = 'TARGET_INFO_CUDA_STREAM';
    for (const s of read.rows(t, `SELECT streamId, processId, contextId, priority FROM ${t}`)) {
      const priority = read.optInt(t, s, 'priority');
      writer.streamFacts(null, read.int(t, s, 'contextId'), read.int(t, s, 'streamId'), read.int(t, s, 'processId'), priority === null ? {} : { priority });
    }
  }
}

function importProcesses({ read, has }: NsysExport, writer: RecordingWriter): void {
  if (!has('PROCESSES')) return;
  for (const p of read.rows('PROCESSES', 'SELECT pid, name FROM PROCESSES')) {
    const name = factText(p.name);
    if (name) writer.knownCommand(read.int('PROCESSES', p, 'pid'), name);
  }
}

/** The columns every GPU operation table of the export has, in the order gpuOp reads them. */
const GPU_OP_COLUMNS = 'start, end, deviceId, contextId, streamId, correlationId, globalPid';

/** Where and when a kernel, copy or memset ran, and which call launched it: what the three tables share. */
function gpuOp(int: (column: string) => number) {
  return {
    start: int('start'),
    end: int('end'),
    device: int('deviceId'),
    context: int('contextId'),
    stream: int('streamId'),
    pid: pidOf(int('globalPid')),
    correlation: int('correlationId'),
  };
}

function importKernels({ read, str }: NsysExport, writer: RecordingWriter): void {
  const t = 'CUPTI_ACTIVITY_KIND_KERNEL';
  for (const k of read.rows(
    t,
    `SELECT ${GPU_OP_COLUMNS}, demangledName, gridX, gridY, gridZ,
        blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory FROM ${t} ORDER BY start`,
  )) {
    const int = (c: string) => read.int(t, k, c);
    writer.kernel({
      ...gpuOp(int),
      name: str(read.optInt(t, k, 'demangledName')),
      grid: [int('gridX'), int('gridY'), int('gridZ')],
      block: [int('blockX'), int('blockY'), int('blockZ')],
      registers: int('registersPerThread'),
      staticShared: int('staticSharedMemory'),
      dynamicShared: int('dynamicSharedMemory'),
    });
  }
}

function importCopies({ read, has }: NsysExport, writer: RecordingWriter): void {
  const t = 'CUPTI_ACTIVITY_KIND_MEMCPY';
  if (!has(t)) return;
  for (const m of read.rows(
    t,
    `SELECT ${GPU_OP_COLUMNS}, bytes, copyKind, srcKind, dstKind
          FROM ${t} ORDER BY start`,
  )) {
    const int = (c: string) => read.int(t, m, c);
    writer.memcpy({
      ...gpuOp(int),
      bytes: int('bytes'),
      copyKind: int('copyKind'),
      srcKind: memoryKind(read.optInt(t, m, 'srcKind')),
      dstKind: memoryKind(read.optInt(t, m, 'dstKind')),
      async: false /* refined from the API call name (markAsyncByApiName) */,
    });
  }
}

function importMemsets({ read, has }: NsysExport, writer: RecordingWriter): void {
  const t = 'CUPTI_ACTIVITY_KIND_MEMSET';
  if (!has(t)) return;
  for (const m of read.rows(
    t,
    `SELECT ${GPU_OP_COLUMNS}, bytes, value, memKind
          FROM ${t} ORDER BY start`,
  )) {
    const int = (c: string) => read.int(t, m, c);
    writer.memset({
      ...gpuOp(int),
      bytes: int('bytes'),
      value: read.optInt(t, m, 'value') ?? 0,
      memoryKind: memoryKind(read.optInt(t, m, 'memKind')),
      async: false,
    });
  }
}

/** The runtime (and driver) calls; a driver call's name starts with `cu` and a capital. */
function importApiCalls({ read, str }: NsysExport, writer: RecordingWriter): void {
  const t = 'CUPTI_ACTIVITY_KIND_RUNTIME';
  for (const a of read.rows(t, `SELECT start, end, globalTid, correlationId, nameId, returnValue FROM ${t} ORDER BY start`)) {
    const int = (c: string) => read.int(t, a, c);
    const name = str(int('nameId'));
    const globalTid = int('globalTid');
    writer.apiCall({
      start: int('start'),
      end: int('end'),
      pid: pidOf(globalTid),
      tid: tidOf(globalTid),
      name,
      domain: /^cu[A-Z]/.test(name) ? 2 : 1,
      cbid: 0,
      correlation: int('correlationId'),
      returnValue: read.optInt(t, a, 'returnValue') ?? 0,
    });
  }
}

/** NVTX ranges and marks; returns the events skipped (domain and category registrations, payload-only events). */
function importNvtx({ read, has, str }: NsysExport, writer: RecordingWriter): number {
  const t = 'NVTX_EVENTS';
  if (!has(t)) return 0;
  let skipped = 0;
  for (const n of read.rows(t, `SELECT start, end, eventType, text, textId, globalTid FROM ${t} ORDER BY start`)) {
    const type = read.optInt(t, n, 'eventType');
    if (type === null || (!NVTX_RANGE.has(type) && !NVTX_MARK.has(type))) {
      skipped++;
      continue;
    }
    const global = read.optInt(t, n, 'globalTid') ?? 0;
    const end = read.optInt(t, n, 'end');
    writer.range({
      start: read.int(t, n, 'start'),
      end: NVTX_RANGE.has(type) && end !== null ? end : null,
      pid: pidOf(global),
      tid: tidOf(global),
      name: factText(n.text) ?? str(read.optInt(t, n, 'textId')),
      domain: 'nvtx',
    });
  }
  return skipped;
}

/** The recording finished, with where it came from and the Nsight Systems version that exported it. */
function finish({ read, has }: NsysExport, writer: RecordingWriter, file: string): void {
  const meta = new Map<string, unknown>(
    has('EXPORT_META_DATA')
      ? read.rows<{ name: unknown; value: unknown }>('EXPORT_META_DATA', 'SELECT name, value FROM EXPORT_META_DATA').map((r) => [String(r.name), r.value])
      : [],
  );
  writer.finish({
    imported_from: 'nsys',
    imported_file: file,
    nsys_version: factText(meta.get('EXPORT_PRODUCT_VERSION')),
    command: writer.mainCommand(),
  });
}
