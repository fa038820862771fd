// Generated calls of the typed API (profiler/contract/api.ts): for every
// method, argument lists built as the page builds them — real recordings
// (`{ $recording: k }`, handlers/api.ts), row ids, times, scopes — and then
// broken: an argument of the wrong type, missing or extra, a field deleted
// or added, a number huge, negative, fractional or not a number, a string
// that is a path, a prototype's name or 32 KiB long. Besides: argument
// lists of anything, channels and method names that are not the API's,
// and (HTTP) bodies that are not {args: [...]}, GETs, missing tokens.
import fc from 'fast-check';
import { apiMethods, type ApiMethod } from '../../../profiler/contract/api.ts';
import { ITEM_KINDS, ITEM_TABLES } from '../../../profiler/contract/items.ts';
import type { ApiInput, Transport } from '../handlers/api.ts';

const recording = fc.nat(7).map(($recording) => ({ $recording }));

const nastyNumber = fc.oneof(
  fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, -1, 0.5, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2, -(2 ** 53), 1e308, Number.MIN_VALUE, 1e-300),
  fc.integer(),
  fc.double(),
);
const nastyString = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '0',
    'NaN',
    '../../../../etc/passwd',
    '/etc/passwd',
    '/dev/zero',
    '/proc/self/mem',
    '/',
    '//tmp//./x.sqlite',
    '/tmp/../tmp/x.sqlite',
    'C:\\Windows\\win.ini',
    '\0',
    '/tmp/a\0b',
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'ffffffffffffffff',
    'deadbeef',
    'stream:1',
    'stream:-1',
    'api:1:1',
    'nvtx:0:0',
    "stream:1'; DROP TABLE kernels; --",
    '%00',
    '\u202e\ud800',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.integer({ min: 1, max: 40_000 }).map((n) => 'a'.repeat(n)),
);
const nastyScalar: fc.Arbitrary<unknown> = fc.oneof(nastyNumber, nastyString, fc.constantFrom(null, undefined, true, false));
export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: nastyScalar },
  fc.array(nastyScalar, { maxLength: 5 }),
  fc.dictionary(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom('__proto__', 'constructor', 'kind', 'table', 'id')), nastyScalar, { maxKeys: 4 }),
  fc.constantFrom(
    [],
    {},
    [[[[[]]]]],
    Array.from({ length: 2000 }, (_, i) => i),
  ),
  fc.anything({ maxDepth: 3 }),
);

const time = fc.oneof(
  fc.constantFrom(0, 1_000, 1_000_000, 50_000_000, 1e9, 7e9, -1e9, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER),
  fc.integer({ min: -1e10, max: 1e11 }),
);
const resolution = fc.oneof(
  fc.constantFrom(1, 1e-300, Number.MIN_VALUE, 0.001, 1000, 1e6, 1e9, Number.MAX_SAFE_INTEGER),
  fc.double({ min: 1e-9, max: 1e12, noNaN: true }),
);
const rowId = fc.oneof(
  fc.integer({ min: 0, max: 400 }).map((n) => `stream:${n}`),
  fc.tuple(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 5_000 })).map(([p, t]) => `api:${p}:${t}`),
  fc.tuple(fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 5_000 })).map(([p, t]) => `nvtx:${p}:${t}`),
  fc.constantFrom('stream:999999999999999', 'api:9999999999:99999999999999999999'),
);
const rows = fc.array(rowId, { maxLength: 40 });
const buckets = fc.oneof(fc.constantFrom(1, 2, 100, 100_000), fc.integer({ min: 1, max: 100_000 }));
const deviceId = fc.oneof(fc.nat(4), fc.constantFrom(2 ** 31 - 1));
const itemRef = fc.record({ table: fc.constantFrom(...ITEM_TABLES), id: fc.oneof(fc.nat(5_000), fc.constantFrom(Number.MAX_SAFE_INTEGER)) });
const rangeName = fc.oneof(fc.constantFrom('step', 'forward', 'backward', 'train', 'ProfilerStep#1', 'iteration'), fc.string({ minLength: 1, maxLength: 20 }));
const scope = fc.oneof(
  fc.constant({ kind: 'steady-state' }),
  fc.constant({ kind: 'whole' }),
  fc.record(
    { kind: fc.constant('range'), name: rangeName, instance: fc.option(fc.integer({ min: 1, max: 2 ** 31 }), { nil: undefined }) },
    { requiredKeys: ['kind', 'name'] },
  ),
  fc.tuple(time, fc.integer({ min: 1, max: 1e10 })).map(([startNs, d]) => ({ kind: 'window', startNs, endNs: startNs + d })),
);
const window = fc.tuple(time, fc.integer({ min: 0, max: 1e10 })).map(([startNs, d]) => ({ startNs, endNs: startNs + d }));
const absolutePath = fc.oneof(
  fc.constantFrom('/tmp/none.sqlite', '/etc/passwd', '/dev/zero', '/proc/self/status', '/', '/tmp', '/tmp/../etc/hostname', '/nonexistent/dir/x.sqlite'),
  fc.string({ maxLength: 30 }).map((s) => `/tmp/${s}`),
);
const sqlQuery = fc.oneof(
  fc.constantFrom(
    'SELECT 1',
    'SELECT * FROM kernels',
    'SELECT name, count(*) FROM kernel_view GROUP BY 1',
    'DELETE FROM kernels',
    'PRAGMA writable_schema = 1',
    "ATTACH DATABASE '/tmp/x' AS x",
    'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c',
    'SELECT randomblob(1000000000)',
    'SELECT zeroblob(2000000000)',
    'SELECT 1; SELECT 2',
    'SELECT printf("%.*c", 100000000, "x")',
    '',
  ),
  fc.string({ maxLength: 60 }),
);

