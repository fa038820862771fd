// `node bench/serve-flood.ts` (or `npm run bench -- --only serve-flood`):
// browser mode under a flood (issue 27, item 6). ~20,000 connections that
// sent nothing stopped `serve` answering for over two minutes; here
// `streamscope serve` (the real CLI, a process of its own) on a generated
// recording (`--flood-ops`, default 1 M operations on 16 streams), loopback,
// while a page asks for a window (the next when the last is in, at most one
// every 100 ms, as the timeline asks while panning) and its latency is measured:
//
//   quiet        nothing else: what the page's request costs alone;
//   half-open    `--half-open` (20,000) connections that send half a
//                request header and nothing more, from 20 addresses
//                (127.0.0.10–29), each one the server closes opened again
//                after 5 s (a slowloris re-dials);
//   no token     `--parallel` (10,000) requests at once without the token,
//                what any web page can send (fetch no-cors), from 4
//                addresses (127.0.0.40–43), each sent again on its
//                connection as soon as answered, a connection closed opened
//                again after 1 s;
//   token        the same with the token: the page's window requests (a view
//                anywhere, a ten-thousandth of the recording to all of it);
//   both         half-open and token at once.
//
// The page's request is a window of the whole recording at 1,600 pixels in
// binary, as the timeline asks it, on a fresh connection from 127.0.0.1 (a
// connection the flood might have taken the place of): latency from
// connecting to the last byte; no answer in 10 s, or any status but 200, a
// failure. The flood runs in child processes at niceness 10 (an attacker
// elsewhere does not take this machine's cores; on loopback it shares
// them), each with its soft file-descriptor limit raised to the hard one
// (`ulimit -n`): a connection is a descriptor on each side, and the server
// holds at most 1,024 (serve/connections.ts). Where the hard limit is below
// a child's share, more children are started. The server's descriptors
// (≈ connections held) and memory are read from /proc every 250 ms.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { WINDOW_MEDIA_TYPE } from '../profiler/contract/window-codec.ts';
import { generate } from './generate-recording.ts';
import { quantile } from './stats.ts';
import { post, startCli } from './serve-cli.ts';

export interface ServeFloodOptions {
  /** GPU operations of the generated recording. */
  ops: number;
  halfOpen: number;
  parallel: number;
  /** Each phase. */
  seconds: number;
  /** The phases to run, in this order (all of them by default). */
  phases?: FloodPhase[];
}

export const FLOOD_PHASES = ['quiet', 'half-open', 'no-token', 'token', 'both'] as const;
export type FloodPhase = (typeof FLOOD_PHASES)[number];

/** What a flooding child has seen so far. */
interface FloodCounts {
  /** Connections opened (each re-dial counts). */
  opened: number;
  /** Connections the server closed (refused at once, or held and closed later). */
  closedByServer: number;
  /** Connections open now, the child's side. */
  open: number;
  /** Answers by status. */
  answers: Record<string, number>;
  /** Connect errors (EADDRNOTAVAIL, ECONNREFUSED, …). */
  connectErrors: number;
}

const HALF_OPEN_ADDRESSES = 20;
const PARALLEL_ADDRESSES = 4;
const HALF_OPEN_REDIAL_MS = 5000;
const PARALLEL_REDIAL_MS = 1000;
const PAGE_EVERY_MS = 100;
const PAGE_TIMEOUT_MS = 10_000;
const WIDTH_PX = 1600;

// ---- the flooding children ----------------------------------------------------------------------

