// Browser mode over real HTTP: the token, the read-only API, argument
// checks, static files confined to the renderer's folder.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyze } from '../../profiler/analysis/diagnosis/analyze.ts';
import { diffRecordings } from '../../profiler/compare/diff.ts';
import type { DiffSummary } from '../../profiler/contract/diff.ts';
import { decodeWindow, WINDOW_MEDIA_TYPE } from '../../profiler/contract/window-codec.ts';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
const concurrent = path.join(fixtures, 'normalise-concurrent.sqlite');
const serial = path.join(fixtures, 'normalise-serial.sqlite');

let dir: string;
let dist: string;
let server: RunningServer;
let base: string;

beforeAll(async () => {
  dir = tempDir('serve');
  dist = path.join(dir, 'dist');
  fs.mkdirSync(path.join(dist, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><script type="module" src="assets/app.js"></script>');
  fs.writeFileSync(path.join(dist, 'assets/app.js'), 'console.log("app")');
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'SECRET');
  fs.symlinkSync(path.join(dir, 'secret.txt'), path.join(dist, 'assets/link.txt'));
  const notes = path.join(dir, 'notes.sqlite');
  fs.writeFileSync(notes, 'not a database '.repeat(20));
  server = await startServer({ files: [concurrent, notes, serial], port: 0, staticDir: dist, onOpenError: () => {} });
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** POST /api/<method> with the token (or `token`). */
async function api(method: string, args: unknown[] = [], token: string | null = server.token, body?: string) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers['x-streamscope-token'] = token;
  const r = await fetch(`${base}/api/${method}`, { method: 'POST', headers, body: body ?? JSON.stringify({ args }) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> & { code?: string; message?: string } };
}

/** GET with the path sent exactly as written (fetch would normalise `..`). */
function rawGet(p: string): Promise<{ status: number; body: string; headers: http.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: server.port, path: p }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers }));
      })
      .on('error', reject);
  });
}

