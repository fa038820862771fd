// The window's security settings, the CSP, and the app:// protocol's
// confinement to the renderer's build folder.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appProtocolResponse, resolveAppFile } from '../../app/protocol.ts';
import { APP_ENTRY_URL, browserWindowOptions, CONTENT_SECURITY_POLICY, isAppUrl } from '../../app/window-options.ts';

describe('BrowserWindow options', () => {
  // Electron's security checklist (electronjs.org/docs/latest/tutorial/security),
  // as properties of the page's webPreferences: each protection is on — set
  // explicitly, not left to a default that has changed between releases —
  // and nothing that would open a hole is.
  const prefs = browserWindowOptions('/somewhere/preload.cjs').webPreferences as Record<string, unknown>;
  it.each([
    ['contextIsolation', '3. Enable context isolation'],
    ['sandbox', '4. Enable process sandboxing'],
    ['webSecurity', '6. Do not disable webSecurity'],
  ])('%s is on (%s)', (key) => {
    expect(prefs[key]).toBe(true);
  });

  it('no preference gives the page Node, insecure content, experimental features or webviews (checklist 2, 8, 9, 10, 12)', () => {
    const opensAHole = /^nodeIntegration|^allowRunningInsecureContent$|^experimentalFeatures$|^enableBlinkFeatures$|^webviewTag$|^navigateOnDragDrop$/;
    const holes = Object.entries(prefs).filter(([k, v]) => opensAHole.test(k) && v !== false);
    expect(holes).toEqual([]);
    // Node integration is off in every kind of frame and worker, not only the top one.
    expect(
      Object.keys(prefs)
        .filter((k) => k.startsWith('nodeIntegration'))
        .sort(),
    ).toEqual(['nodeIntegration', 'nodeIntegrationInSubFrames', 'nodeIntegrationInWorker']);
  });

  it('the preload is the one given, and the only script with privileges', () => {
    expect(prefs.preload).toBe('/somewhere/preload.cjs');
  });
});

describe('Content-Security-Policy', () => {
  const directives = new Map(
    CONTENT_SECURITY_POLICY.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name!, values];
    }),
  );
  it("default-src 'self', nothing unsafe, nothing remote", () => {
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe-inline|unsafe-eval|unsafe-hashes|wasm-unsafe-eval|\*|https?:/);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  });
});

describe('navigation', () => {
  it('only the app origin counts as the app', () => {
    expect(isAppUrl(APP_ENTRY_URL)).toBe(true);
    expect(isAppUrl('app://streamscope/assets/index.js')).toBe(true);
    for (const u of ['https://example.com/', 'file:///etc/passwd', 'app://evil/index.html', 'http://streamscope/', 'javascript:alert(1)', 'not a url', '']) {
      expect(isAppUrl(u), u).toBe(false);
    }
  });
});

describe('app:// protocol', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-app-proto-'));
  fs.mkdirSync(path.join(root, 'assets'));
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>StreamScope</title>');
  fs.writeFileSync(path.join(root, 'assets/index.js'), 'console.log(1)');

  it('maps URLs under the app origin to files under the root, and nothing outside it', () => {
    expect(resolveAppFile('app://streamscope/', root)).toBe(path.join(root, 'index.html'));
    expect(resolveAppFile('app://streamscope/assets/index.js', root)).toBe(path.join(root, 'assets/index.js'));
    for (const u of [
      'app://streamscope/../../etc/passwd',
      'app://streamscope/%2e%2e/%2e%2e/etc/passwd',
      'app://streamscope/assets/..%2f..%2f..%2fetc%2fpasswd',
      'app://streamscope/%00index.html',
      'app://streamscope/..%5c..%5cetc',
      'app://other/index.html',
      'file:///etc/passwd',
    ]) {
      const f = resolveAppFile(u, root);
      expect(f === null || f.startsWith(root + path.sep), u).toBe(true);
    }
    expect(resolveAppFile('app://other/index.html', root)).toBeNull();
  });

  it('answers with the file, its type and the CSP; 404 for anything else', async () => {
    const ok = await appProtocolResponse('app://streamscope/index.html', root);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/html/);
    expect(ok.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(await ok.text()).toContain('<title>StreamScope</title>');
    const js = await appProtocolResponse('app://streamscope/assets/index.js', root);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    const missing = await appProtocolResponse('app://streamscope/nope.js', root);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect((await appProtocolResponse('app://streamscope/../../../../etc/passwd', root)).status).toBe(404);
  });
});

describe('preload', () => {
  // The sandboxed preload may only require `electron` at run time; the rest
  // must be bundled plain data (apiMethods) or type-only imports.
  it('imports nothing at run time but electron, the API list and the channel names', () => {
    const src = fs.readFileSync(path.resolve(import.meta.dirname, '../../app/preload.ts'), 'utf8');
    const imports = [...src.matchAll(/^import\s+(type\s+)?[^'"]*from\s+'([^']+)';/gm)].filter((m) => !m[1]).map((m) => m[2]);
    expect(imports.sort()).toEqual(['../profiler/contract/api.ts', './channels.ts', 'electron']);
    for (const file of ['../../app/channels.ts', '../../profiler/contract/api.ts']) {
      const s = fs.readFileSync(path.resolve(import.meta.dirname, file), 'utf8');
      expect([...s.matchAll(/^import\s+(?!type\s)/gm)], file).toHaveLength(0);
    }
  });
});
