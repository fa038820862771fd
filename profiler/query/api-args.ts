// The shape each API method's arguments must have, checked by both
// implementations of the typed API (the Electron IPC dispatcher, app/ipc.ts,
// and the browser-mode HTTP server, profiler/serve/server.ts) before anything
// that touches a file or spawns a process: the page is trusted no more than
// any other client. Anything that does not match is an ApiError
// ('bad-request') naming the argument and the problem, so a query never sees
// a wrong type (a string where SQL expects a number, a 10^9-row request).
import path from 'node:path';
import { SCENARIOS, WORKLOADS } from '../contract/record-request.ts';
import { CaptureRangeError, parseCaptureRange } from '../contract/record-request.ts';
import type { Scope } from '../contract/scope.ts';
import type {
  ApiMethod,
  ConcurrencyRequest,
  ItemKind,
  ItemRef,
  ItemTable,
  RecordRequest,
  SearchRequest,
  StreamScopeApi,
  WindowRequest,
} from '../contract/api.ts';
import { ApiError } from './api-error.ts';
import { MAX_WINDOW_ROWS } from './recording-query.ts';

const ITEM_TABLES = ['kernels', 'memcpys', 'memsets', 'syncs', 'api_calls', 'nvtx_ranges'] as const satisfies readonly ItemTable[];
const ITEM_KINDS = [
  'kernel', 'memcpy-h2d', 'memcpy-d2h', 'memcpy-d2d', 'memcpy-peer', 'memcpy-other', 'memset', 'sync', 'api', 'nvtx',
] as const satisfies readonly ItemKind[];
// Compile-time: the lists above name every member of the unions.
const allTables: [Exclude<ItemTable, (typeof ITEM_TABLES)[number]>] extends [never] ? true : false = true;
const allKinds: [Exclude<ItemKind, (typeof ITEM_KINDS)[number]>] extends [never] ? true : false = true;
void allTables;
void allKinds;

/** Row ids as api.ts defines them. */
const ROW_ID = /^(stream:\d{1,15}|api:\d{1,10}:\d{1,20}|nvtx:\d{1,10}:\d{1,20})$/;
const MAX_ID_LENGTH = 256;
const MAX_PATH_LENGTH = 4096;
const MAX_BUCKETS = 100_000;
const MAX_CONCURRENCY_TRACKS = 64;
const MAX_SEARCH_TEXT = 1024;
const MAX_SEARCH_LIMIT = 100_000;
const MAX_ARGV = 1024;
const MAX_ARG_LENGTH = 32_768;
/** Workload options the CLI accepts (`streamscope record --workload`), each with a value. */
const WORKLOAD_OPTIONS = ['--size', '--iterations', '--streams', '--chunks', '--variant'];
const WORKLOAD_VALUE = /^[A-Za-z0-9._-]{1,64}$/;

function bad(message: string): never {
  throw new ApiError('bad-request', message);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

function object(v: unknown, what: string, required: string[], optional: string[] = []): Record<string, unknown> {
  if (!isPlainObject(v)) bad(`${what} must be an object`);
  for (const k of Object.keys(v)) {
    if (!required.includes(k) && !optional.includes(k)) bad(`${what} has an unknown field '${k}'`);
  }
  for (const k of required) if (v[k] === undefined) bad(`${what}.${k} is missing`);
  return v;
}

function string(v: unknown, what: string, max: number, min = 1): string {
  if (typeof v !== 'string') bad(`${what} must be a string`);
  if (v.length < min) bad(`${what} must not be empty`);
  if (v.length > max) bad(`${what} is too long (${v.length} > ${max} characters)`);
  if (v.includes('\0')) bad(`${what} contains a NUL character`);
  return v;
}

/** Nanoseconds: finite, and exact as a JS number. */
function time(v: unknown, what: string): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) bad(`${what} must be a finite number (ns)`);
  if (Math.abs(v) > Number.MAX_SAFE_INTEGER) bad(`${what} is out of range`);
  return v;
}

