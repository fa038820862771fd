// One API call to a running `streamscope serve` over HTTP, as the page
// makes it (the token in its header), for the tests that talk to the
// server without a page or beside one.
import type { RunningServer } from '../../profiler/serve/server.ts';

/** The answer of `method(...args)`; rejects with the method, the HTTP status and the error the server answered. */
export async function callApi<T>(server: RunningServer, method: string, ...args: unknown[]): Promise<T> {
  const r = await fetch(`http://127.0.0.1:${server.port}/api/${method}`, {
    method: 'POST',
    headers: { 'x-streamscope-token': server.token },
    body: JSON.stringify({ args }),
  });
  const body = (await r.json()) as T;
  if (!r.ok) throw new Error(`${method}: HTTP ${r.status} ${JSON.stringify(body)}`);
  return body;
}
