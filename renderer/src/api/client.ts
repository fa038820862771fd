// The renderer's only way to data: the typed API of profiler/contract/api.ts.
// In the desktop app the preload exposes it as `window.streamscope` (IPC to
// the main process); in browser mode (`streamscope serve`) the same methods
// are POSTed to /api/<method> with the access token taken from the page URL.
// Both reject with the same ApiErrorShape, turned here into ApiCallError.
import {
  apiMethods,
  type ApiErrorCode,
  type ApiErrorShape,
  type RecordingHandle,
  type StreamScopeApi,
  type WindowRequest,
} from '../../../profiler/contract/api.ts';
import type { NsArguments, NsFields } from '../../../profiler/contract/time.ts';
import { decodeWindow, decodeWindowColumns, WINDOW_MEDIA_TYPE, type WindowColumns } from '../../../profiler/contract/window-codec.ts';
import { LANE_LIMITS, laneOf, limiter, type Lane } from './analysis-limiter.ts';

/**
 * The API as the page calls it: every time in its arguments (a field named
 * `…Ns`) is a BrandedNs (contract/time.ts), so a number becomes one only
 * where the page says so, with toNs. Answers are as the contract says.
 */
export type PageApi = NsArguments<StreamScopeApi>;

export class ApiCallError extends Error {
  readonly code: ApiErrorCode;
  readonly file?: string;
  constructor(shape: ApiErrorShape) {
    super(shape.message);
    this.name = 'ApiCallError';
    this.code = shape.code;
    this.file = shape.file;
  }
}

/** Anything an API call rejected with → ApiCallError (IPC rejects with a plain shape object). */
export function toApiError(err: unknown): ApiCallError {
  if (err instanceof ApiCallError) return err;
  const e = err as Partial<ApiErrorShape> | null;
  if (e && typeof e === 'object' && typeof e.message === 'string') {
    return new ApiCallError({ code: (e.code as ApiErrorCode) ?? 'internal', message: e.message, file: e.file });
  }
  return new ApiCallError({ code: 'internal', message: String(err) });
}

/** Main-process events (app/channels.ts AppEvent), mirrored here: the renderer imports only the API contract. */
export type DesktopEvent =
  { type: 'recording-opened'; recording: RecordingHandle } | { type: 'open-failed'; error: ApiErrorShape } | { type: 'menu'; action: 'record' | 'export' };

/** The two desktop-only helpers the preload adds next to the API (app/preload.ts). */
export interface DesktopExtras {
  pathForFile?(file: File): string;
  onEvent?(listener: (event: DesktopEvent) => void): () => void;
}

/**
 * What browser mode adds: window() as the columns themselves, views into
 * the binary answer, for the timeline (window-codec.ts says why).
 */
export interface TransportExtras {
  windowColumns?(recordingId: string, request: NsFields<WindowRequest>): Promise<WindowColumns>;
}

declare global {
  interface Window {
    streamscope?: StreamScopeApi & DesktopExtras;
  }
}

/** The access token of browser mode: `?token=` of the page URL (kept there across reloads). */
export function pageToken(): string {
  return new URLSearchParams(location.search).get('token') ?? '';
}

/** The methods the query side answers from its analysis thread, one at a time, in seconds on a large recording: a few on the wire at once (analysis-limiter.ts). */
const ANALYSIS_METHODS = new Set(['findings', 'stats', 'scopeInfo', 'ranges', 'iterations', 'concurrency', 'compare', 'dependencies', 'waitSpans', 'sql']);

function httpApi(): StreamScopeApi {
  const token = pageToken();
  const lanes = Object.fromEntries(Object.entries(LANE_LIMITS).map(([lane, limit]) => [lane, limiter(limit)])) as Record<Lane, ReturnType<typeof limiter>>;
  const call = (method: string, args: unknown[], columns = false): Promise<unknown> =>
    ANALYSIS_METHODS.has(method) ? lanes[laneOf(method)](() => send(method, args, columns)) : send(method, args, columns);
  const send = async (method: string, args: unknown[], columns = false): Promise<unknown> => {
    let response: Response;
    try {
      response = await fetch(`api/${method}`, {
        method: 'POST',
        // Window answers come binary when asked for (window-codec.ts): a
        // big one parsed as JSON held the page for 100+ ms.
        headers: {
          'content-type': 'application/json',
          'x-streamscope-token': token,
          ...(method === 'window' ? { accept: `${WINDOW_MEDIA_TYPE}, application/json` } : {}),
        },
        body: JSON.stringify({ args }),
      });
    } catch (err) {
      throw new ApiCallError({
        code: 'internal',
        message: `the StreamScope server did not answer (${(err as Error).message}); is \`streamscope serve\` still running?`,
      });
    }
    if (response.ok && response.headers.get('content-type') === WINDOW_MEDIA_TYPE) {
      try {
        const bytes = new Uint8Array(await response.arrayBuffer());
        return columns ? decodeWindowColumns(bytes) : decodeWindow(bytes);
      } catch (err) {
        throw new ApiCallError({ code: 'internal', message: `${method}: ${(err as Error).message}` });
      }
    }
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      throw new ApiCallError({ code: 'internal', message: `${method}: the server answered ${response.status} with something that is not JSON` });
    }
    if (!response.ok) throw toApiError(body ?? { code: 'internal', message: `${method}: HTTP ${response.status}` });
    return body;
  };
  // The methods of the contract, and windowColumns; desktop-only helpers (onEvent, pathForFile) stay undefined here.
  const api = Object.fromEntries(apiMethods.map((m) => [m, (...args: unknown[]) => call(m, args)])) as unknown as StreamScopeApi & TransportExtras;
  api.windowColumns = async (id, request) => (await call('window', [id, request], true)) as WindowColumns;
  return api;
}

let instance: (PageApi & DesktopExtras & TransportExtras) | null = null;

/** The API: the Electron preload's object when present, else the HTTP client of browser mode. */
export function getApi(): PageApi & DesktopExtras & TransportExtras {
  instance ??= window.streamscope ?? httpApi();
  return instance;
}
