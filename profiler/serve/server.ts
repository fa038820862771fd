// Browser mode: `streamscope serve FILE...` serves the renderer and the
// typed API (profiler/contract/api.ts) over HTTP, for headless GPU servers and
// for the end-to-end tests.
//
// Security model: the server listens on loopback unless the caller asks
// for another address; every request must name this server in its Host
// header (listen-address.ts: a DNS-rebound name is refused, 421); every
// /api request must carry the random token of the printed URL (or the
// user's own, `--token-file`) in the `x-streamscope-token` header (a
// header, so a page of another origin cannot make the browser send it, and
// a DNS-rebound host name does not get it either); it is read-only (no
// opening other files, no recording); static files come only from the
// renderer's build folder; every answer, errors included, carries the
// Content-Security-Policy (no inline scripts, nothing remote).
//
// A client that goes away before its answer costs what had started: an
// answer not yet computed is not computed, one computed is not encoded or
// sent (work-queue.ts: answers are computed in their turn, round the
// clients, and dropped if their client has gone by then; analyses wait
// there too, not on the analysis thread).
//
// Under a flood (issue 27): at most MAX_CONNECTIONS connections are held,
// MAX_CONNECTIONS_PER_CLIENT from one address, one that sent no request for
// longest (or the newest of the client holding the most) making room for a
// new one (connections.ts); Node's timeouts close a connection without a whole
// header after HEADERS_TIMEOUT_MS; a client (an address) has at most
// MAX_WAITING_PER_CLIENT requests waiting per queue, and its turns alternate
// with the other clients' (work-queue.ts), past which it is answered 429,
// or 503 when a queue holds MAX_WAITING, with Retry-After; answers are
// bounded in size by the query layer (recording-query.ts window, search.ts,
// stats.ts).
//
// Protocol: POST /api/<method> with JSON {args: [...]} → 200 with the
// result as JSON, or an ApiErrorShape with a 4xx/5xx status.
import crypto from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import { checkArguments } from '../query/api-args.ts';
import { ApiError, apiErrorOf } from '../query/api-error.ts';
import { apiMethods, type ApiErrorCode, type ApiMethod, type Capabilities, type OpenFailure } from '../contract/api.ts';
import { QueryClient } from '../query/query-client.ts';
import type { JobView } from '../query/job-query.ts';
import type { OpenFilesResult } from '../query/session.ts';
import { defaultJobCacheDir, type OpenMode } from '../merge/job-cache.ts';
import { WINDOW_MEDIA_TYPE } from '../contract/window-codec.ts';
import { contentSecurityPolicy } from '../contract/content-security-policy.ts';
import { VERSION } from '../contract/version.ts';
import { ConnectionLimit } from './connections.ts';
import { hostAllowed, isLoopback } from './listen-address.ts';
import { staticFile } from './static-files.ts';
import { DROPPED, QueueFull, WorkQueue } from './work-queue.ts';

export { isLoopback };

/** The page's one policy (the desktop app's too), for a page that calls the API over HTTP on its own origin. */
export const CONTENT_SECURITY_POLICY = contentSecurityPolicy('http');

/** The biggest request body accepted: API arguments are small. */
const MAX_BODY_BYTES = 1 << 20;

/**
 * A connection's request header must have come whole within this (Node's
 * default: 60 s, checked every 30 s): what a connection that sends nothing,
 * or a header a byte at a time, can hold. A page's headers come in one
 * packet.
 */
