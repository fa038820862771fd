// `npm start`: the main job, in the desktop app. With a GPU: record the
// bundled runner's `concurrent` normalise scenario; without one: the bundled
// sample recording from an H100. Either way the text report is printed (the
// terminal user sees the answer at once), then the recording opens in the
// desktop app; where Electron cannot start (no binary, no display), the same
// UI is served in browser mode and its URL printed (until Ctrl-C).
// `npm start -- --report-only` stops after the report (scripts, CI).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { launchElectron } from './desktop-app.ts';
import { devices } from '../native/addon.ts';
import { repoRoot } from '../native/paths.ts';

export const SAMPLE_RECORDING = path.join(repoRoot, 'test/fixtures/recordings/normalise-concurrent.sqlite');
const RENDERER_DIST = path.join(repoRoot, 'renderer/dist');

// The `streamscope` command: the bundled CLI that prestart builds (npm run build:app), the sources where it is not current.
const cli = path.join(repoRoot, 'profiler/cli/launch.cjs');
const run = (args: string[]) => execFileSync(process.execPath, [cli, ...args], { stdio: 'inherit' });

let recording: string;
const inventory = devices();
if (inventory.devices.length > 0) {
  recording = path.resolve('streamscope-normalise-concurrent.sqlite');
  run(['record', '--force', '-o', recording, '--workload', 'normalise', '--scenario', 'concurrent', '--size', '20000']);
} else {
  process.stderr.write(`streamscope: no GPU here (${inventory.error}); showing the bundled H100 sample recording\n`);
  recording = SAMPLE_RECORDING;
}
run(['report', recording]);

if (process.argv.includes('--report-only')) {
  // Done: the report above is the whole answer.
} else if (await launchElectron([recording])) {
  process.stdout.write(`\nStreamScope opened ${path.basename(recording)} in the desktop app.\n`);
} else {
  const port = Number(process.env.STREAMSCOPE_PORT ?? 0);
  const host = process.env.STREAMSCOPE_HOST ?? '127.0.0.1';
  let server;
  try {
    const { startServer } = await import('../serve/server.ts');
    server = await startServer({ files: [recording], port, host, staticDir: RENDERER_DIST });
  } catch (err) {
    process.stderr.write(`streamscope: browser mode cannot start either: ${(err as Error).message}\n`);
    process.exit(1);
  }
  process.stdout.write(`\nStreamScope (browser mode): open ${server.url}\n(serving ${path.basename(recording)} on ${host}:${server.port}; Ctrl-C stops)\n`);
  const stop = () => {
    void Promise.resolve(server.close()).finally(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}
