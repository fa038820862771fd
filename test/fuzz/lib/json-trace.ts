// Chrome-trace JSON inputs for the importers, made from real traces: a
// run of events of a real PyTorch profiler trace (with or without its
// metadata events), with fields set to values of the wrong type, huge,
// negative, not numbers, deeply nested, deleted or written twice, the
// top-level members likewise, then the text itself cut short or given
// bytes that are not UTF-8. What to do is the recipe fast-check generates
// and shrinks; `materialize` turns a recipe into the file's bytes.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';

const repo = path.resolve(import.meta.dirname, '../../..');

/** The real traces mutated (PROVENANCE.md beside each; both in the repository, so a clone generates the same inputs). */
export const JSON_FIXTURES = [
  path.join(repo, 'test/fixtures/kineto/torch_streams_h100.json'),
  path.join(repo, 'test/fixtures/kineto/torch_add_loop_h100.json'),
];

interface ParsedTrace {
  header: [string, unknown][];
  metadata: Record<string, unknown>[];
  events: Record<string, unknown>[];
}

const parsed = new Map<string, ParsedTrace>();

function fixture(i: number): ParsedTrace {
  const file = JSON_FIXTURES[i % JSON_FIXTURES.length]!;
  let p = parsed.get(file);
  if (!p) {
    const root = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    const all = (root.traceEvents ?? []) as Record<string, unknown>[];
    p = {
      header: Object.entries(root).filter(([k]) => k !== 'traceEvents'),
      metadata: all.filter((e) => e.ph === 'M'),
      events: all.filter((e) => e.ph !== 'M'),
    };
    parsed.set(file, p);
  }
  return p;
}

/** JSON text written as is: numbers JSON.parse turns into Infinity, deep nesting, invalid tokens. */
export class Raw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** An object as its members in order, a key possibly twice (JSON.parse keeps the last). */
class Members {
  readonly entries: [string, unknown][];
  constructor(entries: [string, unknown][]) {
    this.entries = entries;
  }
}

// ---- values that break assumptions ------------------------------------------

const nastyNumber = fc.oneof(
  fc.constantFrom(
    0,
    -1,
    -0,
    1,
    0.5,
    -0.5,
    2 ** 31,
    2 ** 31 - 1,
    -(2 ** 31) - 1,
    2 ** 32,
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 63),
    2 ** 64,
    1e21,
    1e308,
    -1e308,
    5e-324,
  ),
  fc.double(),
  fc.integer(),
);

const nastyRaw = fc.oneof(
  fc.constantFrom(
    '1e999',
    '-1e999',
    '1e-999',
    '-0',
    '0.000000000000000000001',
    '123456789012345678901234567890',
    'NaN',
    'Infinity',
    '-Infinity',
    '0x10',
    '01',
    '1.',
    '.5',
    '+1',
    'undefined',
    'true false',
  ),
  // Deep nesting: arrays, objects, and both.
  fc.integer({ min: 1, max: 200_000 }).map((d) => new Raw('['.repeat(d) + ']'.repeat(d))),
  fc.integer({ min: 1, max: 200_000 }).map((d) => new Raw('{"a":'.repeat(d) + '1' + '}'.repeat(d))),
  fc.integer({ min: 1, max: 50_000 }).map((d) => new Raw('[{"x":'.repeat(d) + 'null' + '}]'.repeat(d))),
);

const nastyString = fc.oneof(
  fc.constantFrom(
    '',
    'NaN',
    'Infinity',
    '-1',
    '1e999',
    '0x10',
    ' 7 ',
    '\u0000',
    '\ud800',
    '\udfff\ud800',
    '\u202e\u{1F525}',
    '../../../../etc/passwd',
    '%s%n%x',
    '_Z',
    '_Z3foov',
    '_ZN2at6native',
    '_ZZZZZZZZZZZZZZZZZZZZZZZZZZ',
    '_Z1fIiEvT_',
    'Memcpy HtoD (Pinned -> Device)',
    'Memcpy XtoY (Nowhere -> Device)',
    'Memset (Device)',
    'stream 7',
    'GPU 0',
    'CPU',
  ),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.integer({ min: 1, max: 2_000_000 }).map((n) => 'x'.repeat(n)),
  fc.string({ maxLength: 200 }).map((s) => `_Z${s}`),
);

export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  nastyNumber,
  nastyRaw,
  nastyString,
  fc.constantFrom(null, true, false),
  fc.constantFrom([], [1, 2, 3], [1, 2], [0, 0, 0, 0], ['a', 'b', 'c'], [null, null, null], [[1], [2], [3]], [-1, -1, -1], [1e308, 1e308, 1e308]),
  fc.constantFrom({}, { a: 1 }, { name: 1 }, { labels: ['CPU'] }, { __proto__: null, toString: 1 }),
  fc.jsonValue({ maxDepth: 3 }),
);

