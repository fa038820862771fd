// The shape each API method's arguments must have over HTTP. The page is
// trusted no more than any other client: anything that does not match is
// answered 'bad-request' before it reaches a query, so a query never sees
// a wrong type (a string where SQL expects a number, a 10^9-row request).
import type { ApiMethod, ItemKind } from '../query/api.ts';
import { isItemTable } from '../query/item-kinds.ts';
import { MAX_WINDOW_ROWS } from '../query/recording-query.ts';

type Check = (args: unknown[]) => string | null;

const ITEM_KINDS: readonly ItemKind[] = ['kernel', 'memcpy-h2d', 'memcpy-d2h', 'memcpy-d2d', 'memcpy-peer', 'memcpy-other', 'memset', 'sync', 'api', 'nvtx'];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** Recording ids are the registry's random hex (session.ts). */
const isRecordingId = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{1,64}$/.test(v);

/** `count` arguments: a recording id first, then `rest` checks in order. */
function withRecording(...rest: ((v: unknown) => string | null)[]): Check {
  return (args) => {
    if (args.length !== 1 + rest.length) return `expected ${1 + rest.length} argument(s), got ${args.length}`;
    if (!isRecordingId(args[0])) return 'the first argument must be a recording id';
    for (let i = 0; i < rest.length; i++) {
      const problem = rest[i]!(args[i + 1]);
      if (problem) return problem;
    }
    return null;
  };
}

const none: Check = (args) => (args.length === 0 ? null : `expected no arguments, got ${args.length}`);
/** Methods browser mode refuses anyway ('forbidden'): their arguments do not matter. */
const any: Check = () => null;

const windowRequest = (v: unknown) => {
  if (!isObject(v)) return 'the window request must be an object';
  if (!Array.isArray(v.rows) || v.rows.length > MAX_WINDOW_ROWS || !v.rows.every((r) => typeof r === 'string' && r.length <= 64)) {
    return `rows must be an array of at most ${MAX_WINDOW_ROWS} row ids`;
  }
  if (!isNumber(v.startNs) || !isNumber(v.endNs) || !isNumber(v.resolutionNs) || v.endNs < v.startNs) return 'startNs ≤ endNs and resolutionNs must be finite numbers';
  return null;
};

const concurrencyRequest = (v: unknown) => {
  if (!isObject(v) || !isNumber(v.deviceId) || !isNumber(v.startNs) || !isNumber(v.endNs) || !isNumber(v.buckets)) {
    return 'the concurrency request needs numbers deviceId, startNs, endNs, buckets';
  }
  return null;
};

const itemRef = (v: unknown) => (isObject(v) && isItemTable(v.table) && Number.isSafeInteger(v.id) ? null : 'an item reference is { table: a timeline table, id: integer }');

const searchRequest = (v: unknown) => {
  if (!isObject(v) || typeof v.text !== 'string' || v.text.length > 1000) return 'the search request needs { text: string }';
  if (v.limit !== undefined && !(Number.isInteger(v.limit) && (v.limit as number) >= 0)) return 'limit must be a non-negative integer';
  if (v.kinds !== undefined && !(Array.isArray(v.kinds) && v.kinds.every((k) => ITEM_KINDS.includes(k as ItemKind)))) return `kinds must be a list of ${ITEM_KINDS.join(', ')}`;
  return null;
};

export const ARGUMENT_CHECKS: Record<ApiMethod, Check> = {
  capabilities: none,
  listRecordings: none,
  recentFiles: none,
  openRecording: any,
  showOpenDialog: any,
  record: any,
  recordStatus: any,
  summary: withRecording(),
  window: withRecording(windowRequest),
  concurrency: withRecording(concurrencyRequest),
  details: withRecording(itemRef),
  search: withRecording(searchRequest),
  stats: withRecording(),
  findings: withRecording(),
};