/** Arguments a page would send, per method (the compile fails when a method has none here). */
const VALID: { [M in ApiMethod]: fc.Arbitrary<unknown[]> } = {
  capabilities: fc.constant([]),
  listRecordings: fc.constant([]),
  openRecording: fc.tuple(absolutePath),
  openRecordings: fc.tuple(fc.array(absolutePath, { minLength: 1, maxLength: 3 })),
  closeRecording: fc.tuple(recording),
  showOpenDialog: fc.constant([]),
  recentFiles: fc.constant([]),
  summary: fc.tuple(recording),
  recordingState: fc.tuple(recording),
  window: fc.tuple(
    recording,
    fc
      .record({
        rows,
        w: window,
        resolutionNs: resolution,
        concurrency: fc.option(fc.array(fc.record({ deviceId, rows, buckets }), { maxLength: 3 }), { nil: undefined }),
      })
      .map(({ w, concurrency, ...r }) => ({ ...r, ...w, ...(concurrency ? { concurrency } : {}) })),
  ),
  concurrency: fc.tuple(
    recording,
    fc.record({ deviceId, w: window, buckets }).map(({ w, ...r }) => ({ ...r, ...w })),
  ),
  overview: fc.tuple(
    recording,
    buckets,
    fc.option(
      window.filter((w) => w.endNs > w.startNs),
      { nil: null },
    ),
  ),
  details: fc.tuple(recording, itemRef),
  search: fc.tuple(
    recording,
    fc.record(
      {
        text: fc.oneof(fc.constantFrom('', 'kernel', 'memcpy', 'cuda', '%', '_', "'", '\\'), fc.string({ maxLength: 10 })),
        kinds: fc.array(fc.constantFrom(...ITEM_KINDS), { maxLength: 4 }),
        limit: fc.integer({ min: 1, max: 100_000 }),
        after: fc.record({ startNs: time, table: fc.constantFrom(...ITEM_TABLES), id: fc.nat(5_000) }),
      },
      { requiredKeys: ['text'] },
    ),
  ),
  dependencies: fc.tuple(recording, itemRef),
  waitSpans: fc.tuple(
    recording,
    fc.record({ rows, w: window, resolutionNs: resolution }).map(({ w, ...r }) => ({ ...r, ...w })),
  ),
  stats: fc.tuple(recording, scope),
  findings: fc.tuple(recording, scope),
  scopeInfo: fc.tuple(recording, scope),
  analysisProgress: fc.tuple(recording),
  ranges: fc.tuple(recording),
  iterations: fc.tuple(recording, fc.option(rangeName, { nil: null })),
  compare: fc.tuple(recording, recording, scope),
  sql: fc.tuple(
    recording,
    fc.record({ query: sqlQuery, timeoutMs: fc.integer({ min: 1, max: 60_000 }), rowLimit: fc.integer({ min: 1, max: 10_000 }) }, { requiredKeys: ['query'] }),
  ),
  exportTrace: fc.tuple(recording),
  record: fc.tuple(
    fc.oneof(
      fc.record({
        workload: fc.record(
          {
            name: fc.constantFrom('normalise', 'matmul', 'transpose'),
            scenario: fc.constantFrom('concurrent', 'serial', 'default-stream'),
            args: fc.constantFrom(['--size', '1024'], ['--iterations', '3'], []),
          },
          { requiredKeys: ['name', 'scenario'] },
        ),
      }),
      fc.record(
        { command: fc.array(nastyString, { minLength: 1, maxLength: 4 }), captureRange: fc.constantFrom('nvtx:step', 'cuda-profiler-api', 'nvtx:') },
        { requiredKeys: ['command'] },
      ),
    ),
  ),
  recordStatus: fc.tuple(fc.oneof(fc.uuid(), nastyString)),
};

