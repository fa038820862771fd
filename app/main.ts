// Electron main process: the window, its security, menus, dialogs and the IPC
// handlers. Everything with logic lives in plain modules beside this file
// (ipc.ts, record-jobs.ts, recent-files.ts, window-options.ts, protocol.ts,
// argv.ts, main-api.ts) and is tested under Node; this file is the glue that
// needs Electron itself. Built to app/dist/main.cjs (app/vite.config.ts).
import fs from 'node:fs';
import path from 'node:path';
import { app, BrowserWindow, dialog, ipcMain, Menu, protocol, session, type MenuItemConstructorOptions } from 'electron';
import type { OpenResult, RecordingHandle } from '../profiler/contract/api.ts';
import { VERSION } from '../profiler/contract/version.ts';
import { filesFromArgs, openModeFromArgs, userArgs } from './argv.ts';
import { EVENT_CHANNEL, type AppEvent } from './channels.ts';
import { registerApiHandlers, toApiError } from './ipc.ts';
import { createMainApi } from './main-api.ts';
import { appProtocolResponse } from './protocol.ts';
import { QueryClient } from '../profiler/query/query-client.ts';
import { RecentFiles } from './recent-files.ts';
import { probeGpu, RecordJobs, type CliInvocation } from './record-jobs.ts';
import { secureApp, secureSession } from './security.ts';
import { APP_ENTRY_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, browserWindowOptions } from './window-options.ts';

// app/dist/main.cjs → the app root (the repository, or resources/app.asar).
const distDir = __dirname;
const appRoot = path.resolve(distDir, '..', '..');
const rendererDir = path.join(appRoot, 'renderer', 'dist');

// A packaged app carries the native parts as extraResources
// (electron-builder.yml); profiler/native/paths.ts finds them through these.
if (app.isPackaged) {
  const native = path.join(process.resourcesPath, 'native');
  process.env.STREAMSCOPE_COLLECTOR ??= path.join(native, 'libstreamscope_collector.so');
  process.env.STREAMSCOPE_RUNNER ??= path.join(native, 'streamscope-runner');
  process.env.STREAMSCOPE_ADDON_PATH ??= path.join(native, 'streamscope_addon.node');
}

// `streamscope record` and `devices` run as Node processes: Electron's own
// binary in Node mode, on the bundled CLI (Electron may not strip TypeScript).
const cli: CliInvocation = {
  command: process.execPath,
  args: [path.join(distDir, 'streamscope-cli.cjs')],
  env: { ELECTRON_RUN_AS_NODE: '1' },
};

protocol.registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: APP_SCHEME_PRIVILEGES }]);
// Every renderer sandboxed, every web contents kept on the app's origin (security.ts).
secureApp(app);

