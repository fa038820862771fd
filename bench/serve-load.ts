// `npm run bench -- --only serve-load`: browser mode under load (issue 15,
// part 3). `streamscope serve` on a generated 10 M-operation recording (the
// renderer benchmark's: 64 streams, each operation with its launch call),
// loopback only, and 200 concurrent clients sending the requests the page
// sends — window (binary, every row of the layout and the device's
// concurrency track, as renderer/src/timeline/window-loader.ts asks),
// search (the search box's, renderer/src/app/use-search.ts: 10 000 matches)
// and findings (the steady state the page opens on, or a range selected on
// the ruler: a window scope, a new analysis each time) — for 60 s.
//
// Three processes, so that the load does not take the cores the server
// needs: the server (the real CLI, `streamscope serve`, in a process of its
// own, as a user runs it); the load generator (this file with --generator,
// forked, at niceness 10, keep-alive connections, answers counted and not
// parsed: a few percent of a core, reported); and this one, which only
// reads the server's /proc entries once a second (RSS, CPU).
//
// Each client sends its next request as soon as its answer has arrived (a
// closed loop, no think time): 200 requests in flight at every moment, the
// most 200 connections can ask of the server. Latency is from sending the
// request to the last byte of its answer. Any status but 200, a connection
// error, a JSON answer cut short or no answer after 10 minutes is an error.
// Requests still in flight when a phase ends are waited for and counted.
//
// Phases: warm-up (the page's first calls: summary, the steady state's
// findings, which loads the columns), one client alone (30 s: the time each
// request takes when nothing waits before it), load (60 s), aborts (20 s: the same
// clients, each request abandoned at a random moment in its first 2 s —
// most while queued, some while their answer is computed or sent —, the
// socket destroyed), drain (until the server's CPU is idle: the work the
// aborted clients left behind), and load again (10 s: it keeps serving at
// the same rate), the server's resident memory sampled throughout.
import { fork } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { WINDOW_MEDIA_TYPE } from '../profiler/contract/window-codec.ts';
import { generate } from './generate-recording.ts';
import { quantile } from './stats.ts';
import { post, startCli } from './serve-cli.ts';

export interface ServeLoadOptions {
  /** GPU operations of the generated recording (default 10 M). */
  ops: number;
  clients: number;
  /** The load phase (default 60 s). */
  seconds: number;
  /** The phase of aborted requests (default 20 s). */
  abortSeconds: number;
}

type Method = 'window' | 'search' | 'findings';

/** What the generator needs to send the page's requests. */
interface Target {
  base: string;
  token: string;
  recordingId: string;
  startNs: number;
  endNs: number;
  /** Every row of the page's layout (stream and API rows): window() asks for all of them. */
  rows: string[];
  /** The device's stream rows: its concurrency track. */
  streamRows: string[];
}

interface PhaseRequest {
  phase: string;
  clients: number;
  seconds: number;
  /** Abandon each request at a random moment in its first abortWithinMs. */
  abortWithinMs?: number;
}

interface MethodStats {
  count: number;
  errors: number;
  latenciesMs: number[];
  bytes: number;
}

interface PhaseStats {
  phase: string;
  seconds: number;
  /** Seconds from the phase's end until its last request was answered. */
  drainSeconds: number;
  methods: Record<Method, MethodStats>;
  errors: string[];
  /** Requests abandoned before their answer had arrived, and those answered before their time to abandon came. */
  aborted: number;
  answeredBeforeAbort: number;
  /** The generator's own CPU seconds in the phase. */
  generatorCpuSeconds: number;
  /** Requests sent again: their kept-alive connection was reset as it was reused (not errors). */
  retried: number;
}

/**
 * What a page sends, by share of its requests: a user pans and zooms far
 * more than they search (each pan or zoom step is a window), and selects a
 * range now and then.
 */
const MIX: [Method, number][] = [
  ['window', 0.85],
  ['search', 0.05],
  ['findings', 0.1],
];
/** What people type in the search box: names of kernels, copies and calls in the recording, and one that matches nothing. */
const SEARCH_TEXTS = ['kernel_1', 'kernel_', 'kernel_6', 'memcpy htod', 'memcpy', 'cudalaunch', 'cudamemcpyasync', 'no_such_kernel'];
/** The page waits for its answers without a limit; the benchmark gives up after this (an error). */
const REQUEST_TIMEOUT_MS = 600_000;
/** One client alone: what each request costs with nothing queued before it. */
const ALONE_SECONDS = 30;
/** Device pixels of the page's timeline (1600 CSS px at dpr 1). */
const WIDTH_PX = 1600;