/** A child's connections, spread over `addresses` source addresses, each opened again after `redialMs` when closed. */
function floodChild(kind: 'half-open' | 'parallel', port: number, count: number, addresses: string[], redialMs: number, request: string | null): void {
  const counts: FloodCounts = { opened: 0, closedByServer: 0, open: 0, answers: {}, connectErrors: 0 };
  let stopping = false;
  const dial = (from: string) => {
    if (stopping) return;
    const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
    counts.opened++;
    let connected = false;
    let pending = '';
    socket.setEncoding('latin1');
    socket.on('connect', () => {
      connected = true;
      counts.open++;
      // Half a header, never finished; or a whole request, sent again as each answer comes.
      socket.write(kind === 'half-open' ? 'GET / HTTP/1.1\r\nhost: 127.0.0.1\r\nx-half: ' : request!);
    });
    socket.on('data', (d: string) => {
      pending += d;
      // Count answers by their status lines (their bodies are window bytes or short JSON); send the next.
      for (;;) {
        const m = /HTTP\/1\.1 (\d{3}) [^\r\n]*\r\n/.exec(pending);
        if (!m) break;
        counts.answers[m[1]!] = (counts.answers[m[1]!] ?? 0) + 1;
        pending = pending.slice(m.index + m[0].length);
        if (kind === 'parallel' && !stopping) socket.write(request!);
      }
      if (pending.length > 1 << 16) pending = pending.slice(-256);
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (!connected) counts.connectErrors++;
      void e;
    });
    socket.on('close', () => {
      if (connected) {
        counts.open--;
        if (!stopping) counts.closedByServer++;
      }
      setTimeout(() => dial(from), redialMs);
    });
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  };
  const sockets = new Set<net.Socket>();
  // Opened in batches, a turn between them, so that the listen queue is not the first thing to overflow.
  let started = 0;
  const batch = () => {
    for (let i = 0; i < 500 && started < count; i++, started++) dial(addresses[started % addresses.length]!);
    if (started < count) setTimeout(batch, 5);
  };
  batch();
  const report = setInterval(() => process.send!({ counts }), 1000);
  process.on('message', (m: { stop?: boolean }) => {
    if (!m.stop) return;
    stopping = true;
    clearInterval(report);
    for (const s of sockets) s.destroy();
    process.send!({ counts, stopped: true }, () => process.exit(0));
  });
  process.on('disconnect', () => process.exit(0));
}

/** Children flooding with `count` connections in all, each with its descriptor limit raised to the hard one. */
function startFlood(kind: 'half-open' | 'parallel', port: number, count: number, addresses: string[], redialMs: number, request: string | null) {
  const hard = hardFileLimit();
  // Each child's connections, and a margin for Node's own descriptors.
  const perChild = Math.max(1, Math.min(10_000, hard - 256));
  const children: { child: ChildProcess; counts: FloodCounts }[] = [];
  const n = Math.ceil(count / perChild);
  for (let k = 0; k < n; k++) {
    // The addresses dealt out among the children (all of them to each, if fewer than children).
    const own = addresses.filter((_, i) => i % n === k);
    const args = [
      import.meta.filename,
      '--child',
      kind,
      String(port),
      String(Math.min(perChild, count - k * perChild)),
      (own.length ? own : addresses).join(','),
      String(redialMs),
    ];
    const child = spawn('bash', ['-c', `ulimit -n ${hard} && exec nice -n 10 "$0" "$@"`, process.execPath, ...args], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, STREAMSCOPE_FLOOD_REQUEST: request ?? '' },
    });
    const entry = { child, counts: { opened: 0, closedByServer: 0, open: 0, answers: {}, connectErrors: 0 } as FloodCounts };
    child.on('message', (m: { counts: FloodCounts }) => (entry.counts = m.counts));
    children.push(entry);
  }
  return {
    counts: (): FloodCounts => sum(children.map((c) => c.counts)),
    stop: () =>
      Promise.all(
        children.map(
          ({ child }) =>
            new Promise<void>((resolve) => {
              if (child.exitCode !== null) return resolve();
              child.once('exit', () => resolve());
              child.send({ stop: true });
              setTimeout(() => child.kill('SIGKILL'), 5000).unref();
            }),
        ),
      ),
  };
}

