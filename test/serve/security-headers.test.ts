// Every answer browser mode gives carries the page's Content-Security-Policy
// and the headers beside it (nosniff, no referrer, no caching, same-origin
// resources): static files and their errors, API results and errors, the
// Host refusal, and what Node itself answers (a request it cannot parse,
// headers too large) — Electron's checklist item 7 for browser mode. The
// same page in Chromium: every response it loads carries the policy, and
// an inline script put into it is refused.
import fs from 'node:fs';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { launch, serve } from '../e2e/browser.ts';
import { rawRequest } from '../helpers/raw-http.ts';

const recording = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');

const EXPECTED = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
};

describe('the security headers on every answer', () => {
  let dir: string;
  let server: RunningServer;
  let id: string;
  beforeAll(async () => {
    dir = tempDir('headers');
    fs.mkdirSync(path.join(dir, 'assets'));
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>StreamScope</title>');
    fs.writeFileSync(path.join(dir, 'assets/app.js'), 'console.log(1)');
    server = await startServer({ files: [recording], port: 0, staticDir: dir });
    const r = await fetch(`http://127.0.0.1:${server.port}/api/listRecordings`, {
      method: 'POST',
      headers: { 'x-streamscope-token': server.token },
      body: '{"args":[]}',
    });
    id = ((await r.json()) as { recordingId: string }[])[0]!.recordingId;
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const host = () => `host: 127.0.0.1:${server.port}`;
  const post = (method: string, body: string, token = server.token) =>
    `POST /api/${method} HTTP/1.1\r\n${host()}\r\nx-streamscope-token: ${token}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}`;
  const cases: [string, () => [string, string?], number][] = [
    ['the page', () => [`GET / HTTP/1.1\r\n${host()}`], 200],
    ['a script', () => [`GET /assets/app.js HTTP/1.1\r\n${host()}`], 200],
    ['HEAD', () => [`HEAD / HTTP/1.1\r\n${host()}`], 200],
    ['the icon', () => [`GET /favicon.ico HTTP/1.1\r\n${host()}`], 204],
    ['a missing file', () => [`GET /nope.js HTTP/1.1\r\n${host()}`], 404],
    ['a path out of the folder', () => [`GET /..%2f..%2fetc/passwd HTTP/1.1\r\n${host()}`], 403],
    ['a bad escape', () => [`GET /%E0%A4%A HTTP/1.1\r\n${host()}`], 400],
    ['a method not allowed', () => [`DELETE / HTTP/1.1\r\n${host()}`], 405],
    ['an API answer', () => [post('summary', JSON.stringify({ args: [id] })), JSON.stringify({ args: [id] })], 200],
    [
      'an API answer in binary',
      () => {
        const body = JSON.stringify({ args: [id, { rows: ['stream:1'], startNs: 0, endNs: 1e9, resolutionNs: 1000 }] });
        return [`${post('window', body)}\r\naccept: application/x-streamscope-window`, body];
      },
      200,
    ],
    ['no token', () => [post('summary', '{"args":[]}', 'nope'), '{"args":[]}'], 403],
    ['bad arguments', () => [post('summary', '{"args":[1]}'), '{"args":[1]}'], 400],
    ['not JSON', () => [post('summary', '{'), '{'], 400],
    ['an unknown recording', () => [post('summary', '{"args":["0123456789abcdef"]}'), '{"args":["0123456789abcdef"]}'], 404],
    ['a refused method', () => [post('recordStatus', '{"args":["1"]}'), '{"args":["1"]}'], 403],
    ['another host name', () => [`GET / HTTP/1.1\r\nhost: evil.example`], 421],
    ["Node's own: a request it cannot parse", () => ['GET / HTTP/1.1\r\nhost 127.0.0.1'], 400],
    ["Node's own: headers too large", () => [`GET / HTTP/1.1\r\n${host()}\r\nx-big: ${'a'.repeat(20_000)}`], 431],
    // Found by test/fuzz/targets/http-requests.ts (issue 27): Node answered these itself, bare.
    ['an HTTP/1.1 request without Host', () => ['GET / HTTP/1.1'], 421],
    ['an expectation other than 100-continue', () => [`GET / HTTP/1.1\r\n${host()}\r\nexpect: 200-ok`], 417],
  ];

  it.each(cases)('%s (%#)', async (_name, request, status) => {
    const [head, body] = request();
    const r = await rawRequest(server.port, head, body);
    expect(r.status).toBe(status);
    for (const [k, v] of Object.entries(EXPECTED)) expect(r.headers[k], k).toBe(v);
  });
});

describe('the page in Chromium', () => {
  let browser: Browser;
  let server: RunningServer;
  beforeAll(async () => {
    [browser, server] = await Promise.all([launch(), serve([recording])]);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await browser?.close();
  });

  it('every response it loads carries the policy, and the policy holds: an inline script is refused', async () => {
    const page = await browser.newPage();
    const responses: { url: string; status: number; csp: string | undefined }[] = [];
    page.on('response', (r) => responses.push({ url: r.url(), status: r.status(), csp: r.headers()['content-security-policy'] }));
    await page.goto(server.url);
    await page.waitForSelector('[data-testid="timeline-canvas"]', { timeout: 60_000 });
    await page.waitForFunction(() => (window.__streamscope?.dataFrames ?? 0) > 0);
    // A missing file and an API error, from the page itself.
    await page.evaluate(async () => {
      await fetch('does-not-exist.js');
      await fetch('api/summary', { method: 'POST', body: '{"args":[]}' });
    });
    expect(responses.length).toBeGreaterThan(3);
    const statuses = new Set(responses.map((r) => r.status));
    for (const status of [200, 403, 404]) expect(statuses.has(status), `a ${status} among ${[...statuses].join(', ')}`).toBe(true);
    for (const r of responses) expect(r.csp, `${r.status} ${r.url}`).toBe(CONTENT_SECURITY_POLICY);
    // Injected markup (what a kernel name would have to become): its inline script does not run.
    const ran = await page.evaluate(async () => {
      const violations: string[] = [];
      document.addEventListener('securitypolicyviolation', (e) => violations.push(e.violatedDirective));
      const s = document.createElement('script');
      s.textContent = 'window.__inlineRan = true';
      document.body.appendChild(s);
      await new Promise((r) => setTimeout(r, 100));
      return { ran: (window as unknown as { __inlineRan?: boolean }).__inlineRan === true, violations };
    });
    expect(ran.ran).toBe(false);
    expect(ran.violations.some((d) => d.startsWith('script-src'))).toBe(true);
    await page.close();
  });
});