export const HEADERS_TIMEOUT_MS = 10_000;
/** The whole request, its body (at most MAX_BODY_BYTES) included (Node's default: 300 s). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** An idle kept-alive connection (a page's, between two requests) is closed after this. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;
/** How often Node looks for connections past those timeouts. */
const TIMEOUT_CHECK_MS = 1_000;
/** What a refused request is told to wait before asking again (429, 503). */
const RETRY_AFTER_S = 1;
/**
 * Refusals after which a connection is not read for RETRY_AFTER_S: no room
 * in the queue (429, 503), no or a wrong token (403), another host name
 * (421). A page never meets them; a client that sends its next request the
 * moment each refusal comes, over a thousand connections, kept the event
 * loop busy with nothing else (39,000 refusals a second), and new
 * connections waited for their turn in it (libuv accepts one a turn):
 * a page's request got no answer in 10 s.
 */
const HELD_OFF = new Set([403, 421, 429, 503]);

/** Connections held off now. */
const heldOff = new WeakSet<Socket>();

/** `socket` not read for RETRY_AFTER_S. */
function holdOff(socket: Socket): void {
  if (socket.destroyed || heldOff.has(socket)) return;
  heldOff.add(socket);
  socket.pause();
  setTimeout(() => {
    heldOff.delete(socket);
    if (!socket.destroyed) socket.resume();
  }, RETRY_AFTER_S * 1000).unref();
}

export interface ServerOptions {
  files: string[];
  /** 0 (default): any free port. */
  port?: number;
  /** Default 127.0.0.1. Any non-loopback address needs allowRemote. */
  host?: string;
  /** Listening where others can connect is a decision the user makes explicitly. */
  allowRemote?: boolean;
  /** The access token (`serve --token-file`, token-file.ts); default: 32 random bytes, in hex. */
  token?: string;
  /** Host names beyond those listen-address.ts accepts that requests may reach the server by (`serve --allow-host`). */
  allowedHosts?: string[];
  /** The renderer's build folder (renderer/dist). */
  staticDir: string;
  /** Called with each file that could not be opened (the server keeps going without it). */
  onOpenError?: (file: string, message: string) => void;
  /**
   * Several files: the recordings of one job's ranks are served as one,
   * merged into `jobCacheDir` (default: merge/job-cache.ts
   * defaultJobCacheDir) or from their ranks' summaries (`jobView`:
   * query/job-query.ts jobViewOf), unless `openMode` says otherwise.
   */
  openMode?: OpenMode;
  jobView?: JobView;
  jobCacheDir?: string;
  /** Called when files were opened as one job (merged now, or reused from the cache). */
  onJob?: (job: NonNullable<OpenFilesResult['job']>) => void;
  /** Connections held at most, and from one client (connections.ts MAX_CONNECTIONS, MAX_CONNECTIONS_PER_CLIENT); tests lower them. */
  maxConnections?: number;
  maxConnectionsPerClient?: number;
  /** HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS; tests lower them. */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
}

export interface RunningServer {
  url: string;
  port: number;
  token: string;
  /** Files given that could not be opened, with why. */
  failed: OpenFailure[];
  /** Answers not computed because their client had gone, so far. */
  dropped(): number;
  /** Requests answered 429 or 503 because their client's queue, or a whole queue, was full, so far. */
  refused(): number;
  /** Connections held now, and those closed so far to keep them to maxConnections (connections.ts). */
  connections(): { open: number; evicted: number; refused: number };
  /** Errors of the server itself once listening (an accept refused for want of file descriptors), so far: they end nothing. */
  serverErrors(): number;
  close(): Promise<void>;
}

// A recording the server cannot read (a row no writer stores: store/row-checks.ts; a corrupt page; a newer
// schema) is the file's error, 422 with its API code as every other answer carries one: 500 is only `internal`.
const STATUS: Partial<Record<ApiErrorCode, number>> = {
  'bad-request': 400,
  forbidden: 403,
  'not-found': 404,
  'not-a-recording': 422,
  corrupt: 422,
  'newer-schema': 422,
  'not-mergeable': 422,
  locked: 423,
  busy: 503,
};

/** Sent with every answer: static files, API results, errors of either, and Node's own refusals (clientError). */
const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'cross-origin-resource-policy': 'same-origin',
} as const;

