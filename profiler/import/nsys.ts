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
  let src: Database.Database;
  try {
    src = new Database(file, { readonly: true, fileMustExist: true });
    src.prepare('SELECT count(*) FROM sqlite_schema').get();
  } catch (err) {
    throw new TraceFormatError(file, `cannot open as SQLite: ${(err as Error).message}`);
  }
  const tables = new Set((src.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name));
  if (!tables.has('StringIds') || !tables.has('CUPTI_ACTIVITY_KIND_KERNEL')) {
    src.close();
    throw new TraceFormatError(file, 'not an Nsight Systems SQLite export (no StringIds / CUPTI_ACTIVITY_KIND_KERNEL tables)');
  }
  const has = (t: string) => tables.has(t);
  const strings = new Map<number, string>();
  for (const [id, v] of src.prepare('SELECT id, value FROM StringIds').raw().iterate() as Iterable<[number, string]>) strings.set(id, v);
  const str = (id: number | null) => (id === null ? '' : (strings.get(id) ?? `#${id}`));
  const writer = new RecordingWriter(out, { overwrite: opts.overwrite, originNs: 0 });
  let skipped = 0;
  try {
    if (has('TARGET_INFO_GPU')) {
      for (const g of src.prepare('SELECT * FROM TARGET_INFO_GPU').all() as Record<string, number | string | null>[]) {
        writer.device(Number(g.id), {
          name: g.name as string,
          uuid: g.uuid ? `GPU-${g.uuid}` : null,
          ccMajor: g.computeMajor as number,
          ccMinor: g.computeMinor as number,
          smCount: g.smCount as number,
          totalMemoryBytes: g.totalMemory as number,
          maxRegistersPerSm: g.maxRegistersPerSm as number,
          maxSharedMemoryPerSm: g.maxShmemPerSm as number,
          maxThreadsPerSm: g.maxWarpsPerSm !== null ? Number(g.maxWarpsPerSm) * Number(g.threadsPerWarp ?? 32) : null,
        });
      }
    }
    // Stream facts: the null (legacy default) stream of each context, priorities.
    if (has('TARGET_INFO_CUDA_NULL_STREAM')) {
      for (const s of src.prepare('SELECT streamId, processId, deviceId, contextId FROM TARGET_INFO_CUDA_NULL_STREAM').all() as Record<string, number>[]) {
        writer.streamFacts(s.deviceId!, s.contextId!, s.streamId!, s.processId!, { flags: 1 });
      }
    }
    if (has('TARGET_INFO_CUDA_STREAM')) {
      for (const s of src.prepare('SELECT streamId, processId, contextId, priority FROM TARGET_INFO_CUDA_STREAM').all() as Record<string, number>[]) {
        writer.streamFacts(null, s.contextId!, s.streamId!, s.processId!, { priority: s.priority! });
      }
    }
    if (has('PROCESSES')) {
      for (const p of src.prepare('SELECT pid, name FROM PROCESSES').all() as { pid: number; name: string | null }[]) {
        if (p.name) writer.knownCommand(p.pid, p.name);
      }
    }
    for (const k of src
      .prepare(
        `SELECT start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, gridX, gridY, gridZ,
        blockX, blockY, blockZ, registersPerThread, staticSharedMemory, dynamicSharedMemory FROM CUPTI_ACTIVITY_KIND_KERNEL ORDER BY start`,
      )
      .all() as Record<string, number>[]) {
      writer.kernel({
        start: k.start!,
        end: k.end!,
        device: k.deviceId!,
        context: k.contextId!,
        stream: k.streamId!,
        pid: pidOf(k.globalPid!),
        correlation: k.correlationId!,
        name: str(k.demangledName!),
        grid: [k.gridX!, k.gridY!, k.gridZ!],
        block: [k.blockX!, k.blockY!, k.blockZ!],
        registers: k.registersPerThread!,
        staticShared: k.staticSharedMemory!,
        dynamicShared: k.dynamicSharedMemory!,
      });
    }
    if (has('CUPTI_ACTIVITY_KIND_MEMCPY')) {
      for (const m of src
        .prepare(
          `SELECT start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind
          FROM CUPTI_ACTIVITY_KIND_MEMCPY ORDER BY start`,
        )
        .all() as Record<string, number | null>[]) {
        writer.memcpy({
          start: m.start!,
          end: m.end!,
          device: m.deviceId!,
          context: m.contextId!,
          stream: m.streamId!,
          pid: pidOf(m.globalPid!),
          correlation: m.correlationId!,
          bytes: m.bytes!,
          copyKind: m.copyKind!,
          srcKind: memoryKind(m.srcKind),
          dstKind: memoryKind(m.dstKind),
          async: false /* refined below from the API call name */,
        });
      }
    }
    if (has('CUPTI_ACTIVITY_KIND_MEMSET')) {
      for (const m of src
        .prepare(
          `SELECT start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, value, memKind
          FROM CUPTI_ACTIVITY_KIND_MEMSET ORDER BY start`,
        )
        .all() as Record<string, number | null>[]) {
        writer.memset({
          start: m.start!,
          end: m.end!,
          device: m.deviceId!,
          context: m.contextId!,
          stream: m.streamId!,
          pid: pidOf(m.globalPid!),
          correlation: m.correlationId!,
          bytes: m.bytes!,
          value: m.value ?? 0,
          memoryKind: memoryKind(m.memKind),
          async: false,
        });
      }
    }
    for (const a of src
      .prepare('SELECT start, end, globalTid, correlationId, nameId, returnValue FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start')
      .all() as Record<string, number>[]) {
      const name = str(a.nameId!);
      writer.apiCall({
        start: a.start!,
        end: a.end!,
        pid: pidOf(a.globalTid!),
        tid: tidOf(a.globalTid!),
        name,
        domain: /^cu[A-Z]/.test(name) ? 2 : 1,
        cbid: 0,
        correlation: a.correlationId!,
        returnValue: a.returnValue ?? 0,
      });
    }
    if (has('NVTX_EVENTS')) {
      for (const n of src.prepare('SELECT start, end, eventType, text, textId, globalTid FROM NVTX_EVENTS ORDER BY start').all() as Record<
        string,
        number | string | null
      >[]) {
        const type = Number(n.eventType);
        if (!NVTX_RANGE.has(type) && !NVTX_MARK.has(type)) {
          skipped++; // domain and category registrations, payload-only events
          continue;
        }
        const global = Number(n.globalTid);
        writer.range({
          start: Number(n.start),
          end: NVTX_RANGE.has(type) && n.end !== null ? Number(n.end) : null,
          pid: pidOf(global),
          tid: tidOf(global),
          name: (n.text as string | null) ?? str(n.textId as number | null),
          domain: 'nvtx',
        });
      }
    }
    // Async or not is not stored per copy in this export: the API call says.
    writer.markAsyncByApiName();
    const meta = has('EXPORT_META_DATA')
      ? new Map((src.prepare('SELECT name, value FROM EXPORT_META_DATA').all() as { name: string; value: string }[]).map((r) => [r.name, r.value]))
      : new Map<string, string>();
    writer.finish({
      imported_from: 'nsys',
      imported_file: file,
      nsys_version: meta.get('EXPORT_PRODUCT_VERSION') ?? null,
      command: writer.mainCommand(),
    });
    return { format: 'nsys', counts: writer.counts, skipped };
  } catch (err) {
    writer.abandon();
    throw err;
  } finally {
    src.close();
  }
}
