// Numbers that C++ and TypeScript both hold, read from the C++ headers
// themselves: every enum of the record stream (native/collector/record_format.h)
// against profiler/record/format.ts and profiler/store/enums.ts, the
// record sizes, and the zone vocabulary (native/addon/src/zone_tables.h)
// against profiler/store/zone-tables.ts, and the environment variables the
// collector records (native/collector/process_env.h) against
// profiler/contract/ranks.ts. The values are stored in files, so
// a drift on either side is a misread recording, not a cosmetic difference.
// An enum or constant added to a header without its TypeScript counterpart
// fails too: each one is either compared or named below with the reason it
// has none. (test/contract/record-stream.test.ts checks kinds, sizes and
// layouts end to end through the encoder; this names the value that moved,
// without a build.)
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../profiler/native/paths.ts';
import {
  FILE_HEADER_BYTES,
  FlushReason,
  FORMAT_VERSION,
  Kind,
  LAYOUTS,
  MAGIC,
  MARKER_PAYLOAD_FIELD_BYTES,
  MARKER_PAYLOAD_FIXED_BYTES,
  MARKER_PAYLOAD_MAX_FIELDS,
  MarkerFlags,
  NONE_ID,
  PayloadValueKind,
  RECORD_HEADER_BYTES,
  STRING_FIXED_BYTES,
} from '../../profiler/record/format.ts';
import { ApiDomain, CollectorErrorCode, DropSource, StreamFlags } from '../../profiler/store/enums.ts';
import { THREAD_LANE_FACTOR, ZONE_ROWS, ZONED_TABLES } from '../../profiler/store/zone-tables.ts';
import { CAPTURED_ENV, RANK_LAUNCHERS } from '../../profiler/contract/ranks.ts';

const recordFormat = fs.readFileSync(path.join(repoRoot, 'native/collector/record_format.h'), 'utf8');
const zoneTables = fs.readFileSync(path.join(repoRoot, 'native/addon/src/zone_tables.h'), 'utf8');
const processEnv = fs.readFileSync(path.join(repoRoot, 'native/collector/process_env.h'), 'utf8');

/** A C++ integer constant expression of the forms the headers use: 17, 0xFFFFFFFFu, 1u << 3. */
function evaluate(expr: string): number {
  const e = expr.trim();
  const literal = /^(0x[0-9a-f]+|\d+)u?$/i.exec(e);
  if (literal) return Number(literal[1]);
  const shift = /^(\d+)u?\s*<<\s*(\d+)$/.exec(e);
  if (shift) return Number(shift[1]) * 2 ** Number(shift[2]);
  throw new Error(`cannot read the C++ constant expression '${e}': extend evaluate() in this test`);
}

const withoutComments = (text: string) => text.replace(/\/\/[^\n]*/g, '').replace(/\/\*[\s\S]*?\*\//g, '');

/** Every `enum [class] Name : type { ... };` of a header: name → (enumerator → value). */
function enums(header: string): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const m of withoutComments(header).matchAll(/enum\s+(?:class\s+)?(\w+)\s*:\s*\w+\s*\{([^}]*)\}/g)) {
    const values = new Map<string, number>();
    for (const item of m[2]!
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)) {
      const e = /^(\w+)\s*=\s*(.+)$/.exec(item);
      if (!e) throw new Error(`enum ${m[1]}: '${item}' has no explicit value (stored values are always spelled out)`);
      values.set(e[1]!, evaluate(e[2]!));
    }
    out.set(m[1]!, values);
  }
  return out;
}

/** Every `inline constexpr <integer type> kName = value;`: name → value. */
function constants(header: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of withoutComments(header).matchAll(/inline\s+constexpr\s+(?:u?int\d*_t|int|unsigned)\s+(\w+)\s*=\s*([^;{]+);/g)) {
    out.set(m[1]!, evaluate(m[2]!));
  }
  return out;
}

/** `static_assert(sizeof(Name) == N)`: name → N. */
function sizes(header: string): Map<string, number> {
  return new Map([...header.matchAll(/static_assert\(sizeof\((\w+)\)\s*==\s*(\d+)\)/g)].map((m) => [m[1]!, Number(m[2])]));
}

/** Enumerators with a C++ prefix (kStreamNonBlocking) as the TypeScript key (NonBlocking). */
function byTsName(values: Map<string, number>, prefix: string): Record<string, number> {
  return Object.fromEntries(
    [...values].map(([name, v]) => {
      if (!name.startsWith(prefix)) throw new Error(`${name} does not start with ${prefix}`);
      return [name.slice(prefix.length), v];
    }),
  );
}

