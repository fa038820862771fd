// `streamscope serve` and `open`: the timeline in a browser or the desktop app.
import fs from 'node:fs';
import path from 'node:path';
import { JOB_VIEW_MERGED_UP_TO, type JobView } from '../contract/job.ts';
import type { OpenMode } from '../merge/job-cache.ts';
import { repoRoot } from '../native/paths.ts';
import { exposureWarning } from '../serve/listen-address.ts';
import { startServer } from '../serve/server.ts';
import { readTokenFile, TokenFileError } from '../serve/token-file.ts';
import { COMMANDS } from './commands.ts';
import { fail } from './common.ts';
import { parseCommand, UsageError } from './usage.ts';

/**
 * Options of `serve` and `open` (open falls back to serving: the same
 * options, commands.ts). Several files: the recordings of one job's ranks
 * open as one (merged into the job cache, profiler/merge/job-cache.ts, or
 * from their ranks' summaries: --job-view, query/job-query.ts); --job takes
 * whatever was given as one job, --separate nothing.
 */
function parseServeArgs(
  command: 'serve' | 'open',
  args: string[],
): {
  files: string[];
  port: number;
  host: string;
  allowRemote: boolean;
  openMode: OpenMode;
  jobView: JobView;
  tokenFile: string | null;
  allowedHosts: string[];
} {
  const { values, operands } = parseCommand(COMMANDS[command], args);
  if (values.job && values.separate) throw new UsageError('give --job or --separate, not both');
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port: expected a port number (0–65535), got '${values.port}'`);
  return {
    files: operands,
    port,
    host: values.host ?? '127.0.0.1',
    // A --host given is the explicit request startServer wants for serving beyond this machine.
    allowRemote: values.host !== undefined,
    openMode: values.job ? 'job' : values.separate ? 'separate' : 'auto',
    jobView: (values['job-view'] ?? 'auto') as JobView,
    tokenFile: values['token-file'] ?? null,
    allowedHosts: values['allow-host'] ?? [],
  };
}

/**
 * Serves `files` read-only in browser mode and prints the URL (with its
 * access token, unless it came from --token-file) on stdout, until
 * SIGINT/SIGTERM. Beyond loopback, what that exposes is said on stderr
 * first (serve/listen-address.ts). Files that cannot be opened are
 * reported on stderr and left out; if none can, exit 2.
 */
async function serveUntilStopped(opts: ReturnType<typeof parseServeArgs>): Promise<number> {
  let token: string | undefined;
  if (opts.tokenFile !== null) {
    try {
      token = readTokenFile(opts.tokenFile);
    } catch (err) {
      if (err instanceof TokenFileError) fail(err.message, 2);
      throw err;
    }
  }
  let server;
  try {
    server = await startServer({
      files: opts.files,
      port: opts.port,
      host: opts.host,
      allowRemote: opts.allowRemote,
      token,
      allowedHosts: opts.allowedHosts,
      staticDir: path.join(repoRoot, 'renderer/dist'),
      onOpenError: (_file, message) => process.stderr.write(`streamscope: ${message}\n`),
      openMode: opts.openMode,
      jobView: opts.jobView,
      onJob: (job) =>
        process.stderr.write(
          job.view === 'summaries'
            ? `streamscope: ${job.inputs.length} recordings opened as one job from their ranks' summaries (not merged) in ${job.seconds.toFixed(1)} s` +
                (job.summarized.length
                  ? `; ${job.summarized.length} had no current summary and were summarized for this view only (streamscope summarize keeps them)`
                  : '') +
                '\n'
            : `streamscope: ${job.inputs.length} recordings opened as one job: ${job.handle.path} ` +
                `(${job.reused ? 'merged before, taken from the cache' : `merged in ${job.seconds.toFixed(1)} s`})\n`,
        ),
    });
  } catch (err) {
    fail(`cannot serve on ${opts.host}:${opts.port}: ${(err as Error).message}`, 2);
  }
  if (server.failed.length === opts.files.length) {
    await server.close();
    fail('none of the files could be opened', 2);
  }
  const warning = exposureWarning(opts.host, server.port, opts.tokenFile);
  if (warning) process.stderr.write(`streamscope: ${warning}\n`);
  // A token of the user's own is not printed: the URL says where it is.
  const url = opts.tokenFile === null ? server.url : `${server.url.split('?')[0]}?token=<the token in ${opts.tokenFile}>`;
  process.stdout.write(`StreamScope (read-only browser mode): ${url}\n`);
  await new Promise<void>((resolve) => {
    const stop = () => {
      void server.close().then(resolve);
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    // Started by `record --live` (live-view.ts) with an IPC channel: it ends with the recorder.
    if (process.connected) process.once('disconnect', stop);
  });
  return 0;
}

export async function cmdServe(args: string[]): Promise<number> {
  return serveUntilStopped(parseServeArgs('serve', args));
}

/**
 * `open`: the desktop app where it can start; otherwise (no Electron binary,
 * no display, app not built) browser mode, saying why.
 */
export async function cmdOpen(args: string[]): Promise<number> {
  const opts = parseServeArgs('open', args);
  for (const f of opts.files) {
    // The app shows bad files itself, but a typo is quicker to fix from here.
    if (!fs.existsSync(f)) fail(`${f}: no such file`, 2);
  }
  let launched = false;
  try {
    // Loaded only here: `serve` starts without it.
    const { launchElectron } = await import('./desktop-app.ts');
    launched = await launchElectron(opts.files, { openMode: opts.openMode });
    if (launched && opts.jobView !== 'auto')
      process.stderr.write(
        `streamscope: note: the desktop app opens a job merged up to ${JOB_VIEW_MERGED_UP_TO} files and from its summaries above (--job-view is browser mode's)\n`,
      );
  } catch (err) {
    process.stderr.write(`streamscope: the desktop app cannot start here: ${(err as Error).message}\n`);
  }
  if (launched) {
    process.stdout.write(`StreamScope opened ${opts.files.map((f) => path.basename(f)).join(', ')} in the desktop app.\n`);
    return 0;
  }
  process.stderr.write('streamscope: opening in browser mode instead (read-only)\n');
  return serveUntilStopped(opts);
}
