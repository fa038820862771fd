// The record-stream contract: the C++ encoder (native/collector, built
// without a GPU) writes a synthetic stream with every record kind and edge
// values; the TypeScript decoder must read back exactly what it wrote, and
// reject broken input with a clear message instead of crashing.
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeStream, StreamFormatError } from '../../profiler/record/decoder.ts';
import { Kind, LAYOUTS } from '../../profiler/record/format.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';

interface Expectation {
  header: Record<string, number | string>;
  records: ({ kind: string } & Record<string, number | string>)[];
}

let dir: string;
let stream: string;
let bytes: Uint8Array;
let expected: Expectation;

beforeAll(() => {
  dir = tempDir('contract');
  const s = syntheticStream(dir, 'all-kinds');
  stream = s.stream;
  bytes = new Uint8Array(fs.readFileSync(stream));
  expected = JSON.parse(fs.readFileSync(s.expect, 'utf8')) as Expectation;
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const strip = (r: object) => {
  const { offset: _offset, ...rest } = r as { offset: number };
  return rest;
};

describe('record stream contract (C++ encoder → TS decoder)', () => {
  it('decodes the header exactly, including origins above 2^53', () => {
    const { header } = decodeStream(bytes, stream);
    expect(header.format_version).toBe(expected.header.format_version);
    expect(header.header_bytes).toBe(expected.header.header_bytes);
    expect(header.origin_ns).toBe(BigInt(expected.header.origin_ns!));
    expect(header.origin_wall_ns).toBe(BigInt(expected.header.origin_wall_ns!));
    expect(header.pid).toBe(expected.header.pid);
    expect(header.flags).toBe(expected.header.flags);
    expect(header.collector_version).toBe(expected.header.collector_version);
    expect(header.origin_ns > BigInt(Number.MAX_SAFE_INTEGER)).toBe(true);
  });

  it('decodes every record exactly as written', () => {
    const decoded = decodeStream(bytes, stream);
    expect(decoded.truncated).toBeNull();
    expect(decoded.records.map(strip)).toEqual(expected.records);
  });

  it('covers every record kind the format defines', () => {
    const seen = new Set(expected.records.map((r) => r.kind));
    expect([...seen].sort()).toEqual(Object.keys(Kind).sort());
  });

  it('agrees with the C++ struct sizes for every fixed-size kind', () => {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (const r of decodeStream(bytes, stream).records) {
      if (r.kind === 'String' || r.kind === 'MarkerPayload' || r.kind === 'Unknown') continue;
      expect({ kind: r.kind, size: view.getUint32(r.offset + 4, true) }).toEqual({ kind: r.kind, size: LAYOUTS[r.kind].size });
    }
  });

  it('reports a stream cut inside a record as truncated and keeps what precedes it', () => {
    const full = decodeStream(bytes, stream).records;
    const cutRecord = full[Math.floor(full.length / 2)]!;
    const cut = bytes.subarray(0, cutRecord.offset + 5);
    const partial = decodeStream(cut, stream);
    expect(partial.truncated).toEqual({ atByte: cutRecord.offset, missingBytes: expect.any(Number) as number });
    expect(partial.records).toEqual(full.slice(0, full.indexOf(cutRecord)));
  });

  it('rejects a stream cut inside its header, naming the file', () => {
    expect(() => decodeStream(bytes.subarray(0, 40), stream)).toThrow(`${stream}: too short for a record stream header`);
  });

  it('rejects foreign data (bad magic) and an unsupported version', () => {
    const foreign = new TextEncoder().encode('SQLite format 3\0'.padEnd(200, 'x'));
    expect(() => decodeStream(foreign, 'x.ssr')).toThrow('x.ssr: not a StreamScope record stream (bad magic)');
    const future = bytes.slice();
    new DataView(future.buffer).setUint32(8, 99, true);
    expect(() => decodeStream(future, stream)).toThrow(/format version 99 is not supported/);
  });

  it('rejects a corrupt record size with the byte offset', () => {
    const records = decodeStream(bytes, stream).records;
    const victim = records[3]!;
    const bad = bytes.slice();
    new DataView(bad.buffer).setUint32(victim.offset + 4, 12, true);
    expect(() => decodeStream(bad, stream)).toThrow(StreamFormatError);
    expect(() => decodeStream(bad, stream)).toThrow(`${stream}: corrupt record at byte ${victim.offset}`);
  });

  it('rejects a fixed-size record smaller than its kind', () => {
    const kernel = decodeStream(bytes, stream).records.find((r) => r.kind === 'Kernel')!;
    const bad = bytes.slice();
    new DataView(bad.buffer).setUint32(kernel.offset + 4, 16, true);
    expect(() => decodeStream(bad, stream)).toThrow(/Kernel record of 16 bytes, expected at least 112/);
  });

  it('rejects a MarkerPayload record too small for its fields', () => {
    const payload = decodeStream(bytes, stream).records.find((r) => r.kind === 'MarkerPayload' && r.field_count > 0)!;
    const bad = bytes.slice();
    new DataView(bad.buffer).setUint32(payload.offset + 12, 1000, true);
    expect(() => decodeStream(bad, stream)).toThrow(`${stream}: corrupt record at byte ${payload.offset}: MarkerPayload record of`);
  });

  it('skips records of an unknown (newer) kind by their size', () => {
    const records = decodeStream(bytes, stream).records;
    const victim = records.find((r) => r.kind === 'Overhead')!;
    const patched = bytes.slice();
    new DataView(patched.buffer).setUint16(victim.offset, 999, true);
    const decoded = decodeStream(patched, stream).records;
    expect(decoded.length).toBe(records.length);
    expect(decoded[records.indexOf(victim)]).toMatchObject({ kind: 'Unknown', kindNumber: 999 });
    expect(decoded.filter((r) => r !== decoded[records.indexOf(victim)])).toEqual(records.filter((r) => r !== victim));
  });
});