/** The methods the session answers on its analysis thread (query/session.ts); sql on a thread of its own. */
const ANALYSIS_METHODS: ReadonlySet<ApiMethod> = new Set<ApiMethod>([
  'findings',
  'stats',
  'scopeInfo',
  'ranges',
  'iterations',
  'concurrency',
  'dependencies',
  'waitSpans',
  'compare',
]);

/** An answer ready to send: JSON text, or a window's bytes. */
interface Answer {
  body: string | Uint8Array;
  type: string;
}

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
  const token = opts.token ?? crypto.randomBytes(32).toString('hex');
  // Every recording is read on the query thread (query/query-worker.ts), as in
  // the desktop app: this thread only accepts connections, reads requests and
  // writes answers the query thread serialized. It used to compute windows
  // and searches itself, tens of ms each, and libuv accepts one connection a
  // turn of the event loop: under 10,000 window requests in parallel a page's
  // new connection waited in the kernel's full queue (the listen backlog),
  // and its request got no answer in 10 s.
  const query = new QueryClient();
  const opened = await query.openFiles(opts.files, opts.jobCacheDir ?? defaultJobCacheDir(), opts.openMode, opts.jobView);
  const failed: OpenFailure[] = opened.failed;
  for (const f of failed) opts.onOpenError?.(f.file, f.message);
  if (opened.job) opts.onJob?.(opened.job);

  // Where each answer waits for its turn (work-queue.ts), round the clients:
  // the query thread's windows, searches and details, one computing and the
  // next ready; the SQL console's thread likewise. The analysis thread
  // orders what it has by what a page waits for (analysis-channel.ts
  // PANEL_ORDER: the Stats tab's tables before the findings' diagnosis), so
  // it is handed as many as a page puts on the wire (renderer/src/api/
  // analysis-limiter.ts: four): two held the findings and their label, and
  // a Stats tab clicked as a 10 M-operation page opened waited here 9 s,
  // then behind the overlays, for tables the thread had in 2 s.
  const reads = new WorkQueue(2);
  const analyses = new WorkQueue(4);
  const queries = new WorkQueue(2);
  const routes: Routes = {
    host,
    allowedHosts: opts.allowedHosts ?? [],
    staticDir: opts.staticDir,
    hasToken: tokenCheck(token),
    queueOf: (method) => (method === 'sql' ? queries : ANALYSIS_METHODS.has(method) ? analyses : reads),
    call: answers(query, failed),
  };

  // The one entry of every request: nothing a request holds may end the
  // server. What handle() cannot answer itself (it threw) is answered 500
  // here, or its connection closed where an answer had begun.
  const headersTimeout = opts.headersTimeoutMs ?? HEADERS_TIMEOUT_MS;
  const server = http.createServer(
    {
      headersTimeout,
      requestTimeout: Math.max(headersTimeout, opts.requestTimeoutMs ?? REQUEST_TIMEOUT_MS),
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_MS, headersTimeout),
      // An HTTP/1.1 request without Host is refused by the Host check (421, with the security headers and why), not by
      // Node's bare 400.
      requireHostHeader: false,
    },
    (req, res) => {
      try {
        handle(routes, req, res);
      } catch (e) {
        if (res.headersSent || res.destroyed) return void res.destroy();
        res.writeHead(500, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
        res.end(`internal error: ${(e as Error).message}`);
      }
    },
  );
  const connections = new ConnectionLimit(server, { max: opts.maxConnections, perClient: opts.maxConnectionsPerClient });
  server.on('checkExpectation', refuseExpectation);
  server.on('clientError', refuseMalformed(connections));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Once listening, an error of the server itself (an accept refused for want of file descriptors:
  // EMFILE) ends nothing: the connection it was for is not served, the rest are.
  let serverErrors = 0;
  server.on('error', () => serverErrors++);
  const port = (server.address() as { port: number }).port;
  const urlHost = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return {
    url: `http://${urlHost}:${port}/?token=${token}`,
    port,
    token,
    failed,
    dropped: () => reads.dropped + analyses.dropped + queries.dropped,
    refused: () => reads.refused + analyses.refused + queries.refused,
    connections: () => ({ open: connections.open, evicted: connections.evicted, refused: connections.refused }),
    serverErrors: () => serverErrors,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          query.close();
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

/** What answering a request needs of the server: its name, the token check, the queues and the answers. */
interface Routes {
  host: string;
  allowedHosts: string[];
  staticDir: string;
  hasToken: (req: http.IncomingMessage) => boolean;
  queueOf: (method: ApiMethod) => WorkQueue;
  call: (method: ApiMethod, args: unknown[], binary: boolean) => Promise<Answer>;
}

/** Whether a request carries `token` (compared in constant time). */
function tokenCheck(token: string): (req: http.IncomingMessage) => boolean {
  const tokenBytes = Buffer.from(token);
  return (req) => {
    const given = req.headers['x-streamscope-token'];
    if (typeof given !== 'string') return false;
    const bytes = Buffer.from(given);
    return bytes.length === tokenBytes.length && crypto.timingSafeEqual(bytes, tokenBytes);
  };
}

const json = (value: unknown): Answer => ({ body: JSON.stringify(value), type: 'application/json' });

/** Each method's answer, ready to send; `binary`: a window in its binary form (window-codec.ts says why). */
function answers(query: QueryClient, failed: OpenFailure[]): Routes['call'] {
  return async (method, args, binary) => {
    switch (method) {
      case 'capabilities':
        return json(CAPABILITIES);
      case 'recentFiles':
        return json([]); // browser mode lists no local paths
      // The files stay served (other pages may show them): check the id, release nothing.
      case 'closeRecording':
        await query.recordingState(args[0] as string);
        return json(null);
      // With the files of `serve FILE...` that could not be opened: the page shows them.
      case 'summary':
        return json({ ...(await query.summary(args[0] as string)), openErrors: failed });
      case 'openRecording':
      case 'openRecordings':
      case 'showOpenDialog':
      case 'record':
      case 'recordStatus':
      case 'exportTrace':
        throw new ApiError('forbidden', `${method} is not available in browser mode (read-only): use the desktop app (streamscope open)`);
      case 'window':
        if (binary) return { body: await query.answer('window', args, 'window-binary'), type: WINDOW_MEDIA_TYPE };
        return { body: await query.answer(method, args, 'json'), type: 'application/json' };
      default:
        return { body: await query.answer(method, args, 'json'), type: 'application/json' };
    }
  };
}

/** One request: the target, the Host check, then an API call (the token, the method, the arguments, its turn) or a static file. */
function handle(routes: Routes, req: http.IncomingMessage, res: http.ServerResponse): void {
  // The client went away before its answer was sent (closed the tab, aborted the fetch).
  let closed = false;
  res.once('close', () => (closed = !res.writableFinished));
  // Its connection's end read (the client closed it), or the connection gone.
  const gone = () => closed || req.socket.readableEnded || req.socket.destroyed;
  const send = (status: number, body: string | Buffer, type: string, extra: Record<string, string> = {}) => {
    if (gone()) return;
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type, ...extra });
    res.end(body);
    // After Node's own end of the answer, which resumes reading the connection (in a tick after 'finish').
    if (HELD_OFF.has(status)) res.once('finish', () => setImmediate(holdOff, req.socket));
  };
  const sendError = (e: ApiError, status = STATUS[e.code] ?? 500) =>
    send(status, JSON.stringify(e.toJSON()), 'application/json', e.code === 'busy' ? { 'retry-after': String(RETRY_AFTER_S) } : {});
  // A target the URL parser refuses (`//[`, `http://[`, `//%zz`) is the client's error, before anything else is looked at.
  let url: URL;
  try {
    url = new URL(req.url ?? '/', 'http://localhost');
  } catch {
    return send(400, 'bad request target', 'text/plain; charset=utf-8');
  }
  const api = url.pathname.startsWith('/api/');

  // DNS rebinding (listen-address.ts): a name that is not this server's is answered by nothing else.
  if (!hostAllowed(req.headers.host, routes.host, routes.allowedHosts)) {
    const message = `this server does not answer to the host name '${String(req.headers.host ?? '').slice(0, 100)}' (DNS rebinding protection): use the address printed by \`streamscope serve\`, or name this one with --allow-host`;
    return api ? sendError(new ApiError('forbidden', message), 421) : send(421, message, 'text/plain; charset=utf-8');
  }
  if (api) {
    if (!routes.hasToken(req)) return sendError(new ApiError('forbidden', 'missing or wrong access token (open the URL that `streamscope serve` printed)'));
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
      // The same argument contract as the Electron side (api-args.ts); then
      // the answer in its turn (work-queue.ts), on the query, analysis or SQL thread.
      let checked: unknown[];
      try {
        checked = checkArguments(method, args);
      } catch (e) {
        return sendError(apiErrorOf(e));
      }
      const binary = method === 'window' && (req.headers.accept ?? '').includes(WINDOW_MEDIA_TYPE);
      // A client is its address: its turns alternate with other clients' (work-queue.ts).
      routes
        .queueOf(method)
        .run(
          () => routes.call(method, checked, binary),
          () => !gone(),
          req.socket.remoteAddress ?? '',
        )
        .then(
          (answer) => {
            if (answer === DROPPED) return;
            const { body, type } = answer;
            send(200, typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength), type);
          },
          (e: unknown) =>
            e instanceof QueueFull ? sendError(new ApiError('busy', `${method}: ${e.message}`), e.scope === 'client' ? 429 : 503) : sendError(apiErrorOf(e)),
        );
    });
    return;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'method not allowed', 'text/plain; charset=utf-8');
  if (url.pathname === '/favicon.ico') return send(204, '', 'image/x-icon');
  const file = staticFile(routes.staticDir, url.pathname);
  send(file.status, req.method === 'HEAD' ? '' : file.body, file.type);
}

