// A window answer in columns, and its binary form for the browser-mode
// transport. A window answer is the largest thing the renderer receives:
// zoomed in on a dense recording it holds ~250 k items (25 MB of JSON), and
// JSON.parse of that blocked the page's main thread for 160 ms on the 2-core
// machine (and JSON.stringify as long in the server, on the same cores);
// decoding it into an object per item still cost 10–15 ms. So the timeline
// reads the columns themselves (WindowColumns: typed arrays, views into the
// received bytes), and only the small parts (row ids, names, the few
// distinct kinds and tables, the concurrency tracks) travel as JSON.
//
// Layout (little-endian):
//   'SSW1' | u32 header length | header JSON (UTF-8) | zero padding to 8
//   f64 block: per row, items' id, start, end, then coverage start, end, count
//   i32 block: per row, items' nameId, depth (-1: none), then coverage depth (-1: none)
//   u8 block:  per row, items' table, kind (indexes into the header's lists), then coverage kind
// Rows follow each other inside each block in header order.
import type { ConcurrencyResponse, CoverageSpan, ItemKind, ItemTable, TimelineItem, WindowResponse, WindowRow } from './api.ts';

const MAGIC = 0x31575353; // 'SSW1' read as a little-endian u32

/** The media type of an encoded window answer. */
export const WINDOW_MEDIA_TYPE = 'application/x-streamscope-window';

/** One row's items and coverage spans as columns (index i is the i-th item, in start order). */
export interface RowColumns {
  rowId: WindowRow['rowId'];
  /** WindowRow.resolutionNs: set only when the row was built coarser than asked. */
  resolutionNs?: number;
  items: {
    length: number;
    /** Index into WindowColumns.tables / .kinds. */
    table: Uint8Array;
    kind: Uint8Array;
    id: Float64Array;
    startNs: Float64Array;
    endNs: Float64Array;
    nameId: Int32Array;
    /** NVTX nesting depth; -1 for items without one. */
    depth: Int32Array;
  };
  coverage: {
    length: number;
    kind: Uint8Array;
    startNs: Float64Array;
    endNs: Float64Array;
    count: Float64Array;
    depth: Int32Array;
  };
}

export interface WindowColumns {
  startNs: number;
  endNs: number;
  strings: Record<number, string>;
  kernelLabels: Record<number, string>;
  concurrency?: ConcurrencyResponse[];
  /** WindowResponse.bounded. */
  bounded?: string;
  tables: ItemTable[];
  kinds: ItemKind[];
  rows: RowColumns[];
}

/** The JSON part: everything but the columns, and how many items and spans each row has. */
type Header = Omit<WindowColumns, 'rows'> & { rows: { rowId: string; items: number; coverage: number; resolutionNs?: number }[] };

/** Where each block starts, and how long each is (in elements), for rows of these sizes after a header of `jsonLength` bytes. */
function blocks(jsonLength: number, rows: readonly { items: number; coverage: number }[]) {
  let items = 0;
  let spans = 0;
  for (const r of rows) {
    items += r.items;
    spans += r.coverage;
  }
  const f64 = { at: align8(8 + jsonLength), length: 3 * items + 3 * spans };
  const i32 = { at: f64.at + 8 * f64.length, length: 2 * items + spans };
  const u8 = { at: i32.at + 4 * i32.length, length: 2 * items + spans };
  return { f64, i32, u8, end: u8.at + u8.length };
}

