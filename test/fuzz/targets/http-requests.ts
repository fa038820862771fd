// Fuzz target: browser mode's server as a socket sees it (issue 27: one
// request target, `//[`, ended the process; any web page can send what a
// fetch allows, and anyone on the network what a socket allows). Raw bytes
// on a connection of their own (handlers/http-requests.ts, in the sandbox):
// request lines with odd methods, targets (`//[`, `%zz`, NUL, 20,000
// characters, absolute forms, `*`) and versions, headers duplicated (Host,
// the token, Content-Length), missing, huge or malformed (no colon, a NUL,
// folded, a name with a space), Transfer-Encoding with Content-Length or
// chunked garbage, bodies of anything, line ends of CR or LF alone, one to
// three requests pipelined, the bytes cut anywhere and written in pieces,
// the last request left unfinished.
//
// Property: every answer is an HTTP/1.1 answer, 2xx–4xx or 503 (busy),
// never 500 (an error the server did not expect), with the page's
// Content-Security-Policy, an error with a message in its body; or the
// server closes the connection; and after it, a normal request on a fresh
// connection is answered 200 (the server never exits, never stops
// answering).
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { fuzz, type FuzzTarget } from '../lib/harness.ts';
import { Sandbox, type SandboxAnswer } from '../lib/sandbox.ts';
import { TOKEN, type RawRequestAnswer, type RawRequestInput } from '../handlers/http-requests.ts';

export function httpRequestsSandbox(): Sandbox<RawRequestInput, RawRequestAnswer> {
  return new Sandbox(new URL('../handlers/http-requests.ts', import.meta.url), { timeoutMs: 20_000 });
}

// ---- inputs -------------------------------------------------------------------------------------

/** Text of any byte (0–255: what a latin1 string holds), control characters and NUL included. */
const bytes = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength });
/** Text a request line's parser takes (visible ASCII, no space). */
const visible = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });

const API_METHODS = ['listRecordings', 'summary', 'window', 'search', 'stats', 'findings', 'sql', 'record', 'openRecording', 'capabilities', 'nope'];

/** Targets the parser takes, ours to refuse or answer: the URL parser's failures (issue 27), escapes, traversal, forms other than a path. */
const parsedTarget = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom(
      '/',
      '/index.html',
      '/assets/app.js',
      '/favicon.ico',
      '/api/',
      '/api',
      '//[',
      'http://[',
      'http://[::1',
      '//%zz',
      '//a%00b',
      '//[/api/summary',
      '/%zz',
      '/api/%zz',
      '/%E0%A4%A',
      '/assets/%C0%AF',
      '*',
      'http://127.0.0.1/api/listRecordings',
      'https://evil.example/',
      '/..%2f..%2fsecret',
      '/assets/../../secret',
      '/%00',
      '/?token=' + 'f0'.repeat(32),
      '127.0.0.1:80',
    ),
  },
  { weight: 5, arbitrary: fc.constantFrom(...API_METHODS).map((m) => `/api/${m}`) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom('/', '/api/', '//', 'http://', '/assets/', ''), visible(40)).map(([a, b]) => a + b) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 20_000 }).map((n) => '/' + 'a'.repeat(n)) },
);

/** Headers a client sends: the page's, and duplicates and values the parser takes (ours to judge). */
const parsedHeader = fc.constantFrom(
  'content-type: application/json',
  'accept: application/x-streamscope-window',
  'accept: */*',
  'connection: keep-alive',
  'connection: close',
  'origin: http://127.0.0.1',
  'origin: https://evil.example',
  'expect: 100-continue',
  'expect: 200-ok',
  'Host: localhost:8080',
  'host: [::1]',
  'host: 127.0.0.1',
  'host: evil.example',
  'host:',
  `x-streamscope-token: ${TOKEN}`,
  'x-streamscope-token: ' + 'f'.repeat(64),
  'x-streamscope-token: ',
  'content-length: 0',
  'content-length: 5',
  'transfer-encoding: chunked',
  'connection: upgrade',
  'upgrade: websocket',
  'upgrade: h2c',
  'x-high: \x7f\xff\x80',
);

/** What a careless or hostile client writes besides: malformed, huge, many, any bytes. */
const hostileHeader = fc.oneof(
  { weight: 3, arbitrary: parsedHeader },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      'host: 127.0.0.1\0evil',
      'content-length: -1',
      'content-length: 99999999999999999999',
      'content-length: 1e3',
      'content-length: 11, 11',
      'content-length: 0x10',
      'transfer-encoding: gzip, chunked',
      'transfer-encoding: chunked, identity',
      'transfer-encoding: xchunked',
      ' folded: continuation',
      '\tfolded',
      'no colon here',
      'bad name: v',
      ': empty name',
      'x-nul: a\0b',
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 40_000 }).map((n) => `x-huge: ${'h'.repeat(n)}`) },
  { weight: 1, arbitrary: fc.integer({ min: 50, max: 400 }).map((n) => Array.from({ length: n }, (_, i) => `x-many-${i}: v`).join('\r\n')) },
  { weight: 1, arbitrary: fc.tuple(bytes(16), bytes(32)).map(([k, v]) => `${k}: ${v}`) },
  { weight: 1, arbitrary: bytes(60) },
);