// ---- the load generator (a forked process) -------------------------------------------

function pick<T>(xs: readonly T[]): T {
  return xs[Math.floor(Math.random() * xs.length)]!;
}

/** A request as the page makes it: [method, args, accept]. */
function pageRequest(t: Target): [Method, unknown[], string | undefined] {
  const r = Math.random();
  const method = r < MIX[0]![1] ? 'window' : r < MIX[0]![1] + MIX[1]![1] ? 'search' : 'findings';
  const span = t.endNs - t.startNs;
  if (method === 'window') {
    // A view from a ten-thousandth of the recording to all of it (log-uniform), anywhere in it; the
    // loader asks for a view's width on either side and a power-of-two resolution (window-loader.ts).
    const view = span * 10 ** (-4 * Math.random());
    const start = t.startNs + Math.random() * (span - view);
    const resolutionNs = 2 ** Math.max(0, Math.floor(Math.log2(Math.max(1, view / WIDTH_PX))));
    const buckets = Math.max(16, Math.min(4096, Math.round((WIDTH_PX * 3) / 2)));
    const request = {
      rows: t.rows,
      startNs: Math.floor(start - view),
      endNs: Math.ceil(start + 2 * view),
      resolutionNs,
      concurrency: [{ deviceId: 0, rows: t.streamRows, buckets }],
    };
    return ['window', [t.recordingId, request], `${WINDOW_MEDIA_TYPE}, application/json`];
  }
  if (method === 'search') return ['search', [t.recordingId, { text: pick(SEARCH_TEXTS), limit: 10_000 }], undefined];
  // Half the steady state (the page's first view of findings), half a range selected on the ruler: 0.1 % to 5 % of the span.
  if (Math.random() < 0.5) return ['findings', [t.recordingId, { kind: 'steady-state' }], undefined];
  const size = span * 10 ** (-3 + Math.log10(50) * Math.random());
  const a = Math.round(t.startNs + Math.random() * (span - size));
  return ['findings', [t.recordingId, { kind: 'window', startNs: a, endNs: Math.round(a + size) }], undefined];
}

async function runPhase(t: Target, agent: http.Agent, p: PhaseRequest): Promise<PhaseStats> {
  const methods = Object.fromEntries(MIX.map(([m]) => [m, { count: 0, errors: 0, latenciesMs: [], bytes: 0 }])) as unknown as Record<Method, MethodStats>;
  const errors: string[] = [];
  let aborted = 0;
  let answeredBeforeAbort = 0;
  let retried = 0;
  const url = new URL(t.base);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const endAt = t0 + p.seconds * 1000;
  const one = () =>
    new Promise<void>((resolve) => {
      const [method, args, accept] = pageRequest(t);
      const body = JSON.stringify({ args });
      const s = methods[method];
      const start = performance.now();
      let settled = false;
      let abortTimer: NodeJS.Timeout | undefined;
      const done = (error: string | null, bytes = 0) => {
        if (settled) return;
        settled = true;
        clearTimeout(abortTimer);
        if (error !== null) {
          s.errors++;
          if (errors.length < 20) errors.push(`${method}: ${error}`);
        } else {
          s.count++;
          s.bytes += bytes;
          s.latenciesMs.push(performance.now() - start);
          if (p.abortWithinMs) answeredBeforeAbort++;
        }
        resolve();
      };
      let req: http.ClientRequest;
      const send = (attempt: number) => {
        req = http.request(
          {
            host: url.hostname,
            port: url.port,
            path: `/api/${method}`,
            method: 'POST',
            agent,
            headers: {
              'content-type': 'application/json',
              'content-length': Buffer.byteLength(body),
              'x-streamscope-token': t.token,
              ...(accept ? { accept } : {}),
            },
            timeout: REQUEST_TIMEOUT_MS,
          },
          (res) => {
            let bytes = 0;
            let last = 0;
            res.on('data', (c: Buffer) => {
              bytes += c.length;
              last = c[c.length - 1]!;
            });
            res.on('end', () => {
              if (res.statusCode !== 200) return done(`HTTP ${res.statusCode}`);
              // A JSON answer ends with its closing bracket: cut short, it would not.
              if (res.headers['content-type'] === 'application/json' && last !== 0x7d && last !== 0x5d) return done('a JSON answer cut short');
              done(null, bytes);
            });
            res.on('error', (e) => done(e.message));
          },
        );
        const sent = req;
        sent.on('timeout', () => {
          sent.destroy();
          done(`no answer after ${REQUEST_TIMEOUT_MS / 1000} s`);
        });
        sent.on('error', (e: NodeJS.ErrnoException) => {
          // A kept-alive connection the server closed as it was reused (its idle timeout): sent
          // again on a new one, as browsers do (and as Node's http.Agent documentation advises).
          if (!settled && attempt === 0 && sent.reusedSocket && e.code === 'ECONNRESET') {
            retried++;
            return send(1);
          }
          done(e.message);
        });
        sent.end(body);
      };
      if (p.abortWithinMs) {
        abortTimer = setTimeout(() => {
          if (settled) return;
          settled = true;
          aborted++;
          req.destroy();
          resolve();
        }, Math.random() * p.abortWithinMs);
      }
      send(0);
    });
  const client = async () => {
    while (performance.now() < endAt) await one();
  };
  await Promise.all(Array.from({ length: p.clients }, client));
  const drainSeconds = Math.max(0, (performance.now() - endAt) / 1000);
  const cpu = process.cpuUsage(cpu0);
  return {
    phase: p.phase,
    seconds: p.seconds,
    drainSeconds,
    methods,
    errors,
    retried,
    aborted,
    answeredBeforeAbort,
    generatorCpuSeconds: (cpu.user + cpu.system) / 1e6,
  };
}