function integer(v: unknown, what: string, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) bad(`${what} must be an integer`);
  if (v < min || v > max) bad(`${what} must be in [${min}, ${max}]`);
  return v;
}

function stringArray(v: unknown, what: string, maxItems: number, maxLength: number, minItems = 0): string[] {
  if (!Array.isArray(v)) bad(`${what} must be an array`);
  if (v.length < minItems) bad(`${what} must have at least ${minItems} element(s)`);
  if (v.length > maxItems) bad(`${what} has too many elements (${v.length} > ${maxItems})`);
  return v.map((s, i) => string(s, `${what}[${i}]`, maxLength, 0));
}

/** Recording ids are the session registry's random hex (session.ts). */
function recordingId(v: unknown): string {
  const id = string(v, 'recordingId', 64);
  if (!/^[0-9a-f]+$/.test(id)) bad(`recordingId '${id}' is not a recording id (open recordings are listed by listRecordings)`);
  return id;
}

function timeRange(r: Record<string, unknown>, what: string): void {
  const start = time(r.startNs, `${what}.startNs`);
  const end = time(r.endNs, `${what}.endNs`);
  if (end < start) bad(`${what}.endNs must not be before startNs`);
}

export function checkPath(v: unknown): string {
  const p = string(v, 'path', MAX_PATH_LENGTH);
  if (!path.isAbsolute(p)) bad(`path must be absolute: ${p}`);
  return path.normalize(p);
}

export function checkWindowRequest(v: unknown): WindowRequest {
  const r = object(v, 'request', ['rows', 'startNs', 'endNs', 'resolutionNs'], ['concurrency']);
  const rowIds = (value: unknown, what: string) => {
    const rows = stringArray(value, what, MAX_WINDOW_ROWS, 64);
    for (const row of rows) if (!ROW_ID.test(row)) bad(`${what}: '${row}' is not a row id (stream:N, api:PID:TID or nvtx:PID:TID)`);
    return rows;
  };
  const rows = rowIds(r.rows, 'request.rows');
  timeRange(r, 'request');
  const resolution = time(r.resolutionNs, 'request.resolutionNs');
  if (resolution <= 0) bad('request.resolutionNs must be positive');
  const out: WindowRequest = { rows, startNs: r.startNs as number, endNs: r.endNs as number, resolutionNs: resolution };
  if (r.concurrency !== undefined) {
    if (!Array.isArray(r.concurrency) || r.concurrency.length > MAX_CONCURRENCY_TRACKS) bad(`request.concurrency must be a list of at most ${MAX_CONCURRENCY_TRACKS} tracks`);
    out.concurrency = (r.concurrency as unknown[]).map((c, i) => {
      const t = object(c, `request.concurrency[${i}]`, ['deviceId', 'rows', 'buckets']);
      return {
        deviceId: integer(t.deviceId, `request.concurrency[${i}].deviceId`, 0, 2 ** 31 - 1),
        rows: rowIds(t.rows, `request.concurrency[${i}].rows`),
        buckets: integer(t.buckets, `request.concurrency[${i}].buckets`, 1, MAX_BUCKETS),
      };
    });
  }
  return out;
}

export function checkConcurrencyRequest(v: unknown): ConcurrencyRequest {
  const r = object(v, 'request', ['deviceId', 'startNs', 'endNs', 'buckets']);
  const deviceId = integer(r.deviceId, 'request.deviceId', 0, 2 ** 31 - 1);
  timeRange(r, 'request');
  const buckets = integer(r.buckets, 'request.buckets', 1, MAX_BUCKETS);
  return { deviceId, startNs: r.startNs as number, endNs: r.endNs as number, buckets };
}