function sum(all: FloodCounts[]): FloodCounts {
  const total: FloodCounts = { opened: 0, closedByServer: 0, open: 0, answers: {}, connectErrors: 0 };
  for (const c of all) {
    total.opened += c.opened;
    total.closedByServer += c.closedByServer;
    total.open += c.open;
    total.connectErrors += c.connectErrors;
    for (const [k, v] of Object.entries(c.answers)) total.answers[k] = (total.answers[k] ?? 0) + v;
  }
  return total;
}

/** The hard limit on open files (`ulimit -Hn`), which a child may raise its own soft limit to. */
function hardFileLimit(): number {
  const line = fs
    .readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const hard = Number(line?.trim().split(/\s+/)[4]);
  return Number.isFinite(hard) ? hard : 1024;
}

// ---- the page's request, and the server -------------------------------------------------------------

/** The page's window request on a fresh connection from 127.0.0.1: its latency (ms), or why it failed. */
function pageRequest(port: number, token: string, body: string): Promise<{ ms: number; connectMs: number } | { error: string }> {
  const t0 = performance.now();
  let connectMs = NaN;
  return new Promise((resolve) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/window',
        agent: false,
        headers: { 'x-streamscope-token': token, 'content-type': 'application/json', accept: WINDOW_MEDIA_TYPE, 'content-length': Buffer.byteLength(body) },
        timeout: PAGE_TIMEOUT_MS,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200 ? { ms: performance.now() - t0, connectMs } : { error: `HTTP ${res.statusCode}` }));
        res.on('error', (e) => resolve({ error: e.message }));
      },
    );
    // Connecting apart: a connection waits in the kernel's queue (the listen backlog) until the server accepts it.
    req.on('socket', (socket) => socket.once('connect', () => (connectMs = performance.now() - t0)));
    req.on('timeout', () => req.destroy(new Error(`no answer in ${PAGE_TIMEOUT_MS} ms`)));
    req.on('error', (e) => resolve({ error: e.message }));
    req.end(body);
  });
}

/** The server's descriptors open (≈ connections held, plus ~30 of its own) and resident memory (MiB). */
function serverSample(pid: number): { fds: number; rssMiB: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return { fds: fs.readdirSync(`/proc/${pid}/fd`).length, rssMiB: Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1]) / 1024 };
}

interface PhaseResult {
  phase: string;
  page: { requests: number; failed: number; errors: string[]; p50Ms: number; p99Ms: number; maxMs: number; connectP50Ms: number; connectP99Ms: number };
  flood: FloodCounts | null;
  server: { fdsMax: number; rssMaxMiB: number; alive: boolean };
}

