// The arguments of every API method, defined once as valibot schemas: the
// checks both servers run on what a page sends (the Electron IPC
// dispatcher, app/ipc.ts, and browser mode's HTTP server,
// profiler/serve/server.ts, through profiler/query/api-args.ts), and the
// TypeScript types of those arguments (WindowRequest, SearchRequest,
// Scope, …), derived from the schemas with v.InferOutput, so a type and
// its check cannot drift apart.
//
// Why here, in the contract, and not in query/ beside the code that runs
// the checks: the renderer and the app build their requests from these
// types (api.ts re-exports them), and a type derived from a schema must
// live where its schema does. The schemas are pure (no Node): a page that
// imports only the types bundles none of this.
//
// Messages: each check says what is wrong as a phrase about the value
// ("must be a string", "must be in [1, 100000]"); query/api-args.ts puts
// the method and the argument's path in front ("window: request.startNs
// must be a finite number (ns)"). A phrase that starts with ':' quotes the
// value itself and is put after the path of the list it sits in
// ("search: request.kinds: unknown kind 'bogus'").
import * as v from 'valibot';
import { ITEM_KINDS, ITEM_TABLES } from './items.ts';
import { CaptureRangeError, parseCaptureRange, SCENARIOS, WORKLOADS } from './record-request.ts';
import { SQL_MAX_QUERY_LENGTH, SQL_MAX_TIME_LIMIT_MS, SQL_ROW_LIMIT } from './sql.ts';

/** Rows one window request may ask for (a screen shows far fewer). */
export const MAX_WINDOW_ROWS = 1024;
const MAX_ID_LENGTH = 256;
const MAX_PATH_LENGTH = 4096;
const MAX_BUCKETS = 100_000;
const MAX_CONCURRENCY_TRACKS = 64;
const MAX_SEARCH_TEXT = 1024;
const MAX_SEARCH_LIMIT = 100_000;
const MAX_RANGE_NAME = 4096;
const MAX_ARGV = 1024;
const MAX_ARG_LENGTH = 32_768;
/** Files one openRecordings call may name (a job of a few thousand ranks). */
const MAX_OPEN_FILES = 4096;
/** Workload options the CLI accepts (`streamscope record --workload`), each with a value. */
const WORKLOAD_OPTIONS = ['--size', '--iterations', '--streams', '--chunks', '--variant'];
const WORKLOAD_VALUE = /^[A-Za-z0-9._-]{1,64}$/;
/** Row ids as api.ts defines them. */
const ROW_ID = /^(stream:\d{1,15}|api:\d{1,10}:\d{1,20}|nvtx:\d{1,10}:\d{1,20})$/;

// ---- building blocks ---------------------------------------------------------

const oneOf = (list: readonly string[]) => list.join(', ');

/** A string of at most `max` characters (at least `min`), without NUL. */
function text(max: number, min = 1) {
  return v.pipe(
    v.string('must be a string'),
    v.minLength(min, 'must not be empty'),
    v.maxLength(max, (issue) => `is too long (${issue.received} > ${max} characters)`),
    v.check((s) => !s.includes('\0'), 'contains a NUL character'),
  );
}

/** Nanoseconds: finite, and exact as a JS number. */
function time() {
  return v.pipe(
    v.number('must be a finite number (ns)'),
    v.finite('must be a finite number (ns)'),
    v.check((n) => Math.abs(n) <= Number.MAX_SAFE_INTEGER, 'is out of range'),
  );
}

function integer(min: number, max: number) {
  return v.pipe(
    v.number('must be an integer'),
    v.safeInteger('must be an integer'),
    v.minValue(min, `must be in [${min}, ${max}]`),
    v.maxValue(max, `must be in [${min}, ${max}]`),
  );
}

/** A list of at most `maxItems` (at least `minItems`). */
function list<TItem extends v.GenericSchema>(item: TItem, maxItems: number, minItems = 0) {
  return v.pipe(
    v.array(item, 'must be an array'),
    v.minLength(minItems, `must have at least ${minItems} element(s)`),
    v.maxLength(maxItems, (issue) => `has too many elements (${issue.received} > ${maxItems})`),
  );
}