const body = fc.oneof(
  { weight: 4, arbitrary: fc.constant('') },
  { weight: 3, arbitrary: fc.constantFrom('{"args":[]}', '{"args":["x"]}', '{"args":[null,{"rows":[]}]}', '{}', '[]', 'null', '{"args":') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '5\r\nhello\r\n0\r\n\r\n',
      'b\r\n{"args":[]}\r\n0\r\n\r\n',
      'zz\r\nxx\r\n',
      'ffffffffffffffff\r\nx\r\n',
      '0\r\n\r\n',
      '1;ext=x\r\na\r\n0\r\n\r\n',
      '-1\r\n\r\n',
      '5\r\nhel',
      '0\r\nx-trailer: 1\r\n\r\n',
    ),
  },
  { weight: 1, arbitrary: bytes(200) },
);

/** Mostly `usual`; one in `oneIn`, `odd`. */
const nowAndThen = <T>(usual: fc.Arbitrary<T>, odd: fc.Arbitrary<T>, oneIn = 8) =>
  fc.oneof({ weight: oneIn - 1, arbitrary: usual }, { weight: 1, arbitrary: odd });

/**
 * A request the parser takes: what our code judges (the URL, the Host, the
 * token, the method, the body), with this server's Host and the token most
 * of the time so that most get past those checks, and a Content-Length
 * that is right, absent or wrong.
 */
const parsedRequest: fc.Arbitrary<Request> = fc.record({
  method: fc.constantFrom('GET', 'GET', 'POST', 'POST', 'POST', 'HEAD', 'PUT', 'OPTIONS', 'DELETE', 'PATCH'),
  target: parsedTarget,
  version: fc.constantFrom('HTTP/1.1', 'HTTP/1.1', 'HTTP/1.1', 'HTTP/1.0'),
  host: nowAndThen(fc.constant(true), fc.constant(false)),
  token: nowAndThen(fc.constant(true), fc.constant(false), 3),
  length: nowAndThen(fc.constant<Length>('right'), fc.constantFrom<Length>('none', 'wrong')),
  headers: fc.array(parsedHeader, { maxLength: 4 }),
  eol: fc.constant('\r\n'),
  body,
  whole: nowAndThen(fc.constant(true), fc.constant(false), 12),
});

/** Anything on a request's line and in its head: methods, targets and versions of any bytes, malformed and huge headers, lone CR or LF. */
const hostileRequest: fc.Arbitrary<Request> = fc.record({
  method: fc.oneof(fc.constantFrom('GET', 'POST', 'HEAD', 'CONNECT', 'PRI', 'TRACE', 'get', 'G ET', 'GET\0', 'POST\t', 'M-SEARCH', ''), bytes(12)),
  target: fc.oneof(parsedTarget, fc.constantFrom('/\0', '', '#x', '?'), bytes(60)),
  version: fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'http/1.1', 'HTTP/11', 'HTTP/1.1 x', ''),
  host: fc.boolean(),
  token: fc.boolean(),
  length: fc.constantFrom<Length>('right', 'none', 'wrong'),
  headers: fc.array(hostileHeader, { maxLength: 6 }),
  eol: fc.constantFrom('\r\n', '\r\n', '\n', '\r', '\r\r\n', '\n\r'),
  body,
  whole: nowAndThen(fc.constant(true), fc.constant(false), 6),
});

type Length = 'right' | 'none' | 'wrong';
interface Request {
  method: string;
  target: string;
  version: string;
  host: boolean;
  token: boolean;
  length: Length;
  headers: string[];
  eol: string;
  body: string;
  whole: boolean;
}

const request: fc.Arbitrary<Request> = fc.oneof({ weight: 3, arbitrary: parsedRequest }, { weight: 1, arbitrary: hostileRequest });

function written(r: Request): string {
  const length = r.length === 'right' ? [`content-length: ${r.body.length}`] : r.length === 'wrong' ? [`content-length: ${r.body.length + 3}`] : [];
  const headers = [...(r.host ? ['host: 127.0.0.1'] : []), ...(r.token ? [`x-streamscope-token: ${TOKEN}`] : []), ...length, ...r.headers];
  const head = [`${r.method} ${r.target} ${r.version}`.replace(/ $/, ''), ...headers].join(r.eol);
  return r.whole ? `${head}${r.eol}${r.eol}${r.body}` : head;
}

