// IPC names shared by the main process and the preload. No Node imports: the
// sandboxed preload bundles this file.
import type { ApiErrorShape, RecordingHandle } from '../profiler/contract/api.ts';

/** Renderer → main: one channel per API method, `streamscope:<method>`. */
export const CHANNEL_PREFIX = 'streamscope:';

/** Main → renderer: things that happen outside the page (menu, argv, second instance). */
export const EVENT_CHANNEL = 'streamscope-main:event';

export type AppEvent =
  /** A recording was opened from the menu, the command line or a second `streamscope open`. */
  | { type: 'recording-opened'; recording: RecordingHandle }
  /** Opening a file from the menu or the command line failed. */
  | { type: 'open-failed'; error: ApiErrorShape }
  /** A menu item the page carries out (File ▸ Record… opens its record dialog). */
  | { type: 'menu'; action: 'record' | 'export' };
