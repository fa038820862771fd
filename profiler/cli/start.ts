// `npm start`: the main job. With a GPU: record the bundled runner's
// `concurrent` normalise scenario and report it. Without one: report the
// bundled sample recording from an H100, so the command works everywhere.
// (The timeline app takes over this command once it exists.)
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { devices } from '../native/addon.ts';
import { repoRoot } from '../native/paths.ts';

export const SAMPLE_RECORDING = path.join(repoRoot, 'test/fixtures/recordings/normalise-concurrent.sqlite');

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
const run = (args: string[]) => execFileSync(process.execPath, [cli, ...args], { stdio: 'inherit' });

const inventory = devices();
if (inventory.devices.length > 0) {
  const out = path.resolve('streamscope-normalise-concurrent.sqlite');
  run(['record', '--force', '-o', out, '--workload', 'normalise', '--scenario', 'concurrent', '--size', '20000']);
  run(['report', out]);
} else {
  process.stderr.write(`streamscope: no GPU here (${inventory.error}); showing the bundled H100 sample recording\n`);
  run(['report', SAMPLE_RECORDING]);
}
