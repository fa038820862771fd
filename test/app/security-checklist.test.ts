// Electron's security checklist (electronjs.org/docs/latest/tutorial/security),
// item by item, on the main process's own code run as plain modules
// (app/security.ts, app/ipc.ts, app/window-options.ts, the preload under a
// stand-in for `electron`, the packaging's fuses through electron-builder's
// own code). Each test names its item; app/README.md's table lists them
// with the tests of test/app/security.test.ts (window options, CSP, app://)
// and test/serve/security-headers.test.ts (browser mode).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { apiMethods, type StreamScopeApi } from '../../profiler/contract/api.ts';
import { channelFor, registerApiHandlers, type IpcMainLike, type IpcResult } from '../../app/ipc.ts';
import { guardWebContents, ipcSenderRefusal, secureApp, secureSession, type GuardedContents, type Preventable } from '../../app/security.ts';
import { APP_ENTRY_URL, APP_SCHEME, APP_SCHEME_PRIVILEGES, CONTENT_SECURITY_POLICY } from '../../app/window-options.ts';

const root = path.resolve(import.meta.dirname, '../..');
const source = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** A WebContents stand-in: the handlers secureApp installs, callable. */
function fakeContents() {
  const listeners = new Map<string, ((...a: unknown[]) => void)[]>();
  let openHandler: ((d: { url: string }) => { action: string }) | null = null;
  const contents: GuardedContents = {
    setWindowOpenHandler: (h) => void (openHandler = h),
    on: (event: string, listener: (...a: never[]) => void) => {
      listeners.set(event, [...(listeners.get(event) ?? []), listener as (...a: unknown[]) => void]);
      return contents;
    },
  };
  /** Emits `event`; whether a listener prevented it. */
  const emit = (event: string, ...args: unknown[]) => {
    let prevented = false;
    const e: Preventable & { url?: string } = { preventDefault: () => void (prevented = true) };
    if (event === 'will-frame-navigate') Object.assign(e, { url: args[0] });
    for (const l of listeners.get(event) ?? []) l(e, ...(event === 'will-frame-navigate' ? [] : args));
    return prevented;
  };
  return { contents, emit, open: (url: string) => openHandler?.({ url }) ?? null, listeners };
}

