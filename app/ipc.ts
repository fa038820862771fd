// The main-process side of the typed API (profiler/contract/api.ts): one IPC
// channel per method, `streamscope:<method>`, nothing else. Every call is
// checked here before it reaches anything that touches a file or spawns a
// process: the channel must name a method of `apiMethods`, and the arguments
// must have the method's shape (types, ranges, lengths, known keys only).
// Results and errors travel back as one plain envelope, because Electron's
// ipcMain.handle flattens a thrown Error into a message string and would lose
// `code` and `file`; the preload unwraps it and rejects with ApiErrorShape.
//
// Plain module (no Electron import): tests drive `dispatch` directly.
import type { ApiErrorShape, ApiMethod, StreamScopeApi } from '../profiler/contract/api.ts';
import { apiMethods } from '../profiler/contract/api.ts';
import { checkArguments } from '../profiler/query/api-args.ts';
import { ApiError, toApiErrorShape } from '../profiler/query/api-error.ts';

import { CHANNEL_PREFIX } from './channels.ts';
import { ipcSenderRefusal, type SenderFrame } from './security.ts';

export { ApiError, CHANNEL_PREFIX, checkArguments };

export function channelFor(method: ApiMethod): string {
  return CHANNEL_PREFIX + method;
}

/** The method a channel names, or null for anything not in apiMethods. */
export function methodOf(channel: unknown): ApiMethod | null {
  if (typeof channel !== 'string' || !channel.startsWith(CHANNEL_PREFIX)) return null;
  const name = channel.slice(CHANNEL_PREFIX.length);
  return (apiMethods as readonly string[]).includes(name) ? (name as ApiMethod) : null;
}

/** What crosses IPC back to the preload. */
export type IpcResult<T = unknown> = { ok: true; value: T } | { ok: false; error: ApiErrorShape };

/**
 * Any thrown value → ApiErrorShape (profiler/query/api-error.ts: the same
 * mapping browser mode uses, so both implementations report a file's
 * problem with the same code).
 */
export const toApiError = (err: unknown): ApiErrorShape => toApiErrorShape(err);

/**
 * One IPC call: channel → method, arguments checked, handler called, result
 * or error wrapped. Never throws.
 */
export async function dispatch(handler: StreamScopeApi, channel: unknown, args: unknown): Promise<IpcResult> {
  try {
    const method = methodOf(channel);
    if (!method) throw new ApiError('bad-request', `unknown channel '${String(channel)}'`);
    const checked = checkArguments(method, args);
    const fn = handler[method] as (...a: unknown[]) => Promise<unknown>;
    const value = await fn.apply(handler, checked);
    return { ok: true, value };
  } catch (err) {
    return { ok: false, error: toApiError(err) };
  }
}

/** The part of Electron's ipcMain registerApiHandlers uses. */
export interface IpcMainLike {
  handle(channel: string, listener: (event: { senderFrame: SenderFrame | null }, ...args: unknown[]) => Promise<IpcResult> | IpcResult): void;
}

/**
 * One handler per API method on `streamscope:<method>`, and none other.
 * Each checks who is calling before anything else (security.ts,
 * ipcSenderRefusal: only the app's own top frame), then dispatches.
 */
export function registerApiHandlers(ipcMain: IpcMainLike, api: StreamScopeApi): void {
  for (const method of apiMethods) {
    const channel = channelFor(method);
    ipcMain.handle(channel, (event, ...args) => {
      const refusal = ipcSenderRefusal(event.senderFrame);
      if (refusal) return { ok: false, error: { code: 'forbidden', message: refusal } };
      return dispatch(api, channel, args);
    });
  }
}
