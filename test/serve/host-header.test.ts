// DNS rebinding (profiler/serve/listen-address.ts): every request must name
// this server in its Host header. A page on evil.example whose name now
// resolves to 127.0.0.1 sends `Host: evil.example:PORT`: refused with 421
// Misdirected Request, static files and API alike, even with the right
// token; the names a browser on this machine (or an SSH tunnel) uses pass.
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostAllowed, hostNameOf } from '../../profiler/serve/listen-address.ts';
import { CONTENT_SECURITY_POLICY, startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';
import { rawRequest } from '../helpers/raw-http.ts';

const recording = path.resolve(import.meta.dirname, '../fixtures/recordings/normalise-concurrent.sqlite');

describe('hostAllowed: which Host headers a server answers', () => {
  const hostname = os.hostname().toLowerCase();
  it.each([
    // Bound to loopback: loopback names and addresses, whatever the port (an SSH tunnel's own port).
    ['127.0.0.1', 'localhost:8080', true],
    ['127.0.0.1', '127.0.0.1:8080', true],
    ['127.0.0.1', '127.0.0.1', true],
    ['127.0.0.1', '[::1]:8080', true],
    ['127.0.0.1', 'LOCALHOST:8080', true],
    ['127.0.0.1', 'localhost.:8080', true],
    ['127.0.0.1', '127.1:8080', true], // the URL parser's 127.0.0.1
    ['127.0.0.1', 'evil.example', false],
    ['127.0.0.1', 'evil.example:8080', false],
    ['127.0.0.1', 'localhost.evil.example:8080', false],
    ['127.0.0.1', '127.0.0.1.nip.io:8080', false],
    ['127.0.0.1', '10.0.0.5:8080', false],
    ['127.0.0.1', `${hostname}:8080`, false],
    ['127.0.0.1', 'user@localhost:8080', false],
    ['127.0.0.1', 'localhost:8080/path', false],
    ['127.0.0.1', '', false],
    ['127.0.0.1', undefined, false],
    // Bound to one address beyond loopback: that address, loopback, this machine's name.
    ['10.0.0.5', '10.0.0.5:8080', true],
    ['10.0.0.5', '10.0.0.6:8080', false],
    ['10.0.0.5', `${hostname}:8080`, true],
    ['10.0.0.5', 'evil.example:8080', false],
    // Every interface: any IP literal (it cannot be rebound), this machine's name, never another name.
    ['0.0.0.0', '192.168.1.20:8080', true],
    ['0.0.0.0', '[fe80::1]:8080', true],
    ['0.0.0.0', `${hostname}:8080`, true],
    ['0.0.0.0', 'evil.example:8080', false],
    ['::', 'evil.example', false],
  ] as const)('listening on %s, Host %j: %s', (listen, header, expected) => {
    expect(hostAllowed(header, listen)).toBe(expected);
  });

  it('names given with --allow-host pass beyond loopback, never on it', () => {
    expect(hostAllowed('gpu7.cluster.example:8080', '0.0.0.0', ['gpu7.cluster.example'])).toBe(true);
    expect(hostAllowed('GPU7.Cluster.Example', '10.0.0.5', ['gpu7.cluster.example'])).toBe(true);
    expect(hostAllowed('gpu8.cluster.example', '0.0.0.0', ['gpu7.cluster.example'])).toBe(false);
    expect(hostAllowed('gpu7.cluster.example', '127.0.0.1', ['gpu7.cluster.example'])).toBe(false);
  });

  it('reads the host name the way the URL parser does', () => {
    expect(hostNameOf('[::1]:80')).toBe('::1');
    expect(hostNameOf('Example.COM.:443')).toBe('example.com');
    expect(hostNameOf('a b')).toBeNull();
  });
});

describe('a loopback server and the Host header', () => {
  let dir: string;
  let server: RunningServer;
  beforeAll(async () => {
    dir = tempDir('host-header');
    fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>StreamScope</title>');
    server = await startServer({ files: [recording], port: 0, staticDir: dir });
  });
  afterAll(async () => {
    await server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const api = (host: string | null) =>
    rawRequest(
      server.port,
      `POST /api/listRecordings HTTP/1.1${host === null ? '' : `\r\nhost: ${host}`}\r\nx-streamscope-token: ${server.token}\r\ncontent-type: application/json\r\ncontent-length: 11`,
      '{"args":[]}',
    );
  const page = (host: string) => rawRequest(server.port, `GET / HTTP/1.1\r\nhost: ${host}`);

  it('refuses another name (DNS rebinding) with 421, the API even with the right token, and says why', async () => {
    for (const host of ['evil.example', `evil.example:${server.port}`, `127.0.0.1.evil.example:${server.port}`]) {
      const a = await api(host);
      expect(a.status, host).toBe(421);
      expect(JSON.parse(a.body)).toMatchObject({ code: 'forbidden', message: expect.stringMatching(/does not answer to the host name .*DNS rebinding/) });
      expect(a.body).not.toContain(recording);
      const p = await page(host);
      expect(p.status, host).toBe(421);
      expect(p.body).not.toContain('<title>');
      expect(p.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    }
  });

  it('answers localhost:PORT, 127.0.0.1:PORT and [::1]:PORT', async () => {
    for (const host of [`localhost:${server.port}`, `127.0.0.1:${server.port}`, `[::1]:${server.port}`, 'localhost:9999']) {
      const a = await api(host);
      expect(a.status, host).toBe(200);
      expect(JSON.parse(a.body)).toEqual([expect.objectContaining({ path: recording })]);
      expect((await page(host)).status, host).toBe(200);
    }
  });

  it('refuses a request without a Host header (HTTP/1.0)', async () => {
    const r = await rawRequest(server.port, 'GET / HTTP/1.0');
    expect(r.status).toBe(421);
  });
});

describe('a server on every interface and the Host header', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startServer({
      files: [recording],
      host: '0.0.0.0',
      allowRemote: true,
      port: 0,
      staticDir: '/nonexistent',
      allowedHosts: ['gpu7.cluster.example'],
    });
  });
  afterAll(() => server?.close());

  it('answers IP literals, this machine, the allowed names; refuses other names', async () => {
    const status = async (host: string) => (await rawRequest(server.port, `GET /favicon.ico HTTP/1.1\r\nhost: ${host}`)).status;
    expect(await status(`192.168.1.20:${server.port}`)).toBe(204);
    expect(await status(`${os.hostname()}:${server.port}`)).toBe(204);
    expect(await status(`gpu7.cluster.example:${server.port}`)).toBe(204);
    expect(await status(`evil.example:${server.port}`)).toBe(421);
  });
});
