// A recording loaded into memory for analysis: device/stream tables plus all
// GPU operations (kernels, memcpys, memsets) in flat typed arrays sorted by
// start time. Pure data: the analysis functions never touch SQLite (what is
// read of the file is read by load/: the tables by load/tables.ts, the
// operations natively).
import type { Db } from '../store/database.ts';
import { loadOpColumns, type OpColumns } from '../native/addon.ts';
import type { Ns } from '../contract/time.ts';
import { readCallsExtent } from './load/calls.ts';
import { readTraceTables, type DeviceRow, type StreamRow, type TraceTables } from './load/tables.ts';

// Read by load/tables.ts; named here too, where the trace that holds them is.
export type { DeviceRow, StreamRow, TraceTables };
export { readTraceTables };

export const OpKind = { Kernel: 1, Memcpy: 2, Memset: 3 } as const;
export type OpKindValue = (typeof OpKind)[keyof typeof OpKind];

/** What an operation occupies: the SMs or one copy direction. */
export const OpCategory = { Compute: 0, HtoD: 1, DtoH: 2, DtoD: 3, PtoP: 4, HtoH: 5, Memset: 6, Other: 7 } as const;
export type OpCategoryValue = (typeof OpCategory)[keyof typeof OpCategory];
export const OP_CATEGORY_NAMES = ['compute', 'HtoD', 'DtoH', 'DtoD', 'PtoP', 'HtoH', 'memset', 'other'] as const;

/** CUPTI memcpy kinds (stored as is in memcpys.copy_kind) → category. */
export function categoryOfCopyKind(copyKind: number): OpCategoryValue {
  switch (copyKind) {
    case 1:
    case 3:
      return OpCategory.HtoD; // HtoD, HtoA
    case 2:
    case 4:
      return OpCategory.DtoH; // DtoH, AtoH
    case 5:
    case 6:
    case 7:
    case 8:
      return OpCategory.DtoD; // AtoA, AtoD, DtoA, DtoD
    case 9:
      return OpCategory.HtoH;
    case 10:
      return OpCategory.PtoP;
    default:
      return OpCategory.Other;
  }
}

export interface GpuOps {
  length: number;
  kind: Uint8Array;
  category: Uint8Array;
  /** Row id in the op's own table (kernels.id, memcpys.id, memsets.id). */
  rowId: Float64Array;
  start: Float64Array;
  end: Float64Array;
  stream: Int32Array;
  device: Int32Array;
  bytes: Float64Array;
  /** kernels.name_id; memcpy: src_kind * 16 + dst_kind; memset: memory_kind. */
  detail: Int32Array;
  /** CUPTI correlation id: joins the op to the API call that issued it (within its process). */
  correlation: Uint32Array;
  /** Process that issued it. */
  pid: Int32Array;
  /** Copies and memsets: 1 if issued asynchronously (kernels: 1). */
  isAsync: Uint8Array;
  /** Kernels: blocks in the grid; 0 for other ops. */
  blocks: Float64Array;
  /** Kernels: threads per block, registers per thread, shared memory per block (static + dynamic). */
  blockThreads: Int32Array;
  registers: Int32Array;
  sharedBytes: Int32Array;
}

export interface Trace {
  meta: Map<string, string>;
  devices: DeviceRow[];
  streams: StreamRow[];
  ops: GpuOps;
  strings: Map<number, string>;
  /** Demangled forms of the mangled C++ names among strings (strings.demangled), by strings id. */
  demangled: Map<number, string>;
  /** First and last time covered by any GPU op or API call. */
  span: { start: Ns; end: Ns };
}

/** Zeroed arrays for `n` operations (loadTrace fills them; tests build small ones). */
export function allocateOps(n: number): GpuOps {
  return {
    length: n,
    kind: new Uint8Array(n),
    category: new Uint8Array(n),
    rowId: new Float64Array(n),
    start: new Float64Array(n),
    end: new Float64Array(n),
    stream: new Int32Array(n),
    device: new Int32Array(n),
    bytes: new Float64Array(n),
    detail: new Int32Array(n),
    correlation: new Uint32Array(n),
    pid: new Int32Array(n),
    isAsync: new Uint8Array(n),
    blocks: new Float64Array(n),
    blockThreads: new Int32Array(n),
    registers: new Int32Array(n),
    sharedBytes: new Int32Array(n),
  };
}

/**
 * How every output names a GPU: its CUDA ordinal (what nvidia-smi,
 * CUDA_VISIBLE_DEVICES and the timeline call it), not the recording-wide
 * devices.id; the id where the ordinal is unknown.
 */
