// Decodes a whole record stream (record_format.h) into plain objects.
//
// This is the reference reader: used by the contract test, by
// `streamscope dump-stream` and for diagnostics. Bulk ingest into SQLite
// goes through the native addon (native/addon), which is ~2x faster than any
// JS path into better-sqlite3 can be.
import {
  FILE_HEADER_BYTES,
  FORMAT_VERSION,
  KIND_NAMES,
  MAGIC,
  MARKER_PAYLOAD_FIELD_BYTES,
  MARKER_PAYLOAD_FIXED_BYTES,
  RECORD_HEADER_BYTES,
  STRING_FIXED_BYTES,
  layoutOfKind,
  type FixedKindName,
} from './format.ts';

export interface StreamHeader {
  format_version: number;
  header_bytes: number;
  origin_ns: bigint;
  origin_wall_ns: bigint;
  pid: number;
  flags: number;
  collector_version: number;
}

/** One field of a MarkerPayload record; `value` is the decimal text of its 64 bits, read by `kind` (PayloadValueKind). */
export interface DecodedPayloadField {
  name_sid: number;
  kind: number;
  value: string;
  label_sid: number;
  entry_index: number;
}

export type DecodedRecord =
  | { kind: 'String'; offset: number; id: number; value: string }
  | { kind: 'MarkerPayload'; offset: number; marker_id: number; field_count: number; schema_id: number; fields: DecodedPayloadField[] }
  | { kind: FixedKindName; offset: number; [field: string]: number | string }
  | { kind: 'Unknown'; offset: number; kindNumber: number; size: number };

export interface DecodedStream {
  header: StreamHeader;
  records: DecodedRecord[];
  /** Set when the stream ends inside a record (a target killed mid-write). */
  truncated: { atByte: number; missingBytes: number } | null;
}

