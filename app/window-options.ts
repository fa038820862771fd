// Security settings of the desktop window, as plain data so a test can check
// them without Electron. The page is untrusted in the sense that matters: it
// renders strings taken from recordings (kernel names, NVTX ranges, commands)
// that any profiled program chose. So it runs with no Node, in Chromium's
// sandbox, isolated from the preload, and may load nothing but the app's own
// files (see ARCHITECTURE.md and ../shared/STYLE.md: VS Code and Signal).
import type { BrowserWindowConstructorOptions } from 'electron';
import { contentSecurityPolicy } from '../profiler/contract/content-security-policy.ts';

/** The custom scheme that serves renderer/dist (a standard, secure origin: 'self' means it). */
export const APP_SCHEME = 'app';
export const APP_HOST = 'streamscope';
export const APP_ORIGIN = `${APP_SCHEME}://${APP_HOST}`;
export const APP_ENTRY_URL = `${APP_ORIGIN}/index.html`;

/**
 * How app:// is registered (protocol.registerSchemesAsPrivileged): a
 * standard scheme (an origin of its own: 'self' in the CSP means the app's
 * files, not every file on disk as under file://), secure (a secure
 * context), fetch for the page's own files, the code cache. Nothing that
 * would loosen the page's limits: no bypassCSP, no CORS, no service workers,
 * no streaming of media from it.
 */
export const APP_SCHEME_PRIVILEGES = { standard: true, secure: true, supportFetchAPI: true, codeCache: true } as const;

/**
 * Content-Security-Policy sent with every file of the UI: the page's one
 * policy (profiler/contract/content-security-policy.ts, the same as browser
 * mode's), for a page that reaches the API over IPC.
 */
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy('ipc');

/**
 * The subset of Electron's BrowserWindowConstructorOptions that we set.
 * Kept structurally compatible so main.ts passes it straight through.
 */
export interface WindowOptions {
  width: number;
  height: number;
  minWidth: number;
  minHeight: number;
  title: string;
  show: boolean;
  backgroundColor: string;
  webPreferences: {
    preload: string;
    contextIsolation: true;
    sandbox: true;
    nodeIntegration: false;
    nodeIntegrationInWorker: false;
    nodeIntegrationInSubFrames: false;
    webSecurity: true;
    allowRunningInsecureContent: false;
    webviewTag: false;
    experimentalFeatures: false;
    navigateOnDragDrop: false;
    spellcheck: false;
  };
}

export function browserWindowOptions(preloadPath: string): WindowOptions {
  return {
    width: 1400,
    height: 900,
    minWidth: 800,
    minHeight: 500,
    title: 'StreamScope',
    // Shown on 'ready-to-show' so the user never sees an empty white frame.
    show: false,
    backgroundColor: '#1e1e1e',
    webPreferences: {
      preload: preloadPath,
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      webviewTag: false,
      experimentalFeatures: false,
      // A file dropped outside the renderer's drop zone must not replace the
      // app with a file:// page; the renderer handles drops itself.
      navigateOnDragDrop: false,
      spellcheck: false,
    },
  } satisfies BrowserWindowConstructorOptions;
}

/** Whether the page may navigate to `url`: only within the app's own origin. */
export function isAppUrl(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === `${APP_SCHEME}:` && u.host === APP_HOST;
  } catch {
    return false;
  }
}