/** Runs the benchmark; returns its figures and the lines to print. */
export async function benchServeFlood(opts: ServeFloodOptions): Promise<{ result: Record<string, unknown>; lines: string[] }> {
  const lines: string[] = [];
  const file = path.join(os.tmpdir(), `streamscope-bench-flood-${opts.ops}-16.sqlite`);
  if (!fs.existsSync(file)) {
    generate(`${file}.tmp`, opts.ops, 16);
    fs.renameSync(`${file}.tmp`, file);
  }
  const { child: server, url } = await startCli(file);
  const base = url.split('?')[0]!;
  const token = new URL(url).searchParams.get('token')!;
  const port = Number(new URL(url).port);
  const results: PhaseResult[] = [];
  try {
    const [handle] = await post<{ recordingId: string }[]>(base, token, 'listRecordings', []);
    const id = handle!.recordingId;
    const summary = await post<{ startNs: number; endNs: number; streams: { rowId: string }[]; processes: { threads: { apiRowId: string }[] }[] }>(
      base,
      token,
      'summary',
      [id],
    );
    const rows = [...summary.streams.map((s) => s.rowId), ...summary.processes.flatMap((p) => p.threads.map((t) => t.apiRowId))];
    const span = summary.endNs - summary.startNs;
    const windowBody = (start: number, end: number) =>
      JSON.stringify({
        args: [
          id,
          {
            rows,
            startNs: Math.floor(start),
            endNs: Math.ceil(end),
            resolutionNs: 2 ** Math.max(0, Math.floor(Math.log2(Math.max(1, (end - start) / WIDTH_PX)))),
          },
        ],
      });
    const pageBody = windowBody(summary.startNs, summary.endNs);
    // The flood's window requests: a view from a ten-thousandth of the recording to all of it, anywhere (fixed per connection).
    const view = span * 10 ** (-4 * Math.random());
    const start = summary.startNs + Math.random() * (span - view);
    const floodBody = windowBody(start - view, start + 2 * view);
    const rawRequest = (withToken: boolean) =>
      `POST /api/window HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${withToken ? `x-streamscope-token: ${token}\r\n` : ''}content-type: application/json\r\naccept: ${WINDOW_MEDIA_TYPE}\r\ncontent-length: ${Buffer.byteLength(floodBody)}\r\n\r\n${floodBody}`;
    const halfOpenFrom = Array.from({ length: HALF_OPEN_ADDRESSES }, (_, i) => `127.0.0.${10 + i}`);
    const parallelFrom = Array.from({ length: PARALLEL_ADDRESSES }, (_, i) => `127.0.0.${40 + i}`);
    // Warm: the first window loads what later ones reuse.
    await pageRequest(port, token, pageBody);

    const phase = async (name: string, floods: (() => ReturnType<typeof startFlood>)[]) => {
      const running = floods.map((f) => f());
      // The flood's connections opened first (a few seconds for 20,000).
      if (running.length) await new Promise((r) => setTimeout(r, 5000));
      const latencies: number[] = [];
      const connects: number[] = [];
      const errors: string[] = [];
      let fdsMax = 0;
      let rssMax = 0;
      const sampler = setInterval(() => {
        try {
          const s = serverSample(server.pid!);
          fdsMax = Math.max(fdsMax, s.fds);
          rssMax = Math.max(rssMax, s.rssMiB);
        } catch {
          // the server is gone: said below
        }
      }, 250);
      const until = performance.now() + opts.seconds * 1000;
      // As the timeline asks while panning: the next window when the last is in, at most one every PAGE_EVERY_MS
      // (the page asks for the view it shows, not for every view it passed; a request queued behind its own
      // earlier ones would measure the page's own backlog, not the flood's).
      while (performance.now() < until) {
        const next = performance.now() + PAGE_EVERY_MS;
        const r = await pageRequest(port, token, pageBody);
        if ('ms' in r) {
          latencies.push(r.ms);
          connects.push(r.connectMs);
        } else errors.push(r.error);
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
      }
      clearInterval(sampler);
      const flood = running.length ? sum(running.map((f) => f.counts())) : null;
      await Promise.all(running.map((f) => f.stop()));
      const requests = latencies.length + errors.length;
      results.push({
        phase: name,
        page: {
          requests,
          failed: errors.length,
          errors: [...new Set(errors)].slice(0, 5),
          p50Ms: quantile(latencies, 0.5),
          p99Ms: quantile(latencies, 0.99),
          maxMs: latencies.reduce((m, x) => Math.max(m, x), 0),
          connectP50Ms: quantile(connects, 0.5),
          connectP99Ms: quantile(connects, 0.99),
        },
        flood,
        server: { fdsMax, rssMaxMiB: rssMax, alive: server.exitCode === null },
      });
      // The server's connections from the flood closed, the next phase starts clean.
      await new Promise((r) => setTimeout(r, 2000));
    };
    const halfOpen = () => startFlood('half-open', port, opts.halfOpen, halfOpenFrom, HALF_OPEN_REDIAL_MS, null);
    const parallel = (withToken: boolean) => () => startFlood('parallel', port, opts.parallel, parallelFrom, PARALLEL_REDIAL_MS, rawRequest(withToken));
    const phases: Record<FloodPhase, () => Promise<void>> = {
      quiet: () => phase('quiet', []),
      'half-open': () => phase(`${opts.halfOpen.toLocaleString('en-US')} half-open`, [halfOpen]),
      'no-token': () => phase(`${opts.parallel.toLocaleString('en-US')} parallel, no token`, [parallel(false)]),
      token: () => phase(`${opts.parallel.toLocaleString('en-US')} parallel, token (window)`, [parallel(true)]),
      both: () => phase('both (half-open + parallel with token)', [halfOpen, parallel(true)]),
    };
    for (const p of opts.phases ?? FLOOD_PHASES) await phases[p]();
  } finally {
    server.kill('SIGTERM');
  }

  lines.push(
    '',
    `Browser mode under a flood: streamscope serve, ${opts.ops.toLocaleString('en-US')} operations, loopback; the page's window on a fresh connection when its last is in, at most one every ${PAGE_EVERY_MS} ms, ${opts.seconds} s a phase (${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')})`,
    '| phase | page requests | p50 | p99 | max | connected p50 / p99 | failed | flood connections opened / closed by the server | flood answers | server fds (max) | RSS max |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const r of results) {
    const f = r.flood;
    const answers = f
      ? Object.entries(f.answers)
          .sort()
          .map(([k, v]) => `${k}: ${v.toLocaleString('en-US')}`)
          .join(', ') || '—'
      : '—';
    lines.push(
      `| ${r.phase} | ${r.page.requests} | ${r.page.p50Ms.toFixed(0)} ms | ${r.page.p99Ms.toFixed(0)} ms | ${r.page.maxMs.toFixed(0)} ms | ${r.page.connectP50Ms.toFixed(0)} / ${r.page.connectP99Ms.toFixed(0)} ms | ${r.page.failed}${r.page.errors.length ? ` (${r.page.errors.join('; ')})` : ''} | ${f ? `${f.opened.toLocaleString('en-US')} / ${f.closedByServer.toLocaleString('en-US')}${f.connectErrors ? ` (${f.connectErrors} connect errors)` : ''}` : '—'} | ${answers} | ${r.server.fdsMax} | ${r.server.rssMaxMiB.toFixed(0)} MiB${r.server.alive ? '' : ' (the server died)'} |`,
    );
  }
  return {
    result: {
      ops: opts.ops,
      halfOpen: opts.halfOpen,
      parallel: opts.parallel,
      seconds: opts.seconds,
      loadavg: os.loadavg(),
      cores: os.cpus().length,
      phases: results,
    },
    lines,
  };
}