/** Columns of an answer given as objects (the desktop app's IPC, JSON). */
export function windowColumnsOf(w: WindowResponse): WindowColumns {
  const tables: ItemTable[] = [];
  const kinds: ItemKind[] = [];
  const tableIndex = new Map<ItemTable, number>();
  const kindIndex = new Map<ItemKind, number>();
  const indexOf = <T>(map: Map<T, number>, list: T[], v: T): number => {
    let i = map.get(v);
    if (i === undefined) {
      map.set(v, (i = list.length));
      list.push(v);
    }
    return i;
  };
  const rows = w.rows.map((r): RowColumns => {
    const n = r.items.length;
    const m = r.coverage.length;
    const c = emptyRow(r.rowId, n, m);
    if (r.resolutionNs !== undefined) c.resolutionNs = r.resolutionNs;
    for (let k = 0; k < n; k++) {
      const it = r.items[k]!;
      c.items.table[k] = indexOf(tableIndex, tables, it.ref.table);
      c.items.kind[k] = indexOf(kindIndex, kinds, it.kind);
      c.items.id[k] = it.ref.id;
      c.items.startNs[k] = it.startNs;
      c.items.endNs[k] = it.endNs;
      c.items.nameId[k] = it.nameId;
      c.items.depth[k] = it.depth ?? -1;
    }
    for (let k = 0; k < m; k++) {
      const s = r.coverage[k]!;
      c.coverage.kind[k] = indexOf(kindIndex, kinds, s.kind);
      c.coverage.startNs[k] = s.startNs;
      c.coverage.endNs[k] = s.endNs;
      c.coverage.count[k] = s.count;
      c.coverage.depth[k] = s.depth ?? -1;
    }
    return c;
  });
  if (tables.length > 256 || kinds.length > 256) throw new Error('window columns: more than 256 distinct tables or kinds');
  return {
    startNs: w.startNs,
    endNs: w.endNs,
    strings: w.strings,
    kernelLabels: w.kernelLabels,
    ...(w.concurrency ? { concurrency: w.concurrency } : {}),
    ...(w.bounded !== undefined ? { bounded: w.bounded } : {}),
    tables,
    kinds,
    rows,
  };
}

function emptyRow(rowId: string, n: number, m: number): RowColumns {
  return {
    rowId: rowId as WindowRow['rowId'],
    items: {
      length: n,
      table: new Uint8Array(n),
      kind: new Uint8Array(n),
      id: new Float64Array(n),
      startNs: new Float64Array(n),
      endNs: new Float64Array(n),
      nameId: new Int32Array(n),
      depth: new Int32Array(n),
    },
    coverage: {
      length: m,
      kind: new Uint8Array(m),
      startNs: new Float64Array(m),
      endNs: new Float64Array(m),
      count: new Float64Array(m),
      depth: new Int32Array(m),
    },
  };
}

export function encodeWindow(w: WindowResponse): Uint8Array {
  const c = windowColumnsOf(w);
  const header: Header = {
    ...c,
    rows: c.rows.map((r) => ({
      rowId: r.rowId,
      items: r.items.length,
      coverage: r.coverage.length,
      ...(r.resolutionNs !== undefined ? { resolutionNs: r.resolutionNs } : {}),
    })),
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const at = blocks(json.length, header.rows);
  const out = new Uint8Array(at.end);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, json.length, true);
  out.set(json, 8);
  const f64 = new Float64Array(out.buffer, at.f64.at, at.f64.length);
  const i32 = new Int32Array(out.buffer, at.i32.at, at.i32.length);
  const u8 = out.subarray(at.u8.at);
  let f = 0;
  let i = 0;
  let b = 0;
  for (const r of c.rows) {
    const { items: it, coverage: cv } = r;
    f64.set(it.id, f);
    f64.set(it.startNs, f + it.length);
    f64.set(it.endNs, f + 2 * it.length);
    f += 3 * it.length;
    f64.set(cv.startNs, f);
    f64.set(cv.endNs, f + cv.length);
    f64.set(cv.count, f + 2 * cv.length);
    f += 3 * cv.length;
    i32.set(it.nameId, i);
    i32.set(it.depth, i + it.length);
    i += 2 * it.length;
    i32.set(cv.depth, i);
    i += cv.length;
    u8.set(it.table, b);
    u8.set(it.kind, b + it.length);
    b += 2 * it.length;
    u8.set(cv.kind, b);
    b += cv.length;
  }
  return out;
}

/**
 * The columns in `bytes` (an encodeWindow result, at any offset of its
 * buffer): views into one aligned copy, nothing allocated per item.
 * Throws on anything else, naming what is wrong.
 */
