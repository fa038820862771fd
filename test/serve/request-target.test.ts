// A request target the URL parser refuses (`//[`, `http://[`, `//%zz`,
// `//a%00b`: issue 27) is answered 400 by the server's one guarded entry,
// before any Host or token check can matter, and the server goes on: such a
// request, which any web page can make with fetch(…, {mode: 'no-cors'}),
// ended the process once with an uncaught "Invalid URL".
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { rawRequest } from '../helpers/raw-http.ts';

const fixture = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');
let server: RunningServer;
beforeAll(async () => {
  server = await startServer({ files: [fixture], port: 0, staticDir: path.dirname(fixture) });
});
afterAll(async () => {
  await server?.close();
});

const listRecordings = () =>
  fetch(`http://127.0.0.1:${server.port}/api/listRecordings`, { method: 'POST', headers: { 'x-streamscope-token': server.token }, body: '{}' });

const TARGETS = ['//[', 'http://[', '//%zz', '//a%00b', 'http://[::1', '//[/api/summary', 'http://%/api/listRecordings'];

describe('request targets the URL parser refuses', () => {
  it.each(TARGETS)('%s: 400, with the security headers, and the server answers the next request', async (target) => {
    for (const method of ['GET', 'POST']) {
      const r = await rawRequest(server.port, `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1:${server.port}`);
      expect(r.status, method).toBe(400);
      expect(r.headers['content-security-policy'], method).toBeDefined();
    }
    expect((await listRecordings()).status).toBe(200);
  });

  // Targets that parse but do not decode (a bad %-escape): the client's error too, never the server's.
  it.each(['/%zz', '/api/%zz', '/%E0%A4%A', '/assets/%C0%AF'])('%s: a 4xx answer, not a 5xx; the server goes on', async (target) => {
    for (const method of ['GET', 'POST']) {
      const r = await rawRequest(server.port, `${method} ${target} HTTP/1.1\r\nhost: 127.0.0.1:${server.port}`);
      expect(r.status, method).toBeGreaterThanOrEqual(400);
      expect(r.status, method).toBeLessThan(500);
    }
    expect((await listRecordings()).status).toBe(200);
  });
});
