// A binary form of WindowResponse for the browser-mode transport. A window
// answer is the largest thing the renderer receives: zoomed in on a dense
// recording it holds ~250 k items (25 MB of JSON), and JSON.parse of that
// blocked the page's main thread for 160 ms on the 2-core machine, the long
// frames of the pan/zoom benchmark (and JSON.stringify as long in the
// server, on the same cores). Here the numbers travel as typed-array
// columns (~38 bytes an item) and only the small parts (row ids, names,
// the few distinct kinds and tables) as JSON.
//
// Layout (little-endian):
//   'SSW1' | u32 header length | header JSON (UTF-8; with the concurrency
//   tracks, a few thousand small numbers) | zero padding to 8
//   f64 block: per row, items' id, start, end, then coverage start, end, count
//   i32 block: per row, items' nameId, depth (-1: none), then coverage depth (-1: none)
//   u8 block:  per row, items' table, kind (indexes into the header's lists), then coverage kind
// Rows follow each other inside each block in header order.
import type { ConcurrencyResponse, CoverageSpan, ItemKind, ItemTable, TimelineItem, WindowResponse, WindowRow } from './api.ts';

const MAGIC = 0x31575353; // 'SSW1' read as a little-endian u32

/** The media type of an encoded window answer. */
export const WINDOW_MEDIA_TYPE = 'application/x-streamscope-window';

interface Header {
  startNs: number;
  endNs: number;
  strings: Record<number, string>;
  concurrency?: ConcurrencyResponse[];
  tables: ItemTable[];
  kinds: ItemKind[];
  rows: { rowId: string; items: number; coverage: number }[];
}

export function encodeWindow(w: WindowResponse): Uint8Array {
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
  let items = 0;
  let spans = 0;
  for (const r of w.rows) {
    items += r.items.length;
    spans += r.coverage.length;
  }
  const f64 = new Float64Array(3 * items + 3 * spans);
  const i32 = new Int32Array(2 * items + spans);
  const u8 = new Uint8Array(2 * items + spans);
  let f = 0;
  let i = 0;
  let b = 0;
  for (const r of w.rows) {
    const n = r.items.length;
    for (let k = 0; k < n; k++) {
      const it = r.items[k]!;
      f64[f + k] = it.ref.id;
      f64[f + n + k] = it.startNs;
      f64[f + 2 * n + k] = it.endNs;
      i32[i + k] = it.nameId;
      i32[i + n + k] = it.depth ?? -1;
      u8[b + k] = indexOf(tableIndex, tables, it.ref.table);
      u8[b + n + k] = indexOf(kindIndex, kinds, it.kind);
    }
    f += 3 * n;
    i += 2 * n;
    b += 2 * n;
    const m = r.coverage.length;
    for (let k = 0; k < m; k++) {
      const c = r.coverage[k]!;
      f64[f + k] = c.startNs;
      f64[f + m + k] = c.endNs;
      f64[f + 2 * m + k] = c.count;
      i32[i + k] = c.depth ?? -1;
      u8[b + k] = indexOf(kindIndex, kinds, c.kind);
    }
    f += 3 * m;
    i += m;
    b += m;
  }
  if (tables.length > 256 || kinds.length > 256) throw new Error('encodeWindow: more than 256 distinct tables or kinds');
  const header: Header = {
    startNs: w.startNs, endNs: w.endNs, strings: w.strings, ...(w.concurrency ? { concurrency: w.concurrency } : {}), tables, kinds,
    rows: w.rows.map((r) => ({ rowId: r.rowId, items: r.items.length, coverage: r.coverage.length })),
  };
  const json = new TextEncoder().encode(JSON.stringify(header));
  const f64At = align8(8 + json.length);
  const i32At = f64At + f64.byteLength;
  const u8At = i32At + i32.byteLength;
  const out = new Uint8Array(u8At + u8.byteLength);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, json.length, true);
  out.set(json, 8);
  out.set(new Uint8Array(f64.buffer), f64At);
  out.set(new Uint8Array(i32.buffer), i32At);
  out.set(u8, u8At);
  return out;
}

/**
 * The WindowResponse in `bytes` (an encodeWindow result, at any offset of
 * its buffer). Throws on anything else, naming what is wrong.
 */
export function decodeWindow(bytes: Uint8Array): WindowResponse {
  const fail = (why: string): never => { throw new Error(`not a StreamScope window answer: ${why}`); };
  if (bytes.byteLength < 8) fail(`${bytes.byteLength} bytes`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.getUint32(0, true) !== MAGIC) fail('wrong magic');
  const jsonLength = view.getUint32(4, true);
  if (8 + jsonLength > bytes.byteLength) fail('header runs past the end');
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + jsonLength))) as Header;
  let items = 0;
  let spans = 0;
  for (const r of header.rows) {
    items += r.items;
    spans += r.coverage;
  }
  const f64At = align8(8 + jsonLength);
  const i32At = f64At + 8 * (3 * items + 3 * spans);
  const u8At = i32At + 4 * (2 * items + spans);
  if (u8At + 2 * items + spans !== bytes.byteLength) fail(`${bytes.byteLength} bytes where the header promises ${u8At + 2 * items + spans}`);
  // Copied out once into aligned arrays (the input may sit at any offset).
  const block = bytes.slice(f64At, u8At);
  const f64 = new Float64Array(block.buffer, 0, 3 * items + 3 * spans);
  const i32 = new Int32Array(block.buffer, f64.byteLength, 2 * items + spans);
  const u8 = bytes.subarray(u8At);
  const { tables, kinds } = header;
  let f = 0;
  let i = 0;
  let b = 0;
  const rows: WindowRow[] = header.rows.map(({ rowId, items: n, coverage: m }) => {
    const its: TimelineItem[] = new Array(n);
    for (let k = 0; k < n; k++) {
      const depth = i32[i + n + k]!;
      its[k] = depth >= 0
        ? { ref: { table: tables[u8[b + k]!]!, id: f64[f + k]! }, kind: kinds[u8[b + n + k]!]!, startNs: f64[f + n + k]!, endNs: f64[f + 2 * n + k]!, nameId: i32[i + k]!, depth }
        : { ref: { table: tables[u8[b + k]!]!, id: f64[f + k]! }, kind: kinds[u8[b + n + k]!]!, startNs: f64[f + n + k]!, endNs: f64[f + 2 * n + k]!, nameId: i32[i + k]! };
    }
    f += 3 * n;
    i += 2 * n;
    b += 2 * n;
    const cov: CoverageSpan[] = new Array(m);
    for (let k = 0; k < m; k++) {
      const depth = i32[i + k]!;
      cov[k] = depth >= 0
        ? { startNs: f64[f + k]!, endNs: f64[f + m + k]!, count: f64[f + 2 * m + k]!, kind: kinds[u8[b + k]!]!, depth }
        : { startNs: f64[f + k]!, endNs: f64[f + m + k]!, count: f64[f + 2 * m + k]!, kind: kinds[u8[b + k]!]! };
    }
    f += 3 * m;
    i += m;
    b += m;
    return { rowId: rowId as WindowRow['rowId'], items: its, coverage: cov };
  });
  return { startNs: header.startNs, endNs: header.endNs, rows, strings: header.strings, ...(header.concurrency ? { concurrency: header.concurrency } : {}) };
}

function align8(n: number): number {
  return (n + 7) & ~7;
}
