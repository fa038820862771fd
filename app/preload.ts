// Preload of the StreamScope window: exposes `window.streamscope`, the typed
// API of profiler/contract/api.ts, and nothing else. Each method is one
// ipcRenderer.invoke on `streamscope:<method>` for the names in apiMethods;
// the page never sees ipcRenderer, an IPC event object or a channel name.
//
// Runs in Chromium's sandbox: only `electron` may be imported at run time, so
// app/vite.config.ts bundles this file (with the apiMethods list) into one
// CommonJS file, app/dist/preload.cjs.
import { contextBridge, ipcRenderer, webUtils } from 'electron';
import { apiMethods, type StreamScopeApi } from '../profiler/contract/api.ts';
import { CHANNEL_PREFIX, EVENT_CHANNEL, type AppEvent } from './channels.ts';
import type { IpcResult } from './ipc.ts';

/** What the desktop app's window gets: the API plus two desktop-only helpers. */
export interface DesktopApi extends StreamScopeApi {
  /**
   * The path of a file dropped on the page (drag-and-drop opening:
   * `openRecording(pathForFile(file))`). Empty for files not from disk.
   */
  pathForFile(file: unknown): string;
  /** Events from the main process (menu, files opened from the command line); returns an unsubscribe function. */
  onEvent(listener: (event: AppEvent) => void): () => void;
}

const api: Record<string, unknown> = {};
for (const method of apiMethods) {
  const channel = CHANNEL_PREFIX + method;
  api[method] = async (...args: unknown[]) => {
    const result = (await ipcRenderer.invoke(channel, ...args)) as IpcResult;
    // Rejects with the plain ApiErrorShape {code, message, file?}, as browser mode does.
    if (!result.ok) throw result.error;
    return result.value;
  };
}

api.pathForFile = (file: unknown): string => {
  try {
    return webUtils.getPathForFile(file as Parameters<typeof webUtils.getPathForFile>[0]);
  } catch {
    return '';
  }
};

api.onEvent = (listener: (event: AppEvent) => void): (() => void) => {
  if (typeof listener !== 'function') throw new TypeError('onEvent needs a function');
  const wrapped = (_event: unknown, payload: AppEvent) => listener(payload);
  ipcRenderer.on(EVENT_CHANNEL, wrapped);
  return () => {
    ipcRenderer.removeListener(EVENT_CHANNEL, wrapped);
  };
};

contextBridge.exposeInMainWorld('streamscope', Object.freeze(api as unknown as DesktopApi));
