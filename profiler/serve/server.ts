// Browser mode: `streamscope serve FILE...` serves the renderer and the
// typed API (profiler/contract/api.ts) over HTTP, for headless GPU servers and
// for the end-to-end tests.
//
// Security model: the server listens on loopback unless the caller asks
// for another address; every /api request must carry the random token of
// the printed URL in the `x-streamscope-token` header (a header, so a page
// of another origin cannot make the browser send it, and a DNS-rebound
// host name does not get it either); it is read-only (no opening other
// files, no recording); static files come only from the renderer's build
// folder, under a Content-Security-Policy without inline scripts.
//
// Protocol: POST /api/<method> with JSON {args: [...]} → 200 with the
// result as JSON, or an ApiErrorShape with a 4xx/5xx status.
import crypto from 'node:crypto';
import http from 'node:http';
import { checkArguments } from '../query/api-args.ts';
import { ApiError, apiErrorOf } from '../query/api-error.ts';
import { apiMethods, type ApiErrorCode, type ApiMethod, type Capabilities, type OpenFailure, type WindowResponse } from '../contract/api.ts';
import { SessionRegistry, type OpenFilesResult } from '../query/session.ts';
import { defaultJobCacheDir, type OpenMode } from '../merge/job-cache.ts';
import { encodeWindow, WINDOW_MEDIA_TYPE } from '../contract/window-codec.ts';
import { contentSecurityPolicy } from '../contract/content-security-policy.ts';
import { VERSION } from '../contract/version.ts';
import { staticFile } from './static-files.ts';

/** The page's one policy (the desktop app's too), for a page that calls the API over HTTP on its own origin. */
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy('http');

/** The biggest request body accepted: API arguments are small. */
const MAX_BODY_BYTES = 1 << 20;

export interface ServerOptions {
  files: string[];
  /** 0 (default): any free port. */
  port?: number;
  /** Default 127.0.0.1. Any non-loopback address needs allowRemote. */
  host?: string;
  /** Listening where others can connect is a decision the user makes explicitly. */
  allowRemote?: boolean;
  /** The renderer's build folder (renderer/dist). */
  staticDir: string;
  /** Called with each file that could not be opened (the server keeps going without it). */
  onOpenError?: (file: string, message: string) => void;
  /**
   * Several files: the recordings of one job's ranks are served as one,
   * merged into `jobCacheDir` (default: merge/job-cache.ts
   * defaultJobCacheDir) unless `openMode` says otherwise.
   */
  openMode?: OpenMode;
  jobCacheDir?: string;
  /** Called when files were opened as one job (merged now, or reused from the cache). */
  onJob?: (job: NonNullable<OpenFilesResult['job']>) => void;
}

export interface RunningServer {
  url: string;
  port: number;
  token: string;
  /** Files given that could not be opened, with why. */
  failed: OpenFailure[];
  close(): Promise<void>;
}

export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

const STATUS: Partial<Record<ApiErrorCode, number>> = { 'bad-request': 400, forbidden: 403, 'not-found': 404, 'not-mergeable': 422, locked: 423 };