/** The fields events have, and their args', as Kineto writes them. */
const EVENT_KEYS = ['ph', 'cat', 'name', 'pid', 'tid', 'ts', 'dur', 'args', 'id', 'bp', 's'];
const ARG_KEYS = [
  'device',
  'context',
  'stream',
  'correlation',
  'cbid',
  'grid',
  'block',
  'registers per thread',
  'shared memory',
  'bytes',
  'name',
  'labels',
  'sort_index',
  'External id',
];
const HEADER_KEYS = [
  'traceEvents',
  'deviceProperties',
  'schemaVersion',
  'cuda_driver_version',
  'cuda_runtime_version',
  'cupti_version',
  'baseTimeNanoseconds',
  'displayTimeUnit',
];
const DEVICE_KEYS = [
  'id',
  'name',
  'computeMajor',
  'computeMinor',
  'numSms',
  'totalGlobalMem',
  'maxThreadsPerMultiprocessor',
  'regsPerMultiprocessor',
  'sharedMemPerMultiprocessor',
];

const fieldPath = fc.oneof(
  fc.constantFrom(...EVENT_KEYS).map((k) => [k]),
  fc.constantFrom(...ARG_KEYS).map((k) => ['args', k]),
  fc.string({ maxLength: 8 }).map((k) => [k]),
);

type FieldOp = { op: 'set'; value: unknown } | { op: 'delete' } | { op: 'twice'; value: unknown };
const fieldOp: fc.Arbitrary<FieldOp> = fc.oneof(
  { weight: 4, arbitrary: nastyValue.map((value) => ({ op: 'set' as const, value })) },
  { weight: 2, arbitrary: fc.constant({ op: 'delete' as const }) },
  { weight: 1, arbitrary: nastyValue.map((value) => ({ op: 'twice' as const, value })) },
);

export type EventMutation =
  | { at: number; path: string[]; change: FieldOp }
  /** The event written twice in a row, or replaced by something not an object. */
  | { at: number; duplicate: true }
  | { at: number; replace: unknown };

export type HeaderMutation = { key: string; change: FieldOp } | { device: number; key: string; change: FieldOp };

export type TextMutation =
  | { truncate: number }
  | { insert: number; bytes: number[] }
  | { overwrite: number; byte: number }
  | { cut: number; length: number }
  | { copy: number; length: number; to: number };

/** Byte sequences that are not UTF-8 (and a few that are, but unwelcome: BOM, NUL). */
const BAD_BYTES = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc0, 0x80],
  [0xc3],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
  [0xef, 0xbb, 0xbf],
  [0x00],
];

const fraction = fc.double({ min: 0, max: 1, noNaN: true });

const textMutation: fc.Arbitrary<TextMutation> = fc.oneof(
  fraction.map((f) => ({ truncate: f })),
  fc.record({ insert: fraction, bytes: fc.oneof(fc.constantFrom(...BAD_BYTES), fc.array(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 8 })) }),
  fc.record({ overwrite: fraction, byte: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ cut: fraction, length: fc.integer({ min: 1, max: 4096 }) }),
  fc.record({ copy: fraction, length: fc.integer({ min: 1, max: 4096 }), to: fraction }),
);

export interface JsonRecipe {
  fixture: number;
  /** A run of the fixture's events (not its metadata), or all of them. */
  window: { start: number; length: number } | 'all';
  metadata: boolean;
  /** `{"traceEvents": [...], ...}` as Kineto writes it, or the bare array of events the format also allows. */
  bareArray: boolean;
  header: HeaderMutation[];
  events: EventMutation[];
  text: TextMutation[];
  /** `streamscope import --format`: none (detected), or forced. */
  format: 'kineto' | 'chrome' | null;
}

export const jsonRecipe: fc.Arbitrary<JsonRecipe> = fc.record({
  fixture: fc.nat(),
  window: fc.oneof(
    { weight: 19, arbitrary: fc.record({ start: fc.nat(), length: fc.integer({ min: 0, max: 300 }) }) },
    { weight: 1, arbitrary: fc.constant('all' as const) },
  ),
  metadata: fc.boolean(),
  bareArray: fc.nat(4).map((n) => n === 0),
  header: fc.array(
    fc.oneof(
      fc.record({ key: fc.constantFrom(...HEADER_KEYS), change: fieldOp }),
      fc.record({ device: fc.nat(3), key: fc.constantFrom(...DEVICE_KEYS), change: fieldOp }),
    ),
    { maxLength: 3 },
  ),
  events: fc.array(
    fc.oneof(
      { weight: 8, arbitrary: fc.record({ at: fc.nat(), path: fieldPath, change: fieldOp }) },
      { weight: 1, arbitrary: fc.record({ at: fc.nat(), duplicate: fc.constant(true as const) }) },
      { weight: 1, arbitrary: fc.record({ at: fc.nat(), replace: nastyValue }) },
    ),
    { maxLength: 8 },
  ),
  text: fc.array(textMutation, { maxLength: 3 }),
  format: fc.constantFrom(null, null, 'kineto' as const, 'chrome' as const),
});