/** One to three requests pipelined, their bytes cut into pieces written one by one. */
export const rawRequestInput: fc.Arbitrary<RawRequestInput> = fc
  .tuple(fc.array(request, { minLength: 1, maxLength: 3 }), fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { maxLength: 4 }))
  .map(([requests, cuts]) => {
    const all = requests.map(written).join('');
    const at = [...new Set(cuts.map((c) => Math.floor(c * all.length)))].sort((a, b) => a - b);
    const chunks: string[] = [];
    let from = 0;
    for (const c of [...at, all.length]) {
      if (c > from) chunks.push(all.slice(from, c));
      from = c;
    }
    return { chunks: chunks.length ? chunks : [''] };
  });

// ---- the property -------------------------------------------------------------------------------

interface Answer {
  status: number;
  headers: Map<string, string>;
  body: string;
}

/** The answers in what the server wrote, in order; a problem when something is no HTTP answer. */
function answersOf(raw: string, bodies: boolean): { answers: Answer[]; problem: string | null } {
  const answers: Answer[] = [];
  let at = 0;
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at);
    if (end < 0) return { answers, problem: `an answer cut short in its head: ${JSON.stringify(raw.slice(at, at + 80))}` };
    const [statusLine, ...lines] = raw.slice(at, end).split('\r\n');
    const m = /^HTTP\/1\.1 (\d{3}) /.exec(statusLine!);
    if (!m) return { answers, problem: `not an HTTP/1.1 answer: ${JSON.stringify(statusLine!.slice(0, 80))}` };
    const headers = new Map(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
    at = end + 4;
    const status = Number(m[1]);
    let body = '';
    if (status >= 200 && headers.has('content-length')) {
      const n = Number(headers.get('content-length'));
      body = raw.slice(at, at + n);
      if (bodies) at += n;
    } else if (status >= 200 && headers.get('transfer-encoding') === 'chunked') {
      for (;;) {
        const eolAt = raw.indexOf('\r\n', at);
        const size = eolAt < 0 ? NaN : parseInt(raw.slice(at, eolAt), 16);
        if (!Number.isFinite(size)) return { answers, problem: 'a chunked answer cut short' };
        body += raw.slice(eolAt + 2, eolAt + 2 + size);
        at = eolAt + 2 + size + 2;
        if (size === 0) break;
      }
    } else if (status >= 200 && /close/i.test(headers.get('connection') ?? '')) {
      // Neither, and the connection closes after it: the body runs to its end (an answer to HTTP/1.0), so nothing else
      // may be written after it. (Neither on a kept-alive connection: no body, an answer to HEAD.)
      body = raw.slice(at);
      at = raw.length;
      if (/HTTP\/1\.1 \d{3} /.test(body)) return { answers, problem: 'another answer written inside a body that runs to the end of the connection' };
    }
    answers.push({ status, headers, body });
    // Without the bodies' lengths (a HEAD answer says one and sends none): the first answer only.
    if (!bodies) break;
  }
  return { answers, problem: null };
}

export function httpRequestProblem(input: RawRequestInput, a: SandboxAnswer<RawRequestAnswer>): string | null {
  if (a.kind === 'hang') return `hang: no answer within ${a.ms} ms`;
  if (a.kind === 'died') return `the server died: ${a.message}`;
  const { received, closedByServer, after } = a.value;
  const sent = input.chunks.join('');
  if (!received && !closedByServer) return 'no answer and the connection left open';
  const { answers, problem } = answersOf(received, !/HEAD/i.test(sent));
  if (problem) return problem;
  for (const x of answers) {
    // An interim answer (100 Continue, to `expect: 100-continue`) is Node's own, two lines.
    if (x.status < 200) continue;
    if (x.status === 500) return `500, an error the server did not expect: ${x.body.slice(0, 200)}`;
    if (x.status > 500 && x.status !== 503) return `status ${x.status}: ${x.body.slice(0, 200)}`;
    if (!x.headers.get('content-security-policy')) return `status ${x.status} without the Content-Security-Policy`;
    if (x.status >= 400 && x.headers.get('content-length') === '0' && !/HEAD/i.test(sent)) return `status ${x.status} without a message`;
  }
  if ('error' in after) return `a normal request afterwards failed: ${after.error}`;
  if (after.status !== 200) return `a normal request afterwards answered ${after.status}`;
  return null;
}

// ---- saved inputs -------------------------------------------------------------------------------

export function saveRawRequest(input: RawRequestInput, dir: string, stem: string): string {
  const file = path.join(dir, `${stem}.json`);
  fs.writeFileSync(file, JSON.stringify(input, null, 1) + '\n');
  return file;
}

export function loadRawRequest(file: string): RawRequestInput {
  return JSON.parse(fs.readFileSync(file, 'utf8')) as RawRequestInput;
}

export const target: FuzzTarget = {
  name: 'http-requests',
  async run(options) {
    const sandbox = httpRequestsSandbox();
    try {
      return await fuzz(
        {
          name: 'http-requests',
          arbitrary: rawRequestInput,
          check: async (input) => httpRequestProblem(input, await sandbox.run(input)),
          save: saveRawRequest,
        },
        options,
      );
    } finally {
      await sandbox.close();
    }
  },
};
