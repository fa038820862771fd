// Entry of the query thread. Recordings are read with better-sqlite3, which
// is synchronous: a window query over millions of rows takes as long as it
// takes, and it must never stall the thread that talks to people — the
// desktop app's main process (menus, dialogs, IPC of other windows), or
// browser mode's server (accepting connections: libuv accepts one a turn of
// the event loop, so a server computing windows on its own thread let new
// connections wait in the kernel's queue, seconds under a flood). So the
// registry and every RecordingQuery live here, and the other side talks to
// this thread with messages (query-client.ts).
//
// Messages in:  { id, method, args, encoding? }   (arguments already checked: api-args.ts)
// Messages out: { id, result: QueryResult }
// With `encoding`, the answer comes back ready to send (JSON text, or a
// window's binary form, its buffer transferred): the other side neither
// copies nor serializes a large answer on its own thread.
import { parentPort } from 'node:worker_threads';
import type { ApiErrorShape, WindowResponse } from '../contract/api.ts';
import { encodeWindow } from '../contract/window-codec.ts';
import { ApiError, toApiErrorShape } from './api-error.ts';
import { createQueryBackend, isQueryMethod, type QueryBackend } from './query-backend.ts';

/** How an answer comes back: the value itself (structured clone), JSON text, or a window's binary form (window-codec.ts). */
export type AnswerEncoding = 'value' | 'json' | 'window-binary';

export interface QueryRequestMessage {
  id: number;
  method: string;
  args: unknown[];
  encoding?: AnswerEncoding;
}

export type QueryResult = { ok: true; value: unknown } | { ok: false; error: ApiErrorShape };

export interface QueryResponseMessage {
  id: number;
  result: QueryResult;
}

/** `value` in the form asked for. An answer too large to encode (a window of millions of items in JSON) is this request's error. */
export function encodeAnswer(method: string, value: unknown, encoding: AnswerEncoding): unknown {
  try {
    if (encoding === 'json') return JSON.stringify(value);
    if (encoding === 'window-binary') return encodeWindow(value as WindowResponse);
    return value;
  } catch (e) {
    throw new ApiError('internal', `${method}: the answer could not be sent (${(e as Error).message}): ask for less (a shorter window, a coarser resolution)`);
  }
}

if (!parentPort) throw new Error('profiler/query/query-worker.ts runs as a worker thread (see query-client.ts)');
const port = parentPort;

let backend: QueryBackend | null = null;

port.on('message', async (msg: QueryRequestMessage | { close: true }) => {
  if ('close' in msg) {
    backend?.close();
    port.close();
    return;
  }
  let result: QueryResult;
  try {
    if (!isQueryMethod(msg.method)) throw new Error(`the query thread does not answer ${msg.method}`);
    const b = (backend ??= createQueryBackend());
    const fn = b[msg.method] as (...a: unknown[]) => Promise<unknown>;
    result = { ok: true, value: encodeAnswer(msg.method, await fn.apply(b, msg.args), msg.encoding ?? 'value') };
  } catch (err) {
    result = { ok: false, error: toApiErrorShape(err) };
  }
  const bytes = result.ok && result.value instanceof Uint8Array ? result.value : null;
  port.postMessage({ id: msg.id, result } satisfies QueryResponseMessage, bytes ? [bytes.buffer as ArrayBuffer] : []);
});