function applyField(target: Members, pathKeys: string[], change: FieldOp): void {
  const [key, ...rest] = pathKeys as [string, ...string[]];
  const i = target.entries.findIndex(([k]) => k === key);
  if (rest.length > 0) {
    let child = i >= 0 ? target.entries[i]![1] : undefined;
    if (!(child instanceof Members)) {
      child = new Members(child && typeof child === 'object' && !Array.isArray(child) ? Object.entries(child) : []);
      if (i >= 0) target.entries[i]![1] = child;
      else target.entries.push([key, child]);
    }
    applyField(child as Members, rest, change);
    return;
  }
  if (change.op === 'delete') {
    if (i >= 0) target.entries.splice(i, 1);
  } else if (change.op === 'set') {
    if (i >= 0) target.entries[i]![1] = change.value;
    else target.entries.push([key, change.value]);
  } else {
    target.entries.splice(i >= 0 ? i + 1 : target.entries.length, 0, [key, change.value]);
  }
}

/**
 * JSON text of `v`: Raw as written, Members in order (keys possibly twice), NaN as the invalid token NaN; a value
 * inside itself as null. A device mutation writes into the device list it finds, which may be a value fast-check
 * hands out shared (its constants), so a list can come to hold the device that holds it (seed 543302795: the writer
 * recursed without end, a red fuzz pass). Written into, not copied, as the golden records of
 * test/import/kineto-golden.ts were made from these files.
 */
function write(v: unknown, out: string[], within = new Set<object>()): void {
  if (v && typeof v === 'object' && !(v instanceof Raw)) {
    if (within.has(v)) {
      out.push('null');
      return;
    }
    within.add(v);
  }
  if (v instanceof Raw) out.push(v.text);
  else if (v instanceof Members) {
    out.push('{');
    v.entries.forEach(([k, x], i) => {
      if (i) out.push(',');
      out.push(JSON.stringify(k), ':');
      write(x, out, within);
    });
    out.push('}');
  } else if (typeof v === 'number')
    out.push(Number.isNaN(v) ? 'NaN' : v === Infinity ? '1e999' : v === -Infinity ? '-1e999' : Object.is(v, -0) ? '-0' : String(v));
  else if (Array.isArray(v)) {
    out.push('[');
    v.forEach((x, i) => {
      if (i) out.push(',');
      write(x, out, within);
    });
    out.push(']');
  } else if (v && typeof v === 'object') write(new Members(Object.entries(v)), out, within);
  else out.push(JSON.stringify(v) ?? 'null');
  if (v && typeof v === 'object') within.delete(v);
}

/** The file's bytes for a recipe (deterministic: the same recipe, the same bytes). */
export function materialize(r: JsonRecipe): Buffer {
  const f = fixture(r.fixture);
  let events: unknown[];
  if (r.window === 'all') events = [...f.events];
  else {
    const start = f.events.length ? r.window.start % f.events.length : 0;
    events = f.events.slice(start, start + r.window.length);
  }
  if (r.metadata) events = [...f.metadata, ...events];
  for (const m of r.events) {
    if (events.length === 0) break;
    const at = m.at % events.length;
    if ('duplicate' in m) events.splice(at, 0, events[at]);
    else if ('replace' in m) events[at] = m.replace;
    else {
      const e = events[at];
      const members = e instanceof Members ? e : new Members(e && typeof e === 'object' && !Array.isArray(e) ? Object.entries(structuredClone(e)) : []);
      events[at] = members;
      applyField(members, m.path, m.change);
    }
  }
  let root: unknown;
  if (r.bareArray) root = events;
  else {
    const header = new Members([
      ...f.header.slice(0, -1).map(([k, v]) => [k, structuredClone(v)] as [string, unknown]),
      ['traceEvents', events],
      ...f.header.slice(-1),
    ]);
    for (const m of r.header) {
      if ('device' in m) {
        const props = header.entries.find(([k]) => k === 'deviceProperties');
        const list = props?.[1];
        if (!Array.isArray(list) || list.length === 0) continue;
        const i = m.device % list.length;
        const d = list[i] instanceof Members ? (list[i] as Members) : new Members(Object.entries((list[i] ?? {}) as object));
        list[i] = d;
        applyField(d, [m.key], m.change);
      } else applyField(header, [m.key], m.change);
    }
    root = header;
  }
  const out: string[] = [];
  write(root, out);
  let bytes: Buffer = Buffer.from(out.join(''), 'utf8');
  for (const t of r.text) bytes = applyText(bytes, t);
  return bytes;
}

function applyText(b: Buffer, t: TextMutation): Buffer {
  const at = (f: number) => Math.min(b.length, Math.floor(f * b.length));
  if ('truncate' in t) return b.subarray(0, at(t.truncate));
  if ('insert' in t) return Buffer.concat([b.subarray(0, at(t.insert)), Buffer.from(t.bytes), b.subarray(at(t.insert))]);
  if ('overwrite' in t) {
    if (b.length === 0) return b;
    const c = Buffer.from(b);
    c[Math.min(b.length - 1, at(t.overwrite))] = t.byte;
    return c;
  }
  if ('cut' in t) return Buffer.concat([b.subarray(0, at(t.cut)), b.subarray(at(t.cut) + t.length)]);
  const from = at(t.copy);
  const piece = b.subarray(from, from + t.length);
  return Buffer.concat([b.subarray(0, at(t.to)), piece, b.subarray(at(t.to))]);
}