/** An `Expect:` other than 100-continue: Node's own 417 would go without the security headers or a word of why. */
function refuseExpectation(req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(417, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8' });
  res.end(`expectation not supported: ${String(req.headers.expect).slice(0, 100)} (only 100-continue is)\n`);
}

/**
 * What Node answers itself (a request it cannot parse, headers too large, a request too slow): the same headers, CSP included,
 * and a message. Not when an answer to an earlier request on the connection is on its way (pipelined, or after a
 * `Connection: close` request): another written now would be read as that one's, or inside its body. The connection ends
 * once what was written of it is sent.
 */
function refuseMalformed(connections: ConnectionLimit): (err: NodeJS.ErrnoException, socket: Socket) => void {
  return (err, socket) => {
    if (!socket.writable || err.code === 'ECONNRESET') return void socket.destroy();
    const closeAfter = (last?: string) => {
      socket.once('finish', () => socket.destroy());
      if (last === undefined) socket.end();
      else socket.end(last);
    };
    if (connections.answering(socket)) return closeAfter();
    const status = err.code === 'HPE_HEADER_OVERFLOW' ? 431 : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
    // The parser's code names what it refused: HPE_INVALID_METHOD, HPE_UNEXPECTED_CONTENT_LENGTH, …
    const body = `${http.STATUS_CODES[status]}${err.code ? ` (${err.code})` : ''}\n`;
    const head = Object.entries({
      ...SECURITY_HEADERS,
      'content-type': 'text/plain; charset=utf-8',
      connection: 'close',
      'content-length': String(Buffer.byteLength(body)),
    })
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    closeAfter(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\n${head}\r\n${body}`);
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
