#!/usr/bin/env node
// The `streamscope` command (package.json "bin", `npm run streamscope`,
// through streamscope.sh: below): runs
// the bundled CLI (app/dist/streamscope-cli.cjs, built by `npm run build:app`)
// when it was built from the sources as they are now, else the TypeScript
// sources (profiler/cli/streamscope.ts) as `node profiler/cli/streamscope.ts`
// runs them. Loading the CLI's TypeScript modules (Node strips their types at
// load) took ~0.5 s of every command; the bundle starts in a tenth of that.
//
// Plain CommonJS, not TypeScript: a .ts entry alone costs ~30 ms (Node's type
// stripper is loaded for it), and this file runs before every command.
//
// "Built from the sources as they are now": the build writes
// app/dist/streamscope-cli.stamp.json (app/vite.config.ts), which lists
// every file the CLI and the worker threads it starts were built from (what
// the bundler read: profiler/, valibot in node_modules, the build's config),
// each with its size, modification and change times and the SHA-256 of the
// content the bundler read. A file whose size and both times are as listed
// is unchanged (ctime cannot be set back by touch, cp -p or tar, as mtime
// can); one that differs in any is read and hashed, and it counts as
// unchanged only when its content is what was bundled (a checkout that
// rewrote a file as it was, a touch). A file changed, missing, or any doubt
// (no stamp, an unreadable one, no bundle): the sources run. A stale bundle
// running old code silently is the one outcome this must never allow; a
// current bundle left unused only costs time. The check stats ~230 files:
// ~2 ms (bench/run-bench.ts --only startup).
//
// STREAMSCOPE_CLI=sources runs the sources whatever the bundle; =bundle runs
// the bundle or, where it is not current, says why and exits 2 (the bench
// uses it, to be sure what it measures).
//
// One heap for a one-shot command's threads. `streamscope` (package.json
// "bin", `npm run streamscope`) is streamscope.sh beside this file, which
// starts Node on it with glibc's malloc held to one arena
// (GLIBC_TUNABLES=glibc.malloc.arena_max=1, the user's own tunables after
// it) for the commands that take the one-shot heap policy (streamscope.ts
// oneShot: a test holds the two lists equal). That policy has the what-if
// thread reuse the memory the loader and the analysing thread freed, and
// the heap's pages mapped ahead for it (native/addon/src/memory_policy.cc).
// Set from inside the process (mallopt M_ARENA_MAX), the limit comes after
// Node's own threads made their arenas, and a thread started later takes
// the next of those in turn: the what-if thread landed on one of its own in
// 7 runs of 10 of the bench's 10 M analysis (860 k page faults and 3.4 GB
// against 740 k and 2.9 GB, the analysis 2.4 → 2.9 s); set before Node
// starts, it cannot. The user's GLIBC_TUNABLES is put back
// (restoreUserTunables) before anything runs, so that the programs a
// command starts never inherit the change.
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const STAMP_FILE = 'streamscope-cli.stamp.json';
const ENTRY_FILE = 'streamscope-cli.cjs';
const STAMP_VERSION = 1;

