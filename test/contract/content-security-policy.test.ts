// The page's Content-Security-Policy (profiler/contract/content-security-policy.ts)
// as both modes send it: the desktop app's app:// protocol and browser
// mode's HTTP server. The same page runs in both, so they must send the same
// policy; the one directive allowed to differ is connect-src (the desktop
// page calls the API over IPC and connects nowhere, the browser page POSTs
// to its own origin).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appProtocolResponse } from '../../app/protocol.ts';
import { contentSecurityPolicy } from '../../profiler/contract/content-security-policy.ts';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';

function directives(policy: string): Map<string, string> {
  return new Map(
    policy.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name!, values.join(' ')];
    }),
  );
}

let dir: string;
let server: RunningServer;
beforeAll(async () => {
  dir = tempDir('csp');
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>StreamScope</title>');
  server = await startServer({ files: [], port: 0, staticDir: dir });
});
afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

describe('Content-Security-Policy', () => {
  it('both modes send the one policy, the same in every directive but connect-src', async () => {
    const app = (await appProtocolResponse('app://streamscope/index.html', dir)).headers.get('content-security-policy')!;
    const browser = (await fetch(new URL('/', server.url))).headers.get('content-security-policy')!;
    expect(app).toBe(contentSecurityPolicy('ipc'));
    expect(browser).toBe(contentSecurityPolicy('http'));

    const a = directives(app);
    const b = directives(browser);
    expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
    for (const [name, value] of a) if (name !== 'connect-src') expect(b.get(name), name).toBe(value);
    expect(a.get('connect-src')).toBe("'none'");
    expect(b.get('connect-src')).toBe("'self'");
  });

  it('lets the page load only its own files: nothing inline, no eval, nothing remote, no framing', () => {
    for (const transport of ['ipc', 'http'] as const) {
      const policy = contentSecurityPolicy(transport);
      const d = directives(policy);
      expect(policy).not.toMatch(/unsafe-|\*|https?:|blob:/);
      for (const name of ['default-src', 'script-src', 'style-src']) expect(d.get(name), name).toBe("'self'");
      for (const name of ['object-src', 'base-uri', 'form-action', 'frame-src', 'frame-ancestors']) expect(d.get(name), name).toBe("'none'");
    }
  });
});
