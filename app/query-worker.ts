// Entry of the query worker thread. Recordings are read with better-sqlite3,
// which is synchronous: a window query over millions of rows takes as long as
// it takes, and it must never stall the main process (menus, dialogs, IPC of
// other windows). So the registry and every RecordingQuery live here, and the
// main process talks to this thread with messages (query-client.ts).
//
// Messages in:  { id, method, args }   (arguments already checked by ipc.ts)
// Messages out: { id, result: IpcResult }
import { parentPort } from 'node:worker_threads';
import { toApiError, type IpcResult } from './ipc.ts';
import { createQueryBackend, isQueryMethod, type QueryBackend } from './query-backend.ts';

export interface QueryRequestMessage {
  id: number;
  method: string;
  args: unknown[];
}

export interface QueryResponseMessage {
  id: number;
  result: IpcResult;
}

if (!parentPort) throw new Error('app/query-worker.ts runs as a worker thread (see query-client.ts)');
const port = parentPort;

let backend: QueryBackend | null = null;

port.on('message', async (msg: QueryRequestMessage | { close: true }) => {
  if ('close' in msg) {
    backend?.close();
    port.close();
    return;
  }
  let result: IpcResult;
  try {
    if (!isQueryMethod(msg.method)) throw new Error(`the query worker does not answer ${msg.method}`);
    const b = (backend ??= createQueryBackend());
    const fn = b[msg.method] as (...a: unknown[]) => Promise<unknown>;
    result = { ok: true, value: await fn.apply(b, msg.args) };
  } catch (err) {
    result = { ok: false, error: toApiError(err) };
  }
  port.postMessage({ id: msg.id, result } satisfies QueryResponseMessage);
});
