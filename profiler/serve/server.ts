// Browser mode: `streamscope serve FILE...` serves the renderer and the
// typed API (profiler/query/api.ts) over HTTP, for headless GPU servers and
// for the end-to-end tests. Loopback only unless asked otherwise, a random
// token on every API request, read-only (no opening other files, no
// recording), static files confined to the renderer's build folder.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { apiMethods, type ApiMethod } from '../query/api.ts';
import { ApiError, apiErrorOf } from '../query/recording-query.ts';
import { SessionRegistry } from '../query/session.ts';

export const CONTENT_SECURITY_POLICY =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.png': 'image/png', '.json': 'application/json', '.ico': 'image/x-icon', '.woff2': 'font/woff2',
};

export interface ServerOptions {
  files: string[];
  port?: number;
  host?: string;
  staticDir: string;
  /** Called with a file that could not be opened (the server keeps going). */
  onOpenError?: (file: string, message: string) => void;
}

export interface RunningServer {
  url: string;
  port: number;
  token: string;
  /** Files given that could not be opened, with why. */
  failed: { file: string; message: string; code: string }[];
  close(): Promise<void>;
}

/** Argument checks per method: anything else is a bad request before it reaches a query. */
const isId = (v: unknown) => typeof v === 'string' && /^[0-9a-f]{1,32}$/.test(v);
const isObj = (v: unknown) => typeof v === 'object' && v !== null && !Array.isArray(v);
const VALID: Record<ApiMethod, (args: unknown[]) => boolean> = {
  capabilities: (a) => a.length === 0,
  listRecordings: (a) => a.length === 0,
  openRecording: () => true,
  showOpenDialog: () => true,
  recentFiles: (a) => a.length === 0,
  summary: (a) => a.length === 1 && isId(a[0]),
  window: (a) => a.length === 2 && isId(a[0]) && isObj(a[1]) && Array.isArray((a[1] as { rows: unknown }).rows) && (a[1] as { rows: unknown[] }).rows.length <= 512
    && ['startNs', 'endNs', 'resolutionNs'].every((k) => Number.isFinite((a[1] as Record<string, unknown>)[k])),
  concurrency: (a) => a.length === 2 && isId(a[0]) && isObj(a[1]),
  details: (a) => a.length === 2 && isId(a[0]) && isObj(a[1]) && typeof (a[1] as { table: unknown }).table === 'string' && Number.isInteger((a[1] as { id: unknown }).id),
  search: (a) => a.length === 2 && isId(a[0]) && isObj(a[1]) && typeof (a[1] as { text: unknown }).text === 'string',
  stats: (a) => a.length === 1 && isId(a[0]),
  findings: (a) => a.length === 1 && isId(a[0]),
  record: () => true,
  recordStatus: () => true,
};

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  const token = crypto.randomBytes(32).toString('hex');
  const registry = new SessionRegistry();
  const failed: RunningServer['failed'] = [];
  for (const f of opts.files) {
    try {
      registry.open(f);
    } catch (err) {
      const e = apiErrorOf(err);
      failed.push({ file: f, message: e.message, code: e.code });
      opts.onOpenError?.(f, e.message);
    }
  }
  const staticRoot = path.resolve(opts.staticDir);

  const call = (method: ApiMethod, args: unknown[]): unknown => {
    switch (method) {
      case 'capabilities': return { mode: 'browser', version: '0.2.0', canOpenFiles: false, canRecord: false };
      case 'listRecordings': return registry.list();
      case 'recentFiles': return [];
      case 'summary': return { ...registry.get(args[0] as string).summary(), openErrors: failed };
      case 'window': return registry.get(args[0] as string).window(args[1] as never);
      case 'concurrency': return registry.get(args[0] as string).concurrency(args[1] as never);
      case 'details': return registry.get(args[0] as string).details(args[1] as never);
      case 'search': return registry.get(args[0] as string).search(args[1] as never);
      case 'stats': return registry.get(args[0] as string).stats();
      case 'findings': return registry.get(args[0] as string).findings();
      default: throw new ApiError('forbidden', `${method} is not available in browser mode (read-only): use the desktop app`);
    }
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const send = (status: number, body: string | Buffer, type: string) => {
      res.writeHead(status, {
        'content-type': type, 'content-security-policy': CONTENT_SECURITY_POLICY, 'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer', 'cache-control': 'no-store',
      });
      res.end(body);
    };
    const sendError = (status: number, e: ApiError) => send(status, JSON.stringify(e.toJSON()), 'application/json');
    if (url.pathname.startsWith('/api/')) {
      // The token travels in a header, so a page elsewhere cannot make the browser send it.
      if (req.headers['x-streamscope-token'] !== token) return sendError(403, new ApiError('forbidden', 'missing or wrong access token'));
      const method = url.pathname.slice(5) as ApiMethod;
      if (req.method !== 'POST' || !(apiMethods as readonly string[]).includes(method)) return sendError(400, new ApiError('bad-request', `unknown API method '${url.pathname.slice(5)}'`));
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > 1 << 20) req.destroy();
        else chunks.push(c);
      });
      req.on('end', () => {
        let args: unknown[];
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { args?: unknown };
          args = Array.isArray(body.args) ? body.args : [];
        } catch {
          return sendError(400, new ApiError('bad-request', 'body is not JSON'));
        }
        if (!VALID[method](args)) return sendError(400, new ApiError('bad-request', `bad arguments for ${method}`));
        try {
          send(200, JSON.stringify(call(method, args)), 'application/json');
        } catch (err) {
          const e = apiErrorOf(err);
          sendError(e.code === 'not-found' ? 404 : e.code === 'bad-request' ? 400 : e.code === 'forbidden' ? 403 : 500, e);
        }
      });
      return;
    }
    if (req.method !== 'GET') return send(405, 'method not allowed', 'text/plain');
    if (url.pathname === '/favicon.ico') return send(204, '', 'image/x-icon');
    // Static files, never outside the renderer's build folder.
    const rel = decodeURIComponent(url.pathname === '/' ? '/index.html' : url.pathname);
    const file = path.resolve(staticRoot, `.${rel}`);
    if (!file.startsWith(staticRoot + path.sep)) return send(403, 'forbidden', 'text/plain');
    if (!fs.existsSync(staticRoot)) {
      return send(503, '<!doctype html><title>StreamScope</title><p>The renderer is not built: run <code>npm run build:renderer</code>.</p>', 'text/html; charset=utf-8');
    }
    fs.readFile(file, (err, data) => {
      if (err) return send(404, 'not found', 'text/plain');
      send(200, data, TYPES[path.extname(file)] ?? 'application/octet-stream');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://${host}:${port}/?token=${token}`,
    port,
    token,
    failed,
    close: () => new Promise<void>((resolve) => {
      registry.closeAll();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