/** One change that breaks an argument list (or does not: a change may leave it valid). */
type Change =
  | { kind: 'drop'; at: number }
  | { kind: 'extra'; value: unknown }
  | { kind: 'replace'; at: number; value: unknown }
  | { kind: 'field'; at: number; key: number | string; value: unknown; remove: boolean };

const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('extra' as const), value: nastyValue }),
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), value: nastyValue }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('field' as const),
      at: fc.nat(),
      key: fc.oneof(
        fc.nat(),
        fc.constantFrom('startNs', 'endNs', 'resolutionNs', 'rows', 'buckets', 'deviceId', 'table', 'id', 'kind', 'name', 'query', 'extra'),
      ),
      value: nastyValue,
      remove: fc.boolean(),
    }),
  },
);

function applyChange(args: unknown[], c: Change): unknown[] {
  const out = [...args];
  if (c.kind === 'drop') {
    if (out.length) out.splice(c.at % out.length, 1);
  } else if (c.kind === 'extra') out.push(c.value);
  else if (c.kind === 'replace') {
    if (out.length) out[c.at % out.length] = c.value;
  } else if (out.length) {
    const i = c.at % out.length;
    const target = out[i];
    if (target && typeof target === 'object' && !('$recording' in target)) {
      const copy: Record<string, unknown> = Array.isArray(target) ? ([...target] as unknown as Record<string, unknown>) : { ...target };
      const keys = Object.keys(copy);
      const key = typeof c.key === 'number' ? (keys.length ? keys[c.key % keys.length]! : 'extra') : c.key;
      if (c.remove) delete copy[key];
      else copy[key] = c.value;
      out[i] = copy;
    }
  }
  return out;
}

const method = fc.constantFrom(...apiMethods);

export function apiInput(transport: Transport): fc.Arbitrary<ApiInput> {
  const call = method.chain((m) =>
    fc.tuple(VALID[m], fc.array(change, { maxLength: 3 })).map(([args, changes]): ApiInput => ({ method: m, args: changes.reduce(applyChange, args) })),
  );
  const anyArgs = fc.record({ method, args: fc.oneof(fc.array(nastyValue, { maxLength: 4 }), nastyValue) });
  const otherName = fc.record({
    method: fc.oneof(
      fc.constantFrom('__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', 'exec', 'summary ', 'Summary', ''),
      fc.string({ maxLength: 20 }),
      method.map((m) => (transport === 'ipc' ? `other:${m}` : `${m}/`)),
    ),
    args: fc.array(nastyValue, { maxLength: 2 }),
  });
  const kinds: fc.WeightedArbitrary<ApiInput>[] = [
    { weight: 12, arbitrary: call },
    { weight: 2, arbitrary: anyArgs },
    { weight: 1, arbitrary: otherName },
  ];
  if (transport === 'http') {
    kinds.push({
      weight: 2,
      arbitrary: fc.record(
        {
          method,
          args: fc.constant([]),
          body: fc.oneof(
            fc.constantFrom(
              '',
              'null',
              '[]',
              '{}',
              '{"args":null}',
              '{"args":{}}',
              '{"args":"x"}',
              '{"args":[',
              '{"args":[1e999]}',
              '{"args":[],"args":[1]}',
              '\u0000',
              'x'.repeat(1 << 21),
            ),
            fc.json({ maxDepth: 3 }),
            fc.integer({ min: 1, max: 100_000 }).map((d) => `{"args":[${'['.repeat(d)}${']'.repeat(d)}]}`),
          ),
          token: fc.constantFrom('none' as const, 'wrong' as const),
          get: fc.boolean(),
        },
        { requiredKeys: ['method', 'args', 'body'] },
      ),
    });
  }
  return fc.oneof(...kinds);
}