function main(): void {
  const userData = app.getPath('userData');
  const recent = new RecentFiles(userData);
  const query = new QueryClient({ workerPath: path.join(distDir, 'query-worker.cjs') });
  const mainWindow = new MainWindow();
  const jobs = new RecordJobs({
    outputDir: path.join(userData, 'recordings'),
    cli,
    cwd: app.getPath('home'),
    open: (file) => api.openFile(file),
  });
  const api = createMainApi({
    query,
    recent,
    jobs,
    version: VERSION,
    canRecord: () => probeGpu(cli),
    showOpenDialog: () => openRecordingDialog(mainWindow.win),
    showSaveDialog: (defaultName) => exportTraceDialog(mainWindow.win, defaultName),
    onOpened: (recording: RecordingHandle) => {
      mainWindow.send({ type: 'recording-opened', recording });
      buildMenu();
    },
    jobCacheDir: path.join(userData, 'jobs'),
  });

  const openFailed = (err: unknown) => mainWindow.send({ type: 'open-failed', error: toApiError(err) });
  /** Files from outside the page (command line, second instance, menu): what failed goes to the page as events. */
  const reportFailed = (result: OpenResult | null) => {
    for (const f of result?.failed ?? []) mainWindow.send({ type: 'open-failed', error: { code: f.code, message: f.message, file: f.file } });
    if (result?.failed.length) buildMenu();
  };
  const openFiles = async (args: string[], cwd: string) => {
    const files = filesFromArgs(args, cwd);
    if (files.length === 0) return;
    try {
      reportFailed(await api.openPaths(files, openModeFromArgs(args)));
    } catch (err) {
      openFailed(err);
    }
  };
  function buildMenu(): void {
    const menu = applicationMenu(recent.list(), {
      open: () => void api.showOpenDialog().then(reportFailed).catch(openFailed),
      openRecent: (file) => void api.openFile(file).catch(openFailed),
      clearRecent: () => {
        recent.clear();
        buildMenu();
      },
      pageAction: (action) => mainWindow.send({ type: 'menu', action }),
    });
    Menu.setApplicationMenu(Menu.buildFromTemplate(menu));
  }

  // IPC: one handler per API method; only the app's own page may call (ipc.ts, security.ts).
  registerApiHandlers(ipcMain, api);

  app.on('second-instance', (_e, argv, cwd) => {
    void openFiles(userArgs(argv, app.isPackaged), cwd);
    mainWindow.toFront();
  });
  app.on('window-all-closed', () => app.quit());
  stopRecordingsBeforeQuit(jobs, query);

  void app.whenReady().then(() => {
    // Nothing from outside: no permissions (camera, notifications, devices, ...),
    // and only app:// is ever loaded (the window cannot navigate elsewhere).
    secureSession(session.defaultSession);
    protocol.handle(APP_SCHEME, (request) => appProtocolResponse(request.url, rendererDir));
    buildMenu();
    mainWindow.open();
    void openFiles(userArgs(process.argv, app.isPackaged), process.cwd());
  });
}

/**
 * The one window and the events for its page: sent once the page has
 * loaded, queued until then (a file opened from the command line opens
 * before the page can hear of it), in order.
 */
class MainWindow {
  win: BrowserWindow | null = null;
  private pageReady = false;
  private readonly queued: AppEvent[] = [];

  send(event: AppEvent): void {
    if (this.win && this.pageReady) this.win.webContents.send(EVENT_CHANNEL, event);
    else this.queued.push(event);
  }

  /** Creates the window and loads the app's page into it. */
  open(): void {
    const win = new BrowserWindow(browserWindowOptions(path.join(distDir, 'preload.cjs')));
    this.win = win;
    win.once('ready-to-show', () => this.win?.show());
    win.webContents.on('did-finish-load', () => {
      this.pageReady = true;
      for (const e of this.queued.splice(0)) this.win?.webContents.send(EVENT_CHANNEL, e);
    });
    win.on('closed', () => {
      this.win = null;
      this.pageReady = false;
    });
    if (!fs.existsSync(path.join(rendererDir, 'index.html'))) {
      dialog.showErrorBox('StreamScope', `The user interface is not built: ${rendererDir}/index.html is missing (run \`npm run build:renderer\`).`);
    }
    void win.loadURL(APP_ENTRY_URL);
  }

  /** Restored and focused (a second `streamscope open` while the app runs). */
  toFront(): void {
    if (!this.win) return;
    if (this.win.isMinimized()) this.win.restore();
    this.win.focus();
  }
}

/** File ▸ Open…: the recordings picked, null if cancelled. */
async function openRecordingDialog(win: BrowserWindow | null): Promise<string[] | null> {
  const options: Electron.OpenDialogOptions = {
    title: 'Open recording',
    properties: ['openFile', 'multiSelections'],
    filters: [
      { name: 'StreamScope recordings', extensions: ['sqlite', 'db'] },
      { name: 'All files', extensions: ['*'] },
    ],
  };
  const r = win ? await dialog.showOpenDialog(win, options) : await dialog.showOpenDialog(options);
  return r.canceled ? null : r.filePaths;
}