/** What browser mode can do: read the recordings it was given, nothing else. */
const CAPABILITIES: Capabilities = { mode: 'browser', version: VERSION, canOpenFiles: false, canRecord: false };

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!isLoopback(host) && !opts.allowRemote) {
    throw new ApiError(
      'forbidden',
      `refusing to serve on ${host}: not a loopback address (pass --host explicitly to serve there; anyone who can reach it with the URL's token can read these recordings)`,
    );
  }
  const token = crypto.randomBytes(32).toString('hex');
  const tokenBytes = Buffer.from(token);
  const registry = new SessionRegistry({ analysisThread: true });
  const opened = registry.openFiles(opts.files, { jobCacheDir: opts.jobCacheDir ?? defaultJobCacheDir(), mode: opts.openMode });
  const failed: OpenFailure[] = opened.failed;
  for (const f of failed) opts.onOpenError?.(f.file, f.message);
  if (opened.job) opts.onJob?.(opened.job);

  const call = (method: ApiMethod, args: unknown[]): unknown => {
    const q = () => registry.get(args[0] as string);
    switch (method) {
      case 'capabilities':
        return CAPABILITIES;
      case 'listRecordings':
        return registry.list();
      case 'recentFiles':
        return []; // browser mode lists no local paths
      // The files stay served (other pages may show them): check the id, release nothing.
      case 'closeRecording':
        q();
        return null;
      // With the files of `serve FILE...` that could not be opened: the page shows them.
      case 'summary':
        return { ...q().summary(), openErrors: failed };
      case 'recordingState':
        return q().recordingState();
      case 'window':
        return q().window(args[1] as never);
      case 'concurrency':
        return registry.concurrency(args[0] as string, args[1] as never);
      case 'overview':
        return q().overview(args[1] as number, args[2] as never);
      case 'details':
        return q().details(args[1] as never);
      case 'search':
        return q().search(args[1] as never);
      case 'dependencies':
        return registry.dependencies(args[0] as string, args[1] as never);
      case 'waitSpans':
        return registry.waitSpans(args[0] as string, args[1] as never);
      case 'stats':
        return registry.stats(args[0] as string, args[1] as never);
      case 'findings':
        return registry.findings(args[0] as string, args[1] as never);
      case 'scopeInfo':
        return registry.scopeInfo(args[0] as string, args[1] as never);
      case 'ranges':
        return registry.ranges(args[0] as string);
      case 'iterations':
        return registry.iterations(args[0] as string, args[1] as string | null);
      case 'compare':
        return registry.compare(args[0] as string, args[1] as string, args[2] as never);
      case 'sql':
        return registry.sql(args[0] as string, args[1] as never);
      case 'openRecording':
      case 'openRecordings':
      case 'showOpenDialog':
      case 'record':
      case 'recordStatus':
      case 'exportTrace':
        throw new ApiError('forbidden', `${method} is not available in browser mode (read-only): use the desktop app (streamscope open)`);
    }
  };

  const hasToken = (req: http.IncomingMessage) => {
    const given = req.headers['x-streamscope-token'];
    if (typeof given !== 'string') return false;
    const bytes = Buffer.from(given);
    return bytes.length === tokenBytes.length && crypto.timingSafeEqual(bytes, tokenBytes);
  };

  const server = http.createServer((req, res) => {
    const send = (status: number, body: string | Buffer, type: string) => {
      res.writeHead(status, {
        'content-type': type,
        'content-security-policy': CONTENT_SECURITY_POLICY,
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'cache-control': 'no-store',
        'cross-origin-resource-policy': 'same-origin',
      });
      res.end(body);
    };
    const sendError = (e: ApiError) => send(STATUS[e.code] ?? 500, JSON.stringify(e.toJSON()), 'application/json');
    const url = new URL(req.url ?? '/', 'http://localhost');

    if (url.pathname.startsWith('/api/')) {
      if (!hasToken(req)) return sendError(new ApiError('forbidden', 'missing or wrong access token (open the URL that `streamscope serve` printed)'));
      const name = url.pathname.slice('/api/'.length);
      if (req.method !== 'POST') return sendError(new ApiError('bad-request', 'API requests are POST with a JSON body {args: [...]}'));
      if (!(apiMethods as readonly string[]).includes(name)) return sendError(new ApiError('bad-request', `unknown API method '${name.slice(0, 64)}'`));
      const method = name as ApiMethod;
      readBody(req, (err, body) => {
        if (err) return sendError(err);
        let args: unknown;
        try {
          args = body.length ? ((JSON.parse(body) as { args?: unknown }).args ?? []) : [];
        } catch {
          return sendError(new ApiError('bad-request', 'the body is not JSON'));
        }
        // The same argument contract as the Electron side (api-args.ts).
        // Analysis methods answer later, from the analysis thread; the rest at once.
        Promise.resolve()
          .then(() => call(method, checkArguments(method, args)))
          .then(
            (value) => {
              // Window answers in binary to a client that asks (window-codec.ts says why); JSON otherwise.
              if (method === 'window' && (req.headers.accept ?? '').includes(WINDOW_MEDIA_TYPE)) {
                const bytes = encodeWindow(value as WindowResponse);
                return send(200, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), WINDOW_MEDIA_TYPE);
              }
              send(200, JSON.stringify(value), 'application/json');
            },
            (e: unknown) => sendError(apiErrorOf(e)),
          );
      });
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed', 'text/plain; charset=utf-8');
    if (url.pathname === '/favicon.ico') return send(204, '', 'image/x-icon');
    const file = staticFile(opts.staticDir, url.pathname);
    send(file.status, req.method === 'HEAD' ? '' : file.body, file.type);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}/?token=${token}`,
    port,
    token,
    failed,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          registry.closeAll();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

/** The request body as text, or 'bad-request' past MAX_BODY_BYTES (the rest is not read). */
function readBody(req: http.IncomingMessage, done: (err: ApiError | null, body: string) => void): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let over = false;
  req.on('data', (c: Buffer) => {
    if (over) return;
    size += c.length;
    if (size > MAX_BODY_BYTES) {
      over = true;
      done(new ApiError('bad-request', `request body over ${MAX_BODY_BYTES} bytes`), '');
      req.resume();
      return;
    }
    chunks.push(c);
  });
  req.on('end', () => {
    if (!over) done(null, Buffer.concat(chunks).toString('utf8'));
  });
  req.on('error', () => {
    if (!over) {
      over = true;
      done(new ApiError('bad-request', 'the request body could not be read'), '');
    }
  });
}
