// Clients that go away before their answer (a closed tab, a fetch the page
// aborted): the server keeps serving, and what it had not started for them
// it does not compute (profiler/serve/work-queue.ts). The clients run in a
// process of their own, as a browser does: the server learns of a closed
// connection only by reading it, which a client in its own event loop
// would hold up.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../bench/generate-recording.ts';
import { startServer, type RunningServer } from '../../profiler/serve/server.ts';
import { tempDir } from '../helpers/native.ts';

let dir: string;
let server: RunningServer;
let id: string;
let rows: string[];

beforeAll(async () => {
  dir = tempDir('disconnect');
  // 200 000 operations: windows and searches of a few hundred kB to a few MB.
  const file = path.join(dir, 'gen.sqlite');
  generate(file, 200_000, 16);
  server = await startServer({ files: [file], port: 0, staticDir: dir });
  const list = (await call('listRecordings', [])) as { recordingId: string }[];
  id = list[0]!.recordingId;
  rows = ((await call('summary', [id])) as { streams: { rowId: string }[] }).streams.map((s) => s.rowId);
}, 120_000);
afterAll(async () => {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, args: unknown[]): Promise<unknown> {
  const r = await fetch(`http://127.0.0.1:${server.port}/api/${method}`, {
    method: 'POST',
    headers: { 'x-streamscope-token': server.token },
    body: JSON.stringify({ args }),
  });
  expect(r.status, method).toBe(200);
  return r.json();
}

/**
 * Runs `code` (an ES module's body, with `http`, `port`, `token`, `say` in
 * scope) in a process of its own; resolves with what it said, line by line,
 * as each line comes (`lines()`), and when it exits (`done`).
 */
function clients(code: string): { next: () => Promise<string>; done: Promise<number | null> } {
  const prelude = `import http from 'node:http'; const port = ${server.port}; const token = ${JSON.stringify(server.token)}; const say = (s) => console.log(s);`;
  const c = spawn(process.execPath, ['--input-type=module', '-e', `${prelude}\n${code}`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const said: string[] = [];
  const waiting: ((s: string) => void)[] = [];
  let buf = '';
  c.stdout!.on('data', (d: Buffer) => {
    buf += d;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      const w = waiting.shift();
      if (w) w(line);
      else said.push(line);
    }
  });
  return {
    next: () => (said.length ? Promise.resolve(said.shift()!) : new Promise((r) => waiting.push(r))),
    done: new Promise((r) => c.on('exit', r)),
  };
}

/** Holds this process (and so the server) busy for `ms`: the clients' requests and their closing wait in the kernel meanwhile. */
function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

describe('clients that go away', () => {
  it('requests whose clients left before their turn are not computed; the server answers the next one', async () => {
    const dropped = server.dropped();
    const c = clients(`
      say('ready');
      const body = (n) => JSON.stringify({ args: [${JSON.stringify(id)}, { rows: ${JSON.stringify(rows)}, startNs: n * 1000, endNs: 1e12, resolutionNs: 1000 }] });
      const reqs = [];
      for (let n = 0; n < 30; n++) {
        const b = body(n);
        const req = http.request({ host: '127.0.0.1', port, path: '/api/window', method: 'POST', headers: { 'x-streamscope-token': token, 'content-length': b.length } });
        req.on('error', () => {});
        req.end(b);
        reqs.push(req);
      }
      setTimeout(() => { for (const r of reqs) r.destroy(); say('gone'); }, 300);
    `);
    expect(await c.next()).toBe('ready');
    // The server is busy while the 30 requests arrive and their clients leave.
    busy(1500);
    expect(await c.next()).toBe('gone');
    await c.done;
    await expect.poll(() => server.dropped() - dropped, { timeout: 10_000 }).toBe(30);
    expect(((await call('summary', [id])) as { counts: { kernels: number } }).counts.kernels).toBeGreaterThan(0);
  });

  it('clients that leave in the middle of their answers (after its first bytes), 60 times: the server keeps answering', async () => {
    const c = clients(`
      let cut = 0;
      const one = (n) => new Promise((resolve) => {
        const method = n % 3 === 0 ? 'search' : 'window';
        const args = method === 'search'
          ? [${JSON.stringify(id)}, { text: 'kernel_' + (n % 7), limit: 10000 }]
          : [${JSON.stringify(id)}, { rows: ${JSON.stringify(rows)}, startNs: 0, endNs: 1e12, resolutionNs: 100 + n }];
        const b = JSON.stringify({ args });
        const req = http.request({ host: '127.0.0.1', port, path: '/api/' + method, method: 'POST', headers: { 'x-streamscope-token': token, 'content-length': b.length } }, (res) => {
          res.once('data', () => { cut++; req.destroy(); resolve(); });
          res.on('end', resolve);
        });
        req.on('error', () => resolve());
        req.on('close', resolve);
        req.end(b);
      });
      for (let n = 0; n < 60; n += 6) await Promise.all([0, 1, 2, 3, 4, 5].map((k) => one(n + k)));
      say(String(cut));
    `);
    expect(Number(await c.next())).toBeGreaterThan(30);
    expect(await c.done).toBe(0);
    const found = (await call('search', [id, { text: 'kernel_1', limit: 5 }])) as { items: unknown[] };
    expect(found.items).toHaveLength(5);
  });

  it('a client that leaves while its findings are analysed: the analysis is kept, the next page gets it', async () => {
    const scope = { kind: 'window', startNs: 0, endNs: 5e8 };
    await new Promise<void>((resolve) => {
      const body = JSON.stringify({ args: [id, scope] });
      const req = http.request({
        host: '127.0.0.1',
        port: server.port,
        path: '/api/findings',
        method: 'POST',
        headers: { 'x-streamscope-token': server.token },
      });
      req.on('error', () => resolve());
      req.end(body);
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 20);
    });
    expect(Array.isArray(await call('findings', [id, scope]))).toBe(true);
  });
});