/** A JSON-like object (not an array, not a class instance) … */
function isPlainObject(x: unknown): boolean {
  if (x === null || typeof x !== 'object' || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

/** … with exactly these fields (unknown ones and missing required ones are named by query/api-args.ts). */
function record<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  return v.pipe(v.unknown(), v.check(isPlainObject, 'must be an object'), v.strictObject(entries));
}

const recordingId = v.pipe(
  text(64),
  // The session registry's random hex (query/session.ts).
  v.regex(/^[0-9a-f]+$/, (issue) => `'${issue.input}' is not a recording id (open recordings are listed by listRecordings)`),
);

/**
 * An absolute path without '.', '..' or doubled separators (what Node's
 * path.posix.normalize makes of it: recordings are read on Linux, where
 * CUDA and CUPTI run). Pure, so it can sit in the contract.
 */
export function normalizeAbsolutePath(p: string): string {
  const parts: string[] = [];
  for (const part of p.split('/')) {
    if (part === '..') parts.pop();
    else if (part !== '' && part !== '.') parts.push(part);
  }
  const joined = '/' + parts.join('/');
  return parts.length > 0 && p.endsWith('/') ? joined + '/' : joined;
}

const absolutePath = v.pipe(
  text(MAX_PATH_LENGTH),
  v.check(
    (p) => p.startsWith('/'),
    (issue) => `must be absolute: ${issue.input}`,
  ),
  v.transform(normalizeAbsolutePath),
);

const rowIds = list(
  v.pipe(
    text(64, 0),
    v.regex(ROW_ID, (issue) => `: '${issue.input}' is not a row id (stream:N, api:PID:TID or nvtx:PID:TID)`),
  ),
  MAX_WINDOW_ROWS,
);

const itemTable = v.picklist(ITEM_TABLES, `must be one of ${oneOf(ITEM_TABLES)}`);
const itemId = integer(0, Number.MAX_SAFE_INTEGER);
const deviceId = integer(0, 2 ** 31 - 1);
const buckets = integer(1, MAX_BUCKETS);

// ---- the argument types -----------------------------------------------------

/** A stored row: its table and its id there. Stable for a recording file. */
export const ItemRefSchema = record({ table: itemTable, id: itemId });
export type ItemRef = v.InferOutput<typeof ItemRefSchema>;

export const WindowConcurrencyRequestSchema = record({
  deviceId,
  /** The device's stream rows. */
  rows: rowIds,
  buckets,
});
export type WindowConcurrencyRequest = v.InferOutput<typeof WindowConcurrencyRequestSchema>;

export const WindowRequestSchema = v.pipe(
  record({
    rows: rowIds,
    startNs: time(),
    endNs: time(),
    /**
     * Nanoseconds per pixel at the current zoom. Items shorter than this that
     * touch each other merge into coverage spans instead of being sent one by
     * one (level of detail): the answer stays bounded by the pixel width, not
     * by the number of operations.
     */
    resolutionNs: v.pipe(time(), v.gtValue(0, 'must be positive')),
    /**
     * Concurrency tracks to compute from the same rows (one per device): the
     * kernels and copies in flight per bucket across [startNs, endNs), from
     * `rows` of that device (they need not be among the rows sent back: a
     * hidden stream still counts). Answered in WindowResponse.concurrency.
     */
    concurrency: v.optional(
      v.pipe(
        v.array(WindowConcurrencyRequestSchema, `must be a list of at most ${MAX_CONCURRENCY_TRACKS} tracks`),
        v.maxLength(MAX_CONCURRENCY_TRACKS, `must be a list of at most ${MAX_CONCURRENCY_TRACKS} tracks`),
      ),
    ),
  }),
  v.forward(
    v.check((r) => r.endNs >= r.startNs, 'must not be before startNs'),
    ['endNs'],
  ),
);
export type WindowRequest = v.InferOutput<typeof WindowRequestSchema>;

export const ConcurrencyRequestSchema = v.pipe(
  record({
    deviceId,
    startNs: time(),
    endNs: time(),
    /** Number of equal buckets across [startNs, endNs). */
    buckets,
  }),
  v.forward(
    v.check((r) => r.endNs >= r.startNs, 'must not be before startNs'),
    ['endNs'],
  ),
);
export type ConcurrencyRequest = v.InferOutput<typeof ConcurrencyRequestSchema>;

/** A span of the recording's time (ns from its origin), end after start. */
export const TimeRangeSchema = v.pipe(
  record({ startNs: time(), endNs: time() }),
  v.forward(
    v.check((r) => r.endNs > r.startNs, 'must be after startNs'),
    ['endNs'],
  ),
);
export type TimeRange = v.InferOutput<typeof TimeRangeSchema>;

/**
 * Which devices an overview is of: `ids` only those (a page shows the busy
 * rows of the ranks in view, not of every rank of a job of 1,024), every
 * one without; `total`: their sum as one entry (deviceId -1), the minimap
 * of a job of more GPUs than it has lanes.
 */
export const OverviewDevicesSchema = record({
  ids: v.optional(list(deviceId, 1 << 20)),
  total: v.optional(v.boolean('must be true or false')),
});
export type OverviewDevices = v.InferOutput<typeof OverviewDevicesSchema>;

/** The event waits' hatched spans of some stream rows over a window (dependencies.ts WaitSpan). */
export const WaitSpansRequestSchema = v.pipe(
  record({
    rows: rowIds,
    startNs: time(),
    endNs: time(),
    /** Nanoseconds per pixel: spans shorter than this are left out (they would not show). */
    resolutionNs: v.pipe(time(), v.gtValue(0, 'must be positive')),
  }),
  v.forward(
    v.check((r) => r.endNs >= r.startNs, 'must not be before startNs'),
    ['endNs'],
  ),
);
export type WaitSpansRequest = v.InferOutput<typeof WaitSpansRequestSchema>;

/** A position in the order of search matches. */
export const SearchCursorSchema = record({ startNs: time(), table: itemTable, id: itemId });
export type SearchCursor = v.InferOutput<typeof SearchCursorSchema>;

export const SearchRequestSchema = record({
  /** Case-insensitive substring of the name, as stored or demangled (`CUDAFunctor_add<float>`); empty matches all. */
  text: text(MAX_SEARCH_TEXT, 0),
  kinds: v.optional(
    list(
      v.picklist(ITEM_KINDS, (issue) => `: unknown kind '${String(issue.input)}'`),
      ITEM_KINDS.length * 2,
    ),
  ),
  limit: v.optional(integer(1, MAX_SEARCH_LIMIT)),
  /**
   * Only matches after this one, in the order `items` come in (start, then
   * table, then id): the next page of a search with more matches than
   * `limit` (pass the last item of the previous page).
   */
  after: v.optional(SearchCursorSchema),
});
export type SearchRequest = v.InferOutput<typeof SearchRequestSchema>;

/** Runner options as option/value pairs: only those the CLI knows, each with a plain value (they become arguments of our own CLI). */
const workloadArgs = v.pipe(
  list(text(64, 0), WORKLOAD_OPTIONS.length * 2),
  v.check((args) => args.length % 2 === 0, 'must be option/value pairs'),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const args = dataset.value;
    for (let i = 0; i < args.length; i += 2) {
      const [option, value] = [args[i]!, args[i + 1]!];
      if (!WORKLOAD_OPTIONS.includes(option)) return addIssue({ message: `: unknown option '${option}' (one of: ${oneOf(WORKLOAD_OPTIONS)})` });
      if (!WORKLOAD_VALUE.test(value)) return addIssue({ message: `: bad value for ${option}` });
    }
  }),
);