export function checkItemRef(v: unknown): ItemRef {
  const r = object(v, 'ref', ['table', 'id']);
  if (typeof r.table !== 'string' || !(ITEM_TABLES as readonly string[]).includes(r.table)) {
    bad(`ref.table must be one of ${ITEM_TABLES.join(', ')}`);
  }
  return { table: r.table as ItemTable, id: integer(r.id, 'ref.id', 0, Number.MAX_SAFE_INTEGER) };
}

export function checkSearchRequest(v: unknown): SearchRequest {
  const r = object(v, 'request', ['text'], ['kinds', 'limit', 'after']);
  const out: SearchRequest = { text: string(r.text, 'request.text', MAX_SEARCH_TEXT, 0) };
  if (r.kinds !== undefined) {
    const kinds = stringArray(r.kinds, 'request.kinds', ITEM_KINDS.length * 2, 32);
    for (const k of kinds) if (!(ITEM_KINDS as readonly string[]).includes(k)) bad(`request.kinds: unknown kind '${k}'`);
    out.kinds = kinds as ItemKind[];
  }
  if (r.limit !== undefined) out.limit = integer(r.limit, 'request.limit', 1, MAX_SEARCH_LIMIT);
  if (r.after !== undefined) {
    const a = object(r.after, 'request.after', ['startNs', 'table', 'id']);
    if (typeof a.table !== 'string' || !(ITEM_TABLES as readonly string[]).includes(a.table)) bad(`request.after.table must be one of ${ITEM_TABLES.join(', ')}`);
    out.after = { startNs: time(a.startNs, 'request.after.startNs'), table: a.table as ItemTable, id: integer(a.id, 'request.after.id', 0, Number.MAX_SAFE_INTEGER) };
  }
  return out;
}

/** A capture range the CLI will accept (it becomes an argument of our own CLI). */
function captureRange(v: unknown): string {
  const spec = string(v, 'request.captureRange', MAX_ARG_LENGTH);
  try {
    parseCaptureRange(spec);
  } catch (err) {
    if (err instanceof CaptureRangeError) bad(`request.captureRange: ${err.message}`);
    throw err;
  }
  return spec;
}

export function checkRecordRequest(v: unknown): RecordRequest {
  const r = object(v, 'request', [], ['workload', 'command', 'captureRange']);
  if ((r.workload === undefined) === (r.command === undefined)) bad('request needs exactly one of workload or command');
  const capture = r.captureRange === undefined ? {} : { captureRange: captureRange(r.captureRange) };
  if (r.workload !== undefined) {
    const w = object(r.workload, 'request.workload', ['name', 'scenario'], ['args']);
    const name = string(w.name, 'request.workload.name', 64);
    const scenario = string(w.scenario, 'request.workload.scenario', 64);
    if (!(WORKLOADS as readonly string[]).includes(name)) bad(`unknown workload '${name}' (one of: ${WORKLOADS.join(', ')})`);
    if (!(SCENARIOS as readonly string[]).includes(scenario)) bad(`unknown scenario '${scenario}' (one of: ${SCENARIOS.join(', ')})`);
    const workload: NonNullable<RecordRequest['workload']> = { name, scenario };
    if (w.args !== undefined) {
      const args = stringArray(w.args, 'request.workload.args', WORKLOAD_OPTIONS.length * 2, 64);
      // Only the runner options the CLI knows, each with a plain value: these
      // become arguments of our own CLI, so nothing else may slip in.
      if (args.length % 2 !== 0) bad('request.workload.args must be option/value pairs');
      for (let i = 0; i < args.length; i += 2) {
        if (!WORKLOAD_OPTIONS.includes(args[i]!)) bad(`request.workload.args: unknown option '${args[i]}' (one of: ${WORKLOAD_OPTIONS.join(', ')})`);
        if (!WORKLOAD_VALUE.test(args[i + 1]!)) bad(`request.workload.args: bad value for ${args[i]}`);
      }
      workload.args = args;
    }
    return { workload, ...capture };
  }
  const command = stringArray(r.command, 'request.command', MAX_ARGV, MAX_ARG_LENGTH, 1);
  if (command[0] === '') bad('request.command[0] must name a program');
  return { command, ...capture };
}