/** Each enum of record_format.h: its TypeScript object and the C++ prefix of its enumerators, or why it has none. */
const RECORD_ENUMS: Record<string, { ts: Record<string, number>; prefix: string } | { none: string }> = {
  Kind: { ts: Kind, prefix: '' },
  StreamFlags: { ts: StreamFlags, prefix: 'kStream' },
  ApiDomain: { ts: ApiDomain, prefix: 'kApi' },
  MarkerFlags: { ts: MarkerFlags, prefix: 'kMarker' },
  DropSource: { ts: DropSource, prefix: 'kDrop' },
  ErrorCode: { ts: CollectorErrorCode, prefix: 'kError' },
  FlushReason: { ts: FlushReason, prefix: 'kFlush' },
  PayloadValueKind: { ts: PayloadValueKind, prefix: 'kPayload' },
  HeaderFlags: { none: 'read by no TypeScript code: the ingest stores the header flags as they are (processes.stream_flags)' },
};

describe('constants shared by C++ and TypeScript', () => {
  const recordEnums = enums(recordFormat);

  it('record_format.h: every enum is compared, or says why it has no TypeScript side', () => {
    expect([...recordEnums.keys()].sort()).toEqual(Object.keys(RECORD_ENUMS).sort());
  });

  for (const [name, side] of Object.entries(RECORD_ENUMS)) {
    if ('none' in side) continue;
    it(`record_format.h ${name} = its TypeScript values`, () => {
      expect(byTsName(recordEnums.get(name)!, side.prefix)).toEqual({ ...side.ts });
    });
  }

  it('record_format.h sizes, format version, magic and kNone = profiler/record/format.ts', () => {
    const c = constants(recordFormat);
    expect(c.get('kFormatVersion')).toBe(FORMAT_VERSION);
    expect(c.get('kNone')).toBe(NONE_ID);
    const magic = /kMagic\[8\]\s*=\s*\{([^}]*)\}/
      .exec(recordFormat)![1]!
      .split(',')
      .map((s) => s.trim().replace(/^'|'$/g, ''))
      .join('');
    expect(magic).toBe(MAGIC);
    const size = sizes(recordFormat);
    expect(size.get('FileHeader')).toBe(FILE_HEADER_BYTES);
    expect(size.get('RecordHeader')).toBe(RECORD_HEADER_BYTES);
    expect(size.get('StringRecord')).toBe(STRING_FIXED_BYTES);
    expect(size.get('MarkerPayloadRecord')).toBe(MARKER_PAYLOAD_FIXED_BYTES);
    expect(size.get('MarkerPayloadField')).toBe(MARKER_PAYLOAD_FIELD_BYTES);
    expect(c.get('kMarkerPayloadMaxFields')).toBe(MARKER_PAYLOAD_MAX_FIELDS);
    const fixed = Object.fromEntries(Object.values(LAYOUTS).map((l) => [`${l.name}Record`, l.size]));
    expect(Object.fromEntries([...size].filter(([n]) => n in fixed))).toEqual(fixed);
  });

  it('process_env.h = profiler/contract/ranks.ts: the variables the collector records, and every launcher variable among them', () => {
    const list = /kProcessEnvNames\[\]\s*=\s*\{([^}]*)\}/.exec(withoutComments(processEnv));
    expect(list).not.toBeNull();
    const names = [...list![1]!.matchAll(/"([^"]*)"/g)].map((m) => m[1]);
    expect(names).toEqual([...CAPTURED_ENV]);
    // A rank read from a variable the collector never records would never be found in a recording.
    const launcherVariables = RANK_LAUNCHERS.flatMap((l) => [l.rank, l.localRank, l.worldSize]).filter((v) => v !== null);
    expect(launcherVariables.filter((v) => !CAPTURED_ENV.includes(v))).toEqual([]);
  });

  it('zone_tables.h = profiler/store/zone-tables.ts: table ids, rows per zone, thread lanes', () => {
    const c = constants(zoneTables);
    const camel = (table: string) =>
      'k' +
      table
        .split('_')
        .map((w) => w[0]!.toUpperCase() + w.slice(1))
        .join('');
    const ids = Object.fromEntries(Object.entries(ZONED_TABLES).map(([table, info]) => [camel(table), info.id]));
    expect({ ...ids, kZoneRows: ZONE_ROWS, kThreadLaneFactor: THREAD_LANE_FACTOR }).toEqual(Object.fromEntries(c));
  });
});
