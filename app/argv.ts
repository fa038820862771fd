// Files named on the command line: `streamscope open FILE...` and plain
// `StreamScope FILE...` (packaged app, desktop file `%F`), also when they reach
// an already running instance (Electron's 'second-instance' argv); and how
// several are opened (`--job`: as one job whatever they hold; `--separate`:
// each alone; neither: one job's ranks as one, profiler/merge/job-cache.ts).
import path from 'node:path';
import type { OpenMode } from '../profiler/merge/job-cache.ts';

/**
 * Recording paths in `args` (the arguments after the executable and, in
 * development, after the app's entry script), absolute against `cwd`.
 * Chromium/Electron switches (`--foo`, `--foo=bar`) are skipped, and a leading
 * `open` subcommand word is dropped. `--` ends switches.
 */
export function filesFromArgs(args: string[], cwd: string): string[] {
  const files: string[] = [];
  let switches = true;
  let first = true;
  for (const a of args) {
    if (switches && a === '--') {
      switches = false;
      continue;
    }
    if (switches && a.startsWith('-')) continue;
    if (first && a === 'open') {
      first = false;
      continue;
    }
    first = false;
    if (a === '' || a === '.') continue;
    files.push(path.resolve(cwd, a));
  }
  return [...new Set(files)];
}

/**
 * The user's arguments in an Electron process.argv: packaged, argv[0] is the
 * app; in development argv[1] is the entry script (`electron app/dist/main.cjs`).
 */
export function userArgs(argv: string[], packaged: boolean): string[] {
  return argv.slice(packaged ? 1 : 2);
}

/** How the files of `args` open together: `--job` or `--separate` before a `--`, else 'auto'. */
export function openModeFromArgs(args: string[]): OpenMode {
  const end = args.indexOf('--');
  const switches = end === -1 ? args : args.slice(0, end);
  if (switches.includes('--separate')) return 'separate';
  if (switches.includes('--job')) return 'job';
  return 'auto';
}
