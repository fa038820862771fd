// Sandbox handler of the API targets: the typed API as the page reaches it,
// over real recordings — browser mode's HTTP server (profiler/serve) or the
// desktop app's IPC dispatcher in front of its real main-process API and
// query worker (app/ipc.ts, app/main-api.ts). Each input is one call: a
// method (or a channel, or a raw HTTP body) and an argument list, in which
// `{ $recording: k }` stands for the k-th open recording's id (ids are
// random per session: a saved input must name them so to replay).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { apiMethods, type ApiMethod } from '../../../profiler/contract/api.ts';
import { checkArguments } from '../../../profiler/query/api-args.ts';
import { startServer, type RunningServer } from '../../../profiler/serve/server.ts';
import { channelFor, dispatch } from '../../../app/ipc.ts';
import { createMainApi, type MainApi } from '../../../app/main-api.ts';
import { QueryClient } from '../../../profiler/query/query-client.ts';
import { RecentFiles } from '../../../app/recent-files.ts';
import { RecordJobs } from '../../../app/record-jobs.ts';

export type Transport = 'http' | 'ipc';

export interface ApiInput {
  /** A method of the API, or (IPC) any channel name, or (HTTP) any path after /api/. */
  method: string;
  args: unknown;
  /** HTTP: a body sent as is instead of {args}; the token left out or wrong; GET instead of POST. */
  body?: string;
  token?: 'none' | 'wrong';
  get?: boolean;
}

export interface ApiAnswer {
  /** What the checks say of the arguments, run here on the same values: null, or the bad-request message. */
  expected: string | null;
  /** HTTP: the status, and the body (parsed when JSON). IPC: the envelope dispatch resolved with. */
  status?: number;
  contentType?: string;
  body?: unknown;
  rawBody?: string;
  envelope?: unknown;
  /** dispatch threw (it never may). */
  threw?: string;
}

const repo = path.resolve(import.meta.dirname, '../../..');
/** Small, and between them: one GPU and several streams, event waits, NVTX ranges and iterations, PyTorch. */
export const API_FIXTURES = ['normalise-concurrent', 'matmul-events', 'nvtx_torch', 'torch_streams'].map((n) =>
  path.join(repo, 'test/fixtures/recordings', `${n}.sqlite`),
);

let transport: Transport;
let dir: string;
let files: string[];
let server: RunningServer | null = null;
let query: QueryClient | null = null;
let api: MainApi | null = null;

export async function setup(options: { transport: Transport }): Promise<{ files: string[] }> {
  transport = options.transport;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), `ss-fuzz-api-${transport}-`));
  // Copies: nothing a call does may touch the fixtures.
  files = API_FIXTURES.map((f) => {
    const copy = path.join(dir, path.basename(f));
    fs.copyFileSync(f, copy);
    return copy;
  });
  if (transport === 'http') {
    const dist = path.join(dir, 'dist');
    fs.mkdirSync(dist);
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html>');
    server = await startServer({ files, staticDir: dist, openMode: 'separate', onOpenError: () => {} });
  } else {
    query = new QueryClient({ workerPath: new URL('../../../profiler/query/query-worker.ts', import.meta.url) });
    const userData = path.join(dir, 'user-data');
    api = createMainApi({
      query,
      recent: new RecentFiles(userData),
      // Record jobs run a harmless program in place of the CLI: the request's own command never runs.
      jobs: new RecordJobs({ outputDir: path.join(userData, 'recordings'), cli: { command: '/bin/true', args: [] }, open: (f) => api!.openFile(f) }),
      version: '0.0.0-fuzz',
      showOpenDialog: async () => null,
      showSaveDialog: async () => null,
      canRecord: async () => false,
      jobCacheDir: path.join(userData, 'jobs'),
    });
    for (const f of files) await api.openFile(f);
  }
  return { files };
}

export async function teardown(): Promise<void> {
  await server?.close();
  query?.terminate();
  fs.rmSync(dir, { recursive: true, force: true });
}

async function recordingIds(): Promise<string[]> {
  if (server) {
    const r = await post('listRecordings', JSON.stringify({ args: [] }));
    return ((r.body ?? []) as { recordingId: string }[]).map((h) => h.recordingId);
  }
  // A call may have closed one: the session keeps all of them open.
  let handles = await api!.listRecordings();
  if (handles.length < files.length) {
    for (const f of files) if (!handles.some((h) => h.path === f)) await api!.openFile(f).catch(() => {});
    handles = await api!.listRecordings();
  }
  return files.map((f) => handles.find((h) => h.path === f)?.recordingId ?? 'gone');
}

/** `{ $recording: k }` → the k-th recording's id, anywhere in the value. */
function resolve(v: unknown, ids: string[]): unknown {
  if (Array.isArray(v)) return v.map((x) => resolve(x, ids));
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    const keys = Object.keys(v);
    if (keys.length === 1 && keys[0] === '$recording') return ids[Number((v as { $recording: number }).$recording) % ids.length];
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, resolve(x, ids)]));
  }
  return v;
}

async function post(method: string, body: string, token: string | null = server!.token, get = false) {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token !== null) headers['x-streamscope-token'] = token;
  const r = await fetch(`http://127.0.0.1:${server!.port}/api/${method}`, { method: get ? 'GET' : 'POST', headers, body: get ? undefined : body });
  const rawBody = await r.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(rawBody);
  } catch {
    parsed = undefined;
  }
  return {
    status: r.status,
    contentType: r.headers.get('content-type') ?? '',
    body: parsed,
    rawBody: parsed === undefined ? rawBody.slice(0, 300) : undefined,
  };
}

export async function handle(input: ApiInput): Promise<ApiAnswer> {
  const ids = await recordingIds();
  const args = resolve(input.args, ids);
  let expected: string | null = null;
  if (transport === 'http') {
    // JSON as a page would send it (NaN and ±Infinity become null, undefined in a list null).
    const body = input.body ?? JSON.stringify({ args });
    const token = input.token === 'none' ? null : input.token === 'wrong' ? 'f'.repeat(64) : server!.token;
    const r = await post(encodeURIComponent(input.method), body, token, input.get);
    // What the server checks is the body's value, read as it reads it: no
    // `args` (or null) is no arguments; a body it cannot read is refused
    // as such, not by the checks.
    if ((apiMethods as readonly string[]).includes(input.method)) {
      expected = null;
      let sent: unknown;
      try {
        // Past 1 MiB (server.ts MAX_BODY_BYTES) it is refused unread.
        sent = Buffer.byteLength(body) > 1 << 20 ? null : body.length ? ((JSON.parse(body) as { args?: unknown }).args ?? []) : [];
      } catch {
        sent = null;
      }
      if (sent !== null) {
        try {
          checkArguments(input.method as ApiMethod, sent);
        } catch (err) {
          expected = (err as Error).message;
        }
      }
    }
    return { expected, ...r };
  }
  if ((apiMethods as readonly string[]).includes(input.method)) {
    try {
      checkArguments(input.method as ApiMethod, args);
    } catch (err) {
      expected = (err as Error).message;
    }
  }
  const channel = (apiMethods as readonly string[]).includes(input.method) ? channelFor(input.method as ApiMethod) : input.method;
  try {
    return { expected, envelope: await dispatch(api!, channel, args) };
  } catch (err) {
    return { expected, threw: (err as Error).stack ?? String(err) };
  }
}