/** A capture range the CLI will accept (it becomes an argument of our own CLI). */
const captureRange = v.pipe(
  text(MAX_ARG_LENGTH),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    try {
      parseCaptureRange(dataset.value);
    } catch (err) {
      if (!(err instanceof CaptureRangeError)) throw err;
      addIssue({ message: `: ${err.message}` });
    }
  }),
);

export const RecordRequestSchema = v.pipe(
  record({
    /** Either a bundled workload … */
    workload: v.optional(
      record({
        name: v.pipe(
          text(64),
          v.check(
            (n) => (WORKLOADS as readonly string[]).includes(n),
            (issue) => `: unknown workload '${issue.input}' (one of: ${oneOf(WORKLOADS)})`,
          ),
        ),
        scenario: v.pipe(
          text(64),
          v.check(
            (n) => (SCENARIOS as readonly string[]).includes(n),
            (issue) => `: unknown scenario '${issue.input}' (one of: ${oneOf(SCENARIOS)})`,
          ),
        ),
        args: v.optional(workloadArgs),
      }),
    ),
    /** … or a command line (argv, no shell). */
    command: v.optional(
      v.pipe(
        list(text(MAX_ARG_LENGTH, 0), MAX_ARGV, 1),
        v.forward(
          v.check((argv) => argv[0] !== '', 'must name a program'),
          [0],
        ),
      ),
    ),
    /** Keep only the activity inside this range, as `record --capture-range` does: 'nvtx:NAME' or 'cuda-profiler-api'. */
    captureRange: v.optional(captureRange),
    /** Open the recording as soon as it exists and follow it while it grows (RecordProgress.recording comes while running). */
    live: v.optional(v.boolean('must be true or false')),
  }),
  v.check((r) => (r.workload === undefined) !== (r.command === undefined), 'needs exactly one of workload or command'),
);
export type RecordRequest = v.InferOutput<typeof RecordRequestSchema>;