const MAX_RANGE_NAME = 4096;

/** A Scope (profiler/analysis/scope.ts), field by field. */
export function checkScope(v: unknown): Scope {
  if (!isPlainObject(v)) bad('scope must be an object');
  switch (v.kind) {
    case 'steady-state':
    case 'whole':
      object(v, 'scope', ['kind']);
      return { kind: v.kind };
    case 'range': {
      const r = object(v, 'scope', ['kind', 'name'], ['instance']);
      const name = string(r.name, 'scope.name', MAX_RANGE_NAME);
      return r.instance === undefined ? { kind: 'range', name } : { kind: 'range', name, instance: integer(r.instance, 'scope.instance', 1, 2 ** 31) };
    }
    case 'window': {
      const w = object(v, 'scope', ['kind', 'startNs', 'endNs']);
      const startNs = time(w.startNs, 'scope.startNs');
      const endNs = time(w.endNs, 'scope.endNs');
      if (endNs <= startNs) bad('scope.endNs must be after scope.startNs');
      return { kind: 'window', startNs, endNs };
    }
    default:
      return bad(`scope.kind must be 'steady-state', 'whole', 'range' or 'window'`);
  }
}

/** Per method: the checked argument list (the arity is exact). */
const argumentCheckers: { [M in ApiMethod]: (args: unknown[]) => Parameters<StreamScopeApi[M]> } = {
  capabilities: () => [],
  listRecordings: () => [],
  openRecording: (a) => [checkPath(a[0])],
  closeRecording: (a) => [recordingId(a[0])],
  showOpenDialog: () => [],
  recentFiles: () => [],
  summary: (a) => [recordingId(a[0])],
  window: (a) => [recordingId(a[0]), checkWindowRequest(a[1])],
  concurrency: (a) => [recordingId(a[0]), checkConcurrencyRequest(a[1])],
  overview: (a) => [recordingId(a[0]), integer(a[1], 'buckets', 1, MAX_BUCKETS)],
  details: (a) => [recordingId(a[0]), checkItemRef(a[1])],
  search: (a) => [recordingId(a[0]), checkSearchRequest(a[1])],
  stats: (a) => [recordingId(a[0]), checkScope(a[1])],
  findings: (a) => [recordingId(a[0]), checkScope(a[1])],
  scopeInfo: (a) => [recordingId(a[0]), checkScope(a[1])],
  ranges: (a) => [recordingId(a[0])],
  iterations: (a) => [recordingId(a[0]), a[1] === null ? null : string(a[1], 'name', MAX_RANGE_NAME)],
  compare: (a) => [recordingId(a[0]), recordingId(a[1]), checkScope(a[2])],
  exportTrace: (a) => [recordingId(a[0])],
  record: (a) => [checkRecordRequest(a[0])],
  recordStatus: (a) => [string(a[0], 'jobId', MAX_ID_LENGTH)],
};

const arity: Record<ApiMethod, number> = {
  capabilities: 0, listRecordings: 0, openRecording: 1, closeRecording: 1, showOpenDialog: 0, recentFiles: 0, summary: 1,
  window: 2, concurrency: 2, overview: 2, details: 2, search: 2, stats: 2, findings: 2, scopeInfo: 2, ranges: 1, iterations: 2, compare: 3,
  exportTrace: 1, record: 1, recordStatus: 1,
};

/** Checks `args` for `method`; throws ApiError('bad-request') naming what is wrong. */
export function checkArguments<M extends ApiMethod>(method: M, args: unknown): Parameters<StreamScopeApi[M]> {
  if (!Array.isArray(args)) bad(`${method}: arguments must be a list`);
  if (args.length !== arity[method]) bad(`${method} takes ${arity[method]} argument(s), got ${args.length}`);
  return argumentCheckers[method](args) as Parameters<StreamScopeApi[M]>;
}
