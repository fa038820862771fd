// What the main process does to keep the page where it belongs, as plain
// functions over the few parts of Electron's objects they touch, so that a
// test drives them without Electron (test/app/security-checklist.test.ts,
// one test per item of Electron's security checklist; app/README.md lists
// them). main.ts calls secureApp() before any window exists and
// secureSession() once the app is ready; the IPC side is ipc.ts's
// registerApiHandlers.
//
// The page is untrusted in the sense that matters: it draws strings any
// profiled program chose (window-options.ts says more). So it may not leave
// the app's origin, open windows, embed <webview>s, or have any permission.
import { isAppUrl } from './window-options.ts';

/** The part of an Electron event these handlers use. */
export interface Preventable {
  preventDefault(): void;
}

/** The part of Electron's WebContents secureApp guards. */
export interface GuardedContents {
  setWindowOpenHandler(handler: (details: { url: string }) => { action: 'deny' }): void;
  on(event: 'will-navigate' | 'will-redirect', listener: (event: Preventable, url: string) => void): unknown;
  on(event: 'will-frame-navigate', listener: (details: Preventable & { url: string }) => void): unknown;
  on(event: 'will-attach-webview', listener: (event: Preventable) => void): unknown;
}

/** The part of Electron's `app` secureApp uses. */
export interface GuardedApp {
  enableSandbox(): void;
  on(event: 'web-contents-created', listener: (event: unknown, contents: GuardedContents) => void): unknown;
}

/** The part of Electron's Session secureSession sets. */
export interface GuardedSession {
  setPermissionRequestHandler(handler: (contents: unknown, permission: string, callback: (granted: boolean) => void, details: unknown) => void): void;
  setPermissionCheckHandler(handler: (contents: unknown, permission: string, origin: string, details: unknown) => boolean): void;
  setDevicePermissionHandler(handler: (details: unknown) => boolean): void;
}

/**
 * Every web contents the app creates (its window, and anything the page
 * might try to make): no new windows (window.open, target=_blank, a
 * middle click: denied), no navigation or redirect away from the app's
 * origin in any frame, no <webview> (the tag is off too: webviewTag).
 */
export function guardWebContents(contents: GuardedContents): void {
  contents.setWindowOpenHandler(() => ({ action: 'deny' }));
  const stayHome = (event: Preventable, url: string) => {
    if (!isAppUrl(url)) event.preventDefault();
  };
  contents.on('will-navigate', stayHome);
  contents.on('will-redirect', stayHome);
  // Subframes too (the CSP already refuses frames: frame-src 'none').
  contents.on('will-frame-navigate', (details) => stayHome(details, details.url));
  contents.on('will-attach-webview', (event) => event.preventDefault());
}

/** Before the app is ready: every renderer sandboxed, whatever its options say, and every web contents guarded. */
export function secureApp(app: GuardedApp): void {
  app.enableSandbox();
  app.on('web-contents-created', (_event, contents) => guardWebContents(contents));
}

/**
 * The session's permissions: none. Camera, microphone, notifications,
 * geolocation, clipboard reads, fullscreen, USB/HID/serial devices, … —
 * requests are denied and checks answer no; the page needs none of them.
 */
export function secureSession(session: GuardedSession): void {
  session.setPermissionRequestHandler((_contents, _permission, callback) => callback(false));
  session.setPermissionCheckHandler(() => false);
  session.setDevicePermissionHandler(() => false);
}

/** The part of Electron's WebFrameMain the IPC check reads. */
export interface SenderFrame {
  url: string;
  /** null for a top-level frame. */
  parent: unknown;
}

/**
 * Why an IPC call from `frame` is refused, or null when it comes from the
 * app's own page: the top frame of a page at app://streamscope. Anything
 * else — a frame gone by the time the call is handled (null), a subframe,
 * a page of another origin (had navigation been escaped) — gets nothing.
 */
export function ipcSenderRefusal(frame: SenderFrame | null | undefined): string | null {
  if (!frame) return 'IPC from a frame that no longer exists refused';
  if (!isAppUrl(frame.url)) return `IPC from ${frame.url || 'a frame without a URL'} refused: only the app's page (app://streamscope) may call`;
  if (frame.parent !== null) return `IPC from a subframe (${frame.url}) refused: only the app's top frame may call`;
  return null;
}