/** A query for the SQL console (contract/sql.ts): one statement that reads; the console says what it refuses. */
export const SqlRequestSchema = record({
  query: text(SQL_MAX_QUERY_LENGTH, 0),
  /** Stop the query after this long (ms); SQL_TIME_LIMIT_MS when absent. */
  timeoutMs: v.optional(integer(1, SQL_MAX_TIME_LIMIT_MS)),
  /** Keep at most this many rows (the answer says when there were more); SQL_ROW_LIMIT when absent. */
  rowLimit: v.optional(integer(1, SQL_ROW_LIMIT)),
});
export type SqlRequest = v.InferOutput<typeof SqlRequestSchema>;

/** What an analysis looks at (scope.ts says what each kind covers). */
export const ScopeSchema = v.pipe(
  v.unknown(),
  v.check(isPlainObject, 'must be an object'),
  v.variant(
    'kind',
    [
      v.strictObject({ kind: v.literal('steady-state') }),
      v.strictObject({ kind: v.literal('whole') }),
      v.strictObject({
        kind: v.literal('range'),
        name: text(MAX_RANGE_NAME),
        /** 1 = the first instance; absent: all instances. */
        instance: v.optional(integer(1, 2 ** 31)),
      }),
      v.pipe(
        v.strictObject({ kind: v.literal('window'), startNs: time(), endNs: time() }),
        v.forward(
          v.check((r) => r.endNs > r.startNs, 'must be after scope.startNs'),
          ['endNs'],
        ),
      ),
    ],
    "must be 'steady-state', 'whole', 'range' or 'window'",
  ),
);
export type Scope = v.InferOutput<typeof ScopeSchema>;

// ---- per method: the arguments, in order, with the names errors use ----------

type Argument = readonly [name: string, schema: v.GenericSchema];
/** The checked values of an argument list, as a tuple. */
export type ArgumentValues<T extends readonly Argument[]> = { -readonly [K in keyof T]: v.InferOutput<T[K][1]> };

export const API_ARGUMENTS = {
  capabilities: [],
  listRecordings: [],
  openRecording: [['path', absolutePath]],
  openRecordings: [['paths', list(absolutePath, MAX_OPEN_FILES, 1)]],
  closeRecording: [['recordingId', recordingId]],
  showOpenDialog: [],
  recentFiles: [],
  summary: [['recordingId', recordingId]],
  recordingState: [['recordingId', recordingId]],
  window: [
    ['recordingId', recordingId],
    ['request', WindowRequestSchema],
  ],
  concurrency: [
    ['recordingId', recordingId],
    ['request', ConcurrencyRequestSchema],
  ],
  overview: [
    ['recordingId', recordingId],
    ['buckets', buckets],
    ['range', v.nullable(TimeRangeSchema)],
    ['devices', v.nullable(OverviewDevicesSchema)],
  ],
  details: [
    ['recordingId', recordingId],
    ['ref', ItemRefSchema],
  ],
  search: [
    ['recordingId', recordingId],
    ['request', SearchRequestSchema],
  ],
  dependencies: [
    ['recordingId', recordingId],
    ['ref', ItemRefSchema],
  ],
  waitSpans: [
    ['recordingId', recordingId],
    ['request', WaitSpansRequestSchema],
  ],
  stats: [
    ['recordingId', recordingId],
    ['scope', ScopeSchema],
  ],
  findings: [
    ['recordingId', recordingId],
    ['scope', ScopeSchema],
  ],
  scopeInfo: [
    ['recordingId', recordingId],
    ['scope', ScopeSchema],
  ],
  analysisProgress: [['recordingId', recordingId]],
  ranges: [['recordingId', recordingId]],
  iterations: [
    ['recordingId', recordingId],
    ['name', v.nullable(text(MAX_RANGE_NAME))],
    ['findings', v.boolean('must be true or false')],
  ],
  compare: [
    ['baseId', recordingId],
    ['otherId', recordingId],
    ['scope', ScopeSchema],
  ],
  sql: [
    ['recordingId', recordingId],
    ['request', SqlRequestSchema],
  ],
  exportTrace: [['recordingId', recordingId]],
  record: [['request', RecordRequestSchema]],
  recordStatus: [['jobId', text(MAX_ID_LENGTH)]],
} as const satisfies Record<string, readonly Argument[]>;
// api.ts checks at compile time that these are exactly StreamScopeApi's methods and parameters.