describe("Electron's security checklist", () => {
  it('1. only secure content: the window loads app:// alone, and its policy lets nothing remote in', () => {
    expect(new URL(APP_ENTRY_URL).protocol).toBe(`${APP_SCHEME}:`);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/https?:|wss?:|\*|data:[^;]*script/);
    // main.ts loads nothing else: one loadURL, of the app's entry.
    const main = source('app/main.ts');
    expect([...main.matchAll(/\.load(URL|File)\(([^)]*)\)/g)].map((m) => m[2])).toEqual(['APP_ENTRY_URL']);
  });

  it('4. process sandboxing: every renderer, whatever its options (app.enableSandbox before any window)', () => {
    const calls: string[] = [];
    secureApp({ enableSandbox: () => calls.push('enableSandbox'), on: (event: string) => (calls.push(`on ${event}`), undefined) });
    expect(calls).toEqual(['enableSandbox', 'on web-contents-created']);
    // main.ts calls it at load, before app.whenReady (before any window).
    const main = source('app/main.ts');
    expect(main.indexOf('secureApp(app);')).toBeGreaterThan(-1);
    expect(main.indexOf('secureApp(app);')).toBeLessThan(main.indexOf('app.whenReady()'));
  });

  it('5. permission requests: every one denied, every check answered no, no device granted', () => {
    let request: Parameters<Parameters<typeof secureSession>[0]['setPermissionRequestHandler']>[0] | null = null;
    let check: ((...a: never[]) => boolean) | null = null;
    let device: ((...a: never[]) => boolean) | null = null;
    secureSession({
      setPermissionRequestHandler: (h) => void (request = h),
      setPermissionCheckHandler: (h) => void (check = h),
      setDevicePermissionHandler: (h) => void (device = h),
    });
    for (const permission of ['media', 'geolocation', 'notifications', 'clipboard-read', 'fullscreen', 'openExternal', 'pointerLock', 'hid', 'serial', 'usb']) {
      const granted: boolean[] = [];
      request!({}, permission, (g) => granted.push(g), { requestingUrl: APP_ENTRY_URL });
      expect(granted, permission).toEqual([false]);
      expect((check as unknown as (...a: unknown[]) => boolean)({}, permission, 'app://streamscope', {}), permission).toBe(false);
    }
    expect((device as unknown as (d: unknown) => boolean)({ deviceType: 'usb', origin: 'app://streamscope' })).toBe(false);
    expect(source('app/main.ts')).toContain('secureSession(session.defaultSession);');
  });

  it('11, 12. <webview>: none can be attached (allowpopups or any other option never reach one)', () => {
    const c = fakeContents();
    guardWebContents(c.contents);
    expect(c.emit('will-attach-webview', { allowpopups: 'on' }, { src: 'https://example.com/' })).toBe(true);
  });

  it('13. navigation: refused away from app://streamscope in every frame, by navigation or redirect', () => {
    const c = fakeContents();
    guardWebContents(c.contents);
    for (const event of ['will-navigate', 'will-redirect', 'will-frame-navigate']) {
      for (const url of [
        'https://evil.example/',
        'http://127.0.0.1:8080/',
        'file:///etc/passwd',
        'app://other/index.html',
        'javascript:alert(1)',
        'data:text/html,x',
      ]) {
        expect(c.emit(event, url), `${event} ${url}`).toBe(true);
      }
      expect(c.emit(event, 'app://streamscope/index.html'), event).toBe(false);
    }
  });

  it('14. new windows: denied, whatever they would show (window.open, target=_blank, middle click)', () => {
    const c = fakeContents();
    guardWebContents(c.contents);
    for (const url of ['https://evil.example/', 'app://streamscope/index.html', 'about:blank', '']) expect(c.open(url)).toEqual({ action: 'deny' });
  });

  it('and every web contents the app creates gets those guards (web-contents-created)', () => {
    let created: ((e: unknown, contents: GuardedContents) => void) | null = null;
    secureApp({ enableSandbox: () => {}, on: (_event: string, l: (e: unknown, c: GuardedContents) => void) => void (created = l) });
    const c = fakeContents();
    created!({}, c.contents);
    expect([...c.listeners.keys()].sort()).toEqual(['will-attach-webview', 'will-frame-navigate', 'will-navigate', 'will-redirect']);
    expect(c.open('https://evil.example/')).toEqual({ action: 'deny' });
  });

  it("15. shell.openExternal: never called, nothing from Electron's shell used anywhere", () => {
    const offenders: string[] = [];
    for (const dir of ['app', 'renderer/src', 'profiler']) {
      for (const e of fs.readdirSync(path.join(root, dir), { recursive: true, withFileTypes: true })) {
        if (!e.isFile() || !/\.(ts|tsx)$/.test(e.name)) continue;
        const file = path.join(e.parentPath, e.name);
        const text = fs.readFileSync(file, 'utf8');
        if (/openExternal|\bshell\b[^'\n]*from 'electron'|import\s*\{[^}]*\bshell\b[^}]*\}\s*from\s*'electron'/.test(text))
          offenders.push(path.relative(root, file));
      }
    }
    expect(offenders).toEqual([]);
  });

  it('16. a current Electron: pinned exactly, and the one installed is the one pinned', () => {
    const pkg = JSON.parse(source('package.json')) as { devDependencies: Record<string, string> };
    const pinned = pkg.devDependencies.electron!;
    expect(pinned).toMatch(/^\d+\.\d+\.\d+$/);
    const installed = JSON.parse(source('node_modules/electron/package.json')) as { version: string };
    expect(installed.version).toBe(pinned);
  });

  describe('17. the sender of every IPC message', () => {
    const handlers = new Map<string, Parameters<IpcMainLike['handle']>[1]>();
    const calls: string[] = [];
    const api = Object.fromEntries(apiMethods.map((m) => [m, async () => (calls.push(m), `${m} answered`)])) as unknown as StreamScopeApi;
    registerApiHandlers({ handle: (channel, listener) => void handlers.set(channel, listener) }, api);
    const call = (channel: string, frame: { url: string; parent: unknown } | null, ...args: unknown[]) =>
      Promise.resolve(handlers.get(channel)!({ senderFrame: frame }, ...args)) as Promise<IpcResult>;

    it('one handler per API method, none other', () => {
      expect([...handlers.keys()].sort()).toEqual(apiMethods.map(channelFor).sort());
    });

    it("the app's top frame is answered", async () => {
      expect(await call(channelFor('capabilities'), { url: 'app://streamscope/index.html', parent: null })).toEqual({
        ok: true,
        value: 'capabilities answered',
      });
    });

    it.each([
      ['another origin', { url: 'https://evil.example/', parent: null }, /IPC from https:\/\/evil\.example\/ refused/],
      ['a file:// page', { url: 'file:///tmp/x.html', parent: null }, /IPC from file:\/\/\/tmp\/x\.html refused/],
      ['another app:// host', { url: 'app://other/index.html', parent: null }, /refused/],
      ['a subframe of the app', { url: 'app://streamscope/frame.html', parent: {} }, /subframe .* refused/],
      ['a frame already gone', null, /no longer exists/],
      ['a frame without a URL', { url: '', parent: null }, /a frame without a URL refused/],
    ])('%s is refused before anything is done', async (_name, frame, message) => {
      calls.length = 0;
      const r = await call(channelFor('summary'), frame, 'abc');
      expect(r).toEqual({ ok: false, error: { code: 'forbidden', message: expect.stringMatching(message) } });
      expect(calls).toEqual([]);
    });

    it('ipcSenderRefusal is the one check main.ts relies on', () => {
      expect(ipcSenderRefusal({ url: 'app://streamscope/', parent: null })).toBeNull();
      expect(source('app/main.ts')).toContain('registerApiHandlers(ipcMain, api);');
      expect(source('app/main.ts')).not.toMatch(/ipcMain\.(handle|on)\(/);
    });
  });

  it("18. no file://: a standard, secure custom scheme, without privileges that would loosen the page's limits", () => {
    expect(APP_SCHEME).not.toBe('file');
    expect(APP_SCHEME_PRIVILEGES).toEqual({ standard: true, secure: true, supportFetchAPI: true, codeCache: true });
    expect(source('app/main.ts')).toContain('registerSchemesAsPrivileged([{ scheme: APP_SCHEME, privileges: APP_SCHEME_PRIVILEGES }])');
    expect(source('app/main.ts')).not.toMatch(/file:\/\/|loadFile\(/);
  });

  describe('19. fuses', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-fuses-'));
    afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

    it("electron-builder.yml's fuses, flipped by electron-builder's own code on Electron's fuse wire", async () => {
      // The configuration as electron-builder reads and validates it (its package entry first: its modules import each other in a cycle).
      const { PlatformPackager } = (await import('app-builder-lib')) as unknown as {
        PlatformPackager: { prototype: { generateFuseConfig(fuses: unknown): Promise<Record<string, unknown>> } };
      };
      const { getConfig, validateConfiguration } = (await import('app-builder-lib/out/util/config/config.js')) as unknown as {
        getConfig: (projectDir: string, configPath: string | null, configFromOptions: null) => Promise<Record<string, unknown>>;
        validateConfiguration: (config: unknown, debugLogger: unknown) => Promise<void>;
      };
      const { DebugLogger } = (await import('builder-util/out/DebugLogger.js')) as unknown as { DebugLogger: new (enabled: boolean) => unknown };
      const config = await getConfig(root, null, null);
      await validateConfiguration(config, new DebugLogger(false));
      // Its fuses as electron-builder turns them into @electron/fuses' configuration, flipped as it flips them.
      const fuseConfig = await PlatformPackager.prototype.generateFuseConfig.call(null, config.electronFuses);
      const { flipFuses, getCurrentFuseWire, FuseV1Options } = await import('@electron/fuses');
      // A binary holding Electron's fuse wire (sentinel, version 1, 8 fuses) at its defaults: RunAsNode on,
      // cookie encryption off, NODE_OPTIONS on, --inspect on, asar integrity off, only-asar off, browser snapshot off, file:// privileges on.
      const electron = path.join(dir, 'electron');
      fs.writeFileSync(
        electron,
        Buffer.concat([
          Buffer.alloc(64, 7),
          Buffer.from('dL7pKGdnNz796PbbjQWNKmHXBZaB9tsX'),
          Buffer.from([1, 8]),
          Buffer.from('10110001'),
          Buffer.alloc(64, 7),
        ]),
      );
      await flipFuses(electron, fuseConfig as never);
      const wire = await getCurrentFuseWire(electron);
      // A fuse is the byte '1' (on) or '0' (off).
      const on = (fuse: number) => (wire as unknown as Record<number, number>)[fuse] === '1'.charCodeAt(0);
      expect({
        runAsNode: on(FuseV1Options.RunAsNode),
        cookieEncryption: on(FuseV1Options.EnableCookieEncryption),
        nodeOptions: on(FuseV1Options.EnableNodeOptionsEnvironmentVariable),
        inspect: on(FuseV1Options.EnableNodeCliInspectArguments),
        asarIntegrity: on(FuseV1Options.EnableEmbeddedAsarIntegrityValidation),
        onlyAsar: on(FuseV1Options.OnlyLoadAppFromAsar),
        browserSnapshot: on(FuseV1Options.LoadBrowserProcessSpecificV8Snapshot),
        fileProtocolPrivileges: on(FuseV1Options.GrantFileProtocolExtraPrivileges),
      }).toEqual({
        // On by choice: the app runs its CLI and the live analysis as Node processes of its own binary (app/README.md).
        runAsNode: true,
        cookieEncryption: true,
        nodeOptions: false,
        inspect: false,
        asarIntegrity: true,
        onlyAsar: true,
        browserSnapshot: false,
        fileProtocolPrivileges: false,
      });
    });
  });

  describe('20. no Electron API for the page: the preload exposes one frozen object of API methods', () => {
    it('window.streamscope holds the API methods, pathForFile and onEvent; each method one invoke on its channel; no ipcRenderer, no event object', async () => {
      const exposed: [string, unknown][] = [];
      const invoked: unknown[][] = [];
      const ipcListeners: ((event: unknown, payload: unknown) => void)[] = [];
      vi.doMock('electron', () => ({
        contextBridge: { exposeInMainWorld: (key: string, value: unknown) => exposed.push([key, value]) },
        ipcRenderer: {
          invoke: async (...args: unknown[]) => (invoked.push(args), { ok: true, value: 'v' }),
          on: (_channel: string, l: (event: unknown, payload: unknown) => void) => ipcListeners.push(l),
          removeListener: () => {},
        },
        webUtils: { getPathForFile: () => '/a/dropped/file.sqlite' },
      }));
      try {
        await import('../../app/preload.ts');
      } finally {
        vi.doUnmock('electron');
      }
      expect(exposed.map(([k]) => k)).toEqual(['streamscope']);
      const api = exposed[0]![1] as Record<string, unknown>;
      expect(Object.isFrozen(api)).toBe(true);
      expect(Object.keys(api).sort()).toEqual([...apiMethods, 'onEvent', 'pathForFile'].sort());
      for (const v of Object.values(api)) expect(typeof v).toBe('function');
      expect(await (api.summary as (id: string) => Promise<unknown>)('abc')).toBe('v');
      expect(invoked).toEqual([['streamscope:summary', 'abc']]);
      // Events reach the page as their payload alone (no IPC event, no sender, no way back).
      const got: unknown[] = [];
      (api.onEvent as (l: (e: unknown) => void) => void)((e) => got.push(e));
      ipcListeners[0]!({ sender: 'the IPC event' }, { type: 'menu', action: 'record' });
      expect(got).toEqual([{ type: 'menu', action: 'record' }]);
      expect((api.pathForFile as (f: unknown) => string)({})).toBe('/a/dropped/file.sqlite');
    });
  });
});