function generatorMain(): void {
  let target: Target | null = null;
  // One pool of keep-alive connections, one per client at most (each has one request in flight).
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1000 });
  process.on('message', (m: { target: Target } | { run: PhaseRequest } | { exit: true }) => {
    if ('target' in m) target = m.target;
    else if ('run' in m) void runPhase(target!, agent, m.run).then((stats) => process.send!({ stats }));
    else {
      agent.destroy();
      process.disconnect();
    }
  });
}

// ---- the benchmark (this process: the server's /proc, the phases) --------------------

/** The server's resident memory (MiB) and CPU seconds so far, from /proc. */
function serverSample(pid: number): { rssMiB: number; hwmMiB: number; cpuSeconds: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  // utime and stime: fields 14 and 15, after the command in parentheses; in clock ticks (100 a second on Linux).
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rssMiB: kib('VmRSS') / 1024, hwmMiB: kib('VmHWM') / 1024, cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100 };
}

/** CPU seconds the whole machine has spent busy (all cores, every process), from /proc/stat. */
function machineBusySeconds(): number {
  const [, ...ticks] = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = ticks.map(Number);
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

/** Runs the benchmark; returns its figures and the lines to print. */
export async function benchServeLoad(opts: ServeLoadOptions): Promise<{ result: Record<string, unknown>; lines: string[] }> {
  const lines: string[] = [];
  const file = path.join(os.tmpdir(), `streamscope-bench-${opts.ops}-64.sqlite`);
  if (!fs.existsSync(file)) {
    const t = performance.now();
    generate(`${file}.tmp`, opts.ops, 64);
    fs.renameSync(`${file}.tmp`, file);
    lines.push(
      `serve     generated ${opts.ops.toLocaleString('en-US')} operations over 64 streams in ${((performance.now() - t) / 1000).toFixed(0)} s (${file}, kept for the next run)`,
    );
  }
  const loadBefore = os.loadavg();
  const { child, url } = await startCli(file);
  const base = url.split('?')[0]!;
  const token = new URL(url).searchParams.get('token')!;
  const generator = fork(import.meta.filename, ['--generator'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  // Below the server: the load must not take the cores it measures.
  os.setPriority(generator.pid!, 10);
  const samples: { t: number; phase: string; rssMiB: number; cpuSeconds: number }[] = [];
  let phase = 'warm-up';
  const t0 = performance.now();
  const sample = () => {
    const s = serverSample(child.pid!);
    samples.push({ t: (performance.now() - t0) / 1000, phase, rssMiB: s.rssMiB, cpuSeconds: s.cpuSeconds });
    return s;
  };
  const sampler = setInterval(sample, 1000);
  const run = (p: PhaseRequest) =>
    new Promise<PhaseStats>((resolve) => {
      phase = p.phase;
      generator.once('message', (m: { stats: PhaseStats }) => resolve(m.stats));
      generator.send({ run: p });
    });
  try {
    // Warm-up: what the page asks first. The steady state's findings load every column (seconds on 10 M operations).
    const started = serverSample(child.pid!);
    const [handle] = await post<{ recordingId: string }[]>(base, token, 'listRecordings', []);
    const summary = await post<{ startNs: number; endNs: number; streams: { rowId: string }[]; processes: { threads: { apiRowId: string }[] }[] }>(
      base,
      token,
      'summary',
      [handle!.recordingId],
    );
    let t = performance.now();
    await post(base, token, 'findings', [handle!.recordingId, { kind: 'steady-state' }]);
    const warmFindingsS = (performance.now() - t) / 1000;
    const streamRows = summary.streams.map((s) => s.rowId);
    const target: Target = {
      base,
      token,
      recordingId: handle!.recordingId,
      startNs: summary.startNs,
      endNs: summary.endNs,
      streamRows,
      rows: [...streamRows, ...summary.processes.flatMap((p) => p.threads.map((x) => x.apiRowId))],
    };
    generator.send({ target });
    const warm = sample();

    const cpuAt = () => serverSample(child.pid!).cpuSeconds;
    const alone = await run({ phase: 'alone', clients: 1, seconds: ALONE_SECONDS });
    let c = cpuAt();
    const busy0 = machineBusySeconds();
    const loadT0 = performance.now();
    const load = await run({ phase: 'load', clients: opts.clients, seconds: opts.seconds });
    const loadCpu = cpuAt() - c;
    // What the rest of the machine ran meanwhile (other work on the same cores), in cores.
    const loadWallS = (performance.now() - loadT0) / 1000;
    const otherCores = (machineBusySeconds() - busy0 - loadCpu - load.generatorCpuSeconds) / loadWallS;
    const loadAverageAfter = os.loadavg();
    const afterLoad = sample();

    c = cpuAt();
    const aborts = await run({ phase: 'aborts', clients: opts.clients, seconds: opts.abortSeconds, abortWithinMs: 2000 });
    const abortCpu = cpuAt() - c;
    // Drain: until the server's CPU rests (under 5 % of a core over a second), at most 5 minutes.
    phase = 'drain';
    t = performance.now();
    const drainFrom = cpuAt();
    c = drainFrom;
    for (;;) {
      await new Promise((r) => setTimeout(r, 1000));
      const now = cpuAt();
      if (now - c < 0.05 || performance.now() - t > 300_000) break;
      c = now;
    }
    // The last second was the idle one.
    const drainS = Math.max(0, (performance.now() - t) / 1000 - 1);
    const drainCpu = cpuAt() - drainFrom;
    const afterAborts = sample();
    const again = await run({ phase: 'load again', clients: opts.clients, seconds: 10 });
    const end = sample();
    clearInterval(sampler);

    const all = (s: PhaseStats) => Object.values(s.methods).flatMap((m) => m.latenciesMs);
    const count = (s: PhaseStats) => Object.values(s.methods).reduce((n, m) => n + m.count, 0);
    const errs = (s: PhaseStats) => Object.values(s.methods).reduce((n, m) => n + m.errors, 0);
    const lat = (xs: number[]) => ({ p50: quantile(xs, 0.5), p95: quantile(xs, 0.95), p99: quantile(xs, 0.99), max: xs.length ? Math.max(...xs) : NaN });
    const perMethod = (s: PhaseStats) =>
      Object.fromEntries(
        Object.entries(s.methods).map(([m, x]) => [m, { requests: x.count, errors: x.errors, mib: x.bytes / 2 ** 20, latencyMs: lat(x.latenciesMs) }]),
      );
    const rss = samples.map((s) => s.rssMiB);
    const loadRss = samples.filter((s) => s.phase === 'load').map((s) => s.rssMiB);
    const loadReq = count(load);
    const result = {
      operations: opts.ops,
      clients: opts.clients,
      loadAverageBefore: loadBefore,
      loadAverageAfterLoad: loadAverageAfter,
      otherProcessesCores: otherCores,
      warmUp: { steadyStateFindingsSeconds: warmFindingsS, rssMiB: warm.rssMiB, startRssMiB: started.rssMiB },
      alone: { seconds: ALONE_SECONDS, requests: count(alone), errors: errs(alone), latencyMs: lat(all(alone)), methods: perMethod(alone) },
      load: {
        seconds: opts.seconds,
        requests: loadReq,
        perSecond: loadReq / (opts.seconds + load.drainSeconds),
        errors: errs(load),
        retried: load.retried,
        errorSamples: load.errors,
        latencyMs: lat(all(load)),
        methods: perMethod(load),
        drainSeconds: load.drainSeconds,
        serverCpuSeconds: loadCpu,
        generatorCpuSeconds: load.generatorCpuSeconds,
        rssMiB: { first: loadRss[0], max: Math.max(...loadRss), last: afterLoad.rssMiB },
      },
      aborts: {
        seconds: opts.abortSeconds,
        abandoned: aborts.aborted,
        answeredBeforeAbort: aborts.answeredBeforeAbort,
        errors: errs(aborts),
        retried: aborts.retried,
        errorSamples: aborts.errors,
        serverCpuSeconds: abortCpu,
        drainSeconds: drainS,
        drainCpuSeconds: drainCpu,
        generatorCpuSeconds: aborts.generatorCpuSeconds,
        rssAfterDrainMiB: afterAborts.rssMiB,
      },
      loadAgain: {
        seconds: 10,
        requests: count(again),
        perSecond: count(again) / (10 + again.drainSeconds),
        errors: errs(again),
        retried: again.retried,
        errorSamples: again.errors,
        latencyMs: lat(all(again)),
        rssMiB: end.rssMiB,
      },
      serverRssMiB: {
        max: Math.max(...rss),
        hwm: end.hwmMiB,
        last: end.rssMiB,
        everySecond: samples.map((s) => [Math.round(s.t), s.phase, Math.round(s.rssMiB)]),
      },
    };
    const ms = (x: number) => (x >= 1000 ? `${(x / 1000).toFixed(1)} s` : `${x.toFixed(0)} ms`);
    const l = result.load.latencyMs;
    lines.push(
      `serve     ${opts.clients} clients on a ${(opts.ops / 1e6).toFixed(0)} M-operation recording for ${opts.seconds} s (streamscope serve, loopback; load average before ${loadBefore.map((x) => x.toFixed(1)).join(' ')}): ` +
        `${loadReq} requests (${result.load.perSecond.toFixed(1)}/s), ${result.load.errors} errors (${load.retried} sent again on a new connection); latency p50 ${ms(l.p50)}, p95 ${ms(l.p95)}, p99 ${ms(l.p99)}, max ${ms(l.max)}`,
    );
    for (const [m, x] of Object.entries(result.load.methods)) {
      const one = result.alone.methods[m]!;
      lines.push(
        `          ${m.padEnd(8)} ${String(x.requests).padStart(5)} requests, ${x.errors} errors, ${x.mib.toFixed(0)} MiB: p50 ${ms(x.latencyMs.p50)}, p95 ${ms(x.latencyMs.p95)}, p99 ${ms(x.latencyMs.p99)}` +
          (one.requests
            ? ` (one client alone: ${one.requests} requests, p50 ${ms(one.latencyMs.p50)}, p95 ${ms(one.latencyMs.p95)})`
            : ' (one client alone: none in its time)'),
      );
    }
    lines.push(
      `          server CPU ${loadCpu.toFixed(0)} s in ${(opts.seconds + load.drainSeconds).toFixed(0)} s (${(loadCpu / (opts.seconds + load.drainSeconds)).toFixed(2)} cores), the load generator's ${load.generatorCpuSeconds.toFixed(1)} s, other processes ${otherCores.toFixed(2)} cores meanwhile; ` +
        `server RSS ${warm.rssMiB.toFixed(0)} MiB after the warm-up (steady-state findings ${warmFindingsS.toFixed(1)} s), ${result.load.rssMiB.max.toFixed(0)} MiB max under load, ${afterLoad.rssMiB.toFixed(0)} MiB after`,
    );
    lines.push(
      `          ${aborts.aborted} requests abandoned in ${opts.abortSeconds} s (${aborts.answeredBeforeAbort} answered before their time to go): server CPU ${abortCpu.toFixed(0)} s, then ${drainCpu.toFixed(1)} s more in ${drainS.toFixed(0)} s until idle; RSS ${afterAborts.rssMiB.toFixed(0)} MiB; ${errs(aborts)} errors (${aborts.retried} sent again)`,
    );
    lines.push(
      `          then ${result.loadAgain.requests} requests in 10 s (${result.loadAgain.perSecond.toFixed(1)}/s), ${result.loadAgain.errors} errors (${again.retried} sent again), p99 ${ms(result.loadAgain.latencyMs.p99)}; server RSS max ${result.serverRssMiB.max.toFixed(0)} MiB over the run, ${end.rssMiB.toFixed(0)} MiB at its end`,
    );
    return { result, lines };
  } finally {
    clearInterval(sampler);
    if (generator.connected) generator.send({ exit: true });
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === import.meta.filename && process.argv[2] === '--generator') generatorMain();
