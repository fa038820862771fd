// Sandbox handler of the http-requests target: browser mode's server
// (profiler/serve/server.ts) on a real recording, in this process, and per
// input a connection of its own that writes the input's bytes as they are
// (request lines, headers and bodies no client library would send), reads
// what comes back until the server closes the connection or has been quiet
// for a moment, then asks a normal request on a fresh connection. The
// server dying ends this process: the sandbox reports it.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startServer, type RunningServer } from '../../../profiler/serve/server.ts';

export interface RawRequestInput {
  /** The bytes written, as latin1 strings, each written in a turn of its own. */
  chunks: string[];
}

export interface RawRequestAnswer {
  /** Everything the server wrote on the connection, latin1. */
  received: string;
  /** Whether the server closed it (else: quiet for QUIET_MS after the last byte either way). */
  closedByServer: boolean;
  /** The normal request afterwards: its status, or why it failed. */
  after: { status: number; ms: number } | { error: string };
}

/** How long the server may stay quiet before the answer is taken as whole (it keeps a kept-alive connection open). */
const QUIET_MS = 150;
/** A request the input left unfinished is answered 408 after this (the server's header timeout, lowered). */
const HEADERS_TIMEOUT_MS = 300;
/** … and one whose body the input left unfinished. */
const REQUEST_TIMEOUT_MS = 600;
/** No answer and no close in this long: what was received is what there is. */
const MAX_WAIT_MS = 3000;

/** The access token of the fuzzed server: inputs carry it (or not) as bytes; fixed, so that a saved input replays. */
export const TOKEN = 'f0'.repeat(32);

let dir: string;
let server: RunningServer;

export async function setup(): Promise<{ port: number; token: string }> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-fuzz-http-requests-'));
  const file = path.join(dir, 'normalise-concurrent.sqlite');
  fs.copyFileSync(path.resolve(import.meta.dirname, '../../fixtures/recordings/normalise-concurrent.sqlite'), file);
  const dist = path.join(dir, 'dist');
  fs.mkdirSync(path.join(dist, 'assets'), { recursive: true });
  fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><script type="module" src="assets/app.js"></script>');
  fs.writeFileSync(path.join(dist, 'assets/app.js'), 'console.log(1)');
  server = await startServer({
    files: [file],
    staticDir: dist,
    token: TOKEN,
    headersTimeoutMs: HEADERS_TIMEOUT_MS,
    requestTimeoutMs: REQUEST_TIMEOUT_MS,
    onOpenError: () => {},
  });
  return { port: server.port, token: server.token };
}

export async function teardown(): Promise<void> {
  await server?.close();
  fs.rmSync(dir, { recursive: true, force: true });
}

export async function handle(input: RawRequestInput): Promise<RawRequestAnswer> {
  const { received, closedByServer } = await exchange(input.chunks);
  return { received, closedByServer, after: await normalRequest() };
}

function exchange(chunks: string[]): Promise<{ received: string; closedByServer: boolean }> {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, '127.0.0.1');
    let received = '';
    let done = false;
    let quiet: ReturnType<typeof setTimeout> | null = null;
    const finish = (closedByServer: boolean) => {
      if (done) return;
      done = true;
      if (quiet) clearTimeout(quiet);
      clearTimeout(limit);
      socket.destroy();
      resolve({ received, closedByServer });
    };
    const limit = setTimeout(() => finish(false), MAX_WAIT_MS);
    // Quiet after an answer began: taken as whole (a kept-alive connection stays open).
    const rest = () => {
      if (quiet) clearTimeout(quiet);
      if (received) quiet = setTimeout(() => finish(false), QUIET_MS);
    };
    socket.setEncoding('latin1');
    socket.on('data', (d: string) => {
      received += d;
      rest();
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.once('connect', async () => {
      for (const c of chunks) {
        if (done) return;
        socket.write(Buffer.from(c, 'latin1'));
        await new Promise((r) => setImmediate(r));
      }
      rest();
    });
  });
}

async function normalRequest(): Promise<RawRequestAnswer['after']> {
  const t0 = performance.now();
  try {
    const r = await fetch(`http://127.0.0.1:${server.port}/api/listRecordings`, {
      method: 'POST',
      headers: { 'x-streamscope-token': server.token },
      body: '{"args":[]}',
      signal: AbortSignal.timeout(5000),
    });
    await r.arrayBuffer();
    return { status: r.status, ms: Math.round(performance.now() - t0) };
  } catch (e) {
    return { error: (e as Error).message };
  }
}
