// A recording that grows while a test or the benchmark watches it, without
// a GPU: a record stream written beforehand (the C++ encoder's
// --bench-launches mode) is copied into a stream directory chunk by chunk,
// as a collector's flushes would append it, while the recorder's own ingest
// (profiler/record/recording-file.ts: beginRecordingFile, followStreams,
// then finalize.ts) follows the directory, exactly as `streamscope record`
// does for a target.
//
// It runs as a child process (startLiveFeed): the ingest's SQLite and the
// readers' better-sqlite3 must not share a process (SQLite's POSIX locks
// are the process's), and a recorder never does.
//
//   node test/helpers/live-feed.ts --stream S.ssr --out F.sqlite --chunks N --interval-ms M
//
// prints one JSON line per chunk copied ({"chunk": k, "bytes": b}) and a last
// {"done": {...FinalState}}.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { latestSchemaVersion } from '../../profiler/store/migrations/index.ts';
import { zoneRuleProblems, zonesWrittenAndRecomputed } from './zones.ts';
import { finalizeRecording, type FinalState } from '../../profiler/record/finalize.ts';
import { beginRecordingFile, followStreams } from '../../profiler/record/recording-file.ts';
import { StreamDirectoryIngest } from '../../profiler/record/stream-ingest.ts';

export interface LiveFeedOptions {
  stream: string;
  out: string;
  /** Pieces the stream is appended in. */
  chunks: number;
  /** Between two pieces (the collector flushes every 500 ms). */
  intervalMs: number;
  /** Before the first piece, after the file exists (a page may open it first). */
  startDelayMs?: number;
}

export interface LiveFeed {
  /** Chunks copied so far (the ingest follows within its poll). */
  chunks(): number;
  /** Resolves when every chunk was copied, the ingest finished and the recording was finalized. */
  done: Promise<FinalState>;
  stop(): void;
}

/** Starts the feed in a child process; resolves once the recording file exists. */
export async function startLiveFeed(opts: LiveFeedOptions): Promise<LiveFeed> {
  const child = spawn(
    process.execPath,
    [
      fileURLToPath(import.meta.url),
      '--stream',
      opts.stream,
      '--out',
      opts.out,
      '--chunks',
      String(opts.chunks),
      '--interval-ms',
      String(opts.intervalMs),
      '--start-delay-ms',
      String(opts.startDelayMs ?? 0),
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let copied = 0;
  let resolveCreated!: () => void;
  const created = new Promise<void>((r) => (resolveCreated = r));
  const done = new Promise<FinalState>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).on('line', (line) => {
      const m = JSON.parse(line) as { created?: true; chunk?: number; done?: FinalState };
      if (m.created) resolveCreated();
      if (m.chunk !== undefined) copied = m.chunk;
      if (m.done) resolve(m.done);
    });
    child.on('exit', (code) => {
      resolveCreated();
      reject(new Error(`live feed exited with code ${code} before finishing`));
    });
  });
  done.catch(() => {});
  await created;
  return { chunks: () => copied, done, stop: () => child.kill() };
}

/**
 * What keeps `file` from being a normal finished recording, in words (empty
 * when it is one): the checks any recording passes when its recorder has
 * ended — complete, nobody marked as writing it, the indexes the load
 * dropped built again, one file (rollback journal), the latest schema,
 * its zones by the rules and equal to what SQL computes from the rows, and
 * `expected` rows per table.
 */
export function finishedRecordingProblems(file: string, scratchDir: string, expected: Record<string, number>): string[] {
  const problems: string[] = [];
  const db = new Database(file, { readonly: true });
  try {
    const meta = new Map((db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    if (meta.get('complete') !== '1') problems.push(`meta complete is ${meta.get('complete')} (${meta.get('incomplete_reason')})`);
    for (const k of ['writer_pid', 'writer_host', 'pending_indexes', 'incomplete_reason']) if (meta.has(k)) problems.push(`meta ${k} is still there`);
    const mode = db.pragma('journal_mode', { simple: true });
    if (mode !== 'delete') problems.push(`journal mode ${String(mode)}`);
    const version = db.pragma('user_version', { simple: true });
    if (version !== latestSchemaVersion) problems.push(`schema version ${String(version)}`);
    const indexes = (db.prepare("SELECT name FROM sqlite_schema WHERE type = 'index' AND sql IS NOT NULL").pluck().all() as string[]).sort();
    if (!indexes.includes('cuda_events_correlation')) problems.push(`indexes: ${indexes.join(', ')}`);
    for (const [table, n] of Object.entries(expected)) {
      const got = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
      if (got !== n) problems.push(`${table}: ${got} rows, expected ${n}`);
    }
  } finally {
    db.close();
  }
  problems.push(...zoneRuleProblems(file));
  const { written, recomputed } = zonesWrittenAndRecomputed(file, scratchDir);
  if (JSON.stringify(written) !== JSON.stringify(recomputed)) problems.push('the zones differ from what SQL computes from the rows');
  return problems;
}

/** Rows per table of `--bench-launches N`'s stream (synthetic_stream.cc): a launch and its kernel each, a copy and its call every 64, an NVTX range every 1000. */
export function benchLaunchRows(launches: number): Record<string, number> {
  const copies = Math.floor(launches / 64);
  return { kernels: launches, memcpys: copies, api_calls: launches + copies, nvtx_ranges: Math.ceil(launches / 1000) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      stream: { type: 'string' },
      out: { type: 'string' },
      chunks: { type: 'string', default: '20' },
      'interval-ms': { type: 'string', default: '500' },
      'start-delay-ms': { type: 'string', default: '0' },
    },
  });
  const out = values.out!;
  const bytes = fs.readFileSync(values.stream!);
  const chunks = Number(values.chunks);
  const interval = Number(values['interval-ms']);
  const dir = fs.mkdtempSync(path.join(path.dirname(path.resolve(out)), `.${path.basename(out)}.streams-`));
  const target = path.join(dir, path.basename(values.stream!));
  const indexSql = beginRecordingFile(
    out,
    { command: 'live-feed (a recorded stream replayed)', source: 'streamscope-collector', complete: false, incomplete_reason: 'recording in progress' },
    { overwrite: true },
  );
  const say = (m: object) => process.stdout.write(JSON.stringify(m) + '\n');
  say({ created: true });
  // The "target": appends the stream piece by piece, cut anywhere (a piece may end inside a record).
  const copied = (async () => {
    await new Promise((r) => setTimeout(r, Number(values['start-delay-ms'])));
    const fd = fs.openSync(target, 'w');
    try {
      for (let k = 1; k <= chunks; k++) {
        const from = Math.floor(((k - 1) * bytes.length) / chunks);
        const to = Math.floor((k * bytes.length) / chunks);
        fs.writeSync(fd, bytes, from, to - from);
        say({ chunk: k, bytes: to });
        if (k < chunks) await new Promise((r) => setTimeout(r, interval));
      }
    } finally {
      fs.closeSync(fd);
    }
    return { code: 0, signal: null };
  })();
  const ingest = new StreamDirectoryIngest(out, { directory: dir });
  const t0 = Date.now();
  const { value: status, progress, error } = await followStreams({ ingest, indexSql, ended: copied });
  const state = finalizeRecording(out, progress, status, Date.now() - t0, error);
  fs.rmSync(dir, { recursive: true, force: true });
  say({ done: state });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