/** Where to export a Chrome trace, null if cancelled. */
async function exportTraceDialog(win: BrowserWindow | null, defaultName: string): Promise<string | null> {
  const options: Electron.SaveDialogOptions = {
    title: 'Export as Chrome trace (Perfetto UI, chrome://tracing)',
    defaultPath: path.join(app.getPath('documents'), defaultName),
    filters: [{ name: 'Chrome trace JSON', extensions: ['json'] }],
    // The export replaces a file the user picks (macOS and Windows always ask; Linux only when told to).
    properties: ['showOverwriteConfirmation'],
  };
  const r = win ? await dialog.showSaveDialog(win, options) : await dialog.showSaveDialog(options);
  return r.canceled || !r.filePath ? null : r.filePath;
}

/** What the menu's items do. */
interface MenuActions {
  open(): void;
  openRecent(file: string): void;
  clearRecent(): void;
  /** A menu item the page carries out (AppEvent 'menu'). */
  pageAction(action: 'record' | 'export'): void;
}

/** The application menu: File (with the recent files), Edit, View, Help. */
function applicationMenu(recentFiles: string[], actions: MenuActions): MenuItemConstructorOptions[] {
  return [fileMenu(recentFiles, actions), { role: 'editMenu' }, viewMenu(), helpMenu()];
}

function fileMenu(recentFiles: string[], actions: MenuActions): MenuItemConstructorOptions {
  return {
    label: '&File',
    submenu: [
      { label: 'Open…', accelerator: 'CmdOrCtrl+O', click: () => actions.open() },
      {
        label: 'Open Recent',
        enabled: recentFiles.length > 0,
        submenu: [
          ...recentFiles.map((f): MenuItemConstructorOptions => ({ label: f, click: () => actions.openRecent(f) })),
          { type: 'separator' },
          { label: 'Clear Recent', click: () => actions.clearRecent() },
        ],
      },
      { label: 'Record…', accelerator: 'CmdOrCtrl+Shift+R', click: () => actions.pageAction('record') },
      // The page knows which recording is shown: it asks for exportTrace(id).
      { label: 'Export as Chrome trace…', accelerator: 'CmdOrCtrl+E', click: () => actions.pageAction('export') },
      { type: 'separator' },
      { role: 'quit' },
    ],
  };
}

/** Zoom and full screen; reload and the developer tools in a source checkout only. */
function viewMenu(): MenuItemConstructorOptions {
  return {
    label: '&View',
    submenu: [
      { role: 'resetZoom' },
      { role: 'zoomIn' },
      { role: 'zoomOut' },
      { type: 'separator' },
      { role: 'togglefullscreen' },
      ...(app.isPackaged ? [] : [{ type: 'separator' } as const, { role: 'reload' } as const, { role: 'toggleDevTools' } as const]),
    ],
  };
}

function helpMenu(): MenuItemConstructorOptions {
  return {
    role: 'help',
    submenu: [
      {
        label: 'About StreamScope',
        click: () =>
          void dialog.showMessageBox({
            title: 'StreamScope',
            message: `StreamScope ${app.getVersion()}`,
            detail: 'Are my CUDA streams really running concurrently, and if not, why not?',
          }),
      },
    ],
  };
}

/** On quitting: every recording job under way stopped and the query worker closed first, then the quit carried on. */
function stopRecordingsBeforeQuit(jobs: RecordJobs, query: QueryClient): void {
  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting) return;
    quitting = true;
    event.preventDefault();
    void jobs.stopAll().finally(() => {
      query.close();
      app.quit();
    });
  });
}

// One instance: `streamscope open FILE` while the app runs opens FILE there.
// Last in the file: main() uses the classes above, which exist only once their declarations have run.
if (!app.requestSingleInstanceLock()) {
  app.quit();
} else {
  main();
}