/** A record stream that cannot be read; the message names the file first. */
export class StreamFormatError extends Error {
  constructor(file: string, problem: string) {
    // The native ingest already names the file: don't say it twice.
    super(problem.startsWith(`${file}: `) ? problem : `${file}: ${problem}`);
    this.name = 'StreamFormatError';
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Reads a little-endian int64 that is exact as a JS number (|v| < 2^53). */
function readI64(view: DataView, at: number): number {
  return view.getInt32(at + 4, true) * 4294967296 + view.getUint32(at, true);
}
function readU64(view: DataView, at: number): number {
  return view.getUint32(at + 4, true) * 4294967296 + view.getUint32(at, true);
}

export function decodeHeader(bytes: Uint8Array, file: string): StreamHeader {
  if (bytes.length < FILE_HEADER_BYTES) {
    throw new StreamFormatError(file, `too short for a record stream header (${bytes.length} of ${FILE_HEADER_BYTES} bytes)`);
  }
  const magic = Array.from(bytes.subarray(0, 8), (b) => String.fromCharCode(b)).join('');
  if (magic !== MAGIC) throw new StreamFormatError(file, 'not a StreamScope record stream (bad magic)');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header: StreamHeader = {
    format_version: view.getUint32(8, true),
    header_bytes: view.getUint32(12, true),
    origin_ns: view.getBigUint64(16, true),
    origin_wall_ns: view.getBigUint64(24, true),
    pid: view.getUint32(32, true),
    flags: view.getUint32(36, true),
    collector_version: view.getUint32(40, true),
  };
  if (header.format_version !== FORMAT_VERSION) {
    throw new StreamFormatError(
      file,
      `record stream format version ${header.format_version} is not supported (this StreamScope reads version ${FORMAT_VERSION})`,
    );
  }
  if (header.header_bytes < FILE_HEADER_BYTES || header.header_bytes % 8 !== 0) {
    throw new StreamFormatError(file, `corrupt header: header size ${header.header_bytes}`);
  }
  return header;
}

export function decodeStream(bytes: Uint8Array, file: string): DecodedStream {
  const header = decodeHeader(bytes, file);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const records: DecodedRecord[] = [];
  let at = header.header_bytes;
  let truncated: DecodedStream['truncated'] = null;
  while (at < bytes.length) {
    if (bytes.length - at < RECORD_HEADER_BYTES) {
      truncated = { atByte: at, missingBytes: RECORD_HEADER_BYTES - (bytes.length - at) };
      break;
    }
    const kind = view.getUint16(at, true);
    const size = view.getUint32(at + 4, true);
    if (size < RECORD_HEADER_BYTES || size % 8 !== 0) {
      throw new StreamFormatError(file, `corrupt record at byte ${at}: size ${size} is not a positive multiple of 8`);
    }
    if (at + size > bytes.length) {
      truncated = { atByte: at, missingBytes: at + size - bytes.length };
      break;
    }
    records.push(decodeRecord(view, bytes, at, kind, size, file));
    at += size;
  }
  return { header, records, truncated };
}

function decodeRecord(view: DataView, bytes: Uint8Array, at: number, kind: number, size: number, file: string): DecodedRecord {
  const name = KIND_NAMES.get(kind);
  if (name === 'String') {
    if (size < STRING_FIXED_BYTES) throw new StreamFormatError(file, `corrupt record at byte ${at}: String record of ${size} bytes`);
    const id = view.getUint32(at + 8, true);
    const length = view.getUint32(at + 12, true);
    if (STRING_FIXED_BYTES + length > size) {
      throw new StreamFormatError(file, `corrupt record at byte ${at}: String length ${length} exceeds its record (${size} bytes)`);
    }
    const start = at + STRING_FIXED_BYTES;
    return { kind: 'String', offset: at, id, value: utf8.decode(bytes.subarray(start, start + length)) };
  }
  if (name === 'MarkerPayload') {
    const count = size >= MARKER_PAYLOAD_FIXED_BYTES ? view.getUint32(at + 12, true) : 0;
    if (size < MARKER_PAYLOAD_FIXED_BYTES || MARKER_PAYLOAD_FIXED_BYTES + count * MARKER_PAYLOAD_FIELD_BYTES > size) {
      throw new StreamFormatError(file, `corrupt record at byte ${at}: MarkerPayload record of ${size} bytes for ${count} fields`);
    }
    const fields: DecodedPayloadField[] = [];
    for (let i = 0; i < count; i++) {
      const p = at + MARKER_PAYLOAD_FIXED_BYTES + i * MARKER_PAYLOAD_FIELD_BYTES;
      fields.push({
        name_sid: view.getUint32(p, true),
        kind: view.getUint32(p + 4, true),
        value: view.getBigUint64(p + 8, true).toString(),
        label_sid: view.getUint32(p + 16, true),
        entry_index: view.getUint32(p + 20, true),
      });
    }
    return { kind: 'MarkerPayload', offset: at, marker_id: view.getUint32(at + 8, true), field_count: count, schema_id: readU64(view, at + 16), fields };
  }
  const layout = layoutOfKind(kind);
  if (!layout) return { kind: 'Unknown', offset: at, kindNumber: kind, size };
  if (size < layout.size) {
    throw new StreamFormatError(file, `corrupt record at byte ${at}: ${layout.name} record of ${size} bytes, expected at least ${layout.size}`);
  }
  const out: { kind: FixedKindName; offset: number; [field: string]: number | string } = {
    kind: layout.name as FixedKindName,
    offset: at,
  };
  for (const f of layout.fields) {
    const p = at + f.offset;
    switch (f.type) {
      case 'u8':
        out[f.name] = view.getUint8(p);
        break;
      case 'u16':
        out[f.name] = view.getUint16(p, true);
        break;
      case 'u32':
        out[f.name] = view.getUint32(p, true);
        break;
      case 'i32':
        out[f.name] = view.getInt32(p, true);
        break;
      case 'i64':
        out[f.name] = readI64(view, p);
        break;
      case 'u64':
        out[f.name] = readU64(view, p);
        break;
      case 'uuid':
        out[f.name] = Buffer.from(bytes.subarray(p, p + 16)).toString('hex');
        break;
    }
  }
  return out;
}
