// Starting the desktop app from a terminal (`npm start`, `streamscope open`,
// `serve --app`, `record --live`): by path — Electron's executable on the
// app's built main bundle (app/dist/main.cjs) — never by importing app/: the
// CLI stands beside the desktop app, not on it.
// Deliberately does NOT `require('electron')`: with the binary missing, the
// electron package's index.js tries to download it (blocking, and failing
// offline). The path is read from its path.txt instead, and every reason the
// app cannot start here is found before anything is spawned.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { OpenMode } from '../merge/job-cache.ts';
import { repoRoot } from '../native/paths.ts';

export const MAIN_BUNDLE = path.join(repoRoot, 'app/dist/main.cjs');
export const RENDERER_INDEX = path.join(repoRoot, 'renderer/dist/index.html');

export interface LaunchOptions {
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  /** Where a reason is written; default stderr. */
  log?: (line: string) => void;
  /** The app must stay up this long to count as started (a missing library or sandbox helper ends it at once). */
  settleMs?: number;
  /** How several files open together (`streamscope open --job / --separate`; app/argv.ts reads it back). */
  openMode?: OpenMode;
}

/** The Electron executable, or why there is none. Never downloads. */
export function electronBinary(env: NodeJS.ProcessEnv = process.env): { path: string } | { reason: string } {
  let pkgDir: string;
  try {
    pkgDir = path.dirname(createRequire(import.meta.url).resolve('electron/package.json'));
  } catch {
    return { reason: 'the electron package is not installed' };
  }
  const pathFile = path.join(pkgDir, 'path.txt');
  const rel = fs.existsSync(pathFile) ? fs.readFileSync(pathFile, 'utf8').trim() : null;
  const dist = env.ELECTRON_OVERRIDE_DIST_PATH;
  const exe = dist ? path.join(dist, rel || 'electron') : rel ? path.join(pkgDir, 'dist', rel) : null;
  if (!exe || !fs.existsSync(exe)) {
    return { reason: `the Electron binary is not installed (${exe ?? `${pkgDir}/dist`} missing; installed with ELECTRON_SKIP_BINARY_DOWNLOAD?)` };
  }
  return { path: exe };
}

/** Why the desktop app cannot start here, or null when it can. */
export function cannotLaunchReason(opts: LaunchOptions = {}): string | null {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  if (platform === 'linux' && !env.DISPLAY && !env.WAYLAND_DISPLAY) return 'no display (neither DISPLAY nor WAYLAND_DISPLAY is set)';
  const bin = electronBinary(env);
  if ('reason' in bin) return bin.reason;
  if (!fs.existsSync(MAIN_BUNDLE)) return `the app is not built: ${MAIN_BUNDLE} is missing (run \`npm run build:app\`)`;
  if (!fs.existsSync(RENDERER_INDEX)) return `the user interface is not built: ${RENDERER_INDEX} is missing (run \`npm run build:renderer\`)`;
  return null;
}

/**
 * Starts the desktop app on `files` and resolves once it has stayed up for
 * `settleMs`, with the child process; or with the reason it cannot.
 */
export async function startElectron(files: string[], opts: LaunchOptions = {}): Promise<{ child: ChildProcess } | { reason: string }> {
  const reason = cannotLaunchReason(opts);
  if (reason) return { reason };
  const exe = (electronBinary(opts.env ?? process.env) as { path: string }).path;
  const env = { ...(opts.env ?? process.env) };
  delete env.ELECTRON_RUN_AS_NODE;
  const mode = opts.openMode && opts.openMode !== 'auto' ? [`--${opts.openMode}`] : [];
  const child = spawn(exe, [MAIN_BUNDLE, 'open', ...mode, ...files.map((f) => path.resolve(f))], { env, stdio: 'inherit' });
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve({ child });
    }, opts.settleMs ?? 2_000);
    function onExit(code: number | null, signal: NodeJS.Signals | null) {
      clearTimeout(timer);
      resolve({ reason: `Electron exited at once (${signal ?? `code ${code}`})` });
    }
    child.once('exit', onExit);
    child.once('error', (err) => {
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve({ reason: `cannot start Electron: ${err.message}` });
    });
  });
}

/** Opens `files` in the desktop app; false (with the reason logged) where it cannot start. */
export async function launchElectron(files: string[], opts: LaunchOptions = {}): Promise<boolean> {
  const log = opts.log ?? ((line: string) => process.stderr.write(line + '\n'));
  const r = await startElectron(files, opts);
  if ('reason' in r) {
    log(`streamscope: the desktop app cannot start here: ${r.reason}`);
    return false;
  }
  return true;
}