export function gpuOrdinals(devices: DeviceRow[]): (deviceId: number) => number {
  const ordinal = new Map(devices.map((d) => [d.id, d.ordinal ?? d.id]));
  return (id) => ordinal.get(id) ?? id;
}

/** The calls a trace's span takes in: their columns, in start order (only their starts and ends are read). */
export type SpanCalls = { length: number; start: Float64Array; end: Float64Array };

/**
 * The trace of loaded operations (`columns`) and calls (`calls`: the
 * analysis reads ops and calls together, analysis/diagnosis/analyze.ts),
 * with the file's small tables (load/tables.ts readTraceTables).
 */
export function traceOf(columns: OpColumns, calls: SpanCalls, tables: TraceTables): Trace {
  // The calls' span from their loaded columns (a scan of ten million
  // unindexed rows in SQL costs half a second).
  let start = Infinity;
  let end = -Infinity;
  // Sorted by start (the loader's order): the first starts first.
  if (calls.length > 0) start = calls.start[0]!;
  for (let k = 0; k < calls.length; k++) if (calls.end[k]! > end) end = calls.end[k]!;
  return traceOfSpan(columns, { start, end }, tables);
}

/**
 * A trace of a recording, what is not given read from it: `columns` (and
 * `calls`, in start order), as traceOf takes them, else the operations
 * read natively and the calls' span by load/calls.ts; `tables`, else read
 * by load/tables.ts. For the callers above the analysis that hold a file;
 * the analysis itself builds its traces with traceOf.
 */
export function loadTrace(db: Db, columns?: OpColumns, calls?: SpanCalls, tables?: TraceTables): Trace {
  const read = tables ?? readTraceTables(db);
  // Columns come from the native loader: one JS object per row would cost
  // ~0.8 µs each, seconds for millions of operations.
  const c = columns ?? loadOpColumns(db.name);
  if (calls) return traceOf(c, calls, read);
  const apiSpan = readCallsExtent(db);
  return traceOfSpan(c, { start: apiSpan.start ?? Infinity, end: apiSpan.end ?? -Infinity }, read);
}

/** Each operation's category at (kind & 3) << 8 | copy kind: kernels compute, memsets memset, copies by their kind. */
const CATEGORY_BY_KIND_AND_COPY = Uint8Array.from({ length: 4 << 8 }, (_, at) => {
  const kind = at >> 8;
  return kind === OpKind.Kernel ? OpCategory.Compute : kind === OpKind.Memset ? OpCategory.Memset : categoryOfCopyKind(at & 255);
});

/** The trace of `c` and the small tables; `calls`: the calls' first start and latest end (±Infinity for none). */
function traceOfSpan(c: OpColumns, calls: { start: number; end: number }, tables: TraceTables): Trace {
  const { meta, devices, streams, strings, demangled } = tables;
  const ops: GpuOps = {
    length: c.length,
    kind: c.kind,
    category: new Uint8Array(c.length),
    rowId: c.rowId,
    start: c.start,
    end: c.end,
    stream: c.stream,
    device: c.device,
    bytes: c.bytes,
    detail: c.detail,
    correlation: c.correlation,
    pid: c.pid,
    isAsync: c.isAsync,
    blocks: c.blocks,
    blockThreads: c.blockThreads,
    registers: c.registers,
    sharedBytes: c.sharedBytes,
  };
  // Category by one table lookup on (kind, copy kind), and the ops' latest
  // end, in one pass without a branch on the kind: a stream's kernels and
  // copies interleave, and a branch on them mispredicts (traceOf of a
  // generated rank's 1 M operations: 10.1 ms with the branches, 5.9 without).
  let opsEnd = -Infinity;
  {
    const { kind, category, end } = ops;
    const copyKind = c.copyKind;
    for (let i = 0; i < ops.length; i++) {
      category[i] = CATEGORY_BY_KIND_AND_COPY[((kind[i]! & 3) << 8) | copyKind[i]!]!;
      opsEnd = Math.max(opsEnd, end[i]!);
    }
  }
  let { start, end } = calls;
  // Ops are sorted by start too.
  if (ops.length > 0) start = Math.min(start, ops.start[0]!);
  end = Math.max(end, opsEnd);
  if (!Number.isFinite(start)) {
    start = 0;
    end = 0;
  }
  return { meta, devices, streams, ops, strings, demangled, span: { start, end } };
}
