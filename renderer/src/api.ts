// The renderer's only way to data: the typed API (profiler/query/api.ts),
// from the Electron preload when present, else over HTTP (browser mode,
// `streamscope serve`), with the access token from the page URL.
import type { ApiErrorShape, StreamScopeApi } from '../../profiler/query/api.ts';

export class ApiCallError extends Error {
  readonly code: string;
  readonly file?: string;
  constructor(shape: ApiErrorShape) {
    super(shape.message);
    this.code = shape.code;
    this.file = shape.file;
  }
}

declare global {
  interface Window { streamscope?: StreamScopeApi }
}

function httpApi(): StreamScopeApi {
  const token = new URLSearchParams(location.search).get('token') ?? '';
  const call = async (method: string, args: unknown[]) => {
    const r = await fetch(`api/${method}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-streamscope-token': token }, body: JSON.stringify({ args }) });
    const body = await r.json();
    if (!r.ok) throw new ApiCallError(body as ApiErrorShape);
    return body;
  };
  return new Proxy({} as StreamScopeApi, { get: (_t, method: string) => (...args: unknown[]) => call(method, args) });
}

export const api: StreamScopeApi = window.streamscope ?? httpApi();