describe('the access token', () => {
  it('is 32 random bytes in the printed URL, on loopback', () => {
    expect(server.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${server.port}/\\?token=[0-9a-f]{64}$`));
  });

  it('is required on every API request', async () => {
    for (const token of [null, '', 'x'.repeat(64), server.token.slice(0, 63)]) {
      const r = await api('listRecordings', [], token);
      expect(r.status).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    // Also before anything else is looked at (method, body).
    expect((await api('dropTables', [], null)).status).toBe(403);
  });
});

describe('the API', () => {
  it('lists the files that opened; the bad one is reported, with its error, and left out', async () => {
    const r = await api('listRecordings');
    expect(r.status).toBe(200);
    expect((r.body as unknown as { path: string }[]).map((h) => h.path)).toEqual([concurrent, serial]);
    expect(server.failed).toEqual([
      { file: path.join(dir, 'notes.sqlite'), code: 'not-a-recording', message: expect.stringMatching(/notes\.sqlite: not a SQLite database/) },
    ]);
    const caps = await api('capabilities');
    expect(caps.body).toMatchObject({ mode: 'browser', canOpenFiles: false, canRecord: false });
    expect((await api('recentFiles')).body).toEqual([]);
  });

  it('answers the data methods like RecordingQuery does', async () => {
    const [h] = (await api('listRecordings')).body as unknown as { recordingId: string }[];
    const s = await api('summary', [h!.recordingId]);
    expect(s.status).toBe(200);
    expect(s.body.counts).toMatchObject({ kernels: 8, memcpys: 16 });
    expect((s.body.openErrors as { code: string }[]).map((e) => e.code)).toEqual(['not-a-recording']);
    const rowId = (s.body.streams as { rowId: string }[])[0]!.rowId;
    const w = await api('window', [h!.recordingId, { rows: [rowId], startNs: -1e12, endNs: 1e12, resolutionNs: 1 }]);
    expect(w.status).toBe(200);
    expect((w.body.rows as { items: unknown[] }[])[0]!.items.length).toBeGreaterThan(0);
    const st = await api('stats', [h!.recordingId, { kind: 'steady-state' }]);
    expect((st.body.kernels as { count: number }[])[0]!.count).toBe(8);
  });

  it('sends a window in binary to a client that asks, decoding to the same answer as the JSON', async () => {
    const [h] = (await api('listRecordings')).body as unknown as { recordingId: string }[];
    const s = await api('summary', [h!.recordingId]);
    const rows = (s.body.streams as { rowId: string }[]).map((x) => x.rowId);
    const args = [h!.recordingId, { rows, startNs: -1e12, endNs: 1e12, resolutionNs: 1 }];
    const json = await api('window', args);
    const r = await fetch(`${base}/api/window`, {
      method: 'POST',
      body: JSON.stringify({ args }),
      headers: { 'content-type': 'application/json', 'x-streamscope-token': server.token, accept: `${WINDOW_MEDIA_TYPE}, application/json` },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe(WINDOW_MEDIA_TYPE);
    expect(decodeWindow(new Uint8Array(await r.arrayBuffer()))).toEqual(json.body);
    // Errors stay JSON whatever was asked for.
    const bad = await fetch(`${base}/api/window`, {
      method: 'POST',
      body: JSON.stringify({ args: ['nope', args[1]] }),
      headers: { 'content-type': 'application/json', 'x-streamscope-token': server.token, accept: WINDOW_MEDIA_TYPE },
    });
    expect(bad.headers.get('content-type')).toBe('application/json');
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { code: string }).code).toBe('bad-request');
  });

  it('closeRecording releases nothing in browser mode: the file stays served to every page', async () => {
    const [h] = (await api('listRecordings')).body as unknown as { recordingId: string }[];
    const r = await api('closeRecording', [h!.recordingId]);
    expect(r).toEqual({ status: 200, body: null });
    expect((await api('summary', [h!.recordingId])).status).toBe(200);
    expect((await api('closeRecording', ['0123456789abcdef'])).body.code).toBe('not-found');
  });

  it('refuses what browser mode cannot do: forbidden', async () => {
    const [h] = (await api('listRecordings')).body as unknown as { recordingId: string }[];
    for (const [method, args] of [
      ['openRecording', ['/etc/passwd']],
      ['openRecordings', [['/etc/passwd', '/etc/hosts']]],
      ['showOpenDialog', []],
      ['record', [{ command: ['rm', '-rf', '/'] }]],
      ['recordStatus', ['1']],
      ['exportTrace', [h!.recordingId]],
    ] as const) {
      const r = await api(method, [...args]);
      expect(r.status, method).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
  });

  it('bad requests: unknown method, not POST, not JSON, wrong argument shapes, too big', async () => {
    const [h] = (await api('listRecordings')).body as unknown as { recordingId: string }[];
    const id = h!.recordingId;
    const bad = async (method: string, args: unknown[], body?: string) => {
      const r = await api(method, args, server.token, body);
      expect(r.status, `${method} ${JSON.stringify(args)}`).toBe(400);
      expect(r.body.code).toBe('bad-request');
    };
    await bad('dropTables', []);
    await bad('toString', []);
    await bad('summary', [], '{not json');
    await bad('summary', [], '{"args": "x"}');
    await bad('summary', []);
    await bad('summary', ['../../etc']);
    await bad('window', [id, { rows: ['stream:1'], startNs: '0', endNs: 1, resolutionNs: 1 }]);
    await bad('window', [id, { rows: 'stream:1', startNs: 0, endNs: 1, resolutionNs: 1 }]);
    await bad('window', [id, { rows: new Array(5000).fill('stream:1'), startNs: 0, endNs: 1, resolutionNs: 1 }]);
    await bad('window', [id, { rows: ['stream:1; DROP TABLE kernels'], startNs: 0, endNs: 1, resolutionNs: 1 }]);
    await bad('details', [id, { table: 'sqlite_schema', id: 1 }]);
    await bad('details', [id, { table: 'kernels', id: '1 OR 1=1' }]);
    await bad('search', [id, { text: 1 }]);
    await bad('search', [id, { text: 'a', kinds: ['everything'] }]);
    await bad('concurrency', [id, { deviceId: 0 }]);
    await bad('summary', [], JSON.stringify({ args: ['a'.repeat(2 << 20)] }));
    const get = await fetch(`${base}/api/summary`, { headers: { 'x-streamscope-token': server.token } });
    expect(get.status).toBe(400);
  });

  it('compare: the same summary as `streamscope diff` over the two files', async () => {
    const list = (await api('listRecordings')).body as unknown as { recordingId: string; path: string }[];
    const idOf = (f: string) => list.find((h) => h.path === f)!.recordingId;
    const r = await api('compare', [idOf(serial), idOf(concurrent), { kind: 'steady-state' }]);
    expect(r.status).toBe(200);
    const expected = (() => {
      const a = openRecording(serial, { readonly: true });
      const b = openRecording(concurrent, { readonly: true });
      try {
        return diffRecordings(serial, analyze(a), concurrent, analyze(b));
      } finally {
        a.close();
        b.close();
      }
    })();
    expect(r.body).toEqual(JSON.parse(JSON.stringify(expected)));
    expect((r.body as unknown as DiffSummary).gpuSpanNs.delta).toBeLessThan(0);
    const bad = await api('compare', [idOf(serial)]);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/compare takes 3 argument/);
  });

  it('an id that is not open: not-found', async () => {
    const r = await api('summary', ['0123456789abcdef']);
    expect(r.status).toBe(404);
    expect(r.body.code).toBe('not-found');
  });
});

describe('static files', () => {
  it('serves the renderer with a strict Content-Security-Policy and nosniff', async () => {
    const r = await rawGet('/?token=abc');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/html/);
    const csp = r.headers['content-security-policy']!;
    expect(csp).toMatch(/default-src 'self'/);
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    expect(r.headers['x-content-type-options']).toBe('nosniff');
    const js = await rawGet('/assets/app.js');
    expect([js.status, js.headers['content-type']]).toEqual([200, 'text/javascript; charset=utf-8']);
  });

  it('never outside its folder: .., encoded .., symlinks, bad escapes', async () => {
    for (const p of [
      '/../secret.txt',
      '/..%2fsecret.txt',
      '/%2e%2e/secret.txt',
      '/assets/..%2f..%2fsecret.txt',
      '/assets/link.txt',
      `/${'..%2f'.repeat(12)}etc/passwd`,
    ]) {
      const r = await rawGet(p);
      expect(r.status, p).toBeGreaterThanOrEqual(400);
      expect(r.body, p).not.toContain('SECRET');
      expect(r.body, p).not.toContain('root:');
    }
    expect((await rawGet('/%E0%A4%A')).status).toBe(400);
    expect((await rawGet('/nope.js')).status).toBe(404);
  });

  it('a renderer that is not built: a page saying how to build it', async () => {
    const s = await startServer({ files: [concurrent], port: 0, staticDir: path.join(dir, 'no-dist') });
    try {
      const r = await fetch(`http://127.0.0.1:${s.port}/`);
      expect(r.status).toBe(503);
      expect(await r.text()).toContain('npm run build:renderer');
    } finally {
      await s.close();
    }
  });
});

describe('where it listens', () => {
  it('refuses a non-loopback address unless asked explicitly', async () => {
    await expect(startServer({ files: [concurrent], host: '0.0.0.0', staticDir: dist })).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringMatching(/not a loopback address/),
    });
  });
});