/** The SHA-256 of a file's bytes, hex. */
function sha256(file) {
  return require('node:crypto').createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/**
 * One file of the stamp, as `stampFile` writes it: its path relative to
 * `root` (with /), size, mtimeMs and ctimeMs now, and `builtHash`, the
 * SHA-256 of the content the bundler read. Where the file no longer holds
 * that content (it changed during the build), its size is written as -1, so
 * that no stat matches and every check hashes it and finds it changed.
 */
function stampEntry(root, rel, builtHash) {
  const file = path.join(root, rel);
  const st = fs.statSync(file);
  const now = sha256(file);
  return { path: rel, size: now === builtHash ? st.size : -1, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, sha256: builtHash };
}

/**
 * Writes the stamp of a build into `distDir`: `files` maps each source (its
 * path relative to `root`) to the SHA-256 of the content the bundler read.
 * Written last, after the bundle (whose build first empties distDir), and
 * through a rename, so that a stamp is never half written. Returns the
 * sources that no longer hold what was bundled (changed during the build).
 */
function writeStamp(root, distDir, files) {
  const entries = Object.keys(files)
    .sort()
    .map((rel) => stampEntry(root, rel, files[rel]));
  const tmp = path.join(distDir, `.${STAMP_FILE}.${process.pid}`);
  fs.writeFileSync(tmp, JSON.stringify({ version: STAMP_VERSION, entry: ENTRY_FILE, files: entries }) + '\n');
  fs.renameSync(tmp, path.join(distDir, STAMP_FILE));
  return entries.filter((e) => e.size === -1).map((e) => e.path);
}

/**
 * Whether the bundle in `distDir` was built from the sources under `root`
 * as they are now: `{ current: true, entry }` (the file to run) or
 * `{ current: false, reason }`.
 */
function bundleState(root, distDir = path.join(root, 'app', 'dist')) {
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(path.join(distDir, STAMP_FILE), 'utf8'));
  } catch (err) {
    return {
      current: false,
      reason: err.code === 'ENOENT' ? `no bundle (${path.join(distDir, STAMP_FILE)} missing)` : `its stamp is unreadable (${err.message})`,
    };
  }
  if (!stamp || stamp.version !== STAMP_VERSION || !Array.isArray(stamp.files) || stamp.files.length === 0 || stamp.entry !== ENTRY_FILE) {
    return { current: false, reason: 'its stamp is of another version or empty' };
  }
  const entry = path.join(distDir, ENTRY_FILE);
  if (!fs.existsSync(entry)) return { current: false, reason: `${entry} is missing` };
  for (const f of stamp.files) {
    const file = path.join(root, f.path);
    const st = fs.statSync(file, { throwIfNoEntry: false });
    if (!st) return { current: false, reason: `${f.path} is gone` };
    if (st.size === f.size && st.mtimeMs === f.mtimeMs && st.ctimeMs === f.ctimeMs) continue;
    let now;
    try {
      now = sha256(file);
    } catch (err) {
      return { current: false, reason: `${f.path}: ${err.message}` };
    }
    if (now !== f.sha256) return { current: false, reason: `${f.path} changed since the bundle was built` };
  }
  return { current: true, entry: path.resolve(entry) };
}

/** What streamscope.sh sets for a one-shot command: the bench's analyses run with it too (bench/run-bench.ts). */
const ONE_HEAP_TUNABLE = 'glibc.malloc.arena_max=1';

/**
 * The environment as the user set it, where streamscope.sh changed it (this
 * process already runs with the tunable: glibc read it at start):
 * GLIBC_TUNABLES theirs again, or unset where they had none.
 */
function restoreUserTunables(env = process.env) {
  if (env.STREAMSCOPE_USER_TUNABLES === undefined) return;
  if (env.STREAMSCOPE_USER_TUNABLES === '') delete env.GLIBC_TUNABLES;
  else env.GLIBC_TUNABLES = env.STREAMSCOPE_USER_TUNABLES;
  delete env.STREAMSCOPE_USER_TUNABLES;
}

/**
 * Runs the CLI of the checkout at `root` on this process's arguments: the
 * bundle in `distDir` where it is current, else the TypeScript sources
 * (STREAMSCOPE_CLI overrides, above).
 */
function launch(root, distDir = path.join(root, 'app', 'dist')) {
  restoreUserTunables();
  const want = process.env.STREAMSCOPE_CLI;
  if (want !== 'sources') {
    const state = bundleState(root, distDir);
    if (state.current) {
      // Errors name the TypeScript sources (app/dist's source maps: ~10 ms
      // of a start, for reading the maps of the chunks loaded), and V8 keeps
      // the bundle's compiled code between runs beside it, in a folder the
      // next build empties (~10 ms a start saved).
      process.setSourceMapsEnabled(true);
      require('node:module').enableCompileCache?.(path.join(path.dirname(state.entry), '.compile-cache'));
      require(state.entry);
      return;
    }
    if (want === 'bundle') {
      process.stderr.write(`streamscope: STREAMSCOPE_CLI=bundle, but the bundled CLI is not current: ${state.reason} (npm run build:app builds it)\n`);
      process.exit(2);
    }
  }
  const sources = path.join(root, 'profiler', 'cli', 'streamscope.ts');
  import(require('node:url').pathToFileURL(sources).href).catch((err) => {
    process.stderr.write(`streamscope: ${err && err.stack ? err.stack : err}\n`);
    process.exit(70);
  });
}

module.exports = { bundleState, writeStamp, launch, restoreUserTunables, ONE_HEAP_TUNABLE, STAMP_FILE, ENTRY_FILE };

if (require.main === module) launch(path.resolve(__dirname, '..', '..'));