export function decodeWindowColumns(bytes: Uint8Array): WindowColumns {
  const fail = (why: string): never => {
    throw new Error(`not a StreamScope window answer: ${why}`);
  };
  if (bytes.byteLength < 8) fail(`${bytes.byteLength} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) fail('wrong magic');
  const jsonLength = view.getUint32(4, true);
  if (8 + jsonLength > bytes.byteLength) fail('header runs past the end');
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + jsonLength))) as Header;
  const at = blocks(jsonLength, header.rows);
  if (at.end !== bytes.byteLength) fail(`${bytes.byteLength} bytes where the header promises ${at.end}`);
  // One aligned copy of the blocks (the input may sit at any offset); the rows are views into it.
  const block = bytes.slice(at.f64.at);
  const f64 = new Float64Array(block.buffer, 0, at.f64.length);
  const i32 = new Int32Array(block.buffer, at.i32.at - at.f64.at, at.i32.length);
  const u8 = new Uint8Array(block.buffer, at.u8.at - at.f64.at, at.u8.length);
  let f = 0;
  let i = 0;
  let b = 0;
  const rows = header.rows.map(({ rowId, items: n, coverage: m, resolutionNs }): RowColumns => {
    const r: RowColumns = {
      rowId: rowId as WindowRow['rowId'],
      ...(resolutionNs !== undefined ? { resolutionNs } : {}),
      items: {
        length: n,
        id: f64.subarray(f, f + n),
        startNs: f64.subarray(f + n, f + 2 * n),
        endNs: f64.subarray(f + 2 * n, f + 3 * n),
        nameId: i32.subarray(i, i + n),
        depth: i32.subarray(i + n, i + 2 * n),
        table: u8.subarray(b, b + n),
        kind: u8.subarray(b + n, b + 2 * n),
      },
      coverage: {
        length: m,
        startNs: f64.subarray(f + 3 * n, f + 3 * n + m),
        endNs: f64.subarray(f + 3 * n + m, f + 3 * n + 2 * m),
        count: f64.subarray(f + 3 * n + 2 * m, f + 3 * n + 3 * m),
        depth: i32.subarray(i + 2 * n, i + 2 * n + m),
        kind: u8.subarray(b + 2 * n, b + 2 * n + m),
      },
    };
    f += 3 * n + 3 * m;
    i += 2 * n + m;
    b += 2 * n + m;
    return r;
  });
  return { ...header, rows };
}

/** The answer as objects (what the API's window() returns), from its columns. */
export function windowOfColumns(c: WindowColumns): WindowResponse {
  const { tables, kinds } = c;
  const rows: WindowRow[] = c.rows.map(({ rowId, items: it, coverage: cv, resolutionNs }) => {
    const items: TimelineItem[] = new Array(it.length);
    for (let k = 0; k < it.length; k++) {
      const base = {
        ref: { table: tables[it.table[k]!]!, id: it.id[k]! },
        kind: kinds[it.kind[k]!]!,
        startNs: it.startNs[k]!,
        endNs: it.endNs[k]!,
        nameId: it.nameId[k]!,
      };
      items[k] = it.depth[k]! >= 0 ? { ...base, depth: it.depth[k]! } : base;
    }
    const coverage: CoverageSpan[] = new Array(cv.length);
    for (let k = 0; k < cv.length; k++) {
      const base = { startNs: cv.startNs[k]!, endNs: cv.endNs[k]!, count: cv.count[k]!, kind: kinds[cv.kind[k]!]! };
      coverage[k] = cv.depth[k]! >= 0 ? { ...base, depth: cv.depth[k]! } : base;
    }
    return { rowId, items, coverage, ...(resolutionNs !== undefined ? { resolutionNs } : {}) };
  });
  return {
    startNs: c.startNs,
    endNs: c.endNs,
    rows,
    strings: c.strings,
    kernelLabels: c.kernelLabels,
    ...(c.concurrency ? { concurrency: c.concurrency } : {}),
    ...(c.bounded !== undefined ? { bounded: c.bounded } : {}),
  };
}

/** decodeWindowColumns, as objects. */
export function decodeWindow(bytes: Uint8Array): WindowResponse {
  return windowOfColumns(decodeWindowColumns(bytes));
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