// ---- as a script --------------------------------------------------------------------------------

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename) {
  if (process.argv[2] === '--child') {
    const [, , , kind, port, count, addresses, redial] = process.argv;
    floodChild(
      kind as 'half-open' | 'parallel',
      Number(port),
      Number(count),
      addresses!.split(','),
      Number(redial),
      process.env.STREAMSCOPE_FLOOD_REQUEST || null,
    );
  } else {
    const { values } = parseArgs({
      options: {
        ops: { type: 'string', default: '1000000' },
        'half-open': { type: 'string', default: '20000' },
        parallel: { type: 'string', default: '10000' },
        seconds: { type: 'string', default: '20' },
        phases: { type: 'string', default: FLOOD_PHASES.join(',') },
        json: { type: 'string' },
      },
    });
    const phases = values.phases.split(',') as FloodPhase[];
    for (const p of phases) if (!FLOOD_PHASES.includes(p)) throw new Error(`--phases: no phase '${p}' (${FLOOD_PHASES.join(', ')})`);
    const { result, lines } = await benchServeFlood({
      ops: Number(values.ops),
      halfOpen: Number(values['half-open']),
      parallel: Number(values.parallel),
      seconds: Number(values.seconds),
      phases,
    });
    console.log(lines.join('\n'));
    if (values.json) fs.writeFileSync(values.json, JSON.stringify(result, null, 2) + '\n');
  }
}
