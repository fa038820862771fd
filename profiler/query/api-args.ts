// Checks each API method's arguments, before anything that touches a file
// or spawns a process, in both implementations of the typed API (the
// Electron IPC dispatcher, app/ipc.ts, and the browser-mode HTTP server,
// profiler/serve/server.ts): the page is trusted no more than any other
// client. What each argument must be is defined once, as the schemas of
// profiler/contract/api-schema.ts (the argument types are derived from
// them); here they are run, and the first thing wrong becomes an ApiError
// ('bad-request') naming the method, the argument and the problem, so a
// query never sees a wrong type (a string where SQL expects a number, a
// 10^9-row request).
import * as v from 'valibot';
import type { ApiMethod, StreamScopeApi } from '../contract/api.ts';
import { API_ARGUMENTS } from '../contract/api-schema.ts';
import { ApiError } from './api-error.ts';

function bad(message: string): never {
  throw new ApiError('bad-request', message);
}

/**
 * An issue as one line: the argument's path, then what is wrong with it
 * (api-schema.ts says how its phrases are written). Fields that are
 * missing or unknown are said here, for every object alike.
 */
export function describeIssue(argument: string, issue: v.BaseIssue<unknown>): string {
  const path = [...(issue.path ?? [])];
  const last = path[path.length - 1];
  let message = issue.message;
  if (last?.origin === 'key') {
    // strictObject: a required field absent, or one it does not know.
    if (issue.expected === 'never') {
      path.pop();
      message = `has an unknown field '${String(last.key)}'`;
    } else {
      message = 'is missing';
    }
  }
  const isIndex = (p: v.IssuePathItem) => p.type === 'array' || typeof p.key === 'number';
  // ': …' quotes the value: said of the list it is in, not of its index.
  const quotesValue = message.startsWith(':');
  if (quotesValue && path.length > 0 && isIndex(path[path.length - 1]!)) path.pop();
  let where = argument;
  for (const p of path) where += isIndex(p) ? `[${String(p.key)}]` : `.${String(p.key)}`;
  return quotesValue ? `${where}${message}` : `${where} ${message}`;
}

/** Checks `args` for `method`; throws ApiError('bad-request') naming what is wrong. */
export function checkArguments<M extends ApiMethod>(method: M, args: unknown): Parameters<StreamScopeApi[M]> {
  const expected: readonly (readonly [string, v.GenericSchema])[] = API_ARGUMENTS[method];
  if (!Array.isArray(args)) bad(`${method}: arguments must be a list`);
  if (args.length !== expected.length) bad(`${method} takes ${expected.length} argument(s), got ${args.length}`);
  return expected.map(([name, schema], i) => {
    const r = v.safeParse(schema, args[i], { abortEarly: true });
    if (!r.success) bad(`${method}: ${describeIssue(name, r.issues[0])}`);
    return r.output;
  }) as Parameters<StreamScopeApi[M]>;
}

/** One value against its schema, for callers inside the process (RecordingQuery's own guard). */
export function checkValue<T extends v.GenericSchema>(what: string, argument: string, schema: T, value: unknown): v.InferOutput<T> {
  const r = v.safeParse(schema, value, { abortEarly: true });
  if (!r.success) bad(`${what}: ${describeIssue(argument, r.issues[0])}`);
  return r.output;
}
